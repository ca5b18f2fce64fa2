"""The store cannot be bent through a version (docs/store.md, "Trust"): store objects read-only,
per-file sha256 in the store's records, reuse only on the full sha256, `cudaenv verify` naming
every change with its fix, `install` noticing and repairing, the doctor's integrity probe.

The attack is mounted for real: one byte written in place through versions/<v>/lib64/<file>, a
hard link into the shared store. The tests run as root in CI, and root ignores mode bits: the
write succeeds, as it would for an attacker with root, so what catches it is the hashes."""
import hashlib
import json
import os
import stat
import subprocess

import pytest

from conftest import PLATFORM, AS_USER, assert_one_line_error, leftovers

TF213 = "11.8.0+cudnn8.6.0.163"
CUDA118 = "11.8.0"
STATIC = "lib64/libcudart_static.a"  # from cuda_cudart, shared by both versions through the store


def version(inst, name=TF213):
    return inst.root / "versions" / PLATFORM / name


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_one_byte(path, offset=100):
    """One byte changed in place, through the hard link (no new inode, same size): what a
    stray `sed -i`-free write, a buggy build script or an attacker does."""
    st = path.stat()
    with open(path, "rb") as f:
        f.seek(offset)
        old = f.read(1)
    fd = os.open(path, os.O_WRONLY)  # root passes over 0444
    try:
        os.pwrite(fd, bytes([old[0] ^ 0xFF]), offset)
    finally:
        os.close(fd)
    assert path.stat().st_ino == st.st_ino and path.stat().st_size == st.st_size


def store_records(inst):
    return sorted((inst.root / "store").glob("*/.cudaenv-complete.json"))


def verify(inst, *args):
    return inst("verify", *args, "--json")


def problems(doc, name):
    (v,) = [v for v in doc["versions"] if v["version"] == name]
    return {(p["path"], p["kind"]) for p in v["problems"]}


def test_store_objects_and_versions_are_published_read_only(inst):
    assert inst("install", "tf-2.13", "11.8").rc == 0
    for area in ("store", "versions"):
        for p in (inst.root / area).rglob("*"):
            st = p.lstat()
            if stat.S_ISREG(st.st_mode):
                assert st.st_mode & 0o222 == 0, (p, oct(st.st_mode))
                assert st.st_mode & 0o444 == 0o444, p  # readable by every user
            elif stat.S_ISDIR(st.st_mode):
                # folders stay the owner's to write: removing or replacing an entry needs no chmod
                assert st.st_mode & 0o7777 == 0o755, p
    nvcc = version(inst) / "bin" / "nvcc"
    assert nvcc.stat().st_mode & 0o7777 == 0o555
    # every file carries its own sha256 in the store record, and it is the file's
    for rec_path in store_records(inst):
        rec = json.loads(rec_path.read_text())
        for f in rec["files"]:
            if f["type"] == "file":
                assert sha256(rec_path.parent / f["path"]) == f["sha256"], f["path"]
    # what removes them still works: uninstall, then gc of what nothing needs
    assert inst("uninstall", TF213, "-y").rc == 0
    assert not version(inst).exists()
    assert inst("uninstall", CUDA118, "-y").rc == 0
    assert list((inst.root / "store").iterdir()) == []
    assert leftovers(inst.root) == []


def test_an_ordinary_user_cannot_write_through_a_version(inst):
    """Not root (uid 1000 in a user namespace, owning the files, without capabilities over
    them): the read-only modes are what stops the write, before any hash is needed."""
    assert inst("install", "tf-2.13").rc == 0
    target = version(inst) / STATIC
    before = sha256(target)
    prefix = AS_USER if os.geteuid() == 0 else []
    probe = ("import os, sys\n"
             "try:\n"
             "    os.open(sys.argv[1], os.O_WRONLY)\n"
             "except PermissionError:\n"
             "    sys.exit(13)\n")
    res = subprocess.run([*prefix, "/usr/bin/python3", "-c", probe, str(target)], capture_output=True, text=True)
    assert res.returncode == 13, res
    assert sha256(target) == before


