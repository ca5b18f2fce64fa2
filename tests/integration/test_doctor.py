"""cudaenv doctor against fixture machines (CUDAENV_SYSROOT) built by tests/support/fixture_sysroot.py:
real ELF libraries compiled here (scripted libnvidia-ml.so.1 and libcuda.so.1, libcudart, libcudnn
reporting chosen versions), a loader cache built by the real ldconfig, and for every probe the
machines that make it say ok, warn, fail and skip. Golden files pin the text and the JSON. The
last tests run the real doctor, read-only, on this machine's CUDA 13 toolkit where there is one.
"""
import json
import os
import re
import shutil
from pathlib import Path

import pytest

import fixture_sysroot  # noqa: E402  (conftest puts tests/support on sys.path)
from conftest import PLATFORM, EXE, assert_one_line_error

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(scope="session")
def libs(tmp_path_factory):
    return fixture_sysroot.Libs(tmp_path_factory.mktemp("doctor-libs"))


@pytest.fixture
def m(cudaenv, libs, tmp_path):
    """A healthy machine; tests break it. The doctor runs with the machine's own PATH."""
    if os.geteuid() != 0:
        pytest.skip("ldconfig -r needs root (chroot)")
    machine = fixture_sysroot.Machine(tmp_path / "sys", libs).healthy()
    cudaenv.env.pop("container", None)
    cudaenv.env.update(CUDAENV_SYSROOT=str(machine.root), **machine.env())
    machine.run = cudaenv
    return machine


def doctor(m, *args, env=None):
    res = m.run("doctor", "--json", *args, env=env)
    assert res.rc in (0, 1), res
    doc = res.json()
    return res, {p["id"]: p for p in doc["probes"]}


def probe(m, pid, env=None):
    res, probes = doctor(m, "--only", pid, env=env)
    assert list(probes) == [pid], res
    return probes[pid]


def expect(p, status, *words):
    assert p["status"] == status, json.dumps(p, indent=2)
    text = "\n".join([p["finding"], *p["details"], *(f["finding"] for f in p["findings"])])
    # every finding has its fix, and the headline is the worst of them
    order = {"warn": 1, "fail": 2}
    assert all(f["fix"] for f in p["findings"]), p
    assert all(order[f["status"]] <= order[p["findings"][0]["status"]] for f in p["findings"]), p
    for w in words:
        assert w in text, f"{w!r} not in {json.dumps(p, indent=2)}"
    if status in ("warn", "fail"):
        assert p["fix"], p
    return p


# -- the whole run ----------------------------------------------------------------------------

def test_healthy_machine_passes_and_says_what_it_found(m):
    res, probes = doctor(m)
    assert res.rc == 0, res
    doc = res.json()
    assert doc["ok"] is True and doc["counts"]["fail"] == 0
    # healthy, on versions NVIDIA has since fixed security bugs in: the advisories say so (about
    # versions, not faults: a warning, never a failure) and nothing else is flagged
    assert {p["status"] for k, p in probes.items() if k != "advisories"} <= {"ok", "skip"} | ({"warn"} if probes["cudaenv"]["status"] == "warn" else set())
    expect(probes["advisories"], "warn", "driver 550.54.15", "NVIDIA-5614", "550.144.03",
           "NVIDIA-5630", "550.163.01", "NVIDIA-5755", "CUDA 12.4.1",
           "R550 is not listed by the later driver bulletins NVIDIA-5670")
    assert [a["id"] for a in doc["advisories"] if a["where"] == "this machine"] == ["NVIDIA-5614", "NVIDIA-5630"]
    expect(probes["gpu"], "ok", "1 NVIDIA GPU", "GA100 [A100 SXM4 40GB]")
    expect(probes["driver"], "ok", "550.54.15")
    expect(probes["libcuda"], "ok", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "CUDA up to 12.4")
    expect(probes["driver-cuda"], "ok", "fully supports CUDA 12.4")
    expect(probes["arch"], "ok", "sm_80")
    expect(probes["toolkit"], "ok", "CUDA 12.4 at /usr/local/cuda-12.4", "nvcc --version: 12.4.131",
           "cudaRuntimeGetVersion: 12.4", "version.json: 12.4.1")
    expect(probes["cudnn"], "ok", "cuDNN 9.1.1", "all 8 libraries present", "built for CUDA 12")
    expect(probes["loader"], "ok", "libcudart.so.12", "libcudnn.so.9")
    for pid in ("container", "wsl", "frameworks"):
        assert probes[pid]["status"] == "skip", probes[pid]


def test_every_probe_is_in_the_json_with_its_layer_and_fix(m):
    res, probes = doctor(m)
    doc = res.json()
    assert doc["schema_version"] >= 1 and doc["command"] == "doctor"
    assert [l["name"] for l in doc["layers"]] == ["GPU", "Driver", "Toolkit", "Libraries", "Environment",
                                                  "Frameworks", "Advisories", "cudaenv"]
    assert len(probes) == 28
    for p in probes.values():
        assert set(p) == {"id", "layer", "title", "status", "finding", "details", "fix", "findings"}
        assert p["status"] in ("ok", "warn", "fail", "skip")
        assert "\n" not in p["finding"]


def _normalise(text, m):
    text = text.replace(str(m.root), "<SYSROOT>").replace(str(m.run.tmp), "<TMP>")
    return text


NOT_SELF = [p for p in ("gpu arch pcie thermal mig xid health driver libcuda fabric smoke driver-cuda compat toolkit cuda-link compiler "
                        "loader cudnn environment container container-compat cdi wsl frameworks").split()]


def _only_all_but_self():
    args = []
    for p in NOT_SELF:
        args += ["--only", p]
    return args


def _broken(m):
    """Three layers broken at once: a hot, MIG-partitioned GPU at x8, an old driver, a cuDNN header
    from another release, and CUDA_VISIBLE_DEVICES=-1."""
    m.pci_gpu(width=(8, 16))
    m.kernel_driver(version="535.104.05")
    m.gpu_conf(driver="535.104.05", cuda=12020, temp=(89, 90), throttle=0x40, mig=(1, 1),
               mig_instances=["NVIDIA A100-SXM4-40GB MIG 3g.20gb", "NVIDIA A100-SXM4-40GB MIG 3g.20gb"])
    m.write("/usr/local/cuda-12.4/include/cudnn_version.h", fixture_sysroot.fixture_mirror.cudnn_header("9.0.0"))
    return {"CUDA_VISIBLE_DEVICES": "-1"}


@pytest.mark.parametrize("name", ["healthy", "broken"])
def test_golden_text(m, name):
    env = _broken(m) if name == "broken" else None
    res = m.run("doctor", *_only_all_but_self(), env=env)
    assert res.rc == (1 if name == "broken" else 0), res
    got = _normalise(res.out, m)
    golden = GOLDEN / f"doctor_{name}.txt"
    if os.environ.get("CUDAENV_UPDATE_GOLDEN"):
        golden.write_text(got)
    assert got == golden.read_text()


def test_golden_json(m):
    env = _broken(m)
    res = m.run("doctor", "--json", "-v", *_only_all_but_self(), env=env)
    assert res.rc == 1, res
    got = _normalise(json.dumps(res.json(), indent=2, sort_keys=True) + "\n", m)
    golden = GOLDEN / "doctor_broken.json"
    if os.environ.get("CUDAENV_UPDATE_GOLDEN"):
        golden.write_text(got)
    assert got == golden.read_text()


def test_verbose_text_shows_every_probe_with_details(m):
    res = m.run("doctor", "-v")
    for pid in NOT_SELF + ["cudaenv"]:
        assert re.search(rf"^    [✓!✗-] {re.escape(pid)}: ", res.out, re.M), (pid, res.out)
    assert "libcudart.so.12 -> /usr/local/cuda-12.4/lib64/libcudart.so.12 (ld.so.cache)" in res.out


def _on_a_terminal(m, *args, env):
    """Runs the doctor with stdout on a pseudo-terminal; returns what it wrote there."""
    import pty
    import subprocess
    master, slave = pty.openpty()
    e = dict(m.run.env)
    e.pop("NO_COLOR", None)
    e.update(env)
    proc = subprocess.Popen([EXE, "doctor", *args], env=e, stdout=slave, stderr=subprocess.DEVNULL)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    proc.wait()
    os.close(master)
    return out.decode()


def test_colour_only_on_a_terminal_and_never_with_no_color(m):
    coloured = _on_a_terminal(m, "--only", "gpu", env={"TERM": "xterm"})
    assert "\x1b[32m✓\x1b[0m" in coloured, coloured
    assert "\x1b[" not in _on_a_terminal(m, "--only", "gpu", env={"TERM": "xterm", "NO_COLOR": "1"})
    assert "\x1b[" not in _on_a_terminal(m, "--no-color", "--only", "gpu", env={"TERM": "xterm"})
    assert "\x1b[" not in m.run("doctor", "--only", "gpu").out


def test_strict_fails_on_warnings_and_plain_does_not(m):
    m.pci_gpu(width=(8, 16))
    assert m.run("doctor", "--only", "pcie").rc == 0
    res = m.run("doctor", "--only", "pcie", "--strict", "--json")
    assert res.rc == 1 and res.json()["ok"] is False and res.json()["strict"] is True


def test_unknown_probe_is_a_usage_error_with_a_suggestion(m):
    res = m.run("doctor", "--only", "cudn")
    assert_one_line_error(res, 2)
    assert "did you mean --only cudnn?" in res.err


def test_a_sysroot_that_is_not_there_is_a_usage_error(m):
    res = m.run("doctor", env={"CUDAENV_SYSROOT": str(m.root / "nope")})
    assert_one_line_error(res, 2)
    assert "is not a directory" in res.err


def test_hostile_machine_files_cost_findings_not_the_doctor(m):
    """A link loop, a folder where a library should be, a huge and a binary /proc file."""
    m.link("/usr/local/cuda", "/usr/local/cuda")
    m.remove("/usr/lib/x86_64-linux-gnu/libcuda.so.1")
    m.p("/usr/lib/x86_64-linux-gnu/libcuda.so.1").mkdir()
    m.write("/proc/driver/nvidia/version", b"\x00\xff" * (3 << 20))
    m.write("/sys/bus/pci/devices/0000:65:00.0/current_link_width", "x" * 100000)
    res, probes = doctor(m)
    assert res.rc == 1 and len(probes) == 28
    expect(probes["cuda-link"], "fail", "/usr/local/cuda")
    assert probes["pcie"]["status"] in ("skip", "ok")


def test_only_runs_what_a_probe_stands_on_but_shows_only_it(m):
    m.remove("/sys/bus/pci/devices")
    expect(probe(m, "arch"), "skip", "skipped: gpu: no NVIDIA GPU")


# -- 1. gpu -----------------------------------------------------------------------------------

def test_gpu_missing_is_the_root_cause_and_its_dependents_skip(m):
    m.remove("/sys/bus/pci/devices")
    res, probes = doctor(m)
    assert res.rc == 1
    expect(probes["gpu"], "fail", "no NVIDIA GPU", "0x10de")
    for dep in ("arch", "pcie", "thermal", "mig"):
        expect(probes[dep], "skip", "skipped: gpu: no NVIDIA GPU")


def test_gpu_other_vendors_and_nvidia_audio_are_not_gpus(m):
    m.remove("/sys/bus/pci/devices")
    m.pci_gpu(address="0000:03:00.0", vendor="0x1002", device="0x1234")
    m.pci_gpu(address="0000:65:00.1", cls="0x040300", device="0x10ef")  # the card's HDMI audio
    expect(probe(m, "gpu"), "fail", "no NVIDIA GPU")


