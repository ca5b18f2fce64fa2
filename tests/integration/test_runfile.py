"""CUDA 11.0 from NVIDIA's runfile installer, read as data: a runfile made with Debian's makeself
in NVIDIA's 11.x layout (tests/support/legacy_mirror.py), served over loopback HTTP with cuDNN
8.0's old .tgz; TensorFlow 2.4 installs from the pair, through `global`, and a linked program
loads the right runtime. Hostile runfiles are refused with nothing installed."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PLATFORM, EXE, Cudaenv, assert_one_line_error, leftovers, loader_sysroot

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import legacy_mirror as lm  # noqa: E402
from fault_server import FaultServer  # noqa: E402

pytestmark = pytest.mark.skipif(not shutil.which("makeself"), reason="needs Debian's makeself")

VERSION = "11.0.3+cudnn8.0.5.39"


@pytest.fixture(scope="module")
def legacy(tmp_path_factory):
    if not EXE:
        pytest.skip("CUDAENV_EXE is not set to a built cudaenv binary")
    return lm.build(tmp_path_factory.mktemp("legacy"), EXE)


@pytest.fixture
def run(legacy, tmp_path):
    """cudaenv over the legacy mirror; tmp_path/extra is served first (hostile runfiles)."""
    (tmp_path / "extra").mkdir()
    srv = FaultServer(tmp_path / "extra", legacy / "mirror")
    c = Cudaenv(tmp_path)
    c.env.update(CUDAENV_MANIFESTS=str(legacy / "manifests"), CUDAENV_MIRROR=srv.url,
                 CUDAENV_RETRIES="1", CUDAENV_RETRY_BACKOFF_MS="20", CUDAENV_STALL_TIMEOUT="5")
    c.root = tmp_path / "root"
    c.env["CUDAENV_ROOT"] = str(c.root)
    c.legacy = legacy
    c.server = srv
    yield c
    srv.close()


def runfile_path(legacy):
    return legacy / "mirror" / lm.RUNFILE


def tree_bytes(root):
    """Bytes of the distinct files under root (hard links counted once)."""
    seen, total = set(), 0
    for dirpath, _, files in os.walk(root):
        for f in files:
            st = os.lstat(os.path.join(dirpath, f))
            if not os.path.islink(os.path.join(dirpath, f)) and (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_size
    return total


def test_tf24_resolves_to_the_runfile_and_the_old_cudnn_tgz(run):
    res = run("resolve", "tf-2.4", "--json")
    assert res.rc == 0, res
    j = res.json()
    assert j["cuda"]["version"] == "11.0.3" and j["cuda"]["source"] == "runfile"
    assert j["not_installable"] == []
    assert [a["component"] for a in j["archives"]] == ["cuda", "cudnn"]


def test_runtime_install_takes_only_the_profile_from_the_runfile(run):
    res = run("install", "tf-2.4", "--json")
    assert res.rc == 0, res
    v = run.root / "versions" / PLATFORM / VERSION
    lib = v / "lib64"
    assert lib.is_dir() and not lib.is_symlink()  # flattened like a redistrib install
    for name in ("libcudart.so.11.0", "libcublas.so.11", "libcublasLt.so.11", "libnvrtc.so.11.0",
                 "libcufft.so.10", "libcurand.so.10", "libcusolver.so.10", "libcusparse.so.11",
                 "libnvToolsExt.so.1", "libcudnn.so.8", "libcudnn_cnn_infer.so.8"):
        assert (lib / name).exists(), name
    assert (v / "include" / "cuda_runtime_api.h").exists() and (v / "include" / "cudnn_version.h").exists()
    assert (v / "extras" / "CUPTI" / "lib64" / "libcupti.so.11.0").exists()
    assert (v / "nvvm" / "libdevice" / "libdevice.10.bc").exists()
    assert os.readlink(v / "targets" / "x86_64-linux" / "lib") == "../../lib64"
    # what the runtime profile does not name, and what no profile may take, stayed in the runfile
    for path in run.root.rglob("*"):
        assert "NVIDIA-Linux" not in path.name and path.name not in ("nsys", "cuda-installer"), path
    # the runfile is gone once extracted; what was written is a fraction of it
    assert not any((run.root / "cache" / "downloads").iterdir())
    written = tree_bytes(run.root / "store")
    size = runfile_path(run.legacy).stat().st_size
    assert written < size / 2, (written, size)
    # the real nvcc-style check: a toolkit tool from the runfile runs through the version
    out = run("exec", "nvcc", "--version", env={"CUDAENV_VERSION": VERSION})
    assert out.rc == 0 and "release 11.0, V11.0.221" in out.out
    rec = json.loads((v / "version.json").read_text())
    assert rec["cuda_cudart"]["version"] == "11.0.3" and rec["cudnn"]["version"] == "8.0.5.39"
    entries = sorted(p.name for p in (run.root / "store").iterdir())
    assert any(e.startswith("cuda-11.0.3-") and e.endswith("-runtime") for e in entries), entries


def test_devel_after_runtime_reuses_nothing_wrongly_and_keeps_the_hash_check(run):
    assert run("install", "11.0", "--profile", "runtime").rc == 0
    res = run("install", "11.0", "--profile", "devel")
    assert res.rc == 0, res  # a second entry of the same runfile is not a "changed hash"
    names = [p.name for p in (run.root / "store").iterdir() if p.name.startswith("cuda-11.0.3-")]
    assert sorted(n.rsplit("-", 1)[1] for n in names) == ["devel", "runtime"]


PROBE = ('#include <stdio.h>\nint cudaRuntimeGetVersion(int*);\nunsigned long cudnnGetVersion(void);\n'
         'int main(void){int v=0;cudaRuntimeGetVersion(&v);printf("%d %lu\\n",v,cudnnGetVersion());return 0;}\n')


def into_sysroot(run, tmp_path):
    """Moves `run` into a sysroot with its own /etc/ld.so.conf (the root as /opt/cudaenv), for
    `global` and the real loader; skips where that cannot work."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare")
    s = loader_sysroot(tmp_path / "sysroot")
    run.root = s / "opt" / "cudaenv"
    run.env.update(CUDAENV_ROOT=str(run.root), CUDAENV_SYSROOT=str(s))
    return s


