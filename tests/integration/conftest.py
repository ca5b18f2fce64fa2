"""Integration harness: drives the real cudaenv binary (CUDAENV_EXE) with a clean environment.

Each test gets its own HOME and CUDAENV_ROOT under pytest's tmp_path; CUDA_*, LD_LIBRARY_PATH and
CUDAENV_* from the caller's environment are dropped so the machine running the tests cannot leak in.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXE = os.environ.get("CUDAENV_EXE")
MANIFESTS = Path(os.environ.get("CUDAENV_TEST_MANIFESTS", Path(__file__).parents[2] / "manifests"))
REFERENCE = Path(os.environ.get("CUDAENV_TEST_REFERENCE", Path(__file__).parents[2] / "data" / "reference"))


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import fixture_mirror  # noqa: E402

# The platform the fixtures are made for: CUDAENV_TEST_PLATFORM, else the binary's own (an arm64
# build tested under qemu-user gets linux-sbsa archives holding aarch64 libraries).
PLATFORM = os.environ.get("CUDAENV_TEST_PLATFORM") or fixture_mirror.binary_platform(EXE or "")
TRIPLE = fixture_mirror.TARGET_TRIPLE[PLATFORM]  # NVIDIA's targets/<triple>
MULTIARCH = fixture_mirror.MULTIARCH[fixture_mirror.ARCH[PLATFORM]]  # Debian's lib/<triplet>
# A run for another architecture names the ldconfig that architecture's glibc ships (.ci/arm64:
# Debian's arm64 ldconfig, run under qemu-user): `global` runs it, as it would on that machine.
LDCONFIG = os.environ.get("CUDAENV_TEST_LDCONFIG")
# The C compiler for programs the tests link against installed libraries: the platform's own
# (aarch64-linux-gnu-gcc for an arm64 binary on an x86_64 machine; qemu-user runs what it makes)
CC = fixture_mirror.compiler_for(PLATFORM)
# a root cudaenv takes its trust from the machine itself: tests with keys under a sysroot run it
# through AS_USER (tests/support/as_user.py)
from as_user import AS_USER  # noqa: E402,F401


_MACHINE_NS_SCRIPT = r"""
set -e
mount -t tmpfs -o mode=0755 cudaenv-test-ns "$1"
for d in etc var; do
  mkdir -p "$1/upper/$d" "$1/work/$d"
  mount -t overlay "overlay-$d" -o "lowerdir=/$d,upperdir=$1/upper/$d,workdir=$1/work/$d" "/$d"