def test_gpu_named_by_nvml_without_pci_ids(m):
    m.remove("/usr/share/misc/pci.ids")
    expect(probe(m, "gpu"), "ok", "NVIDIA A100-SXM4-40GB")


# -- 2. driver ---------------------------------------------------------------------------------

def test_driver_not_installed(m):
    m.no_kernel_driver()
    m.gpu_conf(init=100, nvml_init=9)
    res, probes = doctor(m)
    expect(probes["driver"], "fail", "not loaded")
    assert "apt install" in probes["driver"]["fix"]
    expect(probes["driver-cuda"], "skip", "skipped: driver:")
    expect(probes["thermal"], "skip", "skipped: driver:")
    expect(probes["libcuda"], "skip", "no driver")


def test_driver_installed_but_not_loaded_says_modprobe(m):
    m.no_kernel_driver()
    m.write("/lib/modules/6.1.0-27-amd64/updates/dkms/nvidia.ko.xz", b"")
    p = expect(probe(m, "driver"), "fail", "installed but not loaded")
    assert "modprobe nvidia" in p["fix"]


def test_driver_after_a_kernel_upgrade_names_dkms_and_the_headers(m):
    m.kernel_upgraded("6.1.0-28-amd64")
    p = expect(probe(m, "driver"), "fail", "built for kernel 6.1.0-27-amd64 only",
               "running kernel 6.1.0-28-amd64", "kernel upgrade")
    assert p["fix"].startswith("sudo apt install linux-headers-6.1.0-28-amd64 && sudo dkms autoinstall")


def test_driver_with_nouveau_bound_names_nouveau_and_the_blacklist(m):
    m.nouveau()
    p = expect(probe(m, "driver"), "fail", "nouveau driver is loaded and holds the GPU")
    assert "blacklist nouveau" in p["fix"] and "update-initramfs" in p["fix"]


def test_driver_unsigned_under_secure_boot_names_secure_boot(m):
    m.no_kernel_driver()
    m.module_installed()
    m.secure_boot(on=True)
    p = expect(probe(m, "driver"), "fail", "Secure Boot is on", "is not signed")
    assert "mokutil --import" in p["fix"]
    m.module_installed(signed=True)
    p = expect(probe(m, "driver"), "fail", "installed but not loaded")
    assert any("must be enrolled" in d for d in p["details"]), p
    m.secure_boot(on=False)
    p = expect(probe(m, "driver"), "fail", "installed but not loaded")
    assert "Secure Boot: off" in p["details"], p


def test_driver_signed_by_a_key_secure_boot_does_not_trust(m, tmp_path):
    """A module signed as sign-file signs it, by a key that is not in shim's MOK list: the kernel
    refuses it, and the finding names the signer. Enrolled, it is not the cause."""
    mok = fixture_sysroot.SigningKey(tmp_path, "Machine Owner Key")
    dkms = fixture_sysroot.SigningKey(tmp_path, "DKMS module signing key")
    m.no_kernel_driver()
    m.secure_boot(on=True)
    m.mok_list(mok)
    m.module_installed(key=dkms)
    m.write("/var/lib/dkms/mok.pub", dkms.der())
    p = expect(probe(m, "driver"), "fail", "Secure Boot is on and the nvidia module is signed by "
               "DKMS module signing key (key serial ", "which is not enrolled in MOK or db: the kernel refuses it")
    assert p["fix"] == ("sudo mokutil --import /var/lib/dkms/mok.pub and confirm at the next boot, "
                        "or sign the module with an enrolled key"), p
    assert any(d.startswith("enrolled in MOK: Machine Owner Key (serial ") for d in p["details"]), p
    # enrolled in db (the firmware's own list) counts too
    m.mok_list(dkms, var="db")
    p = expect(probe(m, "driver"), "fail", "installed but not loaded")
    assert any(d.startswith("module signed by DKMS module signing key") and d.endswith("enrolled in db")
               for d in p["details"]), p


@pytest.mark.parametrize("compress", ["xz", "gzip", "zstd"])
def test_driver_reads_the_signature_of_a_compressed_module(m, tmp_path, compress):
    if not shutil.which(compress):
        pytest.skip(f"no {compress}")
    key = fixture_sysroot.SigningKey(tmp_path, "NVIDIA module key")
    m.no_kernel_driver()
    m.secure_boot(on=True)
    m.mok_list()
    m.module_installed(key=key, compress=compress)
    expect(probe(m, "driver"), "fail", "signed by NVIDIA module key", "not enrolled in MOK or db")
    m.module_installed(compress=compress)
    expect(probe(m, "driver"), "fail", "is not signed: the kernel refuses to load it")


def test_xid_79_in_the_kernel_log_is_the_root_cause_with_its_fix(m):
    expect(probe(m, "xid"), "ok", "no Xid events since boot")
    m.xid(79, text="GPU has fallen off the bus.", times=2)
    p = expect(probe(m, "xid"), "fail", "Xid 79 on GPU 0000:65:00 (2 times since boot)",
               "fallen off the bus")
    assert "reboot" in p["fix"] and "seating" in p["fix"]


def test_an_hgx_board_needs_the_fabric_manager_at_the_drivers_version(m):
    expect(probe(m, "fabric"), "skip", "no NVSwitch")
    m.hgx(fabric_manager=None)
    p = expect(probe(m, "fabric"), "fail", "no fabric manager installed", "error 802")
    assert "nvidia-fabricmanager-550=550.54.15-1" in p["fix"]
    m.hgx(running=False)
    p = expect(probe(m, "fabric"), "fail", "installed but not running")
    assert p["fix"].startswith("sudo systemctl enable --now nvidia-fabricmanager")
    m.hgx(fabric_manager="550.90.07")
    expect(probe(m, "fabric"), "fail", "fabric manager 550.90.07 and driver 550.54.15 differ")
    m.hgx()  # running, as Linux shows it: comm "nv-fabricmanage" (15 bytes), argv[0] whole
    expect(probe(m, "fabric"), "ok", "fabric manager 550.54.15 running (PID 4242) for 4 NVSwitches")


def test_a_cdi_spec_made_for_another_driver_or_more_gpus_is_stale(m):
    expect(probe(m, "cdi"), "skip", "no NVIDIA CDI spec")
    m.write("/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15", b"")
    m.cdi_spec()
    expect(probe(m, "cdi"), "ok", "every path it names is there")
    m.cdi_spec(driver="535.104.05", gpus=2)
    p = expect(probe(m, "cdi"), "fail", "/etc/cdi/nvidia.yaml is stale: 2 paths it names are gone",
               "/dev/nvidia1", "libcuda.so.535.104.05")
    assert "nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml" in p["fix"]


def test_gpu_health_from_nvml_ecc_memory_repair_and_persistence(m):
    expect(probe(m, "health"), "ok", "no uncorrected ECC errors, no memory repair pending, persistence mode on")
    m.gpu_conf(ecc=(2, 5), remap=(1, 0), persistence=0)
    p = expect(probe(m, "health"), "fail", "2 uncorrected ECC memory errors since the driver loaded",
               "row remapping waiting for a GPU reset", "persistence mode off on GPU 0")
    assert "nvidia-smi -r -i 0" in p["fix"]
    # persistence off is said, not flagged
    assert not any("persistence" in f["finding"] for f in p["findings"]), p
    m.gpu_conf(ecc=(0, 5), remap=(0, 1), persistence=1)
    expect(probe(m, "health"), "fail", "could not remap a failing memory row",
           "5 uncorrected ECC memory errors over its life")
    m.gpu_conf(ecc=None, remap=None, persistence=None, retired_pending=1)
    expect(probe(m, "health"), "warn", "page retirement waiting for a GPU reset")


def test_deep_runs_a_kernel_on_every_gpu_and_checks_it(m):
    expect(probe(m, "smoke"), "skip", "cudaenv doctor --deep")
    res, probes = doctor(m, "--deep", "--only", "smoke")
    p = expect(probes["smoke"], "ok", "a kernel ran and computed right on 1 GPU",
               "kernel compiled, launched and checked (4096 values)")
    m.gpu_conf(smoke="wrong")
    res, probes = doctor(m, "--deep", "--only", "smoke")
    expect(probes["smoke"], "fail", "586 of 4096 results are wrong", "computes wrong values")
    m.gpu_conf(smoke="launch 719")
    res, probes = doctor(m, "--deep", "--only", "smoke")
    p = expect(probes["smoke"], "fail", "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_FAILED (719)")
    assert "nvidia-smi -r -i 0" in p["fix"]
    m.gpu_conf(init=802)
    res, probes = doctor(m, "--deep", "--only", "smoke")
    assert probes["smoke"]["status"] == "skip", probes  # libcuda fails first: the root cause


def test_driver_and_library_version_mismatch(m):
    m.gpu_conf(driver="550.90.07")
    p = expect(probe(m, "driver"), "fail", "mismatch", "550.54.15", "550.90.07")
    assert "reboot" in p["fix"]


def test_driver_missing_uvm_node(m):
    m.remove("/dev/nvidia-uvm")
    p = expect(probe(m, "driver"), "fail", "/dev/nvidia-uvm")
    assert "modprobe nvidia-uvm" in p["fix"]


def test_driver_mismatch_and_a_missing_node_are_both_reported(m):
    m.gpu_conf(driver="550.90.07")
    m.remove("/dev/nvidia-uvm")
    p = expect(probe(m, "driver"), "fail", "mismatch", "/dev/nvidia-uvm")
    assert [("mismatch" in f["finding"], "reboot" in f["fix"]) for f in p["findings"]][0] == (True, True)
    assert "modprobe nvidia-uvm" in p["findings"][1]["fix"]


def test_driver_older_than_the_gpu_does_not_see_it(m):
    m.pci_gpu(address="0000:ca:00.0", device="0x2330")
    p = expect(probe(m, "driver"), "fail", "did not take 1 of the 2 NVIDIA GPUs")
    assert "dmesg" in p["fix"]


def _h100_on(m, driver, where):
    """An H100 (PCI 10de:2330) in place of the A100 and driver `driver` on disk, its module not
    loaded (it cannot bind the device). `where`: how the installed driver shows itself."""
    m.remove("/sys/bus/pci/devices/0000:65:00.0")
    m.pci_gpu(address="0000:65:00.0", device="0x2330")
    m.no_kernel_driver()
    m.write("/lib/modules/6.1.0-27-amd64/updates/dkms/nvidia.ko", b"")
    if where == "libraries":  # NVIDIA's .run or the CUDA repository's debs
        for lib in ("libcuda.so", "libnvidia-ml.so"):
            m.copy(m.libs.fake_driver("cuda"), f"/usr/lib/x86_64-linux-gnu/{lib}.{driver}")
    elif where == "debian":  # Debian's nvidia-driver: /usr/lib/…/nvidia/current, nvidia-current-*
        m.copy(m.libs.fake_driver("cuda"), f"/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.{driver}")
        m.p(f"/usr/src/nvidia-current-{driver}").mkdir(parents=True)
    elif where == "usr-src":
        m.p(f"/usr/src/nvidia-{driver}").mkdir(parents=True)
    elif where == "dkms":  # Ubuntu: /var/lib/dkms/nvidia/<version>/<kernel>
        m.p(f"/var/lib/dkms/nvidia/{driver}/6.1.0-27-amd64/x86_64/module").mkdir(parents=True)