def probe_linked_to(run, tmp_path, version):
    """A program linked against `version`'s libcudart and libcudnn, printing both versions."""
    src = tmp_path / "probe.c"
    src.write_text(PROBE)
    out = tmp_path / ("probe-" + version)
    lib = run.root / "versions" / PLATFORM / version / "lib64"
    subprocess.run(["gcc", str(src), "-o", str(out), f"-L{lib}", "-lcudart", "-lcudnn"], check=True)
    return out


def run_inside(run, sysroot, program):
    """Runs `program` where the sysroot's /etc and /usr/local are the machine's (unshare -m)."""
    script = (f'mount --make-rprivate / && mount -t tmpfs tmpfs /opt && mkdir /opt/cudaenv && '
              f'mount --bind "{run.root}" /opt/cudaenv && mount --bind "{sysroot}/usr/local" /usr/local && '
              f'mount --bind "{sysroot}/etc" /etc && ldd "{program}" | grep -E "cudart|cudnn"; "{program}"')
    out = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True)
    if "mount:" in out.stderr:
        pytest.skip("cannot mount here: " + out.stderr.strip())
    return out


def test_tf24_through_global_loads_the_11_0_runtime(run, tmp_path):
    s = into_sysroot(run, tmp_path)
    assert run("install", "tf-2.4").rc == 0
    res = run("global", "tf-2.4")
    assert res.rc == 0, res
    out = run_inside(run, s, probe_linked_to(run, tmp_path, VERSION))
    assert "/usr/local/cuda/lib64/libcudart.so.11.0" in out.stdout, out
    assert "/usr/local/cuda/lib64/libcudnn.so.8" in out.stdout, out
    assert out.stdout.strip().splitlines()[-1] == "11000 8005"
    doc = run("doctor", "--json")
    assert doc.rc in (0, 1), doc  # no GPU here; the toolkit layers must not be broken
    probes = {p["id"]: p for p in doc.json()["probes"]}
    assert probes["cuda-link"]["status"] == "ok", probes["cuda-link"]


def test_xz_payload_installs_too(tmp_path):
    if not EXE:
        pytest.skip("CUDAENV_EXE is not set")
    legacy = lm.build(tmp_path / "xz", EXE, xz=True)
    srv = FaultServer(tmp_path / "none", legacy / "mirror")
    try:
        c = Cudaenv(tmp_path)
        c.env.update(CUDAENV_MANIFESTS=str(legacy / "manifests"), CUDAENV_MIRROR=srv.url,
                     CUDAENV_ROOT=str(tmp_path / "root"))
        res = c("install", "11.0")
        assert res.rc == 0, res
        assert (tmp_path / "root" / "versions" / PLATFORM / "11.0.3" / "lib64" / "libcudart.so.11.0").exists()
    finally:
        srv.close()


