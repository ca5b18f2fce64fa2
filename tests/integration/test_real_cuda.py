"""NVIDIA's real binaries: CUDA 11.8 from Debian's non-free component, repacked into NVIDIA's
redistrib layout (tests/support/real_cuda.py) and installed with cudaenv; and the machine's own
CUDA toolkit in /usr/local/cuda-* where there is one (read only).

Fixtures answer every question perfectly; these do not. A CUDA 11 runtime without a driver
answers cudaRuntimeGetVersion with 35 and no value; nvcc finds its toolkit from argv[0]; nvcc
11.8 refuses gcc 12 and has no NVCC_CCBIN. Every journey here runs the real nvcc, the real
loader and real shells.

The .debs (~870 MB) and the repacked archives are cached (real_cuda.py: $CUDAENV_REAL_CACHE,
else /var/cache/cudaenv-tests as root): a cold run downloads and repacks (~1.5 min here), a
warm one starts at once. CTest label: `real`.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PLATFORM, EXE, MANIFESTS, FaultServer, loader_sysroot, open_to_others

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import real_cuda  # noqa: E402

VERSION = "11.8.0"
GXX11 = shutil.which("g++-11")
REAL13 = Path("/usr/local/cuda-13.0")

HELLO = r"""
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <dlfcn.h>
__global__ void kernel(int *out) { *out = 42; }
int main() {
    int v = -1;
    int rc = (int)cudaRuntimeGetVersion(&v);
    Dl_info info{};
    dladdr((void *)&cudaRuntimeGetVersion, &info);
    // the file the kernel mapped: the loader's name may be a link
    char line[4096], mapped[4096] = "";
    FILE *maps = fopen("/proc/self/maps", "r");
    while (maps && fgets(line, sizeof line, maps)) {
        char *p = strchr(line, '/');
        if (p && strstr(p, "libcudart")) { p[strcspn(p, "\n")] = 0; strcpy(mapped, p); break; }
    }
    printf("rc=%d version=%d dladdr=%s mapped=%s\n", rc, v, info.dli_fname, mapped);
    return 0;
}
"""


@pytest.fixture(scope="module")
def real():
    if not EXE:
        pytest.skip("CUDAENV_EXE is not set to a built cudaenv binary")
    if not Path(EXE).exists():
        pytest.fail(f"CUDAENV_EXE={EXE} does not exist (did the build fail?)")
    if os.environ.get("CUDAENV_REAL_CUDA") == "0":
        pytest.skip("CUDAENV_REAL_CUDA=0")
    return real_cuda.prepare(cudaenv=EXE, project_manifests=MANIFESTS)


@pytest.fixture(scope="module")
def server(real, tmp_path_factory):
    extra = tmp_path_factory.mktemp("extra")
    srv = FaultServer(extra, real / "mirror")
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def installed(real, server, tmp_path_factory):
    """One install of the real 11.8.0 (cudart, nvcc, cuobjdump) for the whole module."""
    base = tmp_path_factory.mktemp("real")
    root = base / "root"
    env = base_env(base, root, real, server)
    res = subprocess.run([EXE, "install", VERSION, "--profile", "devel"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return root


def base_env(base, root, real, server):
    open_to_others(base)  # `global` refuses a version other users cannot reach
    home = base / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDA", "CUDAENV_", "LD_LIBRARY_PATH", "NVIDIA_", "NVCC_"))}
    env.update(HOME=str(home), CUDAENV_ROOT=str(root), CUDAENV_MANIFESTS=str(real / "manifests"),
               CUDAENV_MIRROR=server.url, NO_COLOR="1", LC_ALL="C.UTF-8", PATH="/usr/bin:/bin")
    return env


@pytest.fixture
def run(installed, real, server, tmp_path):
    """cudaenv (or any command) in a project folder pinned to the real 11.8.0."""
    env = base_env(tmp_path, installed, real, server)
    (tmp_path / "hello.cu").write_text(HELLO)
    (tmp_path / ".cuda-version").write_text(VERSION + "\n")

    def call(*args, extra=None, timeout=180):
        e = dict(env)
        e.update(extra or {})
        return subprocess.run(list(args), env=e, cwd=tmp_path, capture_output=True, text=True,
                              timeout=timeout)
    call.tmp = tmp_path
    call.root = installed
    call.env = env
    return call


def prefix(root):
    return root / "versions" / PLATFORM / VERSION


def need_gxx11():
    if not GXX11:
        pytest.skip("needs g++-11 (nvcc 11.8 accepts gcc <= 11; .ci/deps installs it)")


def parse(out):
    return dict(w.split("=", 1) for w in out.split())


# -- exec -------------------------------------------------------------------------------------

def test_exec_runs_the_real_nvcc_with_its_own_arguments(run):
    for cmd in (["exec", "nvcc", "--version"], ["exec", "--", "nvcc", "--version"]):
        res = run(EXE, *cmd)
        assert res.returncode == 0, res
        assert "Cuda compilation tools, release 11.8, V11.8.89" in res.stdout
        assert "cudaenv" not in res.stdout


def test_exec_compiles_and_the_program_loads_the_versions_runtime(run):
    need_gxx11()
    res = run(EXE, "exec", "--", "nvcc", "-ccbin", "g++-11", "-cudart", "shared", "hello.cu", "-o", "hello")
    assert res.returncode == 0, res.stderr
    res = run(EXE, "exec", "./hello")
    assert res.returncode == 0, res.stderr
    got = parse(res.stdout)
    # no driver here: the real CUDA 11 runtime answers 35 (cudaErrorInsufficientDriver), no value
    if not Path("/proc/driver/nvidia/version").exists():
        assert got["rc"] == "35" and got["version"] == "-1", got
    assert got["mapped"] == str(prefix(run.root) / "lib64" / "libcudart.so.11.8.89"), got


# -- shims and shell integration ----------------------------------------------------------------

def test_shims_give_nvcc_its_real_path(run):
    """nvcc finds its toolkit from argv[0]: through a shim it must see the version's bin/, even
    with another CUDA's nvcc further down PATH."""
    need_gxx11()
    shims = run.root / "shims"
    other = f":{REAL13}/bin" if REAL13.is_dir() else ""
    path = {"PATH": f"{shims}{other}:/usr/bin:/bin"}
    res = run("nvcc", "-dryrun", "-ccbin", "g++-11", "hello.cu", extra=path)
    assert res.returncode == 0, res.stderr
    here = f"_HERE_={prefix(run.root)}/bin"
    assert here in res.stderr, res.stderr
    assert f"-I{prefix(run.root)}/bin/../targets/x86_64-linux/include" in res.stderr
    if other:  # only PATH names the other CUDA (after the version's own folders); nothing else
        assert [l for l in res.stderr.splitlines() if str(REAL13) in l and not l.startswith("#$ PATH=")] == []
        assert f"#$ PATH={prefix(run.root)}/bin/../nvvm/bin:{prefix(run.root)}/bin:" in res.stderr
    res = run("nvcc", "-ccbin", "g++-11", "-cudart", "shared", "hello.cu", "-o", "hello", extra=path)
    assert res.returncode == 0, res.stderr
    res = run("cuobjdump", "--list-elf", "hello", extra=path)
    assert res.returncode == 0 and "sm_" in res.stdout, res


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_init_shell_integration_compiles(run, shell):
    need_gxx11()
    if not shutil.which(shell):
        pytest.skip(f"no {shell}")
    init = {"bash": f'eval "$("{EXE}" init - bash)"', "zsh": f'eval "$("{EXE}" init - zsh)"',
            "fish": f'"{EXE}" init - fish | source'}[shell]
    script = f"{init}; nvcc -ccbin g++-11 -cudart shared hello.cu -o hello_{shell} && ./hello_{shell}"
    args = {"bash": ["bash", "--norc", "--noprofile", "-c", script], "zsh": ["zsh", "-f", "-c", script],
            "fish": ["fish", "--no-config", "-c", script]}[shell]
    res = run(*args)
    # the program itself runs without cudaenv's environment: no loader path to the version
    assert (run.tmp / f"hello_{shell}").exists(), res.stderr
    res = run(EXE, "exec", f"./hello_{shell}")
    assert parse(res.stdout)["mapped"].endswith("/versions/linux-x86_64/11.8.0/lib64/libcudart.so.11.8.89"), res