@pytest.mark.parametrize("where", ["libraries", "debian", "usr-src", "dkms"])
def test_driver_too_old_for_the_gpu_says_which_driver_not_modprobe(m, where):
    _h100_on(m, "470.223.02", where)
    # PCI 10de:2330 is the H100 SXM5: the family rule says sm_90 needs 520.61.05 (the first
    # CUDA with sm_90); NVIDIA's lists name it from 525.85.05, the driver the fix installs (a
    # listing is not a minimum, but a driver from there surely drives it)
    p = expect(probe(m, "driver"), "fail", "driver 470.223.02 is installed but too old for the GPU",
               "GPU 0 (NVIDIA H100 80GB HBM3, PCI 10de:2330, sm_90) needs ≥ 520.61.05", "No such device",
               "lists: NVIDIA's open-module lists name PCI 10de:2330 (NVIDIA H100 80GB HBM3) from 525.85.05")
    assert p["fix"].startswith("install NVIDIA driver 525.85.05 or newer"), p
    assert "modprobe" not in p["fix"], p


def test_driver_new_enough_but_not_loaded_still_says_modprobe(m):
    _h100_on(m, "535.216.01", "dkms")
    p = expect(probe(m, "driver"), "fail", "installed but not loaded")
    assert "modprobe nvidia" in p["fix"]


def test_driver_too_old_for_one_of_two_gpus_names_it(m):
    m.pci_gpu(address="0000:ca:00.0", device="0x2330")
    m.kernel_driver("515.105.01")
    m.gpu_conf(driver="515.105.01")
    p = expect(probe(m, "driver"), "fail", "did not take 1 of the 2",
               "it is older than GPU 1 (NVIDIA H100 80GB HBM3, PCI 10de:2330")
    assert p["fix"].startswith("install NVIDIA driver 525.85.05 or newer"), p


def _gpu_rows():
    rows = json.loads((Path(__file__).parents[2] / "manifests" / "gpus.json").read_text())["gpus"]
    return [r for r in rows if "min_driver" in r]


@pytest.mark.parametrize("row", _gpu_rows(), ids=lambda r: r["name"])
def test_every_gpu_rows_minimum_driver_decides_the_verdict(m, row):
    """Each GPU of the table, named by pci.ids as the PCI bus reports it, with a driver one
    release line below its minimum (too old) and at its minimum (not too old)."""
    model = row["name"]
    for prefix in ("NVIDIA ", "GeForce "):
        model = model.removeprefix(prefix)
    ids = m.p("/usr/share/misc/pci.ids").read_text().replace(
        "10df  Emulex", f"\t2f00  GX000 [{model}]\n10df  Emulex")
    m.write("/usr/share/misc/pci.ids", ids)
    need = row["min_driver"]
    below = f"{int(need.split('.')[0]) - 1}.99.01"
    _h100_on(m, below, "dkms")
    m.remove("/sys/bus/pci/devices/0000:65:00.0")
    m.pci_gpu(address="0000:65:00.0", device="0x2f00")
    p = expect(probe(m, "driver"), "fail", f"driver {below} is installed but too old",
               f"({row['name']}, PCI 10de:2f00, sm_{row['compute_capability'].replace('.', '')}) needs ≥ {need}")
    m.remove(f"/var/lib/dkms/nvidia/{below}")
    _h100_on(m, need, "dkms")
    m.remove("/sys/bus/pci/devices/0000:65:00.0")
    m.pci_gpu(address="0000:65:00.0", device="0x2f00")
    expect(probe(m, "driver"), "fail", "installed but not loaded")


# GPUs by PCI id (gpu-support.json, from NVIDIA's driver lists): the machines the audit found the
# family rule wrong on, an old GPU on a driver past its architecture's last branch, and a branch
# past its end of life.

def _only_gpu(m, device, name, cc, driver, nvml_sees=True, subsystem=None):
    """The machine's one GPU replaced by PCI `device` (pci.ids names it `name`), driver `driver`
    loaded; NVML lists it only if `nvml_sees` (a driver that does not list a GPU leaves it out)."""
    m.remove("/sys/bus/pci/devices/0000:65:00.0")
    m.pci_gpu(address="0000:65:00.0", device=device)
    if subsystem:
        m.write("/sys/bus/pci/devices/0000:65:00.0/subsystem_vendor", "0x" + subsystem[0] + "\n")
        m.write("/sys/bus/pci/devices/0000:65:00.0/subsystem_device", "0x" + subsystem[1] + "\n")
    ids = m.p("/usr/share/misc/pci.ids").read_text().replace(
        "10df  Emulex", f"\t{device[2:]}  GX000 [{name}]\n10df  Emulex")
    m.write("/usr/share/misc/pci.ids", ids)
    m.kernel_driver(driver)
    m.gpus[0].update(name=name, cc=cc)
    if not nvml_sees:
        m.gpus.clear()
    m.gpu_conf(driver=driver)


@pytest.mark.parametrize("device,name,cc,driver,need", [
    ("0x2335", "NVIDIA H200", (9, 0), "535.104.05", "550.90.07"),
    ("0x26b9", "NVIDIA L40S", (8, 9), "525.147.05", "535.104.05"),
    ("0x2901", "NVIDIA B200", (10, 0), "570.26", "570.86.15"),
    ("0x2f04", "NVIDIA GeForce RTX 5070", (12, 0), "570.124.04", "570.133.07"),
    ("0x3182", "NVIDIA B300 SXM6 AC", (10, 3), "575.51.03", "580.82.07"),
], ids=["H200", "L40S", "B200", "RTX5070", "B300"])
def test_a_new_gpu_on_an_old_driver_needs_the_first_driver_that_lists_it(m, device, name, cc, driver, need):
    _only_gpu(m, device, name, cc, driver, nvml_sees=False)
    # the driver did not take it and the kernel log is silent: the lists say from which driver
    # on it is taken (Blackwell parts under the fixture's proprietary module are told that too)
    p = expect(probe(m, "driver"), "fail", "did not take 1 of the 1", f"PCI 10de:{device[2:]}",
               f"from {need}, and the kernel log does not say otherwise",
               f"lists: NVIDIA's open-module lists name PCI 10de:{device[2:]}")
    assert any(f["fix"].startswith(f"install NVIDIA driver {need} or newer") for f in p["findings"]), p
    assert ("Blackwell" in p["finding"]) == (cc[0] >= 10), p
    # at that driver the same machine is fine
    m.gpus.append(dict(name=name, bus="00000000:65:00.0", cc=cc, mig=None, mig_instances=[], temp=(45, 90), throttle=0))
    m.kernel_driver(need)
    m.gpu_conf(driver=need)
    # (a date before R535's end of life: the L40S's first driver is an R535 one)
    expect(probe(m, "driver", env={"CUDAENV_TODAY": "2026-05-01"}), "ok", f"driver {need} loaded")


def test_a_gpu_the_driver_drives_is_not_judged_by_the_lists(m):
    """PCI 10de:20b2 subsystem 10de:1622 is the A100-SXM4-80GB, which NVIDIA's lists name only
    from 515.76. On 515.65.01 that NVML enumerates it, the driver drives it: a listing is not a
    minimum (the field corpus' T4s on R535 and A100s on 570.86.10 were warned). Only R515's age
    is left to say."""
    _only_gpu(m, "0x20b2", "NVIDIA A100-SXM4-80GB", (8, 0), "515.65.01", subsystem=("10de", "1622"))
    p = expect(probe(m, "driver"), "warn", "older than every branch NVIDIA still supports")
    assert not any("lists" in f["finding"] for f in p["findings"]), p
    assert not any(d.startswith("lists:") for d in p["details"]), p
    # not enumerated: the lists now speak, and name the driver that takes it
    m.gpus.clear()
    m.gpu_conf(driver="515.65.01")
    p = expect(probe(m, "driver"), "fail", "did not take 1 of the 1",
               "PCI 10de:20b2 subsystem 10de:1622", "from 515.76")
    assert p["fix"].startswith("install NVIDIA driver 515.76 or newer"), p


@pytest.mark.parametrize("device,name,cc,driver,last", [
    ("0x1b80", "NVIDIA GeForce GTX 1080", (6, 1), "590.44.01", "580"),
    ("0x102d", "NVIDIA Tesla K80", (3, 7), "525.147.05", "470"),
], ids=["pascal-on-R590", "kepler-on-R525"])
def test_an_old_gpu_on_a_driver_past_its_last_branch(m, device, name, cc, driver, last):
    _only_gpu(m, device, name, cc, driver, nvml_sees=False)
    p = expect(probe(m, "driver"), "fail", f"driver {driver} did not take 1 of the 1",
               f"it is newer than the last branch of", f"ends with R{last}",
               "is not in NVIDIA's open-module lists")
    assert p["fix"].startswith(f"install the newest R{last} driver"), p


def test_an_end_of_life_branch_is_a_warning(m):
    _only_gpu(m, "0x20b0", "NVIDIA A100-SXM4-40GB", (8, 0), "535.216.01")
    p = expect(probe(m, "driver", env={"CUDAENV_TODAY": "2026-12-05"}), "warn",
               "driver 535.216.01 is on the R535 Long Term Support Branch, which reached its end of life in 2026-06")
    assert "supported branch" in p["fix"]
    # before its end the same branch is fine
    expect(probe(m, "driver", env={"CUDAENV_TODAY": "2026-05-01"}), "ok", "driver 535.216.01 loaded")


# -- 3. libcuda --------------------------------------------------------------------------------

def test_libcuda_only_the_stub(m):
    m.remove("/usr/lib/x86_64-linux-gnu/libcuda.so.1")
    m.ldconfig()
    expect(probe(m, "libcuda"), "fail", "libcuda.so.1 is not installed",
           "only the link-time stub /usr/local/cuda/lib64/stubs/libcuda.so")


def test_libcuda_stub_found_instead_of_the_real_one(m):
    stubs = "/usr/local/cuda-12.4/lib64/stubs"
    m.copy(m.libs.fake_driver("cuda"), f"{stubs}/libcuda.so.1")
    m.write(f"{stubs}/fake_gpu.conf", "cuda 0\ninit 34\n")
    p = expect(probe(m, "libcuda", env={"LD_LIBRARY_PATH": stubs}), "fail", "link-time stub", "LD_LIBRARY_PATH")
    assert "stubs" in p["fix"]


def test_libcuda_cuinit_failure_is_named(m):
    m.gpu_conf(init=999)
    expect(probe(m, "libcuda"), "fail", "CUDA_ERROR_UNKNOWN")


def test_libcuda_that_does_not_load(m):
    m.write("/usr/lib/x86_64-linux-gnu/libcuda.so.1", b"not an ELF file")
    expect(probe(m, "libcuda"), "fail", "does not load")


# -- 4. driver against CUDA ----------------------------------------------------------------------

def _driver(m, version, cuda):
    m.kernel_driver(version=version)
    m.gpu_conf(driver=version, cuda=cuda)


def test_driver_cuda_minor_version_compatibility_is_a_warning(m):
    _driver(m, "535.104.05", 12020)
    expect(probe(m, "driver-cuda"), "warn", "minor-version compatibility", "550.54.15")


def test_driver_cuda_too_old_fails(m):
    _driver(m, "470.82.01", 11040)
    p = expect(probe(m, "driver-cuda"), "fail", "too old for CUDA 12.4", "525.60.13")
    assert "550.54.15" in p["fix"]


# -- 5. architecture ---------------------------------------------------------------------------

def test_arch_too_old_for_the_cuda(m):
    m.pci_gpu(device="0x1180")
    m.gpu_conf(name="NVIDIA GeForce GTX 680", cc=(3, 0))
    expect(probe(m, "arch"), "fail", "sm_30", "sm_50 to sm_90")


