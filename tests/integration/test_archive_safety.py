"""Hostile and broken archives (reliability.md A rows): each is served with a matching sha256,
so only the extraction filter stands between it and the disk."""
import os
import shutil
import subprocess
import stat
from pathlib import Path

import pytest

from conftest import (PLATFORM, assert_intact, assert_one_line_error, component_path, craft_archive, leftovers,
                      replace_component, snapshot)

TOP = "cuda_cudart-linux-x86_64-11.8.89-archive"
GOOD_LIB = Path("lib/libcudart.so.11.8.89")


def real_cudart(inst):
    """The fixture's real runtime library bytes, so a crafted archive can still install."""
    store_lib = next((inst.fixture / "mirror").rglob("cuda_cudart-linux-x86_64-11.8.89-archive.tar.xz"))
    import tarfile
    with tarfile.open(store_lib) as t:
        return t.extractfile(f"{TOP}/lib/libcudart.so.11.8.89").read()


@pytest.fixture
def victim(tmp_path):
    """A canary tree outside the root; every test checks it is untouched."""
    v = tmp_path / "victim"
    v.mkdir()
    (v / "f").write_text("precious\n")
    before = {p.name: (p.read_bytes(), p.stat().st_nlink) for p in v.iterdir()}
    yield v
    after = {p.name: (p.read_bytes(), p.stat().st_nlink) for p in v.iterdir()}
    assert after == before


@pytest.fixture
def baseline(inst):
    """An installed version that must survive every failed install untouched (NC). It shares no
    component with 11.8, whose cuda_cudart the tests replace."""
    assert inst("install", "tf-2.16").rc == 0
    return snapshot(inst.root)


def install_crafted(inst, tmp_path, entries, top=TOP, compression="xz"):
    path = tmp_path / "crafted.tar"
    craft_archive(path, entries, top, compression)
    replace_component(inst, tmp_path, path)
    return inst("install", "11.8")


def check_refused(inst, res, baseline, victim, code=5):
    assert_one_line_error(res, code)
    assert_intact(inst.root, baseline)
    assert not (inst.root / "versions" / PLATFORM / "11.8.0").exists()
    # CL: nothing staged is left; the next good run has nothing to clean either
    assert [p for p in leftovers(inst.root) if ".staging" in p] == []


