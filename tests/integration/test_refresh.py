"""`cudaenv __refresh` (docs/refresh.md): NVIDIA's newer data from saved inputs into a new reference,
regenerated manifests, what changed, and a manifests folder that signs and that `cudaenv update`
takes.

The "before" is the repository's reference without three things NVIDIA published: the CUDA 13.4.2
index (NVIDIA's bytes, from data/reference), the cuBLAS patch 13.8.2 (its index in NVIDIA's format,
tests/refresh/nvidia) and the Container Toolkit bulletin 5599 (NVIDIA's CSAF file as
NVIDIA/product-security publishes it, tests/refresh/psirt; tests/refresh/README.md says where
each comes from). The refresh must find exactly those three, and the manifests it makes must be
the repository's for them.
"""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import AS_USER, EXE, MANIFESTS, REFERENCE, Result, assert_one_line_error

INPUTS = Path(__file__).resolve().parents[1] / "refresh"
COMMIT = "dbb4ada053156ea7f41a15229c7b85e2380b3b87"


def cli(*args, env=None, prefix=()):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("CUDA", "CUDAENV_"))}
    e.update(NO_COLOR="1", LC_ALL="C.UTF-8", HOME=os.environ.get("HOME", "/tmp"))
    e.update(env or {})
    return Result(subprocess.run([*prefix, EXE, *args], capture_output=True, text=True, env=e, timeout=300))


@pytest.fixture(scope="module")
def before(tmp_path_factory):
    """A reference and the manifests made from it, lacking CUDA 13.4.2, cuBLAS 13.8.2 and 5599."""
    tmp = tmp_path_factory.mktemp("refresh")
    ref = tmp / "reference"
    shutil.copytree(REFERENCE, ref)
    (ref / "cuda-redistrib_13.4.2.json").unlink()
    doc = json.loads((ref / "advisories.json").read_text())
    doc["container_toolkit_bulletins"] = [b for b in doc["container_toolkit_bulletins"]
                                          if b["bulletin"] != "5599"]
    doc["cublas_patches"]["patches"] = [p for p in doc["cublas_patches"]["patches"]
                                        if p["release_label"] != "13.8.2"]
    (ref / "advisories.json").write_text(json.dumps(doc, indent=1))
    prev = tmp / "manifests"
    shutil.copytree(MANIFESTS, prev)
    res = cli("__generate-manifests", "--reference", str(ref), "--out", str(prev))
    assert res.rc == 0, res
    (prev / "release.json").write_text(json.dumps(
        {"schema": "cudaenv.manifest/1", "kind": "release", "serial": 100,
         "created": "2026-12-01T00:00:00Z", "requires": "0.1.0"}))
    assert not (prev / "cuda" / "13.4.2.json").exists()
    nvidia = tmp / "nvidia"
    shutil.copytree(INPUTS / "nvidia", nvidia)
    (nvidia / "cuda" / "redist").mkdir(parents=True)
    shutil.copy(REFERENCE / "cuda-redistrib_13.4.2.json", nvidia / "cuda" / "redist" / "redistrib_13.4.2.json")
    return tmp, ref, prev, nvidia


def refresh(before, out, *extra, psirt=INPUTS / "psirt", nvidia=None):
    tmp, ref, prev, nv = before
    return cli("__refresh", "--reference", str(ref), "--nvidia", str(nvidia or nv), "--psirt", str(psirt),
               "--psirt-commit", COMMIT, "--previous", str(prev), "--out", str(out), *extra)


@pytest.fixture(scope="module")
def refreshed(before):
    tmp, ref, prev, nvidia = before
    out = tmp / "out"
    res = refresh(before, out)
    assert res.rc == 0, res
    return out, res


