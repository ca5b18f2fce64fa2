"""cudaenv doctor against arm64 fixture machines (tests/support/fixture_sysroot.py,
Machine(arch="arm64")): a GH200 Grace node with NVIDIA's arm64 debs, a Jetson Orin on JetPack 6
(L4T R36) and a Jetson Thor on JetPack 7 (L4T R38). The doctor takes the machine's kind from the
sysroot's own files (docs/doctor.md, "arm64, Jetson and Grace"), so its library folders, headers
and toolkit targets are the arm64 ones whether it runs on x86_64 (the plain runs) or is the arm64
build under qemu-user (.ci/arm64: the fixture libraries are then aarch64 ones)."""
import json
import os

import pytest

import fixture_sysroot  # noqa: E402  (conftest puts tests/support on sys.path)
from conftest import PLATFORM


@pytest.fixture(scope="session")
def libs(tmp_path_factory):
    return fixture_sysroot.Libs(tmp_path_factory.mktemp("doctor-arm-libs"), PLATFORM)


def machine(cudaenv, libs, tmp_path, build):
    if os.geteuid() != 0:
        pytest.skip("ldconfig -r needs root (chroot)")
    m = fixture_sysroot.Machine(tmp_path / "sys", libs, arch="arm64")
    build(m)
    cudaenv.env.pop("container", None)
    cudaenv.env.update(CUDAENV_SYSROOT=str(m.root), **m.env())
    m.run = cudaenv
    return m


def doctor(m, *args):
    res = m.run("doctor", "--json", *args)
    assert res.rc in (0, 1), res
    return res, {p["id"]: p for p in res.json()["probes"]}


def expect(p, status, *words):
    assert p["status"] == status, json.dumps(p, indent=2)
    text = "\n".join([p["finding"], *p["details"], *(f["finding"] for f in p["findings"])])
    for w in words:
        assert w in text, f"{w!r} not in {json.dumps(p, indent=2)}"
    if status in ("warn", "fail"):
        assert p["fix"], p
    return p


# -- Grace ------------------------------------------------------------------------------------

def test_grace_node_with_arm64_debs_is_healthy_on_its_own_paths(cudaenv, libs, tmp_path):
    m = machine(cudaenv, libs, tmp_path, lambda m: m.grace_gh200())
    res, probes = doctor(m)
    assert res.rc == 0, res
    expect(probes["gpu"], "ok", "NVIDIA GH200 120GB")
    expect(probes["driver"], "ok", "580.65.06")
    expect(probes["libcuda"], "ok", "/lib/aarch64-linux-gnu/libcuda.so.1")  # merged /usr: the cache names /lib
    expect(probes["toolkit"], "ok", "CUDA 12.4 at /usr/local/cuda-12.4")
    # cuDNN from the arm64 debs: the libraries and the header in the aarch64 multiarch folders
    expect(probes["cudnn"], "ok", "cuDNN 9.1.1 in /lib/aarch64-linux-gnu")
    expect(probes["grace"], "ok", "Grace superchip", "64K pages", "NUMA balancing off", "init_on_alloc=0",
           "node1 (96 GiB)", "NVIDIA GH200 120GB")
    assert "x86_64-linux-gnu" not in json.dumps(probes)
    # a header only in the multiarch include folder is found there (the machine's triplet)
    m.remove("/usr/include/cudnn_version.h")
    m.copy(m.p("/usr/include/aarch64-linux-gnu/cudnn_version_v9.h"), "/usr/include/aarch64-linux-gnu/cudnn_version.h")
    expect(doctor(m, "--only", "cudnn")[1]["cudnn"], "ok", "header /usr/include/aarch64-linux-gnu/cudnn_version.h: 9.1.1")


def test_grace_on_ubuntu_defaults_warns_with_each_fix(cudaenv, libs, tmp_path):
    m = machine(cudaenv, libs, tmp_path, lambda m: m.grace_gh200(tuned=False))
    p = expect(doctor(m, "--only", "grace")[1]["grace"], "warn", "4K pages", "kernel.numa_balancing = 1",
               "CONFIG_INIT_ON_ALLOC_DEFAULT_ON=y")
    fixes = [f["fix"] for f in p["findings"]]  # the headline's among them
    assert len(fixes) == 3 and p["fix"] == fixes[0], p
    assert any("64K-page kernel" in f for f in fixes)
    assert any("numa_balancing=disable" in f for f in fixes)
    assert any("init_on_alloc=0" in f for f in fixes)