CASES = {
    "a1_dotdot": [(f"{TOP}/../../victim/f", "file", b"pwned", 0o644, None)],
    "a1_dotdot_inside": [(f"{TOP}/lib/../../x", "file", b"x", 0o644, None)],
    "a2_absolute": [("/tmp/cudaenv-pwned", "file", b"pwned", 0o644, None)],
    "a2_many_slashes": [("////tmp/cudaenv-pwned", "file", b"pwned", 0o644, None)],
    "a3_symlink_then_file": [(f"{TOP}/lib", "symlink", "../../victim", 0o777, None),
                             (f"{TOP}/lib/f", "file", b"pwned", 0o644, None)],
    "a5_escaping_target": [(f"{TOP}/lib/libcudart.so", "symlink", "../../../../../etc/passwd", 0o777, None)],
    "a5_absolute_target": [(f"{TOP}/lib/libcudart.so", "symlink", "/etc/passwd", 0o777, None)],
    # harmless as text, not as the kernel follows it: lib/s is the top, so s/../.. climbs out
    "a5_chain_escape": [(f"{TOP}/lib/s", "symlink", "..", 0o777, None),
                        (f"{TOP}/lib/x", "symlink", "s/../../etc/passwd", 0o777, None)],
    "a5_chain_escape_through_a_deep_link": [
        (f"{TOP}/include/a/b", "dir", None, 0o755, None),
        (f"{TOP}/include/up", "symlink", "a/b/../..", 0o777, None),
        (f"{TOP}/lib/deep", "symlink", "../include/up/..", 0o777, None),
        (f"{TOP}/lib/libcudart.so", "symlink", "deep/../victim/f", 0o777, None)],
    "a5_link_loop": [(f"{TOP}/lib/l1", "symlink", "l2", 0o777, None),
                     (f"{TOP}/lib/l2", "symlink", "l1", 0o777, None)],
    "a5_self_loop": [(f"{TOP}/lib/me", "symlink", "me/x", 0o777, None)],
    # one file on a case-insensitive or normalising filesystem
    "twin_case": [(f"{TOP}/include/Foo.h", "file", b"1", 0o644, None),
                  (f"{TOP}/include/foo.h", "file", b"2", 0o644, None)],
    "twin_case_dir": [(f"{TOP}/Include/a.h", "file", b"1", 0o644, None),
                      (f"{TOP}/include/b.h", "file", b"2", 0o644, None)],
    "twin_nfc_nfd": [(f"{TOP}/include/caf\u00e9.h", "file", b"1", 0o644, None),
                     (f"{TOP}/include/cafe\u0301.h", "file", b"2", 0o644, None)],
    "twin_link_and_file": [(f"{TOP}/lib/LIBX.so", "symlink", "libx.so.1", 0o777, None),
                           (f"{TOP}/lib/libx.so", "file", b"2", 0o644, None)],
    "a6_hardlink_outside": [(f"{TOP}/h", "hardlink", "victim/f", 0o644, None)],
    "a6_hardlink_dotdot": [(f"{TOP}/h", "hardlink", f"{TOP}/../victim/f", 0o644, None)],
    "a7_hardlink_to_absent": [(f"{TOP}/h", "hardlink", f"{TOP}/nothing", 0o644, None)],
    "a9_char_device": [(f"{TOP}/dev", "chr", None, 0o644, None)],
    "a9_block_device": [(f"{TOP}/dev", "blk", None, 0o644, None)],
    "a9_fifo": [(f"{TOP}/fifo", "fifo", None, 0o644, None)],
    "a15_duplicate": [(f"{TOP}/x", "file", b"1", 0o644, None), (f"{TOP}/x", "file", b"2", 0o644, None)],
    "a15_file_then_dir": [(f"{TOP}/x", "file", b"1", 0o644, None), (f"{TOP}/x/y", "file", b"2", 0o644, None)],
    "a18_two_roots": [("other-archive/x", "file", b"1", 0o644, None)],
    "backslash": [(f"{TOP}\\..\\x", "file", b"1", 0o644, None)],
    "control_char": [(f"{TOP}/a\nb", "file", b"1", 0o644, None)],
    # names the filesystem cannot hold (NAME_MAX, 255 on ext4, xfs, btrfs, tmpfs): refused as the
    # archive's fault, before the filesystem refuses them half way
    "long_name": [(f"{TOP}/lib/libcudart.so.11.8.89", "file", b"1", 0o644, None),
                  (f"{TOP}/lib/" + "x" * 300, "file", b"1", 0o644, None)],
    "long_dir_name": [(f"{TOP}/" + "d" * 256 + "/f", "file", b"1", 0o644, None)],
    "long_link_target": [(f"{TOP}/lib/l", "symlink", "t" * 256, 0o777, None)],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_entry_is_refused(inst, tmp_path, baseline, victim, case):
    res = install_crafted(inst, tmp_path, CASES[case])
    check_refused(inst, res, baseline, victim)
    assert "unsafe archive" in res.err or "unreadable archive" in res.err
    if case.startswith("twin"):  # both names, and why
        assert "only by case or accents" in res.err, res.err
    if case.startswith("long"):
        assert "longer than the filesystem takes (255)" in res.err, res.err
    if "chain" in case or "loop" in case:  # refused by resolving the links, not by their text
        assert "resolves outside its tree through other links" in res.err or "symlink loop" in res.err, res.err
    assert not Path("/tmp/cudaenv-pwned").exists()


def test_a18_unexpected_top_name(inst, tmp_path, baseline, victim):
    res = install_crafted(inst, tmp_path, [("evil-archive/x", "file", b"1", 0o644, None)], top="evil-archive")
    check_refused(inst, res, baseline, victim)
    assert "top directory" in res.err


def test_a10_a11_modes_normalised_and_owners_ignored(inst, tmp_path, baseline, victim):
    lib = real_cudart(inst)
    entries = [
        (f"{TOP}/lib/libcudart.so.11.8.89", "file", lib, 0o4777, {"uid": 4242, "gid": 4242, "uname": "nobody"}),
        (f"{TOP}/lib/libcudart.so.11.0", "symlink", "libcudart.so.11.8.89", 0o777, None),
        (f"{TOP}/include/setgid.h", "file", b"//", 0o2666, None),
        (f"{TOP}/include/zero.h", "file", b"//", 0o000, None),
    ]
    res = install_crafted(inst, tmp_path, entries)
    assert res.rc == 0, res
    v = inst.root / "versions" / PLATFORM / "11.8.0"
    so = (v / "lib64" / "libcudart.so.11.8.89").stat()
    assert stat.S_IMODE(so.st_mode) == 0o555  # read-only store objects (docs/store.md)
    assert so.st_uid == os.geteuid()
    assert stat.S_IMODE((v / "include" / "setgid.h").stat().st_mode) == 0o444  # no s-bit, no w
    assert stat.S_IMODE((v / "include" / "zero.h").stat().st_mode) == 0o444


def test_a12_decompression_bomb_stops_at_the_cap(inst, tmp_path, baseline, victim):
    inst.env["CUDAENV_EXTRACT_MAX_BYTES"] = str(8 << 20)
    res = install_crafted(inst, tmp_path, [(f"{TOP}/zeros", "file", b"\0" * (64 << 20), 0o644, None)])
    check_refused(inst, res, baseline, victim)
    assert "limit" in res.err


def test_a13_entry_flood_stops_at_the_cap(inst, tmp_path, baseline, victim):
    inst.env["CUDAENV_EXTRACT_MAX_ENTRIES"] = "50"
    res = install_crafted(inst, tmp_path, [(f"{TOP}/f{i}", "file", b"", 0o644, None) for i in range(200)])
    check_refused(inst, res, baseline, victim)


def test_a14_truncated_stream(inst, tmp_path, baseline, victim):
    path = tmp_path / "big.tar"
    craft_archive(path, [(f"{TOP}/data", "file", os.urandom(200000), 0o644, None)], TOP)
    cut = tmp_path / "cut.tar.xz"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    replace_component(inst, tmp_path, cut)
    check_refused(inst, inst("install", "11.8"), baseline, victim)


@pytest.mark.parametrize("kind", ["html", "gzip_instead_of_xz", "plain_tar", "empty"])
def test_a19_wrong_format_with_a_matching_hash(inst, tmp_path, baseline, victim, kind):
    bad = tmp_path / "bad.bin"
    if kind == "html":
        bad.write_bytes(b"<html><body>404</body></html>")
    elif kind == "empty":
        bad.write_bytes(b"")
    else:
        craft_archive(bad, [(f"{TOP}/x", "file", b"1", 0o644, None)], TOP,
                      "gz" if kind == "gzip_instead_of_xz" else "none")
    replace_component(inst, tmp_path, bad)
    check_refused(inst, inst("install", "11.8"), baseline, victim)


def test_a21_planted_link_in_versions_is_removed_not_followed(inst, tmp_path, victim):
    (inst.root / "versions" / PLATFORM).mkdir(parents=True)
    os.symlink(victim, inst.root / "versions" / PLATFORM / "11.8.0")
    os.symlink(victim, inst.root / "versions" / "11.8.0")  # no migration's link: "<platform>/<name>"
    (inst.root / "versions" / "stale").mkdir()  # no record: garbage
    (inst.root / "versions" / PLATFORM / "stale").mkdir()
    res = inst("install", "11.8")
    assert res.rc == 0, res
    v = inst.root / "versions" / PLATFORM / "11.8.0"
    assert v.is_dir() and not v.is_symlink()
    assert not os.path.lexists(inst.root / "versions" / "11.8.0")
    assert not (inst.root / "versions" / "stale").exists()
    assert not (inst.root / "versions" / PLATFORM / "stale").exists()


def test_missing_cudnn_sublibrary_rolls_back(inst, tmp_path):
    """A cuDNN archive without one sublibrary fails verification; nothing is published."""
    import json
    import tarfile
    import hashlib
    src = next((inst.fixture / "mirror").rglob("cudnn-linux-x86_64-8.6.0.163_cuda11-archive.tar.xz"))
    out = tmp_path / "extra" / "cudnn" / "redist" / "cudnn" / "linux-x86_64" / src.name
    out.parent.mkdir(parents=True)
    with tarfile.open(src) as old, tarfile.open(out, "w:xz") as new:
        for m in old.getmembers():
            if "libcudnn_cnn_train" in m.name:
                continue
            new.addfile(m, old.extractfile(m) if m.isfile() else None)
    man = tmp_path / "man"
    import shutil
    shutil.copytree(inst.fixture / "manifests", man)
    doc = json.loads((man / "cudnn" / "8.6.0.163.json").read_text())
    art = doc["builds"][0]["platforms"]["linux-x86_64"]
    art["sha256"] = hashlib.sha256(out.read_bytes()).hexdigest()
    art["size"] = out.stat().st_size
    (man / "cudnn" / "8.6.0.163.json").write_text(json.dumps(doc))
    inst.env["CUDAENV_MANIFESTS"] = str(man)
    res = inst("install", "tf-2.13")
    assert_one_line_error(res, 4)
    assert "lacks libcudnn_cnn_train.so.8" in res.err
    assert not (inst.root / "versions" / PLATFORM / "11.8.0+cudnn8.6.0.163").exists()
    assert [p for p in leftovers(inst.root) if ".staging" in p] == []


def test_cudnn_header_disagreeing_with_the_manifest_is_refused(inst, tmp_path):
    import json
    import shutil
    man = tmp_path / "man"
    shutil.copytree(inst.fixture / "manifests", man)
    # the 8.6 archive, declared as 8.6.1 by a half-synced mirror's manifest
    doc = json.loads((man / "cudnn" / "8.6.0.163.json").read_text())
    doc["version"] = "8.6.1.5"
    (man / "cudnn" / "8.6.0.163.json").unlink()
    (man / "cudnn" / "8.6.1.5.json").write_text(json.dumps(doc))
    inst.env["CUDAENV_MANIFESTS"] = str(man)
    res = inst("install", "11.8+cudnn-8.6.1")
    assert_one_line_error(res, 4)
    assert "header version 8.6.0" in res.err and "8.6.1.5" in res.err


def test_a20_mutated_archives_are_accepted_or_refused_never_crash(inst, tmp_path, victim):
    """A small fuzz campaign: bytes of a valid NVIDIA-layout archive flipped at seeded random
    places, each served with a matching hash. Every run must end in a documented way."""
    import random
    src = next((inst.fixture / "mirror").rglob("cuda_cudart-linux-x86_64-11.8.89-archive.tar.xz"))
    data = bytearray(src.read_bytes())
    rng = random.Random(20261202)
    outcomes = {}
    for i in range(40):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(len(mutated))
            mutated[pos] = rng.randrange(256)
        path = tmp_path / f"m{i}.tar.xz"
        path.write_bytes(bytes(mutated))
        replace_component(inst, tmp_path, path)
        res = inst("install", "11.8")
        assert res.rc in (0, 4, 5), res
        outcomes[res.rc] = outcomes.get(res.rc, 0) + 1
        assert [p for p in leftovers(inst.root) if ".staging" in p] == []
        if res.rc == 0:
            assert inst("uninstall", "11.8.0").rc == 0
    assert outcomes.get(5, 0) > 0  # most mutations break the xz stream or the tar headers


def test_d18_too_little_space_fails_early(inst, tmp_path):
    """The root on a 300 KiB tmpfs (a private mount namespace): the preflight refuses."""
    import shutil as sh
    import subprocess
    if os.geteuid() != 0 or not sh.which("unshare"):
        pytest.skip("needs root and unshare for a private tmpfs")
    root = tmp_path / "small"
    root.mkdir()
    env = dict(inst.env, CUDAENV_ROOT=str(root))
    script = f'mount -t tmpfs -o size=300k tmpfs "{root}" && exec "$0" install 11.8'
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script, EXE_PATH()], env=env,
                          capture_output=True, text=True, timeout=60)
    if "mount:" in proc.stderr:
        pytest.skip("cannot mount tmpfs here: " + proc.stderr.strip())
    assert proc.returncode == 6, proc.stderr
    assert "not enough space" in proc.stderr