def test_the_refresh_finds_the_new_index_patch_and_bulletin_and_says_what_changed(before, refreshed):
    tmp, ref, prev, nvidia = before
    out, res = refreshed
    lines = res.out.splitlines()
    added = [l.split()[0] for l in lines[1:lines.index(next(l for l in lines if l.startswith("changes ")))]]
    assert sorted(added) == ["bulletin", "cublas-patch", "cuda-index"], res
    assert "cuda-index       CUDA 13.4.2 (cuda/redist/redistrib_13.4.2.json -> cuda-redistrib_13.4.2.json)" in res.out
    assert "cuBLAS patch 13.8.2 (libcublas 13.8.2.12, for CUDA 13.4, inferred)" in res.out
    assert "NVIDIA-5599 Security Bulletin: NVIDIA Container Toolkit - January 2025" in res.out
    # the changes against the manifests in use, as `update` names them
    assert "new      CUDA 13.4.2" in res.out, res
    assert any(l.strip().startswith("new") and "NVIDIA-5599" in l for l in lines), res
    assert any(l.strip().startswith("new") and "13.8.2" in l for l in lines), res
    assert f"wrote {out}: reference/ (the new reference data) and manifests/ (serial " in res.out
    assert (f"next: cudaenv __bundle make --from {out}/manifests --key KEY.secret --out manifests.bundle "
            f"--previous {prev}") in res.out
    # NVIDIA's index byte for byte, and the manifests the repository makes from the same data
    assert (out / "reference" / "cuda-redistrib_13.4.2.json").read_bytes() == \
        (REFERENCE / "cuda-redistrib_13.4.2.json").read_bytes()
    assert (out / "reference" / "cublas-redistrib_13.8.2.json").read_bytes() == \
        (INPUTS / "nvidia/cublas/redist/redistrib_13.8.2.json").read_bytes()
    assert (out / "manifests" / "cuda" / "13.4.2.json").read_bytes() == (MANIFESTS / "cuda" / "13.4.2.json").read_bytes()
    mine = json.loads((out / "manifests" / "advisories.json").read_text())
    repo = json.loads((MANIFESTS / "advisories.json").read_text())
    a = next(x for x in mine["advisories"] if x["id"] == "NVIDIA-5599")
    b = next(x for x in repo["advisories"] if x["id"] == "NVIDIA-5599")
    assert {k: v for k, v in a.items() if k != "source"} == {k: v for k, v in b.items() if k != "source"}
    assert a["source"].startswith(f"NVIDIA/product-security @ {COMMIT}: 2025/5599/5599.json (CSAF)")
    mine = json.loads((out / "manifests" / "cublas.json").read_text())
    repo = json.loads((MANIFESTS / "cublas.json").read_text())
    keys = lambda p: {k: v for k, v in p.items() if k not in ("source", "fixes", "fixes_source")}
    assert [keys(p) for p in mine["patches"] if p["label"] == "13.8.2"] == \
        [keys(p) for p in repo["patches"] if p["label"] == "13.8.2"]
    # the new set's serial is above the one it refreshes; the reference's README names the copies
    assert json.loads((out / "manifests" / "release.json").read_text())["serial"] > 100
    readme = (out / "reference" / "README.md").read_text()
    assert "Added by `cudaenv __refresh`" in readme and "`cuda-redistrib_13.4.2.json` | " in readme


def test_json_names_the_same_changes(before, tmp_path):
    res = refresh(before, tmp_path / "out", "--json")
    assert res.rc == 0, res
    doc = json.loads(res.out)
    assert sorted(a["kind"] for a in doc["added"]) == ["bulletin", "cublas-patch", "cuda-index"]
    assert {"kind": "new", "subject": "CUDA 13.4.2"}.items() <= \
        next(c for c in doc["changes"] if c["subject"] == "CUDA 13.4.2").items()
    assert doc["previous"]["serial"] == 100 and doc["serial"] > 100
    assert doc["next"].startswith(f"cudaenv __bundle make --from {tmp_path}/out/manifests ")