def test_verify_of_an_intact_root_exits_0(inst):
    assert inst("install", "tf-2.13", "11.8").rc == 0
    res = verify(inst)
    assert res.rc == 0, res
    doc = res.json()
    assert doc["ok"] is True
    assert [v["version"] for v in doc["versions"]] == [CUDA118, TF213]
    assert all(v["intact"] and v["problems"] == [] and v["fix"] is None for v in doc["versions"])
    # the objects the two versions share are read once
    total = sum(p.stat().st_size for p in (inst.root / "store").rglob("*")
                if p.is_file() and p.name != ".cudaenv-complete.json")
    assert 0 < doc["bytes_hashed"] <= total
    text = inst("verify")
    assert text.rc == 0 and f"{TF213}: intact" in text.out


def test_one_byte_written_through_a_version_is_named_in_every_version_sharing_it(inst):
    assert inst("install", "tf-2.13", "11.8").rc == 0
    shared = version(inst) / STATIC
    assert shared.stat().st_ino == (version(inst, CUDA118) / STATIC).stat().st_ino
    write_one_byte(shared)
    res = verify(inst)
    assert res.rc == 4, res
    doc = res.json()
    assert doc["ok"] is False and doc["error"]["exit_code"] == 4
    for name in (TF213, CUDA118):
        assert problems(doc, name) == {(STATIC, "modified")}, name
        (v,) = [v for v in doc["versions"] if v["version"] == name]
        assert v["problems"][0]["in_store"] is True
        assert "content changed: sha256" in v["problems"][0]["problem"]
        assert v["fix"] == f"cudaenv install --repair {name}"
    # the text names the file, the versions and the fix; the error is one line with its hints
    text = inst("verify", TF213)
    assert text.rc == 4
    assert f"modified  {STATIC}: content changed" in text.out
    assert f"fix: cudaenv install --repair {TF213}" in text.out
    assert text.err.startswith("cudaenv: error: 1 of 1 version changed since installed")


def test_install_notices_the_write_and_repairs_the_version(inst):
    assert inst("install", "tf-2.13", "11.8").rc == 0
    good = sha256(version(inst) / STATIC)
    write_one_byte(version(inst) / STATIC)
    res = inst("install", "tf-2.13", "--json")
    assert res.rc == 0, res
    doc = res.json()
    assert doc["changed"] is True  # never a silent `changed: false`
    out = doc["versions"][0]
    assert {(d["path"], d["kind"]) for d in out["repaired"]} == {(STATIC, "modified")}
    assert out["still_damaged"] == [CUDA118]
    assert sha256(version(inst) / STATIC) == good
    # the damaged entry was downloaded again (the archive was deleted once extracted)
    assert any("cuda_cudart" in r[0] for r in inst.server.requests)
    doc = verify(inst).json()
    assert problems(doc, TF213) == set()
    # the other version still links the old, written object: said, with its fix
    assert (STATIC, "replaced") in problems(doc, CUDA118)
    (old,) = [p for v in doc["versions"] if v["version"] == CUDA118 for p in v["problems"]
              if p["path"] == STATIC]
    assert "differs" in old["problem"]
    rep = inst("install", "--repair", "11.8")
    assert rep.rc == 0, rep
    assert f"repaired {CUDA118}" in rep.out
    res = verify(inst)
    assert res.rc == 0, res
    assert sha256(version(inst, CUDA118) / STATIC) == good
    assert (version(inst, CUDA118) / STATIC).stat().st_ino == (version(inst) / STATIC).stat().st_ino
    assert leftovers(inst.root) == []
    # and now an install is a no-op again
    again = inst("install", "tf-2.13", "--json")
    assert again.rc == 0 and again.json()["changed"] is False


def test_text_install_says_what_it_found_before_repairing(inst):
    assert inst("install", "tf-2.13").rc == 0
    write_one_byte(version(inst) / STATIC)
    res = inst("install", "tf-2.13")
    assert res.rc == 0, res
    assert f"repaired {TF213}" in res.out
    assert f"warning: {TF213}: {STATIC}: written after it was installed" in res.err