# -- global, and the real loader -------------------------------------------------------------------

def test_after_global_the_loader_maps_the_versions_runtime(real, server, tmp_path):
    """Inside a private mount namespace the sysroot's /etc and /usr/local are the machine's: a
    program nvcc built against libcudart.so.11.0 maps the version's libcudart.so.11.8.89."""
    need_gxx11()
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare")
    s = loader_sysroot(tmp_path / "sysroot")
    root = s / "opt" / "cudaenv"
    env = base_env(tmp_path, root, real, server)
    env["CUDAENV_SYSROOT"] = str(s)
    go = lambda *a: subprocess.run([EXE, *a], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert go("install", VERSION).returncode == 0
    (tmp_path / "hello.cu").write_text(HELLO)
    res = go("global", VERSION)
    assert res.returncode == 0, res.stderr
    res = go("exec", "--", "nvcc", "-ccbin", "g++-11", "-cudart", "shared", str(tmp_path / "hello.cu"),
             "-o", str(tmp_path / "hello"))
    assert res.returncode == 0, res.stderr
    script = (f'mount --make-rprivate / && mount -t tmpfs tmpfs /opt && mkdir /opt/cudaenv && '
              f'mount --bind "{root}" /opt/cudaenv && mount --bind "{s}/usr/local" /usr/local && '
              f'mount --bind "{s}/etc" /etc && env -u LD_LIBRARY_PATH "{tmp_path}/hello"')
    out = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True)
    if "mount:" in out.stderr:
        pytest.skip("cannot mount here: " + out.stderr.strip())
    assert out.returncode == 0, out.stderr
    got = parse(out.stdout)
    assert got["dladdr"] == "/usr/local/cuda/lib64/libcudart.so.11.0", got
    assert got["mapped"] == f"/opt/cudaenv/versions/{PLATFORM}/{VERSION}/lib64/libcudart.so.11.8.89", got