def EXE_PATH():
    from conftest import EXE
    return EXE


def test_a_library_that_does_not_load_rolls_the_install_back(inst, tmp_path, baseline, victim):
    entries = [(f"{TOP}/lib/libcudart.so.11.8.89", "file", b"\x7fELF but not really", 0o755, None),
               (f"{TOP}/lib/libcudart.so.11.0", "symlink", "libcudart.so.11.8.89", 0o777, None)]
    res = install_crafted(inst, tmp_path, entries)
    check_refused(inst, res, baseline, victim, code=4)
    assert "does not load: libcudart.so.11.8.89" in res.err


@pytest.mark.parametrize("fmt", ["gnu", "posix"])
def test_sparse_files_come_out_whole(inst, tmp_path, baseline, victim, fmt):
    """GNU tar's sparse members (holes inside and at the end) are written with their holes and
    their exact length; the bytes read back equal the original."""
    tar = shutil.which("tar")
    if not tar:
        pytest.skip("no GNU tar to make a sparse archive")
    tree = tmp_path / "tree" / TOP
    (tree / "lib").mkdir(parents=True)
    (tree / "include").mkdir()
    (tree / "lib" / "libcudart.so.11.8.89").write_bytes(real_cudart(inst))
    (tree / "lib" / "libcudart.so.11.0").symlink_to("libcudart.so.11.8.89")
    sparse = tree / "include" / "sparse.bin"
    with open(sparse, "wb") as f:
        f.seek(3 << 20)
        f.write(b"middle")
        f.truncate(7 << 20)  # ends in a hole
    path = tmp_path / "crafted.tar.xz"
    subprocess.run([tar, "--sparse", f"--format={fmt}", "-cJf", str(path), "-C", str(tmp_path / "tree"), TOP],
                   check=True)
    replace_component(inst, tmp_path, path)
    res = inst("install", "11.8")
    assert res.rc == 0, res
    out = inst.root / "versions" / PLATFORM / "11.8.0" / "include" / "sparse.bin"
    assert out.stat().st_size == 7 << 20
    assert out.read_bytes() == sparse.read_bytes()


