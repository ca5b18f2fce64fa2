"""cuBLAS patch releases (docs/manifests.md, cublas.json): NVIDIA's own index tree
compute/cublas/redist/ as the fixture mirror serves it (fixture_mirror.CUBLAS_PATCHES: 12.4.6,
inferred for the 12.4 line, and 12.4.7, stated, both newer than CUDA 12.4.1's libcublas 12.4.5.8),
with real ELF libcublas/libcublasLt built at test time.

`install --patch cublas` takes the patch's libcublas through the same download, verify, extract
and store pipeline as every archive; a newer patch re-composes the version without downloading
anything else; `--patch none` goes back to the release's own; a version keeps its patch when
installed again without --patch; `list` and the doctor say it is patched; a patch `update`
delivers is installable without a new binary.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

import fixture_mirror
from conftest import EXE, MANIFESTS, PLATFORM, assert_intact, assert_one_line_error, snapshot
from fault_server import FaultServer

PATCHES = fixture_mirror.CUBLAS_PATCHES


@pytest.fixture(scope="session")
def cublas_fixture_dir(tmp_path_factory):
    if not EXE or not Path(EXE).exists():
        pytest.skip("CUDAENV_EXE is not set to a built cudaenv binary")
    out = tmp_path_factory.mktemp("fixture-cublas")
    return fixture_mirror.build(out, EXE, MANIFESTS, platforms=(PLATFORM,), cublas=True)


@pytest.fixture
def pinst(cudaenv, cublas_fixture_dir, tmp_path):
    (tmp_path / "extra").mkdir()
    srv = FaultServer(tmp_path / "extra", cublas_fixture_dir / "mirror")
    cudaenv.env.update(CUDAENV_MANIFESTS=str(cublas_fixture_dir / "manifests"), CUDAENV_MIRROR=srv.url,
                       CUDAENV_RETRY_BACKOFF_MS="20", CUDAENV_RETRIES="0", CUDAENV_STALL_TIMEOUT="2",
                       CUDAENV_CONNECT_TIMEOUT="3", CUDAENV_LOCK_TIMEOUT="30", CUDAENV_RECOMPRESSED="off")
    cudaenv.root = cudaenv.tmp / "root"
    cudaenv.server = srv
    cudaenv.fixture = cublas_fixture_dir
    yield cudaenv
    srv.close()


def patch_path(label):
    v = PATCHES[label]["version"]
    return f"/cublas/redist/libcublas/{PLATFORM}/libcublas-{PLATFORM}-{v}_cuda12-archive.tar.xz"


def record(inst, name="12.4.1"):
    return json.loads((inst.root / "versions" / PLATFORM / name / ".cudaenv-version.json").read_text())


def cublas_of(inst, name="12.4.1"):
    return next(c for c in record(inst, name)["components"] if c["component"] == "libcublas")


def downloads(inst):
    """The archives requested since the last clear (paths), without the index files."""
    return sorted({p for p, _ in inst.server.requests if p.endswith((".tar.xz", ".tgz"))})


def cublas_version_in(prefix):
    """cublasGetVersion_v2 answered by the library the version's lib64/libcublas.so.12 loads (in a
    child: a process keeps the first library it loaded under a name)."""
    code = ("import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); v = ctypes.c_int(0); "
            "assert lib.cublasGetVersion_v2(None, ctypes.byref(v)) == 0; print(v.value)")
    out = subprocess.run([sys.executable, "-c", code, str(prefix / "lib64" / "libcublas.so.12")],
                         capture_output=True, text=True, check=True)
    return int(out.stdout)


def test_resolve_names_the_newest_patch_and_says_when_its_line_is_inferred(pinst):
    res = pinst("resolve", "12.4")
    assert res.rc == 0, res
    assert "cuBLAS   patch 12.4.7 (libcublas 12.4.7.1, 2026-10-29) newer than the release's own 12.4.5.8" in res.out
    assert "NVIDIA names it for the 12.4 line" in res.out
    assert "fixes    cublasLtMatmul() gave wrong results in the fixture (fixture release notes (PRIMARY))" in res.out
    assert "install it with --patch cublas" in res.out
    # the archives are the release's own until --patch asks
    assert "libcublas     12.4.5.8" in res.out
    doc = pinst("resolve", "12.4", "--patch", "cublas=12.4.6", "--json").json()
    assert doc["cublas"]["patched"] is True
    assert doc["cublas"]["patches"] == ["12.4.7", "12.4.6"]
    assert doc["cublas"]["release_version"] == "12.4.5.8"
    assert doc["cublas"]["patch"]["replaces_basis"] == "inferred"
    assert doc["cublas"]["patch"]["fixes"] is None
    arch = next(a for a in doc["archives"] if a["component"] == "libcublas")
    assert arch["version"] == "12.4.6.3" and "/" + arch["path"] == patch_path("12.4.6")
    assert any("inference from its version numbering" in n for n in doc["notes"])
    # a release no patch is for: no cuBLAS row
    other = pinst("resolve", "11.8")
    assert other.rc == 0 and "cuBLAS" not in other.out


def test_install_a_patch_then_a_newer_one_then_roll_back(pinst):
    res = pinst("install", "12.4", "--patch", "cublas=12.4.6")
    assert res.rc == 0, res
    rec = cublas_of(pinst)
    man = json.loads((pinst.fixture / "manifests" / "cublas.json").read_text())
    pinned = {p["label"]: p["archives"][PLATFORM]["sha256"] for p in man["patches"]}
    assert rec["version"] == "12.4.6.3" and rec["patch"] == "cublas 12.4.6"
    assert rec["sha256"] == pinned["12.4.6"] and rec["store"] == "libcublas-12.4.6.3-" + pinned["12.4.6"][:12]
    prefix = pinst.root / "versions" / PLATFORM / "12.4.1"
    assert (prefix / "lib64" / "libcublas.so.12.4.6.3").exists()
    assert (prefix / "lib64" / "libcublasLt.so.12.4.6.3").exists()
    assert not (prefix / "lib64" / "libcublas.so.12.4.5.8").exists()
    assert cublas_version_in(prefix) == 120406
    assert patch_path("12.4.6") in downloads(pinst)
    assert not any("/cuda/redist/libcublas/" in p for p in downloads(pinst))  # the release's own: never fetched
    assert all(c.get("patch") is None for c in record(pinst)["components"] if c["component"] != "libcublas")

    # the newest patch into the existing version: only its archive is downloaded, one swap
    pinst.server.clear()
    res = pinst("install", "12.4", "--patch", "cublas")
    assert res.rc == 0, res
    assert downloads(pinst) == [patch_path("12.4.7")]
    assert cublas_of(pinst)["version"] == "12.4.7.1" and cublas_of(pinst)["patch"] == "cublas 12.4.7"
    assert cublas_version_in(prefix) == 120407

    # installed again without --patch, it keeps its patch and changes nothing
    pinst.server.clear()
    before = snapshot(pinst.root)
    res = pinst("install", "12.4")
    assert res.rc == 0, res
    assert "keeps its cuBLAS patch 12.4.7" in res.out + res.err
    assert downloads(pinst) == [] and snapshot(pinst.root) == before

    # list says so, as text and JSON
    out = pinst("list")
    assert out.rc == 0, out
    line = next(l for l in out.out.splitlines() if "12.4.1" in l)
    assert "cuBLAS patch 12.4.7 (12.4.7.1)" in line
    item = next(v for v in pinst("list", "--json").json()["versions"] if v["version"] == "12.4.1")
    assert item["cublas_patch"] == {"label": "12.4.7", "version": "12.4.7.1"}

    # rollback: the release's own libcublas, recorded without a patch
    pinst.server.clear()
    res = pinst("install", "12.4", "--patch", "none")
    assert res.rc == 0, res
    assert downloads(pinst) == [component_archive(pinst, "12.4.1", "libcublas")]
    rec = cublas_of(pinst)
    assert rec["version"] == "12.4.5.8" and "patch" not in rec
    assert cublas_version_in(prefix) == 120405
    assert not (prefix / "lib64" / "libcublas.so.12.4.7.1").exists()
    item = next(v for v in pinst("list", "--json").json()["versions"] if v["version"] == "12.4.1")
    assert item["cublas_patch"] is None
    assert "cuBLAS patch" not in pinst("list").out


def component_archive(inst, version, component):
    doc = json.loads((inst.fixture / "manifests" / "cuda" / f"{version}.json").read_text())
    return "/" + doc["components"][component]["platforms"][PLATFORM]["path"]


def test_a_patch_archive_with_other_bytes_is_refused_and_the_version_stays(pinst, tmp_path):
    assert pinst("install", "12.4", "--patch", "cublas=12.4.6").rc == 0
    before = snapshot(pinst.root)
    # the mirror serves other bytes at the newer patch's place (same size: the hash decides)
    real = pinst.fixture / "mirror" / patch_path("12.4.7").lstrip("/")
    bad = tmp_path / "extra" / patch_path("12.4.7").lstrip("/")
    bad.parent.mkdir(parents=True)
    data = bytearray(real.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad.write_bytes(bytes(data))
    res = pinst("install", "12.4", "--patch", "cublas=12.4.7")
    assert_one_line_error(res, 4)
    assert "checksum mismatch for '" in res.err and patch_path("12.4.7") in res.err
    assert_intact(pinst.root, before)
    assert cublas_of(pinst)["version"] == "12.4.6.3"


def test_a_patch_for_another_line_or_platform_is_refused(pinst):
    res = pinst("install", "11.8", "--patch", "cublas=12.4.6")
    assert_one_line_error(res, 8)
    assert "cuBLAS patch 12.4.6 is for the CUDA 12.4 line (inferred from its version numbering), not CUDA 11.8.0" in res.err
    res = pinst("install", "11.8", "--patch", "cublas")
    assert_one_line_error(res, 8)
    assert "NVIDIA published no cuBLAS patch for CUDA 11.8.0" in res.err
    res = pinst("install", "12.4", "--patch", "cublas=12.9.9")
    assert_one_line_error(res, 9)
    assert "12.4.6, 12.4.7" in res.err
    res = pinst("install", "12.4", "--patch", "cuda")
    assert_one_line_error(res, 2)
    assert not (pinst.root / "versions").exists()


def test_the_doctor_shows_the_selected_versions_cublas_as_patched(pinst):
    assert pinst("install", "12.4", "--patch", "cublas=12.4.6").rc == 0
    res = pinst("doctor", "--json", env={"CUDAENV_VERSION": "12.4.1"})
    doc = json.loads(res.out)
    probe = next(p for p in doc["probes"] if p["id"] == "toolkit")
    assert any(d.startswith("cuBLAS: 12.4.6.3, patched: NVIDIA's cuBLAS patch 12.4.6") and
               "cudaenv install 12.4.1 --patch none" in d for d in probe["details"]), probe


# --- a patch the channel delivers ------------------------------------------------------------

def test_a_patch_delivered_by_update_installs_without_a_new_binary(cublas_fixture_dir, tmp_path):
    from nginx import NGINX, Nginx
    from test_update import Machine, make_bundle, run, with_release
    if not NGINX:
        pytest.skip("nginx is not installed")
    assert run("__bundle", "keygen", "--out", str(tmp_path / "site")).returncode == 0
    newer = with_release(cublas_fixture_dir / "manifests", tmp_path / "newer", 101)
    floor = with_release(cublas_fixture_dir / "manifests", tmp_path / "floor", 100)
    doc = json.loads((floor / "cublas.json").read_text())
    doc["patches"] = [p for p in doc["patches"] if p["label"] != "12.4.7"]
    (floor / "cublas.json").write_text(json.dumps(doc))
    served = tmp_path / "channel"
    served.mkdir()
    make_bundle(newer, tmp_path / "site.secret", served / "manifests.bundle")
    srv = Nginx(tmp_path / "nginx", {"/channel/": served, "/nvidia/": cublas_fixture_dir / "mirror"})
    m = Machine(tmp_path, "host", floor, f"channel = {srv.url('/channel')}\n", [tmp_path / "site.pub"])
    m.env["CUDAENV_MIRROR"] = srv.url("/nvidia")
    try:
        before = m("install", "12.4", "--patch", "cublas=12.4.7")
        assert before.returncode == 9, before.stderr  # the floor does not know it
        check = m("update", "--check")
        assert check.returncode == 0, check.stderr
        assert "new      cuBLAS patch 12.4.7" in check.stdout, check.stdout
        assert m("update").returncode == 0
        res = m("install", "12.4", "--patch", "cublas")
        assert res.returncode == 0, res.stderr
        rec = json.loads((m.root / "versions" / PLATFORM / "12.4.1" / ".cudaenv-version.json").read_text())
        lib = next(c for c in rec["components"] if c["component"] == "libcublas")
        assert lib["version"] == "12.4.7.1" and lib["patch"] == "cublas 12.4.7"
    finally:
        m.close()
        srv.stop()