# -- doctor ---------------------------------------------------------------------------------------

def doctor(run, extra=None):
    res = run(EXE, "doctor", "--json", extra=extra)
    assert res.returncode in (0, 1), res
    return {p["id"]: p for p in __import__("json").loads(res.stdout)["probes"]}


def test_doctor_reads_the_real_runtime_without_a_false_failure(run):
    probes = doctor(run)
    t = probes["toolkit"]
    assert t["status"] == "ok", t
    assert "CUDA 11.8" in t["finding"]
    details = "\n".join(t["details"])
    if not Path("/proc/driver/nvidia/version").exists():
        assert "returned 35 (cudaErrorInsufficientDriver)" in details, t
    assert "cuda_runtime_api.h: 11.8" in details and "nvcc --version: 11.8.89" in details
    # nothing tells the user to reinstall what is whole
    for p in probes.values():
        assert "reinstall" not in (p.get("fix") or "") and "uninstall" not in (p.get("fix") or ""), p


def test_gcc12_finding_and_its_fix_work_for_real(run):
    """gcc 12 on PATH: the real nvcc 11.8 refuses it; NVCC_CCBIN changes nothing (nvcc 11.8 does
    not read it); the doctor's fix (NVCC_PREPEND_FLAGS) makes the real compile pass."""
    need_gxx11()
    gcc = subprocess.run(["gcc", "-dumpversion"], capture_output=True, text=True).stdout.strip()
    if int(gcc.split(".")[0]) <= 11:
        pytest.skip(f"gcc {gcc} is one nvcc 11.8 accepts")
    res = run(EXE, "exec", "nvcc", "-cudart", "shared", "hello.cu", "-o", "a")
    assert res.returncode != 0 and "unsupported GNU version" in res.stderr, res
    c = doctor(run)["compiler"]
    assert c["status"] == "warn" and f"gcc {gcc}" in c["finding"], c
    assert "NVCC_PREPEND_FLAGS='-ccbin /usr/bin/g++-11'" in c["fix"], c

    ignored = {"NVCC_CCBIN": GXX11}
    res = run(EXE, "exec", "nvcc", "-cudart", "shared", "hello.cu", "-o", "a", extra=ignored)
    assert res.returncode != 0 and "unsupported GNU version" in res.stderr, res
    c = doctor(run, ignored)["compiler"]
    assert c["status"] == "warn" and any("is ignored" in d for d in c["details"]), c

    fixed = {"NVCC_PREPEND_FLAGS": "-ccbin /usr/bin/g++-11"}
    res = run(EXE, "exec", "nvcc", "-cudart", "shared", "hello.cu", "-o", "a", extra=fixed)
    assert res.returncode == 0, res.stderr
    c = doctor(run, fixed)["compiler"]
    assert c["status"] == "ok" and "gcc 11" in c["finding"], c


# -- the machine's own toolkit (read only) -------------------------------------------------------------

@pytest.mark.skipif(not REAL13.is_dir(), reason="no CUDA toolkit in /usr/local/cuda-13.0 here")
def test_machines_cuda13_through_exec_and_the_system_shim(run, tmp_path):
    """Nothing selected (system): exec and the shims run the machine's nvcc by its real path."""
    (run.tmp / ".cuda-version").unlink()
    before = sorted((str(p), p.lstat().st_mtime_ns) for p in REAL13.rglob("*"))
    path = {"PATH": f"{run.root / 'shims'}:{REAL13}/bin:/usr/bin:/bin"}
    res = run("nvcc", "-dryrun", "hello.cu", extra=path)
    assert res.returncode == 0 and f"_HERE_={REAL13}/bin" in res.stderr, res.stderr
    res = run(EXE, "exec", "nvcc", "-cudart", "shared", "hello.cu", "-o", "hello13", extra=path)
    assert res.returncode == 0, res.stderr
    res = run("./hello13", extra={"LD_LIBRARY_PATH": f"{REAL13}/lib"})
    got = parse(res.stdout)
    assert got["mapped"].startswith(str(REAL13)), got
    if not Path("/proc/driver/nvidia/version").exists():
        assert got["version"] == "13000", got  # 13.0 answers without a driver
    assert sorted((str(p), p.lstat().st_mtime_ns) for p in REAL13.rglob("*")) == before
