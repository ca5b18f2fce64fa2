"""Forward compatibility, managed (issue 29, docs/compat.md): `install --compat` adds NVIDIA's
cuda_compat libraries (the fixture's 12.4.1 carries them in NVIDIA's nested cuda_variant layout,
a real ELF libcuda inside; from CUDA 13.4 they come from NVIDIA's per-driver index, as the
fixture's driver 620.70.10 carries them for 13.5) to a version's compat/; exec, env, the hook, shims and modulefiles put
compat/ first only where the machine's driver is older than the release needs and its GPUs are
data-center parts; a GeForce machine is refused; `global` never puts compat/ on the machine-wide
loader path. The machine is a sysroot of real sysfs and procfs files."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import EXE, MANIFESTS, PLATFORM, assert_one_line_error, loader_sysroot
import fixture_mirror
from fault_server import FaultServer

PROJECT_MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"
LMOD_INIT = "/usr/share/lmod/lmod/init/bash"
H100 = "2330"
RTX4090 = "2684"


def gpu_machine(s, driver, device):
    """`s` as a machine with one NVIDIA GPU `device` and driver `driver` loaded."""
    (s / "proc" / "driver" / "nvidia").mkdir(parents=True, exist_ok=True)
    (s / "proc" / "driver" / "nvidia" / "version").write_text(
        f"NVRM version: NVIDIA UNIX x86_64 Kernel Module  {driver}  Thu Jan  1 00:00:00 UTC 2026\n")
    dev = s / "sys" / "bus" / "pci" / "devices" / "0000:65:00.0"
    dev.mkdir(parents=True, exist_ok=True)
    for name, value in (("vendor", "0x10de"), ("class", "0x030200"), ("device", "0x" + device),
                        ("subsystem_vendor", "0x10de"), ("subsystem_device", "0x16c1")):
        (dev / name).write_text(value + "\n")


@pytest.fixture
def compat(inst, tmp_path):
    """The fixture's manifests with the project's GPU tables (which GPUs are data-center parts),
    on an H100 machine whose R535 driver is older than the 550.54.15 CUDA 12.4.1 needs."""
    man = tmp_path / "manifests"
    shutil.copytree(inst.fixture / "manifests", man)
    shutil.copy(PROJECT_MANIFESTS / "gpu-support.json", man / "gpu-support.json")
    s = tmp_path / "machine"
    gpu_machine(s, "535.104.05", H100)
    inst.root = s / "opt" / "cudaenv"  # inside the machine: the doctor sees it there
    inst.env.update(CUDAENV_MANIFESTS=str(man), CUDAENV_SYSROOT=str(s), CUDAENV_ROOT=str(inst.root))
    inst.sysroot = s
    inst.prefix = inst.root / "versions" / PLATFORM / "12.4.1"
    return inst


def ld_path(inst, **env):
    res = inst("exec", "--", "sh", "-c", 'echo "$LD_LIBRARY_PATH"', env={"CUDAENV_VERSION": "12.4.1", **env})
    assert res.rc == 0, res
    return res.out.strip().split(":")


def test_install_compat_lays_out_compat_and_exec_uses_it_on_an_old_driver(compat):
    res = compat("install", "12.4", "--compat")
    assert res.rc == 0, res
    p = compat.prefix
    assert os.readlink(p / "compat" / "libcuda.so.1") == "libcuda.so.560.35.03"
    assert not list((p / "lib64").glob("libcuda.so*")), "a compat libcuda in lib64 would reach the loader path"
    record = (p / ".cudaenv-compat").read_text()
    assert "needs 550.54.15\ncompat 560.35.03\n" in record
    assert f" {H100}" in record.splitlines()[-1] and f" {RTX4090}" not in record
    assert ld_path(compat)[:2] == [str(p / "compat"), str(p / "lib64")]
    # the real loader takes the compat libcuda: it answers as driver 560's (CUDA 12.6)
    probe = ("import ctypes; l = ctypes.CDLL('libcuda.so.1'); v = ctypes.c_int(); "
             "l.cuDriverGetVersion(ctypes.byref(v)); print(v.value)")
    res = compat("exec", "--", "/usr/bin/python3", "-c", probe, env={"CUDAENV_VERSION": "12.4.1"})
    assert res.rc == 0 and res.out.strip() == "12060", res
    # env says the same as exec
    env = compat("env", "--json", env={"CUDAENV_VERSION": "12.4.1"})
    assert env.json()["env"]["LD_LIBRARY_PATH"].split(":")[0] == str(p / "compat"), env


def test_a_driver_upgrade_turns_compat_off_by_itself(compat):
    assert compat("install", "12.4", "--compat").rc == 0
    gpu_machine(compat.sysroot, "560.35.03", H100)
    assert ld_path(compat)[0] == str(compat.prefix / "lib64")
    gpu_machine(compat.sysroot, "550.54.15", H100)  # exactly what 12.4.1 needs
    assert str(compat.prefix / "compat") not in ld_path(compat)


def test_the_shim_and_the_modulefile_decide_at_every_call(compat):
    assert compat("install", "12.4", "--compat").rc == 0
    shims = compat.root / "shims"
    env = dict(compat.env, PATH=f"{shims}:/usr/bin:/bin", CUDAENV_VERSION="12.4.1")
    out = subprocess.run([str(shims / "nvcc"), "--fixture-env"], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out
    assert out.stdout.strip() == f"LD_LIBRARY_PATH={compat.prefix / 'compat'}", out
    shim = os.path.realpath(shims / "nvcc")
    ask = lambda: subprocess.run([shim, "__compat", str(compat.prefix)], env=env, capture_output=True,
                                 text=True).stdout.strip()
    assert ask() == str(compat.prefix / "compat")
    lua = compat("modulefile", "12.4.1", "--lua")
    assert lua.rc == 0 and f"'{shim}' __compat '{compat.prefix}'" in lua.out, lua
    gpu_machine(compat.sysroot, "560.35.03", H100)
    assert ask() == ""
    out = subprocess.run([str(shims / "nvcc"), "--fixture-env"], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "LD_LIBRARY_PATH=", out


def test_lmod_loads_compat_only_where_the_machine_needs_it(compat, tmp_path):
    if not os.path.exists(LMOD_INIT):
        pytest.skip("Lmod is not installed (apt-get install lmod)")
    assert compat("install", "12.4", "--compat").rc == 0
    mods = tmp_path / "modulefiles"
    assert compat("modulefile", "12.4.1", "--to", str(mods)).rc == 0

    def loaded():
        env = {k: v for k, v in compat.env.items() if k not in ("MODULEPATH", "LOADEDMODULES")}
        script = f"source {LMOD_INIT}; module use {mods}; module load cuda/12.4.1 && echo \"L=$LD_LIBRARY_PATH\""
        res = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], env=env, capture_output=True,
                             text=True, timeout=120)
        assert res.returncode == 0, res
        return [l[2:] for l in res.stdout.splitlines() if l.startswith("L=")][0].split(":")

    assert loaded()[:2] == [str(compat.prefix / "compat"), str(compat.prefix / "lib64")]
    gpu_machine(compat.sysroot, "560.35.03", H100)
    assert loaded()[0] == str(compat.prefix / "lib64")


def test_a_geforce_machine_is_refused_and_nothing_is_installed(compat):
    gpu_machine(compat.sysroot, "535.104.05", RTX4090)
    res = compat("install", "12.4", "--compat")
    assert_one_line_error(res, 8)
    assert "NVIDIA GeForce RTX 4090" in res.err and "error 804" in res.err, res
    assert "install a driver >= 550.54.15" in res.err
    assert not compat.prefix.exists()


def test_a_geforce_beside_an_installed_compat_version_runs_without_it(compat):
    assert compat("install", "12.4", "--compat").rc == 0
    gpu_machine(compat.sysroot, "535.104.05", RTX4090)
    assert str(compat.prefix / "compat") not in ld_path(compat)


def test_a_release_without_cuda_compat_is_not_found_and_names_those_with_it(compat):
    res = compat("install", "11.8", "--compat")
    assert_one_line_error(res, 9)
    assert "CUDA 11.8.0 has no forward-compatibility libraries (cuda_compat) for linux-x86_64" in res.err
    assert "cuda-compat-11-8" in res.err and "CUDA 12.4.1" in res.err, res


def test_a_version_keeps_its_compat_libraries_when_composed_again(compat):
    assert compat("install", "12.4", "--compat").rc == 0
    res = compat("install", "12.4", "--profile", "devel")
    assert res.rc == 0, res
    assert "keeps its forward-compatibility libraries" in res.err + res.out, res
    assert (compat.prefix / "compat" / "libcuda.so.1").exists()
    assert (compat.prefix / ".cudaenv-compat").exists()


def test_global_never_puts_compat_on_the_machine_wide_loader_path(compat):
    if os.geteuid() != 0:
        pytest.skip("ldconfig -r needs root")
    loader_sysroot(compat.sysroot)
    assert compat("install", "12.4", "--compat").rc == 0
    res = compat("global", "12.4.1")
    assert res.rc == 0, res
    confs = "".join(p.read_text() for p in (compat.sysroot / "etc" / "ld.so.conf.d").iterdir())
    assert confs == "/usr/local/cuda/lib64\n"
    cache = subprocess.run(["/sbin/ldconfig", "-r", str(compat.sysroot), "-p"], capture_output=True, text=True)
    assert "libcuda.so.1" not in cache.stdout, cache.stdout


def test_the_prompt_hook_applies_compat_and_takes_it_back(compat):
    assert compat("install", "12.4", "--compat").rc == 0
    shim = os.path.realpath(compat.root / "shims" / "nvcc")
    script = (f'eval "$({shim} __hook bash)"; echo "A=$LD_LIBRARY_PATH"; '
              f'unset CUDAENV_VERSION; eval "$({shim} __hook bash)"; echo "B=$LD_LIBRARY_PATH"')
    env = dict(compat.env, CUDAENV_VERSION="12.4.1", LD_LIBRARY_PATH="/opt/mine")
    res = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], env=env, capture_output=True,
                         text=True)
    assert res.returncode == 0, res
    lines = dict(l.split("=", 1) for l in res.stdout.splitlines())
    p = compat.prefix
    assert lines["A"] == f"{p / 'compat'}:{p / 'lib64'}:/opt/mine", res
    assert lines["B"] == "/opt/mine", res


def test_keeping_them_is_not_refused_on_a_machine_that_cannot_use_them(compat):
    # a version on a shared disk, composed again from a GeForce workstation: kept, not refused
    assert compat("install", "12.4", "--compat").rc == 0
    gpu_machine(compat.sysroot, "535.104.05", RTX4090)
    res = compat("install", "12.4", "--profile", "devel")
    assert res.rc == 0, res
    assert (compat.prefix / ".cudaenv-compat").exists()


def compat_probe(inst):
    res = inst("doctor", "--only", "compat", "--json", env={"CUDAENV_VERSION": "12.4.1"})
    assert res.rc in (0, 1), res
    return {p["id"]: p for p in res.json()["probes"]}["compat"]


def test_the_doctor_reports_the_compat_state_it_measured(compat):
    assert compat("install", "12.4", "--compat").rc == 0
    # the query child loads the version's real compat libcuda and cuInit answers
    probe = compat_probe(compat)
    assert probe["status"] == "ok", probe
    assert "runs on driver 535.104.05 through the version's forward-compatibility libraries" in probe["finding"]
    gpu_machine(compat.sysroot, "535.104.05", RTX4090)
    probe = compat_probe(compat)
    assert probe["status"] == "warn" and "error 804" in probe["finding"], probe


def test_a_fleet_mirror_carries_the_compat_archive_and_a_host_installs_from_it(compat, tmp_path):
    dest = tmp_path / "site-mirror"
    res = compat("mirror", "12.4", "--compat", "--to", str(dest), "--json")
    assert res.rc == 0, res
    paths = {f["path"] for f in res.json()["files"]}
    assert any("cuda_compat-linux-x86_64-560.35.03_cuda12.4-archive" in p for p in paths), paths
    srv = FaultServer(tmp_path / "nothing-extra", dest)
    try:
        (tmp_path / "nothing-extra").mkdir()
        res = compat("install", "12.4", "--compat", env={"CUDAENV_MIRROR": srv.url})
        assert res.rc == 0, res
        assert (compat.prefix / "compat" / "libcuda.so.1").exists()
    finally:
        srv.close()


# --- from CUDA 13.4: cuda_compat from NVIDIA's per-driver index ---------------------------------

@pytest.fixture(scope="module")
def driver_fixture(tmp_path_factory):
    """The newer fixture plus CUDA 13.5.0 on the mirror -- announced in DIR/manifests (its index
    not known), a release in DIR/manifests-later -- and driver 620.70.10's per-driver index
    carrying cuda_compat for 13.5 (a real libcuda), which both sets know with its sha256."""
    if not EXE or not Path(EXE).exists():
        pytest.skip("CUDAENV_EXE is not set to a built cudaenv binary")
    out = tmp_path_factory.mktemp("fixture-driver-compat")
    return fixture_mirror.build(out, EXE, MANIFESTS, newer=True, platforms=(PLATFORM,), driver_compat=True)


@pytest.fixture
def later(cudaenv, driver_fixture, tmp_path):
    """cudaenv on an H100 machine whose driver (580.65.06, CUDA 13.0's) is older than 13.5's,
    against the fixture's mirror (tmp_path/extra served first) and its first manifests set."""
    sets = {}
    for name in ("manifests", "manifests-later"):
        sets[name] = tmp_path / name
        shutil.copytree(driver_fixture / name, sets[name])
        shutil.copy(PROJECT_MANIFESTS / "gpu-support.json", sets[name] / "gpu-support.json")
    (tmp_path / "extra").mkdir()
    srv = FaultServer(tmp_path / "extra", driver_fixture / "mirror")
    s = tmp_path / "machine"
    gpu_machine(s, "580.65.06", H100)
    cudaenv.root = s / "opt" / "cudaenv"
    cudaenv.env.update(CUDAENV_MANIFESTS=str(sets["manifests"]), CUDAENV_SYSROOT=str(s),
                       CUDAENV_ROOT=str(cudaenv.root), CUDAENV_MIRROR=srv.url, CUDAENV_RECOMPRESSED="off",
                       CUDAENV_RETRIES="1", CUDAENV_RETRY_BACKOFF_MS="20")
    cudaenv.sets = sets
    cudaenv.extra = tmp_path / "extra"
    cudaenv.srv = srv
    cudaenv.prefix = cudaenv.root / "versions" / PLATFORM / "13.5.0"
    yield cudaenv
    srv.close()


def test_cuda_13_5_is_announced_until_a_manifests_set_carries_it_then_compat_comes_from_the_driver(later):
    # NVIDIA released it, its index is not known: listed and resolved with what is known, refused
    doc = later("list", "--available", "cuda", "--json").json()
    announced = [c for c in doc["cuda"] if c["source"] == "announced"]
    assert [(c["version"], c["status"], c["installable"], c["driver_branch"], c["driver_branch_basis"])
            for c in announced] == [("13.5", "released", False, 620, "inferred")], doc
    res = later("resolve", "13.5")
    assert res.rc == 0, res
    assert "not installable yet: CUDA 13.5 is released, but NVIDIA's index for it is not known" in res.out
    assert "cuda_compat for CUDA 13.5 in driver 620.70.10's index" in res.out, res.out
    res = later("install", "13.5", "--compat")
    assert_one_line_error(res, 9)
    assert "CUDA 13.5 is released, but NVIDIA's index for it is not known to the manifests" in res.err
    assert "cudaenv install 13.4.2" in res.err, res
    assert not later.prefix.exists() and not (later.root / "versions").exists()
    # a later set carries the release (what `cudaenv update` delivers): the same binary installs
    # it, cuda_compat from driver 620.70.10's index, verified by the sha256 the set pins
    later.env["CUDAENV_MANIFESTS"] = str(later.sets["manifests-later"])
    assert not [c for c in later("list", "--available", "cuda", "--json").json()["cuda"]
                if c["source"] == "announced"]
    res = later("install", "13.5", "--compat")
    assert res.rc == 0, res
    p = later.prefix
    assert os.readlink(p / "compat" / "libcuda.so.1") == "libcuda.so.620.70.10"
    assert not list((p / "lib64").glob("libcuda.so*"))
    assert "compat 620.70.10\n" in (p / ".cudaenv-compat").read_text()
    res = later("exec", "--", "sh", "-c", 'echo "$LD_LIBRARY_PATH"', env={"CUDAENV_VERSION": "13.5.0"})
    assert res.out.strip().split(":")[:2] == [str(p / "compat"), str(p / "lib64")], res
    probe = ("import ctypes; l = ctypes.CDLL('libcuda.so.1'); v = ctypes.c_int(); "
             "l.cuDriverGetVersion(ctypes.byref(v)); print(v.value)")
    res = later("exec", "--", "/usr/bin/python3", "-c", probe, env={"CUDAENV_VERSION": "13.5.0"})
    assert res.rc == 0 and res.out.strip() == "13050", res
    # fetched from the per-driver tree of NVIDIA's layout, not the CUDA index's
    assert any(path.startswith("/nvidia-driver/redist/cuda_compat/") for path, _ in later.srv.requests)


def test_a_changed_compat_archive_from_the_driver_index_is_refused(later, driver_fixture):
    later.env["CUDAENV_MANIFESTS"] = str(later.sets["manifests-later"])
    doc = json.loads((later.sets["manifests-later"] / "driver-indexes.json").read_text())
    path = doc["drivers"][0]["cuda_compat"]["platforms"][PLATFORM]["path"]
    bad = later.extra / path
    bad.parent.mkdir(parents=True)
    data = bytearray((driver_fixture / "mirror" / path).read_bytes())
    data[-1] ^= 0xFF  # same size, another sha256
    bad.write_bytes(bytes(data))
    res = later("install", "13.5", "--compat")
    assert_one_line_error(res, 4)
    assert "checksum mismatch" in res.err and "nvidia-driver/redist/cuda_compat/" in res.err, res
    assert not later.prefix.exists()


def test_13_4_without_a_known_driver_index_is_refused_as_not_known(later):
    res = later("install", "13.4", "--compat")
    assert_one_line_error(res, 9)
    assert ("the forward-compatibility libraries (cuda_compat) for CUDA 13.4 are not known: from CUDA "
            "13.4 NVIDIA ships them in a per-driver index") in res.err, res
    assert "cuda-compat-13-4" in res.err
    assert not (later.root / "versions").exists()
