"""Releases after facts.json, first-class: a mirror laid out like NVIDIA's serves CUDA 13.4.2 (an
index without nvidia_driver, cuda_compat or fabricmanager, with a windows-arm64 platform and
renamed `name` fields) and cuDNN 9.27 (an index facts.json does not list, shipping cudnn_jit);
the generator describes both, resolve shows them, install lays them out. And the generator's
inputs live in the repository: a fresh clone regenerates the manifests byte for byte."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import PLATFORM, EXE, FaultServer, assert_one_line_error

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def newer(cudaenv, newer_fixture_dir, tmp_path):
    (tmp_path / "extra").mkdir()
    srv = FaultServer(tmp_path / "extra", newer_fixture_dir / "mirror")
    cudaenv.env.update(CUDAENV_MANIFESTS=str(newer_fixture_dir / "manifests"), CUDAENV_MIRROR=srv.url,
                       CUDAENV_RETRIES="1", CUDAENV_LOCK_TIMEOUT="30")
    cudaenv.root = cudaenv.tmp / "root"
    cudaenv.server = srv
    yield cudaenv
    srv.close()


def test_cuda_134_without_driver_components_resolves_with_its_driver_branch(newer):
    doc = newer("resolve", "13.4+cudnn-9.27", "--json").json()
    assert doc["cuda"]["version"] == "13.4.2" and doc["cuda"]["release_date"] == "2026-09-16"
    assert doc["driver"]["min"] == "615" and doc["driver"]["min_source"] == "branch:R615"
    assert doc["driver"]["compat_min"] == "580.65.06"
    assert doc["host_compilers"] == {"gcc_max": "16", "clang_max": "22"}
    assert doc["cudnn"]["version"] == "9.27.0.42" and doc["cudnn"]["cuda_build"] == "13"
    comps = [a["component"] for a in doc["archives"]]
    assert "cudnn" in comps and "cudnn_jit" in comps
    assert not any("windows" in (a.get("path") or "") for a in doc["archives"])
    text = newer("resolve", "13.4+cudnn-9.27").out
    assert "driver   R615 or newer for full support; >= 580.65.06 with minor-version compatibility" in text


def test_cuda_134_and_cudnn_927_with_jit_install_flattened(newer):
    res = newer("install", "13.4+cudnn-9.27", "--json")
    assert res.rc == 0, res
    name = res.json()["versions"][0]["version"]
    assert name == "13.4.2+cudnn9.27.0.42"
    lib64 = newer.root / "versions" / PLATFORM / name / "lib64"
    for lib in ("libcudnn.so.9", "libcudnn_graph.so.9", "libcudnn_jit.so.9", "libcudart.so.13"):
        assert (lib64 / lib).exists(), sorted(p.name for p in lib64.iterdir())
    assert (lib64 / "libcudnn_jit.so.9").resolve().read_bytes()[:4] == b"\x7fELF"
    # nothing for another platform was asked for, and no samples
    assert not any("windows" in p or "samples" in p for p, _ in newer.server.requests), newer.server.requests
    which = newer("which", "libcudnn_jit.so.9", env={"CUDAENV_VERSION": name})
    assert which.rc == 0 and "/lib64/libcudnn_jit.so.9 (LD_LIBRARY_PATH)" in which.out, which


def test_13_2_pairs_with_cudnn_927_from_the_real_manifests(cudaenv):
    doc = cudaenv("resolve", "13.2+cudnn-9.27", "--json").json()
    assert doc["cuda"]["version"] == "13.2.2" and doc["cudnn"]["version"] == "9.27.0.42"
    assert doc["installable"] is True and doc["known"] == "full"
    assert {"cudnn", "cudnn_jit"} <= {a["component"] for a in doc["archives"]}
    doc = cudaenv("resolve", "13.4.2", "--json").json()
    assert doc["installable"] is True and len(doc["archives"]) >= 10


@pytest.mark.skipif(not shutil.which("git"), reason="git is needed to clone")
def test_a_fresh_clone_regenerates_the_manifests_byte_for_byte(tmp_path):
    """The generator's inputs are in the repository (data/reference): a clone with nothing
    beside it makes exactly the committed manifests."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "deep" / "clone"  # nothing beside it: no ../shared
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True)
    # the working tree's data and manifests, as they are now (committed or not)
    for d in ("data", "manifests"):
        shutil.rmtree(clone / d)
        shutil.copytree(ROOT / d, clone / d)
    out = tmp_path / "out"
    shutil.copytree(clone / "manifests", out)
    res = subprocess.run([EXE, "__generate-manifests", "--reference", str(clone / "data" / "reference"),
                          "--out", str(out)], capture_output=True, text=True,
                         env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    assert res.returncode == 0, res.stderr
    made = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    committed = {p.relative_to(clone / "manifests"): p.read_bytes()
                 for p in (clone / "manifests").rglob("*") if p.is_file()}
    assert made.keys() == committed.keys()
    assert [str(k) for k in made if made[k] != committed[k]] == []
    assert not (tmp_path / "deep" / "shared").exists()


def _machine(root, device, driver, subsystem=("10de", "18be")):
    """A machine under CUDAENV_SYSROOT: one NVIDIA GPU on the PCI bus and a loaded driver."""
    d = root / "sys" / "bus" / "pci" / "devices" / "0000:65:00.0"
    d.mkdir(parents=True)
    for name, value in (("vendor", "0x10de"), ("class", "0x030200"), ("device", device),
                        ("subsystem_vendor", "0x" + subsystem[0]), ("subsystem_device", "0x" + subsystem[1])):
        (d / name).write_text(value + "\n")
    v = root / "proc" / "driver" / "nvidia" / "version"
    v.parent.mkdir(parents=True)
    v.write_text(f"NVRM version: NVIDIA UNIX x86_64 Kernel Module  {driver}  Sat Aug 19 01:15:15 UTC 2023\n")
    return root


def test_resolve_checks_the_release_against_this_machines_gpu_and_driver(cudaenv, tmp_path):
    """An H200 (PCI 10de:2335) on an R535 driver: CUDA 13.4 will not run (below 13.x's floor),
    and NVIDIA's lists name the H200 from 550.90.07 on (a hint: the doctor settles it)."""
    root = _machine(tmp_path / "m", "0x2335", "535.104.05")
    doc = cudaenv("resolve", "13.4", "--json", env={"CUDAENV_SYSROOT": str(root)}).json()
    m = doc["machine"]
    assert m["driver"] == "535.104.05" and m["gpus"] == [{"pci": "10de:2335", "subsystem": "10de:18be"}]
    text = "\n".join(m["warnings"])
    assert "older than CUDA 13.4.2's floor 580.65.06" in text and "R615 or newer" in text, text
    # a listing is not a minimum: said as what it is
    assert "NVIDIA's lists name it from 550.90.07" in text, text
    res = cudaenv("resolve", "13.4", env={"CUDAENV_SYSROOT": str(root)})
    assert "this machine: this machine's driver 535.104.05 may not drive" in res.out
    # on 580 the toolkit runs through compatibility and the GPU is driven
    (root / "proc" / "driver" / "nvidia" / "version").write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Sat Aug 19 01:15:15 UTC 2023\n")
    doc = cudaenv("resolve", "13.4", "--json", env={"CUDAENV_SYSROOT": str(root)}).json()
    assert doc["machine"]["warnings"] == [
        "this machine's driver 580.95.05 runs CUDA 13.4.2 only through minor-version compatibility "
        "(full support needs R615 or newer)"]
    # no GPU and no driver: nothing to say (installing for another machine is fine)
    doc = cudaenv("resolve", "13.4", "--json", env={"CUDAENV_SYSROOT": str(tmp_path / "empty")}).json()
    assert doc["machine"] == {"driver": None, "gpus": [], "warnings": []}


def test_install_warns_about_this_machine_and_goes_on(cudaenv, tmp_path):
    root = _machine(tmp_path / "m", "0x1b80", "590.44.01", ("10de", "119e"))  # a GTX 1080 on R590
    res = cudaenv("install", "13.4", "--dry-run", env={"CUDAENV_SYSROOT": str(root)})
    assert res.rc == 0, res
    assert "cudaenv: warning: this machine's driver 590.44.01 does not drive" in res.err, res
    assert "ends with the R580 driver branch" in res.err, res


# cuDNN known from the opening of NVIDIA's index page alone (the real 9.23-9.28): the archive the
# excerpt shows installs, verified by NVIDIA's sha256; what it does not show is not known --
# refused as such, never guessed, and cudnn_jit (cut off) is not fetched.
def test_a_cudnn_known_in_part_installs_what_is_known_and_refuses_the_rest(newer):
    doc = newer("resolve", "13.4+cudnn-9.24", "--json").json()
    assert doc["cudnn"]["version"] == "9.24.0.43" and doc["installable"], doc
    assert [a["component"] for a in doc["archives"] if a["component"].startswith("cudnn")] == ["cudnn"]
    assert any("(cudnn_jit) is not known" in n for n in doc["notes"]), doc["notes"]
    res = newer("install", "13.4+cudnn-9.24", "--json")
    assert res.rc == 0, res
    lib64 = newer.root / "versions" / PLATFORM / "13.4.2+cudnn9.24.0.43" / "lib64"
    assert (lib64 / "libcudnn.so.9").exists() and not (lib64 / "libcudnn_jit.so.9").exists()
    asked = [p for p, _ in newer.server.requests]
    assert not any("cudnn_jit" in p or "redistrib_9.24.0" in p for p in asked), asked


# The exact case of issue 43: PyTorch 2.14's cu130 wheels pin nvidia-cudnn-cu13==9.24.0.43, and
# resolve gives that cuDNN; where the pin cannot be met (SBSA: its build is not known), resolve
# says which pin, what is used instead and why, in text and in --json.
def test_resolve_torch_214_cu130_gives_the_cudnn_its_wheels_pin(cudaenv):
    res = cudaenv("resolve", "torch-2.14+cu130")
    assert res.rc == 0, res
    assert "cuDNN    9.24.0.43  (build for CUDA 13)" in res.out, res.out
    assert "version  13.0.3+cudnn9.24.0.43" in res.out
    doc = cudaenv("resolve", "torch-2.14+cu130", "--json").json()
    assert doc["cudnn"]["version"] == "9.24.0.43" and doc["pins_not_met"] == []
    sbsa = cudaenv("resolve", "torch-2.14+cu130", "--platform", "linux-sbsa", "--json").json()
    assert sbsa["cudnn"]["version"] == "9.27.0.42"
    assert sbsa["pins_not_met"] == [{
        "what": "cudnn", "pinned": "9.24.0.43", "pin": "nvidia-cudnn-cu13==9.24.0.43", "used": "9.27.0.42",
        "why": "is not known for linux-sbsa (the manifests have only the opening of NVIDIA's index "
               "cudnn/redist/redistrib_9.24.0.json, which does not show that build)"}]
    text = cudaenv("resolve", "torch-2.14+cu130", "--platform", "linux-sbsa").out
    assert ("note: cuDNN 9.24.0.43 (what the cu130 wheels pin: nvidia-cudnn-cu13==9.24.0.43) is not known "
            "for linux-sbsa") in text, text
    assert "cuDNN 9.27.0.42 instead" in text
    # named with --cudnn, the build that is not known is refused as not known (exit 9)
    refused = cudaenv("resolve", "13.0+cudnn-9.24.0", "--platform", "linux-sbsa")
    assert_one_line_error(refused, 9)
    assert "cuDNN 9.24.0.43 for CUDA 13 on linux-sbsa is not known" in refused.err, refused
    assert "help: the newest cuDNN 9 known for it: cudaenv resolve 13.0.3+cudnn-9.27.0.42" in refused.err