def hostile(run, tmp_path, members=None, lie=None, truncate=None, checksums="fresh"):
    """Serves a hostile runfile in place of the real one, with manifests that pin its hash (so the
    download verifies and the extraction is what must refuse it)."""
    src = runfile_path(run.legacy)
    out = tmp_path / "extra" / lm.RUNFILE
    out.parent.mkdir(parents=True, exist_ok=True)
    if members is not None or lie is not None:
        lm.replace_payload(src, members if members is not None else lm_members_ok(), out, lie,
                           checksums)
    else:
        shutil.copy(src, out)
    if truncate:
        with open(out, "r+b") as f:
            f.truncate(out.stat().st_size - truncate)
    shutil.copytree(run.legacy / "manifests", tmp_path / "manifests")
    repin(tmp_path, out)
    run.env["CUDAENV_MANIFESTS"] = str(tmp_path / "manifests")
    return out


def repin(tmp_path, runfile):
    """The copied manifests pin `runfile`'s sha256 (after hostile() or an edit of its bytes)."""
    path = tmp_path / "manifests" / "cuda" / "11.0.3.json"
    doc = json.loads(path.read_text())
    doc["runfiles"]["linux-x86_64"]["sha256"] = lm.fm.sha256(runfile)
    path.write_text(json.dumps(doc))


def lm_members_ok():
    return [("./builds/cuda_cudart/targets/x86_64-linux/lib/libcudart.so.11.0", b"\x7fELF", "file", None)]


@pytest.mark.parametrize("members,why", [
    ([("./builds/cuda_cudart/../../../../escaped", b"x", "file", None)], "'..' in the path"),
    ([("/builds/cuda_cudart/lib64/libcudart.so.11.0", b"x", "file", None)], "absolute path"),
    ([("./builds/cuda_cudart/lib64", None, "symlink", "/etc"),
      ("./builds/cuda_cudart/lib64/x", b"x", "file", None)], "absolute"),
    ([("./builds/cuda_cudart/lib", None, "symlink", "../../../../../tmp")], "leaves"),
])
def test_hostile_payload_is_refused_with_nothing_installed(run, tmp_path, members, why):
    hostile(run, tmp_path, members=members)
    res = run("install", "11.0")
    assert_one_line_error(res, 5)
    assert why in res.err and "cuda_11.0.3_450.51.06_linux.run" in res.err, res.err
    assert not (run.root / "versions").exists() or not any((run.root / "versions").iterdir())
    assert not leftovers(run.root)
    assert not (tmp_path / "escaped").exists()


def test_a_payload_without_the_components_is_refused(run, tmp_path):
    hostile(run, tmp_path, members=[
        ("./builds/NVIDIA-Linux-x86_64-450.51.06.run", b"#!/bin/sh\n", "file", None),
        ("./builds/nsight_systems/bin/nsys", b"x", "file", None),
        ("./builds/cuda_demo_suite/extras/demo", b"x", "file", None)])
    res = run("install", "11.0")
    assert_one_line_error(res, 5)
    # the profile, what it takes, and what the runfile does hold
    assert "holds none of what profile 'runtime' takes" in res.err, res.err
    assert "cuda_cudart" in res.err, res.err
    assert "builds/ holds only: cuda_demo_suite, nsight_systems" in res.err, res.err
    assert not leftovers(run.root)


@pytest.mark.parametrize("checksums,field", [("stale", "MD5"), ("crc-only", "CRCsum")])
def test_a_payload_that_does_not_match_its_makeself_checksums_is_refused(run, tmp_path, checksums,
                                                                        field):
    """A runfile altered after makeself made it (its pinned sha256 updated to match, as a hostile
    mirror and manifest would): the header's own MD5 or CRC gives it away."""
    out = hostile(run, tmp_path, members=lm_members_ok(),
                  checksums="stale" if checksums == "stale" else "none")
    if checksums == "crc-only":  # no MD5, and a CRC that is not the payload's
        data = out.read_bytes()
        at = data.index(b'CRCsum="') + len(b'CRCsum="')
        data = data[:at] + b"1" + data[at + 1:]
        out.write_bytes(data)
        repin(tmp_path, out)
    res = run("install", "11.0")
    assert_one_line_error(res, 4)
    assert f"does not match the {field} its header declares" in res.err, res.err
    assert "cuda_11.0.3_450.51.06_linux.run" in res.err, res.err
    assert not (run.root / "versions").exists() or not any((run.root / "versions").iterdir())
    assert not leftovers(run.root)