done
mkdir -p /etc/cudaenv /var/lib/cudaenv "$2/etc/cudaenv" "$2/var/lib/cudaenv"
mount --bind "$2/etc/cudaenv" /etc/cudaenv
mount --bind "$2/var/lib/cudaenv" /var/lib/cudaenv
echo ready
exec sleep 100000
"""


class MachineNamespace:
    """Root's view of a test machine. A root cudaenv takes its trust from the machine's own
    /etc/cudaenv and /var/lib/cudaenv, whatever CUDAENV_SYSROOT says; this private mount namespace
    (this machine's /etc and /var overlaid, nothing written to them) has the test sysroot's
    etc/cudaenv and var/lib/cudaenv bound there, so a root cudaenv run through `prefix` reads the
    test's keys and records its trust state where the test -- and the sysroot's users -- see it.
    Needs root (mount namespaces)."""

    def __init__(self, work, sysroot):
        (Path(work) / "ns").mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                                      _MACHINE_NS_SCRIPT, "sh", str(Path(work) / "ns"), str(sysroot)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)
        line = self.proc.stdout.readline()
        if line.strip() != "ready":
            self.proc.kill()
            raise AssertionError(f"the test machine's namespace did not start: {self.proc.stderr.read()}")
        self.prefix = ["nsenter", f"--mount=/proc/{self.proc.pid}/ns/mnt", "--"]

    def close(self):
        self.proc.kill()
        self.proc.wait()


def open_to_others(path):
    """pytest's folders are 0700, and `global` refuses a version other users cannot reach: let
    them through every folder from `path` up to /tmp."""
    path = Path(path)
    for d in [path, *path.parents]:
        if d == Path(d.anchor) or str(d) in ("/tmp", "/var/tmp"):
            break
        d.chmod(d.stat().st_mode | 0o055)


class Result:
    def __init__(self, proc):
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def json(self):
        return json.loads(self.out)

    def __repr__(self):
        return f"rc={self.rc}\nstdout:\n{self.out}\nstderr:\n{self.err}"


class Cudaenv:
    def __init__(self, tmp_path):
        self.tmp = tmp_path
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CUDA", "CUDAENV_", "LD_LIBRARY_PATH", "NVIDIA_"))}
        env.update(HOME=str(tmp_path / "home"), CUDAENV_ROOT=str(tmp_path / "root"), NO_COLOR="1",
                   LC_ALL="C.UTF-8")
        if LDCONFIG:
            env["CUDAENV_LDCONFIG"] = LDCONFIG
        (tmp_path / "home").mkdir()
        self.env = env
        self.run_as = []  # AS_USER for a test whose trusted keys live under a sysroot
        open_to_others(tmp_path)

    def __call__(self, *args, env=None, cwd=None):
        e = dict(self.env)
        e.update(env or {})
        proc = subprocess.run([*self.run_as, EXE, *args], env=e, cwd=cwd or self.tmp, capture_output=True,
                              text=True, timeout=60)
        return Result(proc)


@pytest.fixture
def cudaenv(tmp_path):
    if not EXE:
        pytest.skip("CUDAENV_EXE is not set to a built cudaenv binary")
    if not Path(EXE).exists():  # CTest set it: a build that failed must not pass as skipped
        pytest.fail(f"CUDAENV_EXE={EXE} does not exist (did the build fail?)")
    return Cudaenv(tmp_path)


def assert_one_line_error(res, code):
    """The error contract: exit code, one 'cudaenv: error:' line, then only 'help:' lines."""
    assert res.rc == code, res
    lines = res.err.strip().splitlines()
    errors = [i for i, l in enumerate(lines) if l.startswith("cudaenv: error: ")]
    assert len(errors) == 1, res
    # progress lines may come before it; only help lines after
    assert all(l.startswith("help: ") for l in lines[errors[0] + 1:]), res


# --- install harness -------------------------------------------------------------------------

import hashlib
import shutil
import tarfile

from fault_server import FaultServer  # noqa: E402


@pytest.fixture(scope="session")
def fixture_dir(tmp_path_factory):
    """NVIDIA-layout archives with real ELF libraries, and manifests for them (built once)."""
    if not EXE:
        pytest.skip("CUDAENV_EXE is not set to a built cudaenv binary")
    if not Path(EXE).exists():
        pytest.fail(f"CUDAENV_EXE={EXE} does not exist (did the build fail?)")
    out = tmp_path_factory.mktemp("fixture")
    return fixture_mirror.build(out, EXE, MANIFESTS, platforms=(PLATFORM,))


@pytest.fixture(scope="session")
def newer_fixture_dir(tmp_path_factory):
    """The fixture mirror plus releases after facts.json: CUDA 13.4.2 (an index without driver
    components) and cuDNN 9.27 (an index facts.json does not list, with cudnn_jit)."""
    if not EXE or not Path(EXE).exists():
        pytest.skip("CUDAENV_EXE is not set to a built cudaenv binary")
    out = tmp_path_factory.mktemp("fixture-newer")
    return fixture_mirror.build(out, EXE, MANIFESTS, newer=True, platforms=(PLATFORM,))


@pytest.fixture
def server(fixture_dir, tmp_path):
    """A fault-injecting server over the fixture mirror; tmp_path/extra is served first."""
    (tmp_path / "extra").mkdir()
    srv = FaultServer(tmp_path / "extra", fixture_dir / "mirror")
    yield srv
    srv.close()


@pytest.fixture
def inst(cudaenv, server, fixture_dir):
    """cudaenv pointed at the fixture mirror and manifests, with short timeouts."""
    cudaenv.env.update(CUDAENV_MANIFESTS=str(fixture_dir / "manifests"), CUDAENV_MIRROR=server.url,
                       CUDAENV_RETRY_BACKOFF_MS="20", CUDAENV_RETRIES="2", CUDAENV_STALL_TIMEOUT="2",
                       CUDAENV_CONNECT_TIMEOUT="3", CUDAENV_LOCK_TIMEOUT="30",
                       # the fixture server stands for NVIDIA's host, which has no recompressed
                       # index: no request for one (test_recompressed.py turns it back on)
                       CUDAENV_RECOMPRESSED="off")
    cudaenv.root = cudaenv.tmp / "root"
    cudaenv.server = server
    cudaenv.fixture = fixture_dir
    return cudaenv


def snapshot(root, areas=("versions", "store", "state.json")):
    """Every path under versions/ and store/ and state.json, with type, mode, size, link target
    and content hash."""
    root = Path(root)
    out = {}
    for area in areas:
        base = root / area
        if not base.exists() and not base.is_symlink():
            continue
        paths = [base] if base.is_file() else sorted(base.rglob("*"))
        for p in paths:
            rel = str(p.relative_to(root))
            st = p.lstat()
            if p.is_symlink():
                out[rel] = ("l", os.readlink(p))
            elif p.is_dir():
                out[rel] = ("d", oct(st.st_mode & 0o7777))
            else:
                out[rel] = ("f", oct(st.st_mode & 0o7777), st.st_size,
                            hashlib.sha256(p.read_bytes()).hexdigest())
    return out


def assert_intact(root, before):
    """NC after a failed install: the versions and the global choice are exactly as before, and
    every store entry that was there is still there unchanged. (Archives the failed run verified
    and extracted may stay in the store, unreferenced, so a retry does not download them again.)"""
    after = snapshot(root)
    visible = lambda snap: {k: v for k, v in snap.items() if not k.startswith("store")}
    assert visible(after) == visible(before)
    assert {k: v for k, v in before.items() if k.startswith("store")}.items() <= after.items()


def leftovers(root):
    """Staging, trash and partial downloads left in the root."""
    root = Path(root)
    found = []
    for area in (".staging", ".trash"):
        if (root / area).exists():
            found += [str(p) for p in (root / area).iterdir()]
    if (root / "cache" / "downloads").exists():
        found += [str(p) for p in (root / "cache" / "downloads").iterdir()]
    return found


def component_path(fixture_dir, version, component):
    doc = json.loads((fixture_dir / "manifests" / "cuda" / f"{version}.json").read_text())
    return "/" + doc["components"][component]["platforms"][PLATFORM]["path"]


def craft_archive(path, entries, top, compression="xz"):
    """Writes a tar with raw entries: (name, kind, data_or_target, mode, extra). Names are raw."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:xz" if compression == "xz" else ("w:gz" if compression == "gz" else "w")) as tar:
        if top:
            info = tarfile.TarInfo(top + "/")
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            tar.addfile(info)
        for name, kind, payload, mode, extra in entries:
            info = tarfile.TarInfo(name)
            info.mode = mode
            for k, v in (extra or {}).items():
                setattr(info, k, v)
            if kind == "file":
                info.size = len(payload)
                tar.addfile(info, __import__("io").BytesIO(payload))
            elif kind == "dir":
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif kind == "symlink":
                info.type = tarfile.SYMTYPE
                info.linkname = payload
                tar.addfile(info)
            elif kind == "hardlink":
                info.type = tarfile.LNKTYPE
                info.linkname = payload
                tar.addfile(info)
            elif kind in ("chr", "blk", "fifo"):
                info.type = {"chr": tarfile.CHRTYPE, "blk": tarfile.BLKTYPE, "fifo": tarfile.FIFOTYPE}[kind]
                info.devmajor, info.devminor = 1, 3
                tar.addfile(info)