def test_a5_link_chain_across_two_archives_is_refused_in_the_composed_version(inst, tmp_path, baseline, victim):
    """Each archive alone is harmless (cuda_nvrtc's x dangles); composed into one lib64, x goes
    through cuda_cudart's s and climbs out of the version."""
    a = tmp_path / "a.tar"
    craft_archive(a, [(f"{TOP}/lib/s", "symlink", "..", 0o777, None)], TOP, "xz")
    replace_component(inst, tmp_path, a)
    nvrtc = "cuda_nvrtc-linux-x86_64-11.8.89-archive"
    b = tmp_path / "b.tar"
    craft_archive(b, [(f"{nvrtc}/lib/x", "symlink", "s/../../etc/passwd", 0o777, None)], nvrtc, "xz")
    replace_component(inst, tmp_path, b, component="cuda_nvrtc")
    res = inst("install", "11.8")
    check_refused(inst, res, baseline, victim)
    assert "in the composed version, 'lib64/x' resolves outside its tree" in res.err, res.err


@pytest.mark.parametrize("dict_mib, accepted", [(512, False), (64, True)])
def test_an_xz_dictionary_beyond_the_memory_limit_is_refused_before_it_is_allocated(
        inst, tmp_path, baseline, victim, dict_mib, accepted):
    """libarchive's own xz decoder takes any dictionary up to 1 GiB, so an archive decided how
    much memory each extraction took. cudaenv decodes xz itself with a 72 MiB limit: the fixture's
    cuda_cudart recompressed with xz -9's 64 MiB dictionary installs, with 512 MiB it is refused
    (exit 5) saying what it would need."""
    import lzma
    original = inst.fixture / "mirror" / component_path(inst.fixture, "11.8.0", "cuda_cudart")[1:]
    plain = lzma.decompress(original.read_bytes())
    path = tmp_path / "dict.tar.xz"
    path.write_bytes(lzma.compress(plain, format=lzma.FORMAT_XZ, filters=[
        {"id": lzma.FILTER_LZMA2, "dict_size": dict_mib << 20, "mf": lzma.MF_HC3}]))
    replace_component(inst, tmp_path, path)
    res = inst("install", "11.8")
    if accepted:
        assert res.rc == 0, res
    else:
        check_refused(inst, res, baseline, victim)
        assert "MiB (its xz dictionary), more than the 72 MiB cudaenv allows" in res.err, res.err


@pytest.mark.parametrize("a_name, b_name", [("lib/libFoo.so", "lib/libfoo.so"),
                                            ("Include/x.h", "include/y.h"),
                                            ("lib/caf\u00e9.so", "lib/cafe\u0301.so")])
def test_twins_across_two_archives_are_refused_in_the_composed_version(
        inst, tmp_path, baseline, victim, a_name, b_name):
    """Each archive alone has no twins; composed into one version, the two names are one file on
    a case-insensitive or normalising filesystem (a copy of the version there would change)."""
    a = tmp_path / "a.tar"
    craft_archive(a, [(f"{TOP}/{a_name}", "file", b"a", 0o644, None)], TOP, "xz")
    replace_component(inst, tmp_path, a)
    nvrtc = "cuda_nvrtc-linux-x86_64-11.8.89-archive"
    b = tmp_path / "b.tar"
    craft_archive(b, [(f"{nvrtc}/{b_name}", "file", b"b", 0o644, None)], nvrtc, "xz")
    replace_component(inst, tmp_path, b, component="cuda_nvrtc")
    res = inst("install", "11.8")
    check_refused(inst, res, baseline, victim)
    assert "differ only by case or accents" in res.err, res.err