def test_a_payload_whose_header_declares_no_checksums_installs(run, tmp_path):
    """makeself --nomd5 --nocrc: nothing of its own to check (the pinned sha256 still is)."""
    out = hostile(run, tmp_path)  # the real runfile, its header's MD5 and CRC zeroed in place
    data = out.read_bytes()
    for field, width in ((b'MD5="', 32), (b'CRCsum="', None)):
        at = data.index(field) + len(field)
        end = data.index(b'"', at)
        assert width is None or end - at == width
        data = data[:at] + b"0" * (end - at) + data[end:]
    out.write_bytes(data)
    repin(tmp_path, out)
    res = run("install", "11.0")
    assert res.rc == 0, res


@pytest.mark.parametrize("lie,code,why", [
    (10 ** 13, 5, "declares a payload over"),      # a huge declared size
    (1, 5, "something was appended"),             # less payload declared than follows
])
def test_header_lies_are_refused(run, tmp_path, lie, code, why):
    hostile(run, tmp_path, members=lm_members_ok(), lie=lie)
    res = run("install", "11.0")
    assert_one_line_error(res, code)
    assert why in res.err and lm.RUNFILE.rsplit("/", 1)[1] in res.err, res.err


def test_a_runfile_shorter_than_its_header_says_is_an_unsafe_archive(run, tmp_path):
    """Cut short, with the pin updated: the file is whole (its sha256 matches), its header lies."""
    hostile(run, tmp_path, truncate=4096)
    res = run("install", "11.0")
    assert_one_line_error(res, 5)
    assert "bytes of payload, but only" in res.err, res.err
    assert not leftovers(run.root)


def test_a_runfile_that_is_not_the_pinned_one_is_refused_before_reading_it(run, tmp_path):
    out = tmp_path / "extra" / lm.RUNFILE
    out.parent.mkdir(parents=True)
    shutil.copy(runfile_path(run.legacy), out)
    with open(out, "r+b") as f:
        f.seek(-100, 2)
        f.write(b"\0" * 10)
    res = run("install", "11.0")
    assert_one_line_error(res, 4)
    assert "checksum mismatch" in res.err
    assert not (run.root / "versions").exists() or not any((run.root / "versions").iterdir())


# -- CUDA 10.x: the toolkit is a second makeself archive inside the first ----------------------------

VERSION10 = "10.0.130+cudnn7.4.2.24"


def test_tf115_resolves_to_the_nested_runfile_and_cudnn7(run):
    j = run("resolve", "tf-1.15", "--json").json()
    assert j["cuda"]["version"] == "10.0.130" and j["cudnn"]["version"] == "7.4.2.24"
    assert j["not_installable"] == [] and [a["component"] for a in j["archives"]] == ["cuda", "cudnn"]


def test_tf115_runtime_install_reads_the_nested_installer_without_writing_it(run):
    res = run("install", "tf-1.15")
    assert res.rc == 0, res
    v = run.root / "versions" / PLATFORM / VERSION10
    lib = v / "lib64"
    assert lib.is_dir() and not lib.is_symlink()
    for name in ("libcudart.so.10.0", "libcublas.so.10.0", "libcufft.so.10.0", "libcurand.so.10.0",
                 "libcusolver.so.10.0", "libcusparse.so.10.0", "libnvrtc.so.10.0", "libnvToolsExt.so.1",
                 "libcudnn.so.7"):
        assert (lib / name).exists(), name
    assert (v / "extras" / "CUPTI" / "lib64" / "libcupti.so.10.0").exists()
    assert (v / "nvvm" / "libdevice" / "libdevice.10.bc").exists()
    assert (v / "include" / "cuda_runtime_api.h").exists() and (v / "include" / "cudnn.h").exists()
    assert (v / "bin" / "ptxas").exists()
    # NPP and nvGRAPH are devel/full; cuda-gdb, Nsight, the JRE, the samples, the driver and the
    # installers stay in the file; the nested runfile itself is never written anywhere
    names = {p.name for p in run.root.rglob("*")}
    for absent in ("libnppc.so.10.0", "libnvgraph.so.10.0", "cuda-gdb", "nsight.jar", "java",
                   "install-linux.pl", "cuda-installer.pl", lm.INNER10):
        assert absent not in names, absent
    assert not any("NVIDIA-Linux" in n or "samples" in n for n in names)
    out = run("exec", "nvcc", "--version", env={"CUDAENV_VERSION": VERSION10})
    assert out.rc == 0 and "release 10.0, V10.0.130" in out.out
    written = tree_bytes(run.root / "store")
    assert written < (run.legacy / "mirror" / lm.RUNFILE10).stat().st_size / 2