def test_arch_newer_than_the_cuda_builds_for(m):
    m.gpu_conf(name="NVIDIA B200", cc=(10, 0))
    expect(probe(m, "arch"), "warn", "sm_100", "PTX")


def test_arch_from_the_gpu_table_when_nvml_is_down(m):
    m.gpu_conf(nvml_init=9)
    expect(probe(m, "arch"), "ok", "sm_80", "from the GPU table")


@pytest.mark.parametrize("device,cc,chip", [("0x2330", "sm_90", "GH100, Hopper"),
                                             ("0x2684", "sm_89", "AD102/AD103/AD104/AD106/AD107, Ada Lovelace"),
                                             ("0x1eb8", "sm_75", "TU102/TU104/TU106/TU117, Turing")])
def test_arch_from_the_pci_device_id_without_nvml_or_pci_ids(m, device, cc, chip):
    # no NVML and no pci.ids to name the device: its id's chip family gives the SM
    for db in ("/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids"):
        if m.p(db).exists():
            m.remove(db)
    m.remove("/sys/bus/pci/devices/0000:65:00.0")
    m.pci_gpu(device=device)
    m.gpu_conf(nvml_init=9)
    p = probe(m, "arch")
    assert p["status"] in ("ok", "warn"), p
    assert cc in p["finding"] and f"(from PCI device {device}: {chip})" in "\n".join(p["details"]), p


def test_arch_unknown_gpu_without_nvml_is_skipped(m):
    m.pci_gpu(device="0x9999")
    m.gpu_conf(nvml_init=9)
    expect(probe(m, "arch"), "skip", "compute capability unknown")


# -- 15. PCIe ----------------------------------------------------------------------------------

def test_pcie_narrow_link_warns(m):
    m.pci_gpu(width=(8, 16))
    expect(probe(m, "pcie"), "warn", "x8 of x16")


def test_pcie_low_speed_alone_is_idle_power_saving(m):
    m.pci_gpu(speed=("2.5 GT/s PCIe", "16.0 GT/s PCIe"))
    expect(probe(m, "pcie"), "ok", "GPUs lower it when idle")


def test_pcie_without_link_files_is_skipped(m):
    for f in ("current_link_width", "max_link_width", "current_link_speed", "max_link_speed"):
        m.remove(f"/sys/bus/pci/devices/0000:65:00.0/{f}")
    expect(probe(m, "pcie"), "skip", "no PCIe link information")


# -- 16. thermal, 14. MIG -----------------------------------------------------------------------

def test_thermal_near_slowdown_warns(m):
    m.gpu_conf(temp=(88, 90))
    expect(probe(m, "thermal"), "warn", "88 °C", "slowdown")


def test_thermal_throttle_reason_warns(m):
    m.gpu_conf(temp=(70, 90), throttle=0x40)
    expect(probe(m, "thermal"), "warn", "hardware thermal slowdown")


def test_thermal_power_cap_alone_is_normal(m):
    m.gpu_conf(temp=(70, 90), throttle=0x4)
    expect(probe(m, "thermal"), "ok", "power cap")


def test_thermal_and_mig_without_nvml_are_skipped(m):
    m.gpu_conf(nvml_init=9)
    expect(probe(m, "thermal"), "skip", "NVML is not available", "Driver Not Loaded")
    expect(probe(m, "mig"), "skip", "NVML is not available")


def test_mig_mode_warns_with_the_instances(m):
    m.gpu_conf(mig=(1, 1), mig_instances=["NVIDIA A100-SXM4-40GB MIG 1g.5gb"] * 3)
    p = expect(probe(m, "mig"), "warn", "MIG mode with 3 instances", "MIG 1g.5gb")
    assert "-mig 0" in p["fix"]


def test_mig_on_without_instances_fails_cuda_sees_no_device(m):
    m.gpu_conf(mig=(1, 1), mig_instances=[])
    p = expect(probe(m, "mig"), "fail", "MIG mode with no instances", "CUDA sees no device")
    assert "-cgi" in p["fix"] and "-mig 0" in p["fix"]


def test_mig_pending_change_warns(m):
    m.gpu_conf(mig=(0, 1))
    expect(probe(m, "mig"), "warn", "pending")


def test_mig_off_is_ok(m):
    m.gpu_conf(mig=(0, 0))
    expect(probe(m, "mig"), "ok", "MIG off")


# -- 6. /usr/local/cuda --------------------------------------------------------------------------

def test_cuda_link_missing(m):
    m.remove("/usr/local/cuda")
    # no toolkit anywhere: nothing to say; a toolkit reached otherwise: the missing link warns
    expect(probe(m, "cuda-link"), "skip", "does not exist, and no CUDA toolkit is installed")
    expect(probe(m, "cuda-link", env={"CUDA_HOME": "/usr/local/cuda-12.4"}), "warn", "does not exist")


def test_cuda_link_dangling(m):
    m.link("/usr/local/cuda", "/usr/local/cuda-11.2")
    expect(probe(m, "cuda-link"), "fail", "cuda-11.2", "does not exist")


def test_cuda_link_real_directory(m):
    m.remove("/usr/local/cuda")
    shutil.copytree(m.p("/usr/local/cuda-12.4"), m.p("/usr/local/cuda"), symlinks=True)
    p = expect(probe(m, "cuda-link"), "warn", "real directory", "CUDA 12.4.1")
    assert "--force" in p["fix"]


def test_cuda_link_alternatives(m):
    m.link("/etc/alternatives/cuda", "/usr/local/cuda-12.4")
    m.link("/usr/local/cuda", "/etc/alternatives/cuda")
    expect(probe(m, "cuda-link"), "ok", "update-alternatives", "CUDA 12.4.1")


def _cudaenv_version(m, name="12.4.1+cudnn9.1.1.17"):
    """An installed cudaenv version inside the machine (root /opt/cudaenv), made global."""
    root = m.p("/opt/cudaenv")
    prefix = f"/opt/cudaenv/versions/{PLATFORM}/{name}"
    m.toolkit(prefix=prefix)
    m.write(f"{prefix}/.cudaenv-version.json", json.dumps(
        {"name": name, "cuda": "12.4.1", "cudnn": "9.1.1.17", "profile": "runtime", "platform": "linux-x86_64"}))
    m.write("/opt/cudaenv/state.json", json.dumps({"global": name}))
    m.link("/usr/local/cuda", prefix)
    m.run.env["CUDAENV_ROOT"] = str(root)
    return prefix


def test_cuda_link_owned_by_cudaenv(m):
    _cudaenv_version(m)
    m.ld_conf("000-cudaenv.conf", "/usr/local/cuda/lib64")
    expect(probe(m, "cuda-link"), "ok", "cudaenv's link", "CUDA 12.4.1")


def test_cuda_link_to_a_version_other_users_cannot_load(m):
    """A version published before cudaenv made versions world-readable (0700), or a 0700 folder
    above the root: /usr/local/cuda works for its owner only."""
    prefix = _cudaenv_version(m)
    m.ld_conf("000-cudaenv.conf", "/usr/local/cuda/lib64")
    os.chmod(m.p(prefix), 0o700)
    p = expect(probe(m, "cuda-link"), "warn", "other users cannot load", "mode 0700")
    assert "chmod -R o+rX" in p["fix"]
    os.chmod(m.p(prefix), 0o755)
    expect(probe(m, "cuda-link"), "ok", "cudaenv's link")


def test_cuda_link_changed_behind_cudaenvs_back(m):
    _cudaenv_version(m)
    m.ld_conf("000-cudaenv.conf", "/usr/local/cuda/lib64")
    expect(probe(m, "cuda-link"), "ok", "cudaenv's link")
    m.link("/usr/local/cuda", "/usr/local/cuda-12.4")  # a scripted ln -sf across the fleet
    p = expect(probe(m, "cuda-link"), "warn", "journal says the global version is 12.4.1+cudnn9.1.1.17",
               "behind cudaenv's back")
    assert "cudaenv global 12.4.1+cudnn9.1.1.17 --force" in p["fix"]
    m.link("/usr/local/cuda", f"/opt/cudaenv/versions/{PLATFORM}/12.4.1+cudnn9.1.1.17")
    m.remove("/etc/ld.so.conf.d/000-cudaenv.conf")
    expect(probe(m, "cuda-link"), "warn", "000-cudaenv.conf is missing")


def test_cuda_link_interrupted_switch(m):
    _cudaenv_version(m)
    m.write("/opt/cudaenv/state.json", json.dumps({"global": "12.4.1+cudnn9.1.1.17", "pending": "11.8.0"}))
    p = expect(probe(m, "cuda-link"), "warn", "interrupted")
    assert "cudaenv global 11.8.0" in p["fix"]


# -- 7. toolkit --------------------------------------------------------------------------------

def test_toolkit_selected_by_cudaenv(m):
    _cudaenv_version(m)
    p = expect(probe(m, "toolkit"), "ok", "CUDA 12.4", "cudaenv's record: 12.4.1", "global")


def test_toolkit_that_disagrees_with_itself(m):
    m.toolkit(nvcc="12.3.107")
    p = expect(probe(m, "toolkit"), "fail", "disagrees", "nvcc --version says 12.3")
    assert "reinstall" in p["fix"]


def test_toolkit_runtime_library_from_another_release(m):
    m.toolkit(runtime_int=12030)
    expect(probe(m, "toolkit"), "fail", "runtime library is 12.3")


def test_toolkit_cuda11_runtime_without_a_driver_is_named_by_its_files(m):
    # A real CUDA 11 libcudart without a driver returns 35 and leaves the value unset: the files
    # (record, version.json, nvcc, libcudart file, cuda_runtime_api.h) decide, and the missing
    # driver stays the only root cause.
    prefix = m.toolkit(prefix="/usr/local/cuda-11.8", cuda="11.8.0", cudart="11.8.89", nvcc="11.8.89",
                       cudnn="8.6.0", runtime_rc=35)
    m.link("/usr/local/cuda", prefix)
    p = expect(probe(m, "toolkit"), "ok", "CUDA 11.8", "returned 35 (cudaErrorInsufficientDriver)",
               "cuda_runtime_api.h: 11.8")
    assert "does not answer" not in p["finding"]


def test_toolkit_runtime_error_with_files_that_disagree(m):
    m.toolkit(runtime_rc=35, nvcc="12.3.107")
    expect(probe(m, "toolkit"), "fail", "disagrees", "nvcc --version says 12.3")


def test_toolkit_dangling_full_version_link(m):
    m.remove("/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127")
    expect(probe(m, "toolkit"), "fail", "dangling")


def test_toolkit_none_at_all(m):
    m.remove("/usr/local/cuda")
    res, probes = doctor(m)
    # not a fault: frameworks' wheels bring their own CUDA libraries
    assert probes["toolkit"]["status"] == "skip", probes["toolkit"]
    assert probes["toolkit"]["finding"].startswith("no CUDA toolkit"), probes["toolkit"]
    for dep in ("driver-cuda", "compiler"):
        assert probes[dep]["status"] == "skip", probes[dep]


def test_toolkit_pinned_version_not_installed(m):
    p = expect(probe(m, "toolkit", env={"CUDAENV_VERSION": "11.8"}), "fail", "11.8")
    assert "cudaenv install" in p["fix"]


# -- 17. host compiler ---------------------------------------------------------------------------

def test_compiler_too_new_for_nvcc(m):
    m.write("/usr/bin/gcc", "#!/bin/sh\necho 14.2.0\n", 0o755)
    p = expect(probe(m, "compiler"), "warn", "gcc 14.2.0", "<= 13")
    assert "NVCC_CCBIN=/usr/bin/g++-13" in p["fix"]


