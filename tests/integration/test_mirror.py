"""`cudaenv mirror`: a directory laid out like NVIDIA's host, built with the install's download
engine (verified while streaming, resumable, published by rename), that `install` then uses as
CUDAENV_MIRROR unchanged; `--verify` names every bad or missing file."""
import hashlib
import json
import os
from pathlib import Path

import pytest

from conftest import PLATFORM, MANIFESTS, assert_one_line_error, component_path
from fault_server import FaultServer

TF213 = "11.8.0+cudnn8.6.0.163"


def tree(d):
    """Every file under d (ours excluded), with its sha256."""
    d = Path(d)
    return {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(d.rglob("*")) if p.is_file() and not p.name.startswith(".cudaenv-mirror")}


@pytest.fixture
def mirrored(inst, tmp_path):
    dest = tmp_path / "mirror"
    res = inst("mirror", "tf-2.13", "tf-2.16", "--to", str(dest), "--json")
    assert res.rc == 0, res
    inst.mirror_dir = dest
    inst.mirror_doc = res.json()
    return inst


def test_mirror_lays_files_out_like_nvidias_host_and_install_uses_it(mirrored, tmp_path):
    doc = mirrored.mirror_doc
    assert doc["changed"] is True and doc["downloaded_bytes"] > 0
    paths = {f["path"] for f in doc["files"]}
    # NVIDIA's index files and the archives, at NVIDIA's paths
    assert "cuda/redist/redistrib_11.8.0.json" in paths
    assert component_path(mirrored.fixture, "11.8.0", "cuda_cudart").lstrip("/") in paths
    for f in doc["files"]:
        p = mirrored.mirror_dir / f["path"]
        assert hashlib.sha256(p.read_bytes()).hexdigest() == f["sha256"]
        assert p.stat().st_mode & 0o777 == 0o644  # a web server reads them
    assert tree(mirrored.mirror_dir) == {f["path"]: f["sha256"] for f in doc["files"]}
    assert not (mirrored.mirror_dir / ".cudaenv-mirror.partial").exists()

    # served by another static server, it is a mirror `install` uses unchanged
    srv = FaultServer(tmp_path / "nothing-extra", mirrored.mirror_dir)
    try:
        (tmp_path / "nothing-extra").mkdir(exist_ok=True)
        res = mirrored("install", "tf-2.13", env={"CUDAENV_MIRROR": srv.url})
        assert res.rc == 0, res
        assert (mirrored.root / "versions" / PLATFORM / TF213 / ".cudaenv-version.json").is_file()
        assert srv.requests and all(not p.startswith("/nothing") for p, _ in srv.requests)
    finally:
        srv.close()


def test_a_second_run_downloads_nothing(mirrored):
    mirrored.server.clear()
    before = tree(mirrored.mirror_dir)
    res = mirrored("mirror", "tf-2.13", "tf-2.16", "--to", str(mirrored.mirror_dir), "--json")
    assert res.rc == 0, res
    assert res.json()["changed"] is False and res.json()["downloaded_bytes"] == 0
    assert all(f["present"] for f in res.json()["files"])
    assert mirrored.server.requests == []
    assert tree(mirrored.mirror_dir) == before
    dry = mirrored("mirror", "tf-2.13", "--to", str(mirrored.mirror_dir), "--dry-run", "--json")
    assert dry.rc == 0 and dry.json()["changed"] is False


def test_verify_names_every_bad_or_missing_file(mirrored):
    ok = mirrored("mirror", "--verify", str(mirrored.mirror_dir))
    assert ok.rc == 0, ok
    cudart = component_path(mirrored.fixture, "11.8.0", "cuda_cudart").lstrip("/")
    index = "cuda/redist/redistrib_11.8.0.json"
    p = mirrored.mirror_dir / cudart
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0xFF
    p.write_bytes(bytes(data))
    (mirrored.mirror_dir / index).unlink()
    bad = mirrored("mirror", "--verify", str(mirrored.mirror_dir), "--json")
    assert bad.rc == 4, bad
    problems = {p["path"]: p["problem"] for p in bad.json()["problems"]}
    assert problems.keys() == {cudart, index}
    assert problems[index] == "missing" and problems[cudart].startswith("sha256 ")
    text = mirrored("mirror", "--verify", str(mirrored.mirror_dir))
    assert_one_line_error(text, 4)
    assert "2 files of the mirror" in text.err and cudart in text.out and index in text.out
    # the same mirror command repairs exactly those two
    mirrored.server.clear()
    res = mirrored("mirror", "tf-2.13", "tf-2.16", "--to", str(mirrored.mirror_dir), "--json")
    assert res.rc == 0, res
    fetched = {f["path"] for f in res.json()["files"] if not f["present"]}
    assert fetched == {cudart, index}
    assert mirrored("mirror", "--verify", str(mirrored.mirror_dir)).rc == 0


