"""Arm: Grace-class servers (linux-sbsa), Jetson Orin (NVIDIA's linux-aarch64 archives, and
linux-sbsa with cuda_compat_orin for CUDA 13) and Thor (linux-sbsa from CUDA 13), and one root
shared by x86_64 and Arm hosts -- driven with the real arm64 binary under qemu-user.

The arm64 binary is CUDAENV_EXE when the suites run against it (.ci/arm64), else
CUDAENV_TEST_ARM64_EXE; the x86_64 one is CUDAENV_EXE in the plain runs, else
CUDAENV_TEST_X86_EXE (.ci/arm64 passes the ci build's). A test needing a binary that is not
there is skipped; .ci/arm64 runs every one of them."""
import json
import os
import platform
import subprocess
from pathlib import Path

import pytest

from conftest import EXE, PLATFORM, assert_one_line_error, open_to_others
import fixture_mirror
from fault_server import FaultServer

ARM_EXE = EXE if PLATFORM != "linux-x86_64" else os.environ.get("CUDAENV_TEST_ARM64_EXE")
X86_EXE = EXE if PLATFORM == "linux-x86_64" else os.environ.get("CUDAENV_TEST_X86_EXE")
TF216 = "12.4.1+cudnn9.1.1.17"
TF213 = "11.8.0+cudnn8.6.0.163"

# What a Jetson says about itself, in the forms real boards print (tests/unit/core/sys/
# platform_test.cpp holds the verbatim samples with their threads: Thor R38 + tegra264,
# jetson_stats #711; Orin's compatible list, NVIDIA/jetson-gpio #125): an Orin on L4T 36.4.3
# and a Thor on 38.2, written in those forms
ORIN_RELEASE = ("# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64, "
                "DATE: Wed Jan  8 01:49:37 UTC 2025\n"
                "# KERNEL_VARIANT: oot\nTARGET_USERSPACE_LIB_DIR=nvidia\nTARGET_USERSPACE_LIB_DIR_PATH=usr/lib/aarch64-linux-gnu/nvidia\n")
ORIN_COMPATIBLE = b"nvidia,p3737-0000+p3701-0005\0nvidia,p3701-0005\0nvidia,tegra234\0"
THOR_RELEASE = ("# R38 (release), REVISION: 2.0, GCID: 41844464, BOARD: generic, EABI: aarch64, "
                "DATE: Fri Aug 22 00:55:42 UTC 2025\n")
THOR_COMPATIBLE = b"nvidia,p3971-0080+p3834-0008\0nvidia,p3834-0008\0nvidia,tegra264\0"


def can_run_arm64():
    return platform.machine() == "aarch64" or Path("/proc/sys/fs/binfmt_misc/qemu-aarch64").exists()


def need(*exes):
    for e in exes:
        if not e or not Path(e).exists():
            pytest.skip("needs both the arm64 and the x86_64 cudaenv (.ci/arm64 runs this)")
    if not can_run_arm64():
        pytest.skip("no qemu-aarch64 registered with binfmt_misc")


def elf_machine(path):
    head = Path(path).read_bytes()[:20]
    return {62: "x86_64", 183: "aarch64"}[int.from_bytes(head[18:20], "little")]


class Host:
    """One host of a fleet: a cudaenv binary with its own environment (and machine)."""

    def __init__(self, exe, tmp, name, **env):
        self.exe = exe
        home = tmp / f"home-{name}"
        home.mkdir()
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("CUDA", "CUDAENV_", "LD_LIBRARY_PATH", "NVIDIA_"))}
        self.env.update(HOME=str(home), NO_COLOR="1", LC_ALL="C.UTF-8", CUDAENV_RECOMPRESSED="off",
                        CUDAENV_RETRIES="1", CUDAENV_RETRY_BACKOFF_MS="20", **env)

    def __call__(self, *args, env=None):
        e = dict(self.env)
        e.update(env or {})
        p = subprocess.run([self.exe, *args], env=e, capture_output=True, text=True, timeout=300)
        return p

    def json(self, *args):
        p = self(*args, "--json")
        assert p.returncode == 0, p
        return json.loads(p.stdout)


@pytest.fixture(scope="module")
def arm_mirror(tmp_path_factory):
    """The fixture releases for linux-x86_64, linux-sbsa and linux-aarch64 (each where NVIDIA
    ships it), CUDA 13.4.2 with cuda_compat_orin included; manifests made by the real generator."""
    gen = X86_EXE if X86_EXE and Path(X86_EXE).exists() else ARM_EXE
    if not gen or not Path(gen).exists() or (gen == ARM_EXE and not can_run_arm64()):
        pytest.skip("no cudaenv binary to generate the manifests with")
    out = tmp_path_factory.mktemp("arm-fixture")
    fixture_mirror.build(out, gen, None, newer=True, platforms=fixture_mirror.ALL)
    (out / "extra").mkdir()
    srv = FaultServer(out / "extra", out / "mirror")
    yield out, srv
    srv.close()


def host(exe, tmp_path, name, mirror, **env):
    out, srv = mirror
    return Host(exe, tmp_path, name, CUDAENV_MIRROR=srv.url, CUDAENV_MANIFESTS=str(out / "manifests"), **env)