def test_compiler_nvcc_ccbin_is_the_one_checked(m):
    m.write("/usr/bin/gcc", "#!/bin/sh\necho 14.2.0\n", 0o755)
    m.write("/usr/bin/g++-13", "#!/bin/sh\necho 13.3.0\n", 0o755)
    expect(probe(m, "compiler", env={"NVCC_CCBIN": "/usr/bin/g++-13"}), "ok", "gcc 13.3.0")


def test_compiler_cuda11_nvcc_ignores_nvcc_ccbin(m):
    # nvcc 11.8 has no NVCC_CCBIN: the variable changes nothing, and the fix is one it obeys
    prefix = m.toolkit(prefix="/usr/local/cuda-11.8", cuda="11.8.0", cudart="11.8.89", nvcc="11.8.89",
                       cudnn="8.6.0")
    m.link("/usr/local/cuda", prefix)
    m.write("/usr/bin/gcc", "#!/bin/sh\necho 12.2.0\n", 0o755)
    m.write("/usr/bin/g++-11", "#!/bin/sh\necho 11.3.0\n", 0o755)
    p = expect(probe(m, "compiler", env={"NVCC_CCBIN": "/usr/bin/g++-11"}), "warn", "gcc 12.2.0",
               "NVCC_CCBIN=/usr/bin/g++-11 is ignored", "<= 11")
    assert "NVCC_PREPEND_FLAGS='-ccbin /usr/bin/g++-11'" in p["fix"], p
    assert "NVCC_CCBIN" not in p["fix"], p
    for flags in ("-ccbin /usr/bin/g++-11", "--compiler-bindir=/usr/bin/g++-11", "-O2 -ccbin g++-11"):
        expect(probe(m, "compiler", env={"NVCC_PREPEND_FLAGS": flags}), "ok", "gcc 11.3.0")


def test_compiler_absent_is_skipped(m):
    m.remove("/usr/bin/gcc")
    expect(probe(m, "compiler"), "skip", "no host compiler")


# -- 8. what loads -----------------------------------------------------------------------------

def _other_toolkit(m, prefix="/usr/local/cuda-11.8"):
    return m.toolkit(prefix=prefix, cuda="11.8.0", cudart="11.8.89", nvcc="11.8.89", cudnn="8.6.0")


def test_loader_library_path_overrides_the_selection(m):
    other = m.toolkit(prefix="/usr/local/cuda-12.4-old", cuda="12.3.2", cudart="12.3.101", nvcc="12.3.107",
                      cudnn="9.0.0")
    p = expect(probe(m, "loader", env={"LD_LIBRARY_PATH": f"{other}/lib64"}), "warn",
               "programs load the CUDA runtime 12.3 from /usr/local/cuda-12.4-old/lib64/libcudart.so.12 "
               "(LD_LIBRARY_PATH), not the selected 12.4.1",
               "shadows /usr/local/cuda-12.4/lib64/libcudart.so.12")
    assert "LD_LIBRARY_PATH" in p["fix"]


def test_loader_stale_entry_for_a_removed_toolkit(m):
    m.ld_conf("cuda-11-2.conf", "/usr/local/cuda-11.2/lib64")
    p = expect(probe(m, "loader"), "warn", "cuda-11-2.conf lists /usr/local/cuda-11.2/lib64", "no longer exists")
    assert p["fix"] == "sudo rm /etc/ld.so.conf.d/cuda-11-2.conf && sudo ldconfig"


def test_loader_nvidia_conf_naming_another_toolkit_and_two_runtimes(m):
    _other_toolkit(m)
    m.ld_conf("000_cuda.conf", "/usr/local/cuda-11.8/lib64")
    m.ldconfig()
    p = expect(probe(m, "loader"), "warn", "000_cuda.conf lists /usr/local/cuda-11.8/lib64, another CUDA",
               "two CUDA majors' runtimes", "libcudart.so.11.0")


def test_loader_cache_out_of_date(m):
    m.remove("/etc/ld.so.conf.d/988_cuda-12.conf")
    m.ldconfig()
    m.ld_conf("988_cuda-12.conf", "/usr/local/cuda-12.4/lib64")
    p = expect(probe(m, "loader"), "warn", "out of date")
    assert p["fix"] == "sudo ldconfig"


def test_loader_selected_libraries_not_found(m):
    m.remove("/etc/ld.so.conf.d/988_cuda-12.conf")
    m.ldconfig()
    expect(probe(m, "loader"), "warn", "libcudart.so.12 is not found by the loader")


def test_loader_no_cache(m):
    m.remove("/etc/ld.so.cache")
    expect(probe(m, "loader"), "warn", "no loader cache")


# -- 10. cuDNN ---------------------------------------------------------------------------------

def test_cudnn_header_from_another_release(m):
    m.write("/usr/local/cuda-12.4/include/cudnn_version.h", fixture_sysroot.fixture_mirror.cudnn_header("9.0.0"))
    expect(probe(m, "cudnn"), "fail", "header 9.0.0", "library 9.1.1", "VERSION_MISMATCH")


def test_cudnn_missing_sublibrary(m):
    m.remove("/usr/local/cuda-12.4/lib64/libcudnn_ops.so.9.1.1")
    m.remove("/usr/local/cuda-12.4/lib64/libcudnn_ops.so.9")
    expect(probe(m, "cudnn"), "fail", "lacks libcudnn_ops.so.9")


def test_cudnn_reports_every_problem_worst_first_with_each_fix(m):
    # a header from another release AND a missing sublibrary: two findings, not the first only
    m.write("/usr/local/cuda-12.4/include/cudnn_version.h", fixture_sysroot.fixture_mirror.cudnn_header("9.0.0"))
    m.remove("/usr/local/cuda-12.4/lib64/libcudnn_ops.so.9.1.1")
    m.remove("/usr/local/cuda-12.4/lib64/libcudnn_ops.so.9")
    p = expect(probe(m, "cudnn"), "fail", "header 9.0.0", "lacks libcudnn_ops.so.9")
    assert [f["status"] for f in p["findings"]] == ["fail", "fail"]
    assert "VERSION_MISMATCH" in p["findings"][0]["finding"] and "lacks" in p["findings"][1]["finding"]
    # the text shows the worst and how many more; -v shows them all
    res = m.run("doctor", "--only", "cudnn")
    assert re.search(r"✗ cudnn: cuDNN header 9\.0\.0 .*\(\+1 more\)$", res.out, re.M), res.out
    res = m.run("doctor", "--only", "cudnn", "-v")
    assert "lacks libcudnn_ops.so.9" in res.out and res.out.count("fix: ") >= 2, res.out


def test_cudnn_built_for_another_cuda_major(m):
    m.toolkit(cudnn_cudart=11080)
    p = expect(probe(m, "cudnn"), "fail", "built for CUDA 11", "toolkit is CUDA 12.4")
    assert "cudaenv install 12.4+cudnn-9.1" in p["fix"]


def test_cudnn_absent_is_skipped(m):
    for f in m.p("/usr/local/cuda-12.4/lib64").glob("libcudnn*"):
        f.unlink()
    m.ldconfig()
    expect(probe(m, "cudnn"), "skip", "no cuDNN")


def test_cudnn_8_with_every_sublibrary_and_its_header(m):
    m.remove("/usr/local/cuda-12.4")
    m.toolkit(cudnn="8.9.7")
    m.ldconfig()
    expect(probe(m, "cudnn"), "ok", "cuDNN 8.9.7", "all 7 libraries present")


# -- 9. environment ----------------------------------------------------------------------------

def test_environment_clean(m):
    expect(probe(m, "environment"), "ok", "nvcc on PATH: /usr/local/cuda/bin/nvcc")


def test_environment_stubs_on_library_path_fail(m):
    expect(probe(m, "environment", env={"LD_LIBRARY_PATH": "/usr/local/cuda/lib64/stubs"}), "fail", "stubs")


def test_environment_cuda_home_and_nvcc_elsewhere(m):
    other = _other_toolkit(m)
    p = expect(probe(m, "environment", env={"CUDA_HOME": other, "PATH": f"{other}/bin:/usr/bin"}), "warn",
               "CUDA_HOME=/usr/local/cuda-11.8 disagrees", "the nvcc on PATH is /usr/local/cuda-11.8/bin/nvcc")
    # two problems, two fixes: each its own
    assert len(p["findings"]) == 2 and "export CUDA_HOME=" in p["findings"][0]["fix"]
    assert "cudaenv init" in p["findings"][1]["fix"]


def test_environment_visible_devices_hide_every_gpu(m):
    for value in ("-1", ""):
        expect(probe(m, "environment", env={"CUDA_VISIBLE_DEVICES": value}), "warn", "hides every GPU")


# -- 11. frameworks ----------------------------------------------------------------------------

VENV = {"VIRTUAL_ENV": "/opt/venv"}


def test_frameworks_tensorflow_cpu_instead_of_tensorflow(m):
    m.tensorflow(version="2.16.1", package="tensorflow_cpu")
    p = expect(probe(m, "frameworks", env=VENV), "warn", "tensorflow-cpu 2.16.1", "never use the GPU")
    assert "tensorflow[and-cuda]==2.16.1" in p["fix"]


def test_frameworks_tensorflow_that_can_use_the_toolkit(m):
    # the fixture's toolkit carries cuDNN 9 (libcudnn.so.9): a build against cuDNN 9 loads it
    m.tensorflow(version="2.16.1", cuda="12.3", cudnn="9")
    p = expect(probe(m, "frameworks", env=VENV), "ok", "tensorflow 2.16.1 (CUDA 12.3) can use CUDA 12.4")
    assert ("tensorflow's cuDNN: /usr/local/cuda-12.4/lib64/libcudnn.so.9 (the loader (ld.so.cache); "
            "the selection's own copy)") in p["details"]


def test_frameworks_tensorflow_built_for_a_cudnn_major_nothing_provides(m):
    # built against cuDNN 8, and only cuDNN 9 is there: libcudnn.so.8 loads from nowhere
    m.tensorflow(version="2.16.1", cuda="12.3", cudnn="8")
    p = expect(probe(m, "frameworks", env=VENV), "fail", "needs cuDNN 8 (libcudnn.so.8) but none will load")
    assert p["fix"] == "cudaenv install tf-2.16 && cudaenv use tf-2.16"


def test_frameworks_tensorflow_built_for_another_major(m):
    m.tensorflow(version="2.13.0", cuda="11.8", cudnn="8")
    p = expect(probe(m, "frameworks", env=VENV), "fail", "tensorflow 2.13.0 needs CUDA 11.8", "libcudart.so.11.0")
    assert "cudaenv install tf-2.13" in p["fix"]


def test_frameworks_every_build_info_layout(m):
    # TF 2.1 writes module constants, TF 2.3+ an OrderedDict (a real 2.15 GPU wheel's layout)
    m.tensorflow(version="2.15.0", cuda="12.2", cudnn="9")  # the fixture toolkit's cuDNN major
    expect(probe(m, "frameworks", env=VENV), "ok", "built with CUDA 12.2 and cuDNN 9")
    m.remove("/opt/venv")
    m.tensorflow(version="2.1.0", cuda="10.1", cudnn="7")
    p = expect(probe(m, "frameworks", env=VENV), "fail", "tensorflow 2.1.0 needs CUDA 10.1")
    assert "CPU-only" not in p["finding"]
    m.remove("/opt/venv")
    m.tensorflow(version="2.15.0", cuda_build=False)
    expect(probe(m, "frameworks", env=VENV), "warn", "tensorflow 2.15.0 is a CPU-only build")