def test_verify_of_a_folder_that_is_no_mirror(inst, tmp_path):
    res = inst("mirror", "--verify", str(tmp_path))
    assert_one_line_error(res, 4)
    assert "is not a cudaenv mirror" in res.err


def test_a_mirror_can_be_built_from_another_mirror(mirrored, tmp_path):
    srv = FaultServer(mirrored.mirror_dir)
    try:
        second = tmp_path / "second"
        res = mirrored("mirror", "tf-2.13", "--to", str(second), "--mirror", srv.url)
        assert res.rc == 0, res
        assert srv.requests
        first = tree(mirrored.mirror_dir)
        assert tree(second).items() <= first.items() and tree(second)
    finally:
        srv.close()


def test_a_corrupt_download_leaves_nothing_at_its_path(inst, tmp_path):
    cudart = component_path(inst.fixture, "11.8.0", "cuda_cudart")
    inst.server.fault(cudart, {"kind": "corrupt"})  # a checksum mismatch is not retried
    dest = tmp_path / "mirror"
    res = inst("mirror", "tf-2.13", "--to", str(dest), "--jobs", "1")
    assert_one_line_error(res, 4)
    assert not (dest / cudart.lstrip("/")).exists()
    # what did land is recorded and verifies; the rest comes with the next run
    assert inst("mirror", "--verify", str(dest)).rc == 0
    assert inst("mirror", "tf-2.13", "--to", str(dest)).rc == 0
    assert (dest / cudart.lstrip("/")).is_file()


def test_a_killed_mirror_resumes_and_never_shows_half_a_file(inst, tmp_path):
    dest = tmp_path / "mirror"
    plan = inst("mirror", "11.8", "--to", str(dest), "--dry-run", "--json").json()
    by_sha = {f["sha256"]: f["path"] for f in plan["files"]}
    res = inst("mirror", "11.8", "--to", str(dest), "--jobs", "1",
               env={"CUDAENV_FAILPOINTS": "download-half:kill", "CUDAENV_RETRIES": "0"})
    assert res.rc == -9
    partials = list((dest / ".cudaenv-mirror.partial").glob("*.partial"))
    assert len(partials) == 1, "the killed download keeps its partial file"
    killed = by_sha[partials[0].name.removesuffix(".partial")]
    assert not (dest / killed).exists(), "half a file is visible at its path"
    inst.server.clear()
    assert inst("mirror", "11.8", "--to", str(dest), "--jobs", "1").rc == 0
    # never again from byte 0: resumed with a Range, or (a small file whose bytes had all
    # arrived before the kill) verified from the partial file without a request
    ranges = [r for p, r in inst.server.requests if p == "/" + killed]
    assert all(r and r != "bytes=0-" for r in ranges), ranges
    assert len(ranges) <= 1
    assert not (dest / ".cudaenv-mirror.partial").exists()
    assert inst("mirror", "--verify", str(dest)).rc == 0


def test_every_platform_asked_is_mirrored(inst, tmp_path):
    dest = tmp_path / "mirror"
    # the built-in manifests (the fixture's have x86_64 archives only); a dry run downloads nothing
    res = inst("--manifests", str(MANIFESTS), "mirror", "tf-2.16", "--platform", "linux-x86_64",
               "--platform", "linux-sbsa", "--to", str(dest), "--dry-run", "--json")
    assert res.rc == 0, res
    paths = [f["path"] for f in res.json()["files"]]
    assert any("linux-sbsa" in p for p in paths) and any("linux-x86_64" in p for p in paths)


def test_usage_errors(inst, tmp_path):
    assert_one_line_error(inst("mirror", "tf-2.13"), 2)
    assert_one_line_error(inst("mirror", "--to", str(tmp_path)), 2)
    assert_one_line_error(inst("mirror", "tf-2.13", "--verify", str(tmp_path)), 2)
    # (NVIDIA's x86_64 archive of cuDNN 8.0.2 is known by its hash alone, whatever this host is)
    res = inst("--manifests", str(MANIFESTS), "mirror", "11.0+cudnn-8.0.2", "--platform", "linux-x86_64",
               "--to", str(tmp_path / "m"))
    assert_one_line_error(res, 1)
    assert "only its sha256" in res.err, res
