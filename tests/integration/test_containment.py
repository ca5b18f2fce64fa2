"""Issue 25 (1): every writer has the extractor's containment. A link planted where cudaenv
writes -- in a mirror (its top folder, a subfolder, its work folder, a file, its record), in a
module tree, in a root's own folders (the download cache, gc's trash) -- is never followed: the
command refuses it (exit 5, one line) or replaces the link itself, and nothing is written outside."""
import json
import os
from pathlib import Path

import pytest

from conftest import assert_one_line_error, component_path

TF213 = "11.8.0+cudnn8.6.0.163"


def everything_under(d):
    return sorted(str(p.relative_to(d)) for p in Path(d).rglob("*"))


@pytest.fixture
def outside(tmp_path):
    """Where a planted link points: it must stay exactly as it is."""
    d = tmp_path / "outside"
    d.mkdir()
    (d / "theirs").write_text("theirs\n")
    return d


@pytest.mark.parametrize("where", ["cuda", "cuda/redist", "cuda/redist/cuda_cudart", ".cudaenv-mirror.partial"])
def test_mirror_refuses_a_link_planted_in_its_folder(inst, tmp_path, outside, where):
    dest = tmp_path / "mirror"
    (dest / where).parent.mkdir(parents=True, exist_ok=True)
    (dest / where).symlink_to(outside, target_is_directory=True)
    res = inst("mirror", "tf-2.13", "--to", str(dest), "--jobs", "1")
    assert_one_line_error(res, 5)
    assert "a link" in res.err and "that cudaenv did not make" in res.err and where in res.err
    assert everything_under(outside) == ["theirs"]
    assert (dest / where).is_symlink()  # refused, not "repaired"


def test_mirror_replaces_a_planted_file_link_never_writing_through_it(inst, tmp_path, outside):
    dest = tmp_path / "mirror"
    index = dest / "cuda" / "redist" / "redistrib_11.8.0.json"
    index.parent.mkdir(parents=True)
    index.symlink_to(outside / "theirs")
    res = inst("mirror", "tf-2.13", "--to", str(dest), "--json")
    assert res.rc == 0, res
    assert not index.is_symlink() and index.read_bytes().startswith(b"{")
    assert everything_under(outside) == ["theirs"]
    assert (outside / "theirs").read_text() == "theirs\n"
    assert inst("mirror", "--verify", str(dest)).rc == 0


def test_mirror_refuses_a_link_in_place_of_its_record(inst, tmp_path, outside):
    dest = tmp_path / "mirror"
    dest.mkdir()
    (dest / ".cudaenv-mirror.json").symlink_to(outside / "theirs")
    for args in (("tf-2.13", "--to", str(dest)), ("--verify", str(dest))):
        res = inst("mirror", *args)
        assert_one_line_error(res, 5)
        assert ".cudaenv-mirror.json' to" not in res.err and "that cudaenv did not make" in res.err
    assert everything_under(outside) == ["theirs"]
    assert everything_under(dest) == [".cudaenv-mirror.json"]


def test_verify_names_a_link_in_place_of_a_file(inst, tmp_path, outside):
    dest = tmp_path / "mirror"
    assert inst("mirror", "tf-2.13", "--to", str(dest)).rc == 0
    rel = component_path(inst.fixture, "11.8.0", "cuda_cudart").lstrip("/")
    copy = outside / "cudart.tar.xz"
    copy.write_bytes((dest / rel).read_bytes())  # the right bytes, but through a link
    (dest / rel).unlink()
    (dest / rel).symlink_to(copy)
    res = inst("mirror", "--verify", str(dest), "--json")
    assert res.rc == 4, res
    assert {p["path"]: p["problem"] for p in res.json()["problems"]} == {rel: "a link that cudaenv did not make"}


def test_modulefile_refuses_a_link_planted_in_the_module_tree(inst, tmp_path, outside):
    assert inst("install", "tf-2.13").rc == 0
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "cuda").symlink_to(outside, target_is_directory=True)
    res = inst("modulefile", TF213, "--to", str(modules))
    assert_one_line_error(res, 5)
    assert everything_under(outside) == ["theirs"]
    (modules / "cuda").unlink()
    assert inst("modulefile", TF213, "--to", str(modules)).rc == 0
    assert (modules / "cuda" / f"{TF213}.lua").is_file()


@pytest.mark.parametrize("folder,command", [
    ("cache", ("install", "tf-2.13")),
    ("cache/downloads", ("install", "tf-2.13")),
    ("store", ("install", "tf-2.13")),
    (".staging", ("install", "tf-2.13")),
    (".trash", ("gc", "--apply")),
])
def test_a_root_with_a_planted_folder_link_is_refused(inst, outside, folder, command):
    if command[0] == "gc":
        assert inst("install", "tf-2.13").rc == 0
    (inst.root / folder).parent.mkdir(parents=True, exist_ok=True)
    if (inst.root / folder).exists():
        os.rename(inst.root / folder, inst.root / (folder + ".moved"))
    (inst.root / folder).symlink_to(outside, target_is_directory=True)
    res = inst(*command)
    assert_one_line_error(res, 5)
    assert f"'{inst.root / folder}' is a link (to '{outside}') that cudaenv did not make" in res.err
    assert everything_under(outside) == ["theirs"]


def test_a_partial_download_hard_linked_to_another_file_is_never_appended_to(inst, outside):
    """A hard link planted as a download's partial file (resuming would append NVIDIA's bytes to
    the file it shares an inode with): refused, exit 5, that file unchanged."""
    doc = json.loads((inst.fixture / "manifests" / "cuda" / "11.8.0.json").read_text())
    sha = doc["components"]["cuda_cudart"]["platforms"]["linux-x86_64"]["sha256"]
    downloads = inst.root / "cache" / "downloads"
    downloads.mkdir(parents=True)
    os.link(outside / "theirs", downloads / f"{sha}.partial")
    res = inst("install", "11.8")
    assert_one_line_error(res, 5)
    assert "not a plain file cudaenv made" in res.err, res.err
    assert (outside / "theirs").read_text() == "theirs\n"