def _wheel(m, wheel, cu, version, soname, site="/opt/venv/lib/python3.11/site-packages"):
    """pip's nvidia-<wheel>-<cu> as installed: site/nvidia/<wheel>/lib/<soname> and its dist-info."""
    m.p(f"{site}/nvidia_{wheel}_{cu}-{version}.dist-info").mkdir(parents=True, exist_ok=True)
    m.write(f"{site}/nvidia/{wheel}/lib/{soname}", "\x7fELF placeholder")
    return f"{site}/nvidia/{wheel}/lib/{soname}"


def test_frameworks_tensorflow_with_pip_cuda(m):
    # TF >= 2.14 [and-cuda] loads pip's nvidia-* wheels first: the doctor says which file, from
    # which source, and that it is not the selection's copy
    m.tensorflow(version="2.15.0", cuda="12.2", cudnn="8")
    rt = _wheel(m, "cuda_runtime", "cu12", "12.2.140", "libcudart.so.12")
    dn = _wheel(m, "cudnn", "cu12", "8.9.4.25", "libcudnn.so.8")
    p = expect(probe(m, "frameworks", env=VENV), "ok", "brings its own CUDA from pip: 12.2.140")
    details = "\n".join(p["details"])
    assert f"tensorflow's CUDA runtime: {rt} (pip's nvidia-cuda-runtime-cu12 12.2.140; not the selection's" in details
    assert f"tensorflow's cuDNN: {dn} (pip's nvidia-cudnn-cu12 8.9.4.25; the selection (" in details


def test_frameworks_before_2_14_ignore_pip_wheels_and_use_the_loader(m):
    m.tensorflow(version="2.13.0", cuda="11.8", cudnn="8")
    _wheel(m, "cuda_runtime", "cu11", "11.8.89", "libcudart.so.11.0")
    expect(probe(m, "frameworks", env=VENV), "fail", "tensorflow 2.13.0 needs CUDA 11.8", "libcudart.so.11.0")


def test_frameworks_runtime_from_nowhere_is_a_failure_even_with_the_toolkit_selected(m):
    # the selected toolkit has libcudart.so.12, but the loader cannot see it: ✗, not ✓
    m.tensorflow(version="2.16.1", cuda="12.3")
    m.remove("/etc/ld.so.conf.d/988_cuda-12.conf")
    m.ldconfig()
    p = expect(probe(m, "frameworks", env=VENV), "fail", "needs CUDA 12.3 (libcudart.so.12) but none will load",
               "would load from nowhere")
    assert "cudaenv exec" in p["fix"]


def test_frameworks_torch_cpu_and_torch_for_a_newer_driver(m):
    m.torch(version="2.3.0+cpu", cuda=None)
    expect(probe(m, "frameworks", env=VENV), "warn", "torch 2.3.0+cpu is a CPU-only build")
    m.remove("/opt/venv")
    m.torch(version="2.3.0+cu121", cuda="12.1")
    _driver(m, "470.82.01", 11040)
    expect(probe(m, "frameworks", env=VENV), "fail", "torch 2.3.0+cu121 needs a driver for CUDA 12.1")


def test_frameworks_none_is_skipped(m):
    m.p(m.site_packages()).mkdir(parents=True)
    expect(probe(m, "frameworks", env=VENV), "skip", "no TensorFlow, PyTorch or JAX")


# -- 12. containers, 13. WSL2 ---------------------------------------------------------------------

def test_container_without_gpu_access(m):
    m.write("/.dockerenv", "")
    m.no_kernel_driver()
    p = expect(probe(m, "container"), "fail", "docker without GPU access")
    assert "--gpus all" in p["fix"]
    p = expect(probe(m, "driver"), "fail", "no NVIDIA kernel driver visible in this docker container")
    assert "never install a driver inside the image" in p["fix"]


def test_container_driver_library_advice_points_at_the_host(m):
    """The host's kernel module is visible, but the container was started without the NVIDIA
    runtime: libcuda.so.1 is missing. The fix is the runtime flags, never apt in the image."""
    m.write("/.dockerenv", "")
    m.remove("/usr/lib/x86_64-linux-gnu/libcuda.so.1")
    m.ldconfig()
    p = expect(probe(m, "libcuda"), "fail", "libcuda.so.1 is not installed in this docker container")
    assert "--gpus all" in p["fix"] and "never install libcuda" in p["fix"], p
    assert "apt install" not in p["fix"] and "libnvidia-compute" not in p["fix"], p
    # an image that brought its own, mismatched libcuda: remove it, let the runtime mount the host's
    m.copy(m.libs.fake_driver("cuda"), "/usr/lib/x86_64-linux-gnu/libcuda.so.1")
    m.ldconfig()
    m.gpu_conf(init=803)
    p = expect(probe(m, "libcuda"), "fail", "cuInit fails")
    assert "remove the driver libraries from the image" in p["fix"] and "reboot" not in p["fix"], p


def test_container_with_no_visible_devices(m):
    m.write("/.dockerenv", "")
    expect(probe(m, "container", env={"NVIDIA_VISIBLE_DEVICES": "void"}), "warn", "NVIDIA_VISIBLE_DEVICES=void")


def test_container_image_without_cudnn(m):
    m.write("/run/.containerenv", "")
    for f in m.p("/usr/local/cuda-12.4/lib64").glob("libcudnn*"):
        f.unlink()
    m.ldconfig()
    # said, not flagged: many GPU images need no cuDNN (NVIDIA's sample workload)
    expect(probe(m, "container"), "ok", "in podman with GPU device nodes", "no cuDNN in the image's loader cache")


def test_container_ok(m):
    m.write("/.dockerenv", "")
    expect(probe(m, "container", env={"NVIDIA_VISIBLE_DEVICES": "all"}), "ok", "in docker with GPU device nodes")


def test_cuda_compat_on_the_host_reads_the_toolkit_config(m):
    expect(probe(m, "container-compat"), "skip", "no NVIDIA Container Toolkit configuration")
    m.container_toolkit("1.17.8-1")
    expect(probe(m, "container-compat"), "ok", "libraries are used",
           "cuda-compat-mode not set: \"ldconfig\", the default since 1.17.7")
    m.container_toolkit("1.17.5-1")
    p = expect(probe(m, "container-compat"), "ok", "libraries are not used",
               "allow-cuda-compat-libs-from-container not set in [features] (toolkit 1.17.5)")
    assert any("CUDA_ERROR_INSUFFICIENT_DRIVER (35)" in d for d in p["details"]), p
    m.container_toolkit("1.17.5-1", "[features]\nallow-cuda-compat-libs-from-container = true\n")
    expect(probe(m, "container-compat"), "ok", "libraries are used (allow-cuda-compat-libs-from-container = true")
    m.container_toolkit("1.18.0-1", "[nvidia-container-runtime.modes.legacy]\ncuda-compat-mode = \"disabled\"\n")
    expect(probe(m, "container-compat"), "ok", "libraries are not used (cuda-compat-mode = \"disabled\"")


def test_cuda_compat_in_a_container_with_the_images_compat_libs(m):
    m.write("/.dockerenv", "")
    expect(probe(m, "container-compat"), "ok", "no CUDA forward-compatibility libcuda in the image")
    m.compat_libs("570.124.06")
    p = expect(probe(m, "container-compat"), "warn", "forward-compatibility libcuda 570.124.06 for a newer "
               "driver than the host's 550.54.15, but programs load the host's libcuda",
               "CUDA_ERROR_INSUFFICIENT_DRIVER (35")
    assert "cuda-compat-mode = \"ldconfig\"" in p["fix"], p
    m.compat_libs("570.124.06", loaded=True)
    expect(probe(m, "container-compat"), "ok", "programs load the image's forward-compatibility libcuda "
           "570.124.06 over the host's driver 550.54.15")
    m.pci_gpu(device="0x2684")  # a GeForce RTX 4090: no forward_compat mark in gpu-support.json
    expect(probe(m, "container-compat"), "fail", "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804)")


def _wsl(m):
    m.write("/proc/sys/kernel/osrelease", "5.15.153.1-microsoft-standard-WSL2\n")
    m.write("/dev/dxg", "")
    m.no_kernel_driver()
    m.remove("/sys/bus/pci/devices")


def test_wsl_libcuda_from_the_windows_host(m):
    _wsl(m)
    m.remove("/usr/lib/x86_64-linux-gnu/libcuda.so.1")
    m.copy(m.libs.fake_driver("cuda"), "/usr/lib/wsl/lib/libcuda.so.1")
    m.write("/usr/lib/wsl/lib/fake_gpu.conf", "cuda 12040\ninit 0\n")
    m.ld_conf("ld.wsl.conf", "/usr/lib/wsl/lib")
    m.ldconfig()
    res, probes = doctor(m)
    expect(probes["wsl"], "ok", "/usr/lib/wsl/lib")
    expect(probes["gpu"], "ok", "WSL2")
    expect(probes["driver"], "skip", "WSL2")


def test_wsl_with_a_linux_driver_inside(m):
    _wsl(m)
    p = expect(probe(m, "wsl"), "fail", "libcuda.so.1 loads from /usr/lib/x86_64-linux-gnu/libcuda.so.1")
    assert "remove the Linux driver" in p["fix"]


def test_not_wsl_is_skipped(m):
    expect(probe(m, "wsl"), "skip", "not WSL2")


# -- 18. cudaenv itself ----------------------------------------------------------------------------

def test_self_shims_not_on_path(m):
    shims = m.run.tmp / "root" / "shims"
    shims.mkdir(parents=True)
    (shims / "nvcc").symlink_to("/bin/true")
    expect(probe(m, "cudaenv"), "warn", "not on PATH")


def test_self_shims_behind_another_cuda(m):
    shims = m.run.tmp / "root" / "shims"
    shims.mkdir(parents=True)
    (shims / "nvcc").symlink_to("/bin/true")
    p = expect(probe(m, "cudaenv", env={"PATH": f"/usr/local/cuda/bin:{shims}:/usr/bin"}), "warn",
               "/usr/local/cuda/bin comes before the shims")


def test_self_shims_first_is_ok(m):
    shims = m.run.tmp / "root" / "shims"
    shims.mkdir(parents=True)
    (shims / "nvcc").symlink_to("/bin/true")
    p = probe(m, "cudaenv", env={"PATH": f"{shims}:/usr/local/cuda/bin:/usr/bin"})
    assert p["status"] in ("ok", "warn") and "not on PATH" not in p["finding"] and "before" not in p["finding"]


# -- the doctor itself survives hostile libraries ----------------------------------------------------

def test_a_crashing_driver_library_costs_a_finding_not_the_doctor(m):
    crash = m.libs.build("libcuda.so.1", "libcuda.so.1",
                         "int cuDriverGetVersion(int *v) { *(volatile int *)0 = 1; return 0; }\n"
                         "int cuInit(unsigned f) { (void)f; return 0; }")
    m.copy(crash, "/usr/lib/x86_64-linux-gnu/libcuda.so.1")
    res, probes = doctor(m)
    p = expect(probes["libcuda"], "fail", "does not load")
    # signal 11; under a sanitizer the child reports the SEGV and exits instead: AddressSanitizer
    # with 1, ThreadSanitizer with the preset's exitcode (66)
    assert any(w in p["finding"] for w in ("crashed (signal 11)", "exited with 1", "exited with 66")), p
    assert len(probes) == 28 and res.rc == 1