def jetson(tmp_path, name, release, compatible):
    s = tmp_path / name
    (s / "etc").mkdir(parents=True)
    (s / "etc" / "nv_tegra_release").write_text(release)
    (s / "proc" / "device-tree").mkdir(parents=True)
    (s / "proc" / "device-tree" / "compatible").write_bytes(compatible)
    return s


def version_dir(root, plat, name):
    return Path(root) / "versions" / plat / name


def test_one_root_serves_x86_and_arm_hosts_each_its_own(arm_mirror, tmp_path):
    """An NFS root shared by an x86_64 node and a Grace node: both install tf-2.16, the root holds
    both builds, each host lists, selects and runs its own, and removing one leaves the other."""
    need(ARM_EXE, X86_EXE)
    root = tmp_path / "shared"
    open_to_others(tmp_path)
    x86 = host(X86_EXE, tmp_path, "x86", arm_mirror, CUDAENV_ROOT=str(root))
    grace = host(ARM_EXE, tmp_path, "grace", arm_mirror, CUDAENV_ROOT=str(root))
    for h in (x86, grace):
        p = h("install", "tf-2.16")
        assert p.returncode == 0, p
    for h, plat, arch in ((x86, "linux-x86_64", "x86_64"), (grace, "linux-sbsa", "aarch64")):
        d = version_dir(root, plat, TF216)
        assert json.loads((d / ".cudaenv-version.json").read_text())["platform"] == plat
        assert elf_machine(d / "lib64" / "libcudart.so.12.4.127") == arch
        listed = h.json("list")
        assert [v["version"] for v in listed["versions"]] == [TF216], listed
        # exec runs the host's own build: the runtime its CUDA_HOME holds is its architecture
        p = h("exec", "--", "sh", "-c", 'echo "$CUDA_HOME"', env={"CUDAENV_VERSION": "12.4"})
        assert p.returncode == 0, p
        home = Path(p.stdout.strip())
        assert elf_machine(home / "lib64" / "libcudart.so.12.4.127") == arch, home
    # the x86 host removes its build; the Grace node's stays, listed and runnable
    assert x86("uninstall", TF216).returncode == 0
    assert not version_dir(root, "linux-x86_64", TF216).exists()
    assert [v["version"] for v in grace.json("list")["versions"]] == [TF216]
    assert x86.json("list")["versions"] == []
    p = x86("exec", "--", "true", env={"CUDAENV_VERSION": TF216})
    assert p.returncode != 0 and "linux-sbsa" in p.stderr, p


def test_jetson_orin_takes_linux_aarch64_and_cuda13_through_compat_orin(arm_mirror, tmp_path):
    need(ARM_EXE)
    s = jetson(tmp_path, "orin", ORIN_RELEASE, ORIN_COMPATIBLE)
    orin = host(ARM_EXE, tmp_path, "orin", arm_mirror, CUDAENV_SYSROOT=str(s), CUDAENV_ROOT=str(tmp_path / "root"))
    doc = orin.json("resolve", "tf-2.16")
    assert doc["platform"] == "linux-aarch64", doc
    p = orin("install", "tf-2.16")
    assert p.returncode == 0, p
    d = version_dir(tmp_path / "root", "linux-aarch64", TF216)
    assert elf_machine(d / "lib64" / "libcudart.so.12.4.127") == "aarch64"
    assert json.loads((d / ".cudaenv-version.json").read_text())["platform"] == "linux-aarch64"
    # TensorFlow 2.13 wants cuDNN 8.6, which NVIDIA never built for Jetson: refused, and said
    p = orin("install", "tf-2.13")
    assert p.returncode != 0
    err = p.stderr
    assert "linux-aarch64" in err and "JetPack" in err, err
    # CUDA 13 on an Orin: the SBSA toolkit with NVIDIA's Orin compatibility driver
    p = orin("install", "13.4")
    assert p.returncode == 0, p
    d13 = version_dir(tmp_path / "root", "linux-sbsa", "13.4.2")
    assert (d13 / "compat_orin").is_dir(), sorted(x.name for x in d13.iterdir())
    p = orin("exec", "--", "sh", "-c", 'echo "$LD_LIBRARY_PATH"', env={"CUDAENV_VERSION": "13.4"})
    assert p.returncode == 0, p
    assert p.stdout.strip().split(":")[0] == f"{d13}/compat_orin", p.stdout


def test_jetson_thor_takes_sbsa_from_cuda_13_and_refuses_12(arm_mirror, tmp_path):
    need(ARM_EXE)
    s = jetson(tmp_path, "thor", THOR_RELEASE, THOR_COMPATIBLE)
    thor = host(ARM_EXE, tmp_path, "thor", arm_mirror, CUDAENV_SYSROOT=str(s), CUDAENV_ROOT=str(tmp_path / "root"))
    p = thor("install", "12.4")
    assert p.returncode != 0
    assert "Thor" in p.stderr and "13" in p.stderr and "JetPack 7" in p.stderr, p.stderr
    assert thor.json("resolve", "13.4")["platform"] == "linux-sbsa"
    p = thor("install", "13.4")
    assert p.returncode == 0, p
    assert not (version_dir(tmp_path / "root", "linux-sbsa", "13.4.2") / "compat_orin").exists()