def replace_component(inst, tmp_path, archive_bytes_path, component="cuda_cudart", version="11.8.0"):
    """A private copy of the fixture manifests whose `component` is the given archive, served
    from tmp_path/extra at the same path the real one has."""
    man = tmp_path / "manifests"
    if not man.exists():
        shutil.copytree(inst.fixture / "manifests", man)
    doc_path = man / "cuda" / f"{version}.json"
    doc = json.loads(doc_path.read_text())
    entry = doc["components"][component]["platforms"][PLATFORM]
    dest = tmp_path / "extra" / entry["path"]
    dest.parent.mkdir(parents=True, exist_ok=True)
    data = Path(archive_bytes_path).read_bytes()
    dest.write_bytes(data)
    entry["sha256"] = hashlib.sha256(data).hexdigest()
    entry["size"] = len(data)
    doc_path.write_text(json.dumps(doc, indent=2))
    inst.env["CUDAENV_MANIFESTS"] = str(man)
    return entry


def loader_sysroot(s):
    """`s` made a machine root with its own loader configuration: /etc/ld.so.conf including
    /etc/ld.so.conf.d, and /usr/local (what `global`, `ldconfig -r` and a chroot's loader need).
    The one such helper: global, the runfile, the system root and the real binaries use it."""
    (s / "etc" / "ld.so.conf.d").mkdir(parents=True)
    (s / "usr" / "local").mkdir(parents=True)
    (s / "etc" / "ld.so.conf").write_text("include /etc/ld.so.conf.d/*.conf\n")
    return s


@pytest.fixture
def machine(inst, tmp_path):
    """A sysroot with its own /etc/ld.so.conf, tf-2.13 and tf-2.16 installed; the cudaenv root
    lives inside it (as /opt/cudaenv). For global, rollback and the kill campaign."""
    if os.geteuid() != 0:
        pytest.skip("ldconfig -r needs root")
    s = loader_sysroot(tmp_path / "sysroot")
    inst.root = s / "opt" / "cudaenv"
    inst.env.update(CUDAENV_ROOT=str(inst.root), CUDAENV_SYSROOT=str(s))
    assert inst("install", "tf-2.13", "tf-2.16").rc == 0
    inst.sysroot = s
    return inst