def test_a_write_whose_time_was_put_back_needs_the_hashes(inst):
    """The install's check reads metadata only (sizes, modes, inodes, modification times: a few
    ms); a write whose modification time was set back passes it. verify and install --repair
    re-hash, and catch it."""
    assert inst("install", "tf-2.13").rc == 0
    target = version(inst) / STATIC
    st = target.stat()
    write_one_byte(target)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    res = inst("install", "tf-2.13", "--json")
    assert res.rc == 0 and res.json()["changed"] is False  # documented: metadata check only
    assert verify(inst).rc == 4
    rep = inst("install", "--repair", "tf-2.13", "--json")
    assert rep.rc == 0, rep
    assert {(d["path"], d["kind"]) for d in rep.json()["versions"][0]["repaired"]} == {
        (STATIC, "modified")}
    assert verify(inst).rc == 0


def test_every_kind_of_change_is_named_and_repaired(inst):
    assert inst("install", "tf-2.13").rc == 0
    v = version(inst)
    lib64 = v / "lib64"
    (lib64 / "libcudnn_adv_train.so.8.6.0").unlink()                        # missing
    copy = (lib64 / "libcudnn_ops_infer.so.8.6.0").read_bytes()
    (lib64 / "libcudnn_ops_infer.so.8.6.0").unlink()
    (lib64 / "libcudnn_ops_infer.so.8.6.0").write_bytes(copy)                # replaced (same bytes)
    (lib64 / "libevil.so").write_bytes(b"\x7fELF planted")                   # added
    (lib64 / "libcudnn.so.8").unlink()
    os.symlink("libevil.so", lib64 / "libcudnn.so.8")                        # link
    os.chmod(lib64 / "libcudart.so.11.8.89", 0o755)                          # mode (writable)
    with open(v / "include" / "cudnn_version.h", "ab") as f:                 # size
        f.write(b"\n")
    res = verify(inst, TF213)
    assert res.rc == 4, res
    found = problems(res.json(), TF213)
    assert found == {
        ("lib64/libcudnn_adv_train.so.8.6.0", "missing"),
        ("lib64/libcudnn_ops_infer.so.8.6.0", "replaced"),
        ("lib64/libevil.so", "added"),
        ("lib64/libcudnn.so.8", "link"),
        ("lib64/libcudart.so.11.8.89", "mode"),
        ("include/cudnn_version.h", "size"),
    }, found
    res = inst("install", "tf-2.13", "--json")
    assert res.rc == 0, res
    assert {(d["path"], d["kind"]) for d in res.json()["versions"][0]["repaired"]} == found
    assert verify(inst).rc == 0
    assert not (lib64 / "libevil.so").exists()
    assert os.readlink(lib64 / "libcudnn.so.8") == "libcudnn.so.8.6.0"


def test_reuse_compares_the_full_sha256_in_the_entry_record(inst):
    """An entry named with the pin's first 12 hex digits whose record holds another full sha256
    is not the pinned archive: it is never reused, it is replaced under the lock."""
    pin = json.loads((inst.fixture / "manifests" / "cuda" / "11.8.0.json").read_text())[
        "components"]["cuda_cudart"]["platforms"]["linux-x86_64"]["sha256"]
    other = pin[:12] + ("0" if pin[12] != "0" else "1") + pin[13:]
    entry = inst.root / "store" / f"cuda_cudart-11.8.89-{pin[:12]}"
    (entry / "lib").mkdir(parents=True)
    evil = b"planted, not NVIDIA's"
    (entry / "lib" / "libcudart.so.11.8.89").write_bytes(evil)
    (entry / ".cudaenv-complete.json").write_text(json.dumps({
        "schema": "cudaenv.store/1", "component": "cuda_cudart", "version": "11.8.89",
        "sha256": other, "source": "x", "top": "t", "bytes": len(evil),
        "files": [{"path": "lib", "type": "dir"},
                  {"path": "lib/libcudart.so.11.8.89", "type": "file", "size": len(evil),
                   "sha256": hashlib.sha256(evil).hexdigest()}]}))
    res = inst("install", "11.8", "--json")
    assert res.rc == 0, res
    (cudart,) = [a for a in res.json()["versions"][0]["archives"] if a["component"] == "cuda_cudart"]
    assert cudart["present"] is False
    assert any("cuda_cudart" in r[0] for r in inst.server.requests)
    rec = json.loads((entry / ".cudaenv-complete.json").read_text())
    assert rec["sha256"] == pin
    assert (version(inst, CUDA118) / "lib64" / "libcudart.so.11.8.89").read_bytes() != evil
    assert verify(inst).rc == 0
    assert leftovers(inst.root) == []