def test_a_hanging_driver_library_is_abandoned_at_the_deadline(m):
    hang = m.libs.build("libcuda.so.1", "libcuda.so.1",
                        "#include <unistd.h>\n"
                        "int cuDriverGetVersion(int *v) { for (;;) pause(); *v = 0; return 0; }\n"
                        "int cuInit(unsigned f) { (void)f; return 0; }")
    m.copy(hang, "/usr/lib/x86_64-linux-gnu/libcuda.so.1")
    p = expect(probe(m, "libcuda", env={"CUDAENV_DOCTOR_TIMEOUT": "0.5"}), "fail", "did not answer within")
    res = m.run("doctor", env={"CUDAENV_DOCTOR_TIMEOUT": "soon"})
    assert_one_line_error(res, 2)


# -- after the real install and global ----------------------------------------------------------

def test_after_a_real_install_and_global_the_doctor_agrees(inst, libs, tmp_path):
    """install (from the fixture mirror) and global (real ldconfig) into a machine with a GPU,
    then every layer the switch touched reads ok."""
    if os.geteuid() != 0:
        pytest.skip("ldconfig -r needs root (chroot)")
    m = fixture_sysroot.Machine(tmp_path / "sys", libs)
    m.base()
    m.pci_gpu()
    m.kernel_driver()
    m.add_gpu()
    m.driver_libs()
    m.ldconfig()
    inst.env.update(CUDAENV_ROOT=str(m.p("/opt/cudaenv")), CUDAENV_SYSROOT=str(m.root), **m.env())
    assert inst("install", "tf-2.16").rc == 0
    res = inst("global", "tf-2.16")
    assert res.rc == 0, res
    res = inst("doctor", "--json")
    assert res.rc == 0, res
    probes = {p["id"]: p for p in res.json()["probes"]}
    version = f"/opt/cudaenv/versions/{PLATFORM}/12.4.1+cudnn9.1.1.17"
    expect(probes["toolkit"], "ok", "CUDA 12.4", "cudaenv's record: 12.4.1", "nvcc --version: 12.4.131")
    expect(probes["cuda-link"], "ok", "cudaenv's link to " + version)
    expect(probes["loader"], "ok", f"libcudart.so.12 -> /usr/local/cuda/lib64/libcudart.so.12 (ld.so.cache)",
           "libcudnn.so.9")
    expect(probes["cudnn"], "ok", "cuDNN 9.1.1", "all 8 libraries present")
    expect(probes["driver-cuda"], "ok", "550.54.15")


# -- the real machine --------------------------------------------------------------------------------

REAL = Path("/usr/local/cuda-13.0")