def test_the_refreshed_set_signs_and_update_takes_it(before, refreshed, tmp_path):
    tmp, ref, prev, nvidia = before
    out, _ = refreshed
    site = tmp_path / "site"
    assert cli("__bundle", "keygen", "--out", str(site)).rc == 0
    served = tmp_path / "channel"
    served.mkdir()
    made = cli("__bundle", "make", "--from", str(out / "manifests"), "--key", str(site) + ".secret",
               "--out", str(served / "manifests.bundle"), "--previous", str(prev))
    assert made.rc == 0, made
    from fault_server import FaultServer
    sysroot = tmp_path / "sys"
    (sysroot / "etc/cudaenv/keys").mkdir(parents=True)
    shutil.copy(str(site) + ".pub", sysroot / "etc/cudaenv/keys/site.pub")
    shutil.copytree(prev, sysroot / "floor")
    srv = FaultServer(served)
    try:
        (sysroot / "etc/cudaenv/config").write_text(f"manifests = /floor\nchannel = {srv.url}\n")
        env = {"CUDAENV_SYSROOT": str(sysroot), "CUDAENV_ROOT": str(tmp_path / "root"),
               "HOME": str(tmp_path), "CUDAENV_RETRIES": "0"}
        # an ordinary user of that machine: its keys are the sysroot's (as root, the real /etc's)
        user = dict(env=env, prefix=AS_USER)
        assert cli("resolve", "13.4.2", **user).rc == 9  # the floor does not know it
        got = cli("update", "--json", **user)
        assert got.rc == 0, got
        doc = json.loads(got.out)
        assert doc["state"] == "updated"
        assert any(c["subject"] == "CUDA 13.4.2" and c["kind"] == "new" for c in doc["changes"])
        assert any("NVIDIA-5599" in c["subject"] for c in doc["changes"])
        assert cli("resolve", "13.4.2", **user).rc == 0
    finally:
        srv.close()


def test_nothing_new_writes_nothing(before, tmp_path):
    tmp, ref, prev, nvidia = before
    empty = tmp_path / "nvidia"
    (empty / "cuda" / "redist").mkdir(parents=True)
    res = cli("__refresh", "--reference", str(REFERENCE), "--nvidia", str(empty), "--psirt",
              str(INPUTS / "psirt"), "--out", str(tmp_path / "out"), "--previous", str(MANIFESTS))
    assert res.rc == 0, res
    assert "nothing new in the inputs (4 bulletins read, 0 not cudaenv's" in res.out
    assert not (tmp_path / "out").exists()


def changed_index(tmp_path):
    nv = tmp_path / "nv"
    (nv / "cuda" / "redist").mkdir(parents=True)
    data = (REFERENCE / "cuda-redistrib_13.4.1.json").read_bytes()
    (nv / "cuda" / "redist" / "redistrib_13.4.1.json").write_bytes(data + b" ")  # republished
    return nv


def bad_bulletin(tmp_path):
    ps = tmp_path / "ps"
    shutil.copytree(INPUTS / "psirt", ps)
    doc = json.loads((ps / "2025/5599/5599.json").read_text())
    del doc["vulnerabilities"][0]["scores"]
    (ps / "2025/5599/5599.json").write_text(json.dumps(doc))
    return ps


@pytest.mark.parametrize("case", ["repin", "malformed-bulletin", "malformed-index", "exists"])
def test_a_refused_refresh_says_one_line_and_writes_nothing(before, tmp_path, case):
    out = tmp_path / "out"
    if case == "repin":
        res = refresh(before, out, nvidia=changed_index(tmp_path))
        code, words = 4, "NVIDIA's index for CUDA 13.4.1 is not the reference's cuda-redistrib_13.4.1.json"
    elif case == "malformed-bulletin":
        res = refresh(before, out, psirt=bad_bulletin(tmp_path))
        code, words = 4, "bulletin '2025/5599/5599.json': CVE-2024-0135 has no CVSS base score"
    elif case == "malformed-index":
        nv = tmp_path / "nv"
        (nv / "cudnn" / "redist").mkdir(parents=True)
        (nv / "cudnn" / "redist" / "redistrib_9.30.0.json").write_text('{"release_date": 7')
        res = refresh(before, out, nvidia=nv)
        code, words = 4, "redistrib_9.30.0.json"
    else:
        out.mkdir()
        (out / "mine").write_text("x")
        res = refresh(before, out)
        code, words = 7, "already exists"
    assert_one_line_error(res, code)
    assert words in res.err, res
    if case == "exists":
        assert sorted(p.name for p in out.iterdir()) == ["mine"]
    else:
        assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if ".refresh" in p.name] == []  # no stage left