def test_grace_probe_skips_where_no_gpu_memory_is_a_numa_node(cudaenv, libs, tmp_path):
    # an Arm server with an A100 (PCI id not a superchip) and no CPU-less NUMA node
    m = machine(cudaenv, libs, tmp_path, lambda m: m.debian12_nvidia_debs())
    expect(doctor(m, "--only", "grace")[1]["grace"], "skip", "not a Grace superchip")
    # without libcuda, and without the toolkit's lib64 link, the stub is found in the machine's
    # own targets/ folder: sbsa-linux
    m.remove("/usr/local/cuda-12.4/lib64")
    m.remove("/usr/lib/aarch64-linux-gnu/libcuda.so.1")
    m.remove("/usr/lib/aarch64-linux-gnu/libcuda.so.550.54.15")
    m.ldconfig()
    expect(doctor(m, "--only", "libcuda")[1]["libcuda"], "fail",
           "/usr/local/cuda/targets/sbsa-linux/lib/stubs/libcuda.so")


def test_grace_probe_skips_on_x86(cudaenv, libs, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("ldconfig -r needs root (chroot)")
    m = fixture_sysroot.Machine(tmp_path / "sys", libs).debian12_nvidia_debs()
    cudaenv.env.update(CUDAENV_SYSROOT=str(m.root), **m.env())
    m.run = cudaenv
    expect(doctor(m, "--only", "grace")[1]["grace"], "skip", "not a Grace system")


# -- Jetson -----------------------------------------------------------------------------------

def test_jetson_orin_jetpack6_says_l4t_and_what_it_cannot_check(cudaenv, libs, tmp_path):
    m = machine(cudaenv, libs, tmp_path, lambda m: m.jetson("orin"))
    res, probes = doctor(m)
    assert res.rc == 0, res
    assert all(p["status"] != "fail" for p in probes.values()), res
    expect(probes["gpu"], "ok", "Jetson Orin integrated GPU (nvidia,tegra234)", "not on the PCI bus")
    expect(probes["driver"], "ok", "Jetson Orin, L4T 36.4.3 (JetPack 6)", "part of L4T",
           "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1", "nvgpu")
    expect(probes["arch"], "ok", "sm_87")
    expect(probes["pcie"], "skip", "cannot be checked on Jetson (L4T 36.4.3): the integrated GPU is not on the PCI bus")
    for pid in ("thermal", "health", "driver-cuda", "compat"):
        expect(probes[pid], "skip", "cannot be checked on Jetson (L4T 36.4.3)")
    expect(probes["mig"], "skip", "no MIG")
    expect(probes["grace"], "skip", "not a Grace system")
    expect(probes["cudnn"], "ok", "cuDNN 9.3.0 in /lib/aarch64-linux-gnu")
    expect(probes["toolkit"], "ok", "CUDA 12.6 at /usr/local/cuda-12.6")


def test_jetson_without_nvml_or_libcuda(cudaenv, libs, tmp_path):
    m = machine(cudaenv, libs, tmp_path, lambda m: m.jetson("orin", nvml=False, libcuda=False))
    p = expect(doctor(m, "--only", "driver")[1]["driver"], "fail",
               "L4T's CUDA driver libcuda.so.1 is not known to the loader",
               "NVML: cannot be checked on Jetson (L4T 36.4.3): this L4T ships no libnvidia-ml.so.1")
    assert "nvidia-l4t-cuda" in p["fix"] and "nvidia-tegra.conf" in p["fix"], p


def test_jetson_thor_jetpack7(cudaenv, libs, tmp_path):
    m = machine(cudaenv, libs, tmp_path, lambda m: m.jetson("thor"))
    res, probes = doctor(m)
    assert res.rc == 0, res
    expect(probes["gpu"], "ok", "Jetson Thor integrated GPU (nvidia,tegra264)")
    expect(probes["driver"], "ok", "Jetson Thor, L4T 38.2.0 (JetPack 7)",
           "Open Kernel Module for aarch64  580.00", "/usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1")
    expect(probes["arch"], "ok", "sm_110")
    expect(probes["toolkit"], "ok", "CUDA 13.0 at /usr/local/cuda-13.0")
    expect(probes["cudnn"], "ok", "cuDNN 9.12.0")