def test_cuda10_1_installs_from_builds_cuda_toolkit(run):
    res = run("install", "10.1")
    assert res.rc == 0, res
    v = run.root / "versions" / PLATFORM / "10.1.243"
    for name in ("libcudart.so.10.1", "libcublas.so.10.1", "libnvrtc.so.10.1"):
        assert (v / "lib64" / name).exists(), name
    assert (v / "extras" / "CUPTI" / "lib64" / "libcupti.so.10.1").exists()
    assert not (v / "lib64" / "libnppc.so.10.1").exists() and not (v / "lib64" / "libcudart.so.7.0").exists()
    out = run("exec", "nvcc", "--version", env={"CUDAENV_VERSION": "10.1.243"})
    assert "release 10.1, V10.1.130" in out.out


def test_cuda10_devel_takes_npp_and_full_takes_everything_but_the_installers(run):
    assert run("install", "10.0", "--profile", "devel").rc == 0
    lib = run.root / "versions" / PLATFORM / "10.0.130" / "lib64"
    assert (lib / "libnppc.so.10.0").exists() and not (lib / "libnvgraph.so.10.0").exists()
    res = run("install", "10.0", "--profile", "full")
    assert res.rc == 0, res
    names = {p.name for p in run.root.rglob("*")}
    assert "libnvgraph.so.10.0" in names and "cuda-gdb" in names
    assert "install-linux.pl" not in names and lm.INNER10 not in names
    assert "libcudart.so.7.0" not in names  # the 32-bit lib/ is never taken


def test_tf115_through_global_loads_the_10_0_runtime(run, tmp_path):
    s = into_sysroot(run, tmp_path)
    assert run("install", "tf-1.15", "tf-2.4").rc == 0
    probe10 = probe_linked_to(run, tmp_path, VERSION10)
    probe11 = probe_linked_to(run, tmp_path, VERSION)

    def inside(program):
        return run_inside(run, s, program)

    assert run("global", "tf-1.15").rc == 0
    out = inside(probe10)
    assert "/usr/local/cuda/lib64/libcudart.so.10.0" in out.stdout, out
    assert "/usr/local/cuda/lib64/libcudnn.so.7" in out.stdout, out
    assert out.stdout.strip().splitlines()[-1] == "10000 7402"
    # the sonames carry the minor before CUDA 11: TF 2.4's program finds no runtime under 10.0
    assert inside(probe11).returncode != 0
    assert run("global", "tf-2.4").rc == 0
    assert inside(probe11).stdout.strip().splitlines()[-1] == "11000 8005"
    assert inside(probe10).returncode != 0


def nested_hostile(run, tmp_path, inner_members, checksums="fresh"):
    """A CUDA 10.0 runfile whose nested installer's payload is `inner_members`."""
    with __import__("tempfile").TemporaryDirectory() as work:
        work = Path(work)
        inner_dir = work / "inner"
        (inner_dir).mkdir()
        (inner_dir / "x").write_text("x")
        inner = lm.make_runfile(inner_dir, work / "inner.run", label="inner", script="./x")
        bad_inner = lm.replace_payload(inner, inner_members, work / lm.INNER10,
                                       checksums=checksums)
        outer_dir = work / "outer"
        (outer_dir / "run_files").mkdir(parents=True)
        shutil.copy(bad_inner, outer_dir / "run_files" / lm.INNER10)
        out = tmp_path / "extra" / lm.RUNFILE10
        out.parent.mkdir(parents=True, exist_ok=True)
        lm.make_runfile(outer_dir, out, label="outer", script="./run_files/" + lm.INNER10)
    man = tmp_path / "manifests"
    shutil.copytree(run.legacy / "manifests", man)
    doc = json.loads((man / "cuda" / "10.0.130.json").read_text())
    doc["runfiles"]["linux-x86_64"]["sha256"] = lm.fm.sha256(out)
    (man / "cuda" / "10.0.130.json").write_text(json.dumps(doc))
    run.env["CUDAENV_MANIFESTS"] = str(man)