def test_records_without_per_file_hashes_still_work_and_say_how_to_get_them(inst):
    """A root an older cudaenv installed: records with sizes only, objects 0644/0755."""
    assert inst("install", "tf-2.13").rc == 0
    for rec_path in store_records(inst):
        rec = json.loads(rec_path.read_text())
        for f in rec["files"]:
            f.pop("sha256", None)
        os.chmod(rec_path, 0o644)
        rec_path.write_text(json.dumps(rec))
        for p in rec_path.parent.rglob("*"):
            if p.is_file() and not p.is_symlink():
                p.chmod(p.stat().st_mode | 0o200)
    res = verify(inst)
    assert res.rc == 0, res
    (v,) = res.json()["versions"]
    assert v["intact"] is True and len(v["unhashed"]) == len(store_records(inst))
    assert v["fix"] == f"cudaenv install --repair {TF213}"
    text = inst("verify")
    assert text.rc == 0
    assert "checked by size, mode and link only" in text.err
    assert f"cudaenv install --repair {TF213} records them" in text.err
    # a plain install is content with it (nothing changed), a repair records the hashes
    assert inst("install", "tf-2.13", "--json").json()["changed"] is False
    rep = inst("install", "--repair", "tf-2.13", "--json")
    assert rep.rc == 0 and rep.json()["changed"] is True
    doc = verify(inst).json()
    assert doc["versions"][0]["unhashed"] == [] and doc["ok"] is True


def test_the_doctor_checks_the_selected_version_and_deep_rehashes(inst):
    assert inst("install", "tf-2.13").rc == 0
    env = {"CUDAENV_VERSION": TF213}
    res = inst("doctor", "--only", "integrity", "--json", env=env)
    assert res.rc == 0, res
    (probe,) = [p for p in res.json()["probes"] if p["id"] == "integrity"]
    assert probe["status"] == "ok", probe
    target = version(inst) / STATIC
    st = target.stat()
    write_one_byte(target)
    res = inst("doctor", "--only", "integrity", "--json", env=env)
    assert res.rc == 1, res
    (probe,) = [p for p in res.json()["probes"] if p["id"] == "integrity"]
    assert probe["status"] == "fail"
    assert STATIC in probe["finding"] and "modified" in probe["finding"]
    assert probe["fix"] == f"cudaenv install --repair {TF213}"
    # with the time put back only re-hashing sees it: --deep
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    res = inst("doctor", "--only", "integrity", "--json", env=env)
    (probe,) = [p for p in res.json()["probes"] if p["id"] == "integrity"]
    assert probe["status"] == "ok"
    res = inst("doctor", "--only", "integrity", "--deep", "--json", env=env)
    (probe,) = [p for p in res.json()["probes"] if p["id"] == "integrity"]
    assert probe["status"] == "fail" and "content changed" in probe["finding"]


def test_verify_names_what_it_cannot_find(inst):
    assert inst("install", "11.8").rc == 0
    assert_one_line_error(inst("verify", "12.4"), 9)
    res = inst("verify", "11.8")  # a SPEC is matched as uninstall matches it
    assert res.rc == 0 and f"{CUDA118}: intact" in res.out