@pytest.mark.skipif(not REAL.is_dir(), reason="no CUDA 13 toolkit in /usr/local/cuda-13.0 here")
@pytest.mark.skipif(Path("/proc/driver/nvidia/version").exists(), reason="this machine has a driver")
def test_real_cuda_13_toolkit_without_a_driver(cudaenv):
    """Read-only: the real doctor on this machine (sysroot /)."""
    env = {"CUDA_HOME": str(REAL), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    if not Path("/usr/local/cuda").exists():
        env["CUDA_HOME"] = str(REAL)
    res = cudaenv("doctor", "--json", env=env)
    assert res.rc == 1, res
    probes = {p["id"]: p for p in res.json()["probes"]}
    # the root cause: no GPU, no driver; what stands on them is skipped
    assert probes["gpu"]["status"] == "fail" and "no NVIDIA GPU" in probes["gpu"]["finding"]
    assert probes["driver"]["status"] == "fail" and "no NVIDIA kernel driver" in probes["driver"]["finding"]
    for dep in ("arch", "thermal", "mig", "driver-cuda"):
        assert probes[dep]["status"] == "skip", probes[dep]
    assert "stub" in probes["libcuda"]["finding"] and probes["libcuda"]["status"] == "skip", probes["libcuda"]
    assert probes["toolkit"]["status"] == "ok" and "CUDA 13.0" in probes["toolkit"]["finding"], probes["toolkit"]
    cudnn = probes["cudnn"]
    assert cudnn["status"] == "ok", cudnn
    assert "cuDNN 9.19.0" in cudnn["finding"] and "header and library agree" in cudnn["finding"]
    assert any("cudnnGetVersion(): 91900" in d for d in cudnn["details"])


@pytest.mark.skipif(not REAL.is_dir(), reason="no CUDA 13 toolkit in /usr/local/cuda-13.0 here")
def test_real_toolkit_is_left_untouched(cudaenv):
    def state():
        return sorted((str(p), p.lstat().st_mtime_ns) for p in REAL.rglob("*") if "include" not in p.parts)
    before = state()
    cudaenv("doctor", "-v")
    assert state() == before


# -- real machine layouts (issue 16) ------------------------------------------------------------

def test_merged_usr_and_nvidias_deb_conf_files_give_no_false_cache_warning(m):
    """Debian 12: /lib -> usr/lib, x86_64-linux-gnu.conf lists both names of the multiarch folder,
    NVIDIA's debs add 000_cuda.conf and 988_cuda-12.conf through links. ldconfig records one name
    per real folder; the doctor compares real folders, so running ldconfig is never the advice."""
    m.merged_usr()
    res, probes = doctor(m)
    loader = probes["loader"]
    assert loader["status"] == "ok", json.dumps(loader, indent=2)
    assert "out of date" not in loader["finding"] and "ldconfig" not in (loader.get("fix") or "")
    bad = {k: p["finding"] for k, p in probes.items() if p["status"] in ("warn", "fail") and k != "advisories"}
    assert bad == {}, bad
    # ldconfig records libcuda under the first name of the folder (/lib/x86_64-linux-gnu), the
    # file lives under /usr/lib/x86_64-linux-gnu: one file, so no "missing from the cache"
    assert any(re.match(r"libcuda\.so\.1 -> /lib/x86_64-linux-gnu/libcuda\.so\.1 \(ld\.so\.cache\)", l)
               for l in loader["details"]), loader["details"]
    assert probes["libcuda"]["status"] == "ok", probes["libcuda"]


def _loader_lines(p):
    """{soname: machine path} from the loader probe's details ("libcudnn.so.8 -> PATH (via)")."""
    out = {}
    for line in p["details"]:
        m_ = re.match(r"^(lib\S+) -> (\S+) \(", line)
        if m_:
            out[m_.group(1)] = m_.group(2)
    return out


def _agrees_with_the_real_loader(m, p, *sonames, ld_library_path=None):
    """The doctor's pick for each SONAME is the file the real glibc loader loads in a chroot."""
    truth = m.whereami(*sonames, ld_library_path=ld_library_path)
    said = _loader_lines(p)
    for soname in sonames:
        assert truth[soname], (soname, truth)
        real = truth[soname][1]
        assert soname in said, (soname, p)
        assert m.whereami_real(said[soname]) == real, (soname, said[soname], truth[soname])
    return truth


def _cuda118_cudnn86(m):
    """The selected toolkit: CUDA 11.8 + cuDNN 8.6.0 at /usr/local/cuda, its lib64 in the cache."""
    m.remove("/usr/local/cuda-12.4")
    m.remove("/etc/ld.so.conf.d/988_cuda-12.conf")
    _other_toolkit(m)
    m.link("/usr/local/cuda", "/usr/local/cuda-11.8")
    m.ld_conf("988_cuda-11.conf", "/usr/local/cuda-11.8/lib64")


@pytest.mark.parametrize("toolkit_conf", [None, "zz-cuda-11-8.conf"])
def test_a_distro_cudnn_that_loads_first_is_the_headline_and_the_verdict(m, toolkit_conf):
    """NVIDIA's libcudnn8 deb (8.2.4) in the multiarch folder of a Debian 12 machine and the
    selected 8.6.0 in the toolkit's lib64, which no conf file lists or one that ldconfig reads
    after x86_64-linux-gnu.conf (ldconfig keeps the first folder it read): the real loader in a
    chroot loads 8.2.4; the doctor's headline and the cudnn verdict say so, with the package."""
    _cuda118_cudnn86(m)
    m.merged_usr()  # Debian 12: x86_64-linux-gnu.conf lists the multiarch folder
    for conf in ("000_cuda.conf", "988_cuda-12.conf", "988_cuda-11.conf"):
        m.remove(f"/etc/ld.so.conf.d/{conf}")
    if toolkit_conf:
        m.ld_conf(toolkit_conf, "/usr/local/cuda-11.8/lib64")
    m.cudnn_copy("/usr/lib/x86_64-linux-gnu", "8.2.4", package="libcudnn8:amd64")
    m.ldconfig()
    p = expect(probe(m, "loader"), "warn",
               "programs load cuDNN 8.2.4 from /lib/x86_64-linux-gnu/libcudnn.so.8 (ld.so.cache), "
               "not the selected 8.6.0 in /usr/local/cuda-11.8/lib64")
    assert p["finding"].startswith("programs load cuDNN 8.2.4"), p
    assert "sudo apt remove libcudnn8" in p["fix"] and "cudaenv exec" in p["fix"], p
    assert "out of date" not in json.dumps(p), p
    truth = _agrees_with_the_real_loader(m, p, "libcudnn.so.8", *(["libcudart.so.11.0"] if toolkit_conf else []))
    assert truth["libcudnn.so.8"][1] == "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.2.4"
    c = expect(probe(m, "cudnn"), "fail",
               "programs load cuDNN 8.2.4 from /lib/x86_64-linux-gnu/libcudnn.so.8, not the selected 8.6.0")
    assert "sudo apt remove libcudnn8" in c["fix"], c
    # inside `cudaenv exec` the selected lib64 comes first: the verdict follows the loader
    lib64 = {"LD_LIBRARY_PATH": "/usr/local/cuda-11.8/lib64"}
    expect(probe(m, "cudnn", env=lib64), "ok", "cuDNN 8.6.0")
    assert m.whereami("libcudnn.so.8", ld_library_path=lib64["LD_LIBRARY_PATH"])["libcudnn.so.8"][1] \
        == "/usr/local/cuda-11.8/lib64/libcudnn.so.8.6.0"


def test_a_manual_cudnn_copy_nobody_owns_is_named_as_such(m):
    _cuda118_cudnn86(m)
    m.merged_usr()  # x86_64-linux-gnu.conf, libc.conf, NVIDIA's conf files: the real Debian list
    for conf in ("000_cuda.conf", "988_cuda-12.conf", "988_cuda-11.conf"):
        m.remove(f"/etc/ld.so.conf.d/{conf}")  # the toolkit reached through CUDA_HOME only
    m.cudnn_copy("/usr/local/lib", "8.1.1")
    m.ldconfig()
    p = probe(m, "loader")
    truth = _agrees_with_the_real_loader(m, p, "libcudnn.so.8")
    assert truth["libcudnn.so.8"][1] == "/usr/local/lib/libcudnn.so.8.1.1", truth
    expect(p, "warn", "programs load cuDNN 8.1.1 from /usr/local/lib/libcudnn.so.8")
    assert "no package owns /usr/local/lib/libcudnn.so.8.1.1" in p["fix"], p
    assert "move the libcudnn* files out of /usr/local/lib" in p["fix"], p


def test_a_cudnn_on_ld_library_path_is_what_loads(m):
    _cuda118_cudnn86(m)
    m.cudnn_copy("/opt/cudnn-8.4/lib", "8.4.1")
    m.ldconfig()
    env = {"LD_LIBRARY_PATH": "/opt/cudnn-8.4/lib"}
    p = expect(probe(m, "loader", env=env), "warn",
               "programs load cuDNN 8.4.1 from /opt/cudnn-8.4/lib/libcudnn.so.8 (LD_LIBRARY_PATH)")
    assert p["fix"].startswith("drop /opt/cudnn-8.4/lib from LD_LIBRARY_PATH"), p
    _agrees_with_the_real_loader(m, p, "libcudnn.so.8", ld_library_path="/opt/cudnn-8.4/lib")
    expect(probe(m, "cudnn", env=env), "fail", "programs load cuDNN 8.4.1 from /opt/cudnn-8.4/lib/libcudnn.so.8")


def test_the_same_cudnn_twice_is_judged_where_it_loads(m):
    _cuda118_cudnn86(m)
    m.cudnn_copy("/opt/cudnn/lib", "8.6.0")
    m.remove("/opt/cudnn/lib/libcudnn_ops_train.so.8")
    env = {"LD_LIBRARY_PATH": "/opt/cudnn/lib"}
    m.ldconfig()
    expect(probe(m, "cudnn", env=env), "fail", "the loader picks /opt/cudnn/lib/libcudnn.so.8",
           "in /opt/cudnn/lib lacks libcudnn_ops_train.so.8")


def test_a_distro_cudnn_behind_the_selected_one_is_no_finding(m):
    """NVIDIA's 988_cuda-11.conf is read before x86_64-linux-gnu.conf: the selected 8.6.0 loads
    (the real loader agrees) and the distro copy is only a detail."""
    _cuda118_cudnn86(m)
    m.merged_usr()
    for conf in ("000_cuda.conf", "988_cuda-12.conf"):
        m.remove(f"/etc/ld.so.conf.d/{conf}")
    m.cudnn_copy("/usr/lib/x86_64-linux-gnu", "8.2.4", package="libcudnn8:amd64")
    m.ldconfig()
    p = expect(probe(m, "loader"), "ok", "load from /usr/local/cuda-11.8/lib64",
               "shadows /lib/x86_64-linux-gnu/libcudnn.so.8")
    _agrees_with_the_real_loader(m, p, "libcudnn.so.8", "libcudart.so.11.0", "libcublas.so.11")
    expect(probe(m, "cudnn"), "ok", "cuDNN 8.6.0 in /usr/local/cuda-11.8/lib64")


@pytest.fixture
def debian(cudaenv, libs, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("ldconfig -r and chroot need root")
    machine = fixture_sysroot.Machine(tmp_path / "debian", libs).debian12_nvidia_debs()
    cudaenv.env.pop("container", None)
    cudaenv.env.update(CUDAENV_SYSROOT=str(machine.root), **machine.env())
    machine.run = cudaenv
    return machine


def test_healthy_debian12_with_nvidias_debs_gets_no_warning(debian):
    """Debian 12 + NVIDIA's CUDA 12.4 and cuDNN 9.1.1 debs + an A100 at x16 gen4 + the open driver
    550: every probe ok or skipped, and what the doctor says loads is what the real loader loads."""
    m = debian
    res, probes = doctor(m)
    # the advisories probe warns of NVIDIA's bulletins against driver 550.54.15 and CUDA 12.4.1:
    # true of these versions, not a fault of the machine
    bad = {k: (p["finding"], p.get("fix")) for k, p in probes.items() if p["status"] in ("warn", "fail") and k != "advisories"}
    assert bad == {}, json.dumps(bad, indent=2)
    assert probes["advisories"]["status"] == "warn" and "NVIDIA-5614" in probes["advisories"]["finding"] + str(probes["advisories"]["findings"])
    assert res.rc == 0, res
    expect(probes["gpu"], "ok", "1 NVIDIA GPU", "GA100 [A100 SXM4 40GB]")
    expect(probes["pcie"], "ok")
    expect(probes["driver"], "ok", "550.54.15")
    expect(probes["libcuda"], "ok", "libcuda.so.1")
    expect(probes["toolkit"], "ok", "CUDA 12.4", "/usr/local/cuda-12.4")
    expect(probes["cuda-link"], "ok")
    expect(probes["cudnn"], "ok", "cuDNN 9.1.1 in /", "all 8 libraries present", "built for CUDA 12",
           "cudnn_version.h: 9.1.1")
    expect(probes["loader"], "ok", "libcudart.so.12", "libcublas.so.12")
    _agrees_with_the_real_loader(m, probes["loader"], "libcudart.so.12", "libcublas.so.12", "libcuda.so.1")
    truth = m.whereami("libcudnn.so.9")
    assert truth["libcudnn.so.9"][1] == "/usr/lib/x86_64-linux-gnu/libcudnn.so.9.1.1", truth


# -- the facts, and `cudaenv report` over several machines' documents ------------------------

def test_json_facts_say_what_the_machine_is(m):
    res, _ = doctor(m)
    facts = res.json()["facts"]
    assert facts["driver"] == "550.54.15"
    assert [g["name"] for g in facts["gpus"]] == ["GA100 [A100 SXM4 40GB]"]
    assert facts["cuda"].startswith("12.4") and facts["toolkit"] == "/usr/local/cuda"
    assert facts["cudnn"] == "9.1.1"  # the toolkit's header (no cudaenv record here)


def test_report_is_one_table_with_failing_hosts_first(m, tmp_path):
    reports = tmp_path / "reports"
    reports.mkdir()
    healthy = m.run("doctor", "--json")
    (reports / "gpu-a.json").write_text(healthy.out)
    broken = m.run("doctor", "--json", env=_broken(m))  # an old driver, a wrong header, ...
    assert broken.rc == 1
    (reports / "gpu-b.json").write_text(broken.out)
    (reports / "gpu-c.json").write_text(healthy.out)
    (reports / "gpu-d.json").write_text("{not json")
    res = m.run("report", str(reports), "--json")
    assert res.rc == 1, res  # some host fails
    hosts = res.json()["hosts"]
    assert [h["host"] for h in hosts] == ["gpu-d", "gpu-b", "gpu-a", "gpu-c"]
    assert hosts[0]["problem"] and hosts[0]["failures"] == 0
    b = hosts[1]
    bdoc = broken.json()
    assert b["failures"] == bdoc["counts"]["fail"] > 0 and b["warnings"] == bdoc["counts"]["warn"]
    assert b["driver"] == "535.104.05" and b["worst"]["status"] == "fail"
    assert b["worst"]["id"] == next(p["id"] for p in bdoc["probes"] if p["status"] == "fail")
    assert hosts[2]["failures"] == 0 and hosts[2]["gpus"] == "GA100 [A100 SXM4 40GB]"
    assert res.json()["totals"] == {"hosts": 4, "failing": 2,
                                    "warning": sum(1 for h in hosts[2:] if h["warnings"]),}
    text = m.run("report", str(reports))
    lines = text.out.splitlines()
    assert lines[0].split()[:4] == ["HOST", "GPUS", "DRIVER", "CUDA"]
    assert lines[1].startswith("gpu-d") and lines[2].startswith("gpu-b") and "535.104.05" in lines[2]
    assert lines[-1].startswith("4 hosts: 2 failing")
    # hosts per advisory: the two healthy hosts' R550 driver (550.54.15) is below 5614's and
    # 5630's fixes; the broken host's 535.104.05 below every R535 fix, 5821's (535.309.01) too
    adv = {a["id"]: (a["severity"], a["hosts"]) for a in res.json()["advisories"]}
    assert adv["NVIDIA-5614"] == ("high", 3) and adv["NVIDIA-5630"] == ("high", 3), adv
    assert adv["NVIDIA-5821"] == ("high", 1) and "NVIDIA-5821" in b["advisories"], adv
    assert "NVIDIA-5821" not in hosts[2]["advisories"] and hosts[0]["advisories"] == []
    assert "advisories (hosts they apply to):" in text.out
    assert any(l.split()[:4] == ["NVIDIA-5614", "high", "3", "hosts"] for l in lines), text.out
    (reports / "gpu-b.json").unlink()
    (reports / "gpu-d.json").unlink()
    assert m.run("report", str(reports)).rc == 0


def test_report_of_an_empty_folder(m, tmp_path):
    assert_one_line_error(m.run("report", str(tmp_path)), 9)


def test_report_survives_hostile_documents_and_never_follows_links(m, tmp_path):
    """Every host document is input from another machine: a field of the wrong type, a link to a
    file outside DIR, a FIFO, a huge file -- each is named with why and left out; the rest are
    reported."""
    reports = tmp_path / "reports"
    reports.mkdir()
    healthy = m.run("doctor", "--json")
    (reports / "gpu-a.json").write_text(healthy.out)
    doc = healthy.json()
    doc["probes"][0]["status"] = 7
    (reports / "gpu-b.json").write_text(json.dumps(doc))
    doc = healthy.json()
    doc["facts"]["gpus"] = "lots"
    (reports / "gpu-c.json").write_text(json.dumps(doc))
    doc = healthy.json()
    doc["advisories"] = [{"id": "NVIDIA-5614; rm -rf /", "severity": "high"}]
    (reports / "gpu-g.json").write_text(json.dumps(doc))
    outside = tmp_path / "secret.json"
    broken = healthy.json()
    broken["facts"]["driver"] = "SECRET-OUTSIDE"
    outside.write_text(json.dumps(broken))
    (reports / "gpu-d.json").symlink_to(outside)
    os.mkfifo(reports / "gpu-e.json")
    with open(reports / "gpu-f.json", "wb") as f:
        f.truncate(9 << 20)
    res = m.run("report", str(reports), "--json")
    assert res.rc == 1, res
    hosts = {h["host"]: h for h in res.json()["hosts"]}
    assert hosts["gpu-a"]["problem"] is None and hosts["gpu-a"]["driver"] == "550.54.15"
    assert "probes[0].status is number, not a string" in hosts["gpu-b"]["problem"]
    assert "facts.gpus is string, not an array" in hosts["gpu-c"]["problem"]
    assert "gpu-d.json is a symbolic link: not followed" in hosts["gpu-d"]["problem"]
    assert "not a regular file" in hosts["gpu-e"]["problem"]
    assert "over the 8 MiB" in hosts["gpu-f"]["problem"]
    assert "advisories[0] has no advisory id" in hosts["gpu-g"]["problem"]
    assert "SECRET-OUTSIDE" not in res.out
    text = m.run("report", str(reports))
    assert text.rc == 1 and "SECRET-OUTSIDE" not in text.out and "Traceback" not in text.err
    assert text.out.splitlines()[-1].startswith("7 hosts: 6 failing")


# -- remembered answers (issue 30): a warm run starts only what is live ---------------------------

def test_a_warm_run_asks_nvcc_nothing_and_says_the_same(m, tmp_path):
    (Path(m.run.env["CUDAENV_ROOT"])).mkdir(parents=True, exist_ok=True)
    # the toolkit's nvcc counts its runs
    log = tmp_path / "nvcc-runs"
    nvcc = m.p("/usr/local/cuda-12.4/bin/nvcc")
    lines = nvcc.read_text().split("\n", 1)
    nvcc.write_text(f"{lines[0]}\necho run >> {log}\n{lines[1]}")
    cold = m.run("doctor", "--json")
    assert cold.rc == 0, cold
    assert log.read_text() == "run\n"  # once, though /usr/local/cuda and PATH both lead to it
    warm = m.run("doctor", "--json")
    assert warm.out == cold.out
    assert log.read_text() == "run\n"  # remembered: not asked again
    # nvcc upgraded in place: asked again, and its new answer shows
    nvcc.write_text(nvcc.read_text().replace("V12.4.131", "V12.4.999"))
    again = m.run("doctor", "--json", "--only", "toolkit").json()
    assert log.read_text() == "run\nrun\n"
    assert any("12.4.999" in d for d in again["probes"][0]["details"]), again["probes"][0]