@pytest.mark.parametrize("members,why", [
    ([("./bin/../../../escaped", b"x", "file", None)], "'..' in the path"),
    ([("./targets/x86_64-linux/lib/libcudart.so.10.0", None, "symlink", "/etc/passwd")], "absolute"),
    ([("./targets/x86_64-linux/lib/libcudart.so", None, "symlink", "../../../../../../etc/passwd")], "leaves"),
    ([("./jre/java", b"x", "file", None)], "its nested installer holds only: jre"),
])
def test_hostile_nested_installer_is_refused(run, tmp_path, members, why):
    nested_hostile(run, tmp_path, members)
    res = run("install", "10.0")
    assert_one_line_error(res, 5)
    assert why in res.err and "cuda_10.0.130_410.48_linux.run" in res.err, res.err
    assert not (run.root / "versions").exists() or not any((run.root / "versions").iterdir())
    assert not leftovers(run.root)


def test_a_nested_installer_altered_after_makeself_made_it_is_refused(run, tmp_path):
    """The outer runfile is intact; the installer inside it fails its own header's MD5."""
    nested_hostile(run, tmp_path, [("./targets/x86_64-linux/lib/libcudart.so.10.0.130", b"x",
                                     "file", None)], checksums="stale")
    res = run("install", "10.0")
    assert_one_line_error(res, 4)
    assert "does not match the MD5 its header declares" in res.err, res.err
    assert lm.INNER10.rsplit("/", 1)[-1] in res.err, res.err
    assert not (run.root / "versions").exists() or not any((run.root / "versions").iterdir())
    assert not leftovers(run.root)


# -- install --archive FILE: a cuDNN NVIDIA serves only behind a login ------------------------------

def hash_only_cudnn(run, tmp_path):
    """Manifests in which cuDNN 7.4.2.24 is known only by its sha256; returns its .tgz."""
    man = tmp_path / "manifests"
    shutil.copytree(run.legacy / "manifests", man)
    path = man / "cudnn" / "7.4.2.24.json"
    doc = json.loads(path.read_text())
    art = doc["builds"][0]["platforms"]["linux-x86_64"]
    for key in ("url", "path", "size"):
        art.pop(key, None)
    path.write_text(json.dumps(doc))
    run.env["CUDAENV_MANIFESTS"] = str(man)
    mine = tmp_path / "Downloads" / "cudnn-10.0-linux-x64-v7.4.2.24.tgz"
    mine.parent.mkdir()
    shutil.copy(run.legacy / "mirror" / lm.CUDNN7["path"], mine)
    return mine


def test_a_hash_only_cudnn_says_how_to_give_it(run, tmp_path):
    hash_only_cudnn(run, tmp_path)
    res = run("resolve", "tf-1.15", "--json")
    assert res.json()["installable"] is False
    assert "give it with install --archive FILE" in res.json()["not_installable"][0]
    res = run("install", "tf-1.15")
    assert_one_line_error(res, 1)
    assert not (run.root / "versions").exists() or not any((run.root / "versions").iterdir())


def test_install_archive_verifies_and_installs_the_users_file(run, tmp_path):
    mine = hash_only_cudnn(run, tmp_path)
    before = mine.read_bytes()
    res = run("install", "tf-1.15", "--archive", str(mine))
    assert res.rc == 0, res
    lib = run.root / "versions" / PLATFORM / VERSION10 / "lib64"
    assert (lib / "libcudnn.so.7").exists() and (lib / "libcudart.so.10.0").exists()
    assert mine.read_bytes() == before  # the user's file is left as it was
    assert not leftovers(run.root)


def test_install_archive_refuses_a_file_that_is_none_of_the_archives(run, tmp_path):
    mine = hash_only_cudnn(run, tmp_path)
    other = tmp_path / "other.tgz"
    data = mine.read_bytes()
    other.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # not the pinned bytes
    res = run("install", "tf-1.15", "--archive", str(other))
    assert_one_line_error(res, 2)
    assert "is none of the archives to install" in res.err
    assert not (run.root / "versions").exists() or not any((run.root / "versions").iterdir())
    assert_one_line_error(run("install", "tf-1.15", "--archive", str(tmp_path / "missing.tgz")), 2)
