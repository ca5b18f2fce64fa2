"""PyTorch and JAX beside TensorFlow: their rows and SPECs, the verdicts and their sources,
`use --match` / `install --match` on site-packages laid out as pip and conda lay them out, the
bridges to Python installers (`env --for`), and the doctor's view of which libcudnn and libcublas
a framework would load -- checked against the real glibc loader."""
import json
import os
import shutil
import subprocess

import pytest

from conftest import assert_one_line_error

GCC = shutil.which("gcc") or shutil.which("cc")


# -- site-packages as the wheels lay them out ----------------------------------------------------

def dist(site, name, version, requires=()):
    d = site / f"{name}-{version}.dist-info"
    d.mkdir(parents=True, exist_ok=True)
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
    (d / "METADATA").write_text(meta + "\nthe description\n")
    (d / "RECORD").write_text("")
    return d


def site_of(prefix, py="python3.11"):
    s = prefix / "lib" / py / "site-packages"
    s.mkdir(parents=True, exist_ok=True)
    return s


def torch_wheel(site, version, cuda, requires=()):
    dist(site, "torch", version, requires)
    (site / "torch").mkdir(exist_ok=True)
    (site / "torch" / "version.py").write_text(
        f"__version__ = '{version}'\ndebug = False\ncuda: Optional[str] = "
        + (f"'{cuda}'" if cuda else "None") + "\nhip = None\n")


def jax_wheels(site, version, major, nvcc=None):
    dist(site, "jax", version)
    dist(site, "jaxlib", version)
    dist(site, f"jax_cuda{major}_plugin", version,
         [f'nvidia-cudnn-cu{major}>=9.1,<10.0; sys_platform == "linux"'])
    dist(site, f"jax_cuda{major}_pjrt", version)
    if nvcc:
        dist(site, f"nvidia_cuda_nvcc_cu{major}", nvcc)


def cc_lib(out, soname, source="int x;", flags=()):
    out.parent.mkdir(parents=True, exist_ok=True)
    src = out.parent / (out.name + ".c")
    src.write_text(source + "\n")
    subprocess.run([GCC, "-shared", "-fPIC", "-o", str(out), str(src), f"-Wl,-soname,{soname}",
                    *flags], check=True)
    src.unlink()


def cudnn_lib(path, code):
    cc_lib(path, "libcudnn.so.9",
           f"#include <stddef.h>\nsize_t cudnnGetVersion(void) {{ return {code}; }}")


# -- rows, SPECs, verdicts (the built-in manifests) ----------------------------------------------

def test_resolve_torch_default_and_named_builds(cudaenv):
    res = cudaenv("resolve", "torch-2.5", "--json")
    assert res.rc == 0, res.err
    j = res.json()
    v = j["framework"]["variant"]
    assert (j["framework"]["name"], v["tag"], v["default"]) == ("pytorch", "cu124", True)
    assert j["cuda"]["version"].startswith("12.4.")
    assert j["cudnn"]["version"] == "9.1.0.70"
    # PyPI's default for 2.5 is confirmed at a test-infra commit (primary); the cuDNN is a copy
    assert v["sources"]["cuda"]["primary"] is True
    assert v["sources"]["cudnn"]["primary"] is False
    assert any("secondary source" in n for n in j["notes"]), j["notes"]
    assert any("no nvidia-* pins" in n for n in j["notes"]), j["notes"]

    res = cudaenv("resolve", "pytorch==2.0.1+cu117", "--json")
    assert res.rc == 0, res.err
    v = res.json()["framework"]["variant"]
    assert v["pins"]["nvidia-cudnn-cu11"] == "==8.5.0.96" and v["pins_are"] == "exact"
    assert res.json()["cuda"]["version"].startswith("11.7.")

    text = cudaenv("resolve", "torch-2.14").out
    assert "cu130 (the default): CUDA 13.0, cuDNN 9.24.0.43" in text
    assert "cuda-toolkit[cublas,cudart,cufft,cufile,cupti,curand,cusolver,cusparse,nvjitlink,nvrtc,nvtx]==13.0.2" in text


def test_resolve_jax_floors(cudaenv):
    res = cudaenv("resolve", "jax-0.4.30", "--json")
    assert res.rc == 0, res.err
    j = res.json()
    v = j["framework"]["variant"]
    assert (v["tag"], v["cuda"], v["cuda_is_minimum"], v["pins_are"]) == ("cuda12", "12.1", True, "minimums")
    assert v["pins"]["nvidia-cudnn-cu12"] == ">=9.0,<10.0"
    assert j["cuda"]["version"].startswith("12.")
    major, minor = (int(x) for x in j["cudnn"]["version"].split(".")[:2])
    assert major == 9
    res = cudaenv("resolve", "jax-0.11.0+cuda13", "--json")
    assert res.rc == 0, res.err
    assert res.json()["cuda"]["version"].startswith("13.0.")  # what its CI built with


@pytest.mark.parametrize("args, code, words", [
    (["torch-2.5", "--cuda", "13.0"], 8, "another major"),
    (["torch-2.1+cu118", "--cudnn", "8.5"], 8, "cuDNN 8.x with x >= 7"),
    (["jax-0.9.0", "--cuda", "12.4"], 8, "older than its floor"),
    (["jax-0.6.0", "--cudnn", "9.5"], 8, "below its floor"),
    (["jax-0.4.26", "--cudnn", "9.1"], 8, "at or above its cap"),
    (["torch-2.5+cu999"], 9, "has no CUDA build 'cu999'"),
    (["torch-9.9"], 9, "no pytorch release"),
    (["11.8+cu121"], 2, "after a framework"),
])
def test_refusals_are_one_line_with_the_rule_and_its_source(cudaenv, args, code, words):
    res = cudaenv("resolve", *args)
    assert_one_line_error(res, code)
    assert words in res.err, res.err
    if code == 8:
        assert "help: rule " in res.err  # the rule and the upstream text it comes from
        assert "jax-ml/jax" in res.err or "pytorch/pytorch" in res.err


def test_minor_version_compatibility_is_a_note(cudaenv):
    res = cudaenv("resolve", "torch-2.5+cu121", "--cuda", "12.4", "--json")
    assert res.rc == 0, res.err
    assert any("minor-version compatibility" in n for n in res.json()["notes"])


# -- use --match / install --match (the fixture mirror) ---------------------------------------------

@pytest.fixture
def proj(inst, tmp_path):
    p = tmp_path / "proj"
    p.mkdir()
    inst.proj = p
    return inst


def test_use_match_pins_the_installed_cuda_of_the_venvs_torch(proj, tmp_path):
    assert proj("install", "11.8", "12.4").rc == 0
    venv = tmp_path / "venv"
    site = site_of(venv)
    torch_wheel(site, "2.5.1", "12.4", ["nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\""])
    res = proj("use", "--match", cwd=proj.proj, env={"VIRTUAL_ENV": str(venv)})
    assert res.rc == 0, res.err
    assert (proj.proj / ".cuda-version").read_text().strip() == "12.4.1"
    assert f"found torch 2.5.1 in {site} (VIRTUAL_ENV)" in res.out
    assert "torch/version.py" in res.out and "the same major.minor" in res.out
    # the selection follows
    assert proj("version", cwd=proj.proj, env={"VIRTUAL_ENV": str(venv)}).out.startswith("12.4.1")


def test_use_match_minor_mismatch_and_other_major(proj, tmp_path):
    assert proj("install", "12.4").rc == 0
    conda = tmp_path / "conda"
    site = site_of(conda, "python3.10")
    torch_wheel(site, "2.3.1+cu121", "12.1")  # download.pytorch.org's local version
    res = proj("use", "--match", "--json", cwd=proj.proj, env={"CONDA_PREFIX": str(conda)})
    assert res.rc == 0, res.err
    m = res.json()["match"]
    assert (res.json()["version"], m["cuda"], m["found_by"]) == ("12.4.1", "12.1", "CONDA_PREFIX")
    assert any("minor-version compatibility" in w for w in m["why"]), m["why"]
    # a torch for CUDA 13 has nothing to match here: not found, and how to get it
    shutil.rmtree(site)
    site = site_of(conda, "python3.10")
    torch_wheel(site, "2.14.0+cu130", "13.0")
    res = proj("use", "--match", cwd=proj.proj, env={"CONDA_PREFIX": str(conda)})
    assert_one_line_error(res, 9)
    assert "cudaenv install --match (installs pytorch-2.14+cu130" in res.err
    assert (proj.proj / ".cuda-version").read_text().strip() == "12.4.1"  # untouched


def test_install_match_installs_what_the_jax_plugin_needs_and_pins_it(proj, tmp_path):
    venv = tmp_path / "venv"
    site = site_of(venv)
    jax_wheels(site, "0.4.30", 12, nvcc="12.4.131")
    res = proj("install", "--match", cwd=proj.proj, env={"VIRTUAL_ENV": str(venv)})
    assert res.rc == 0, res.err
    assert "jax-cuda12-plugin 0.4.30 + nvidia-cuda-nvcc-cu12 12.4.131" in res.err
    assert (proj.proj / ".cuda-version").read_text().strip() == "12.4.1"
    assert "installed 12.4 as 12.4.1" in res.out
    # again: nothing to install, the same pin
    res = proj("install", "--match", "--json", cwd=proj.proj, env={"VIRTUAL_ENV": str(venv)})
    assert res.rc == 0 and res.json()["changed"] is False, res.err


def test_match_without_a_gpu_framework_says_so(proj, tmp_path):
    venv = tmp_path / "venv"
    torch_wheel(site_of(venv), "2.5.1+cpu", None)
    res = proj("use", "--match", cwd=proj.proj, env={"VIRTUAL_ENV": str(venv)})
    assert_one_line_error(res, 9)
    assert "torch 2.5.1+cpu (a CPU build)" in res.err
    res = proj("install", "--match", cwd=proj.proj, env={"PATH": "/nonexistent"})
    assert_one_line_error(res, 9)
    assert "no active Python environment" in res.err
    assert_one_line_error(proj("use", "--match", "12.4", cwd=proj.proj), 2)


def test_the_venvs_torch_refuses_a_cuda_of_another_major(proj, tmp_path):
    assert proj("install", "11.8", "12.4").rc == 0
    venv = tmp_path / "venv"
    torch_wheel(site_of(venv), "2.5.1+cu124", "12.4")
    res = proj("use", "11.8", cwd=proj.proj, env={"VIRTUAL_ENV": str(venv)})
    assert_one_line_error(res, 8)
    assert "torch-2.5.1+cu124.dist-info" in res.err
    assert proj("use", "12.4", cwd=proj.proj, env={"VIRTUAL_ENV": str(venv)}).rc == 0


# -- env --for ------------------------------------------------------------------------------------

def exports(text):
    out = {}
    for line in text.splitlines():
        assert line.startswith("export ") and line.endswith(";"), line
        k, v = line[len("export "):-1].split("=", 1)
        out[k] = v.strip("'")
    return out


def test_env_for_on_a_gpu_less_ci_machine_reads_the_target(proj, tmp_path):
    assert proj("install", "12.4").rc == 0
    (proj.proj / ".cuda-version").write_text("12.4\nsm = 8.0, 9.0  # A100, H100\ndriver = 550.54.15\n")
    res = proj("env", "--for", "uv", cwd=proj.proj)
    assert res.rc == 0, res.err
    e = exports(res.out)
    # no torch pinned: the newest torch's build for CUDA 12 (it has no cu124)
    assert e["UV_TORCH_BACKEND"] == "cu126"
    assert (e["CUDAARCHS"], e["TORCH_CUDA_ARCH_LIST"]) == ("80;90", "8.0;9.0")
    assert "minor-version compatibility" in res.err
    # the project's torch picks its own release's build
    (proj.proj / "requirements.txt").write_text("numpy\ntorch==2.5.1\n")
    e = exports(proj("env", "--for", "pip", cwd=proj.proj).out)
    assert e["PIP_INDEX_URL"] == "https://download.pytorch.org/whl/cu124"
    assert e["PIP_EXTRA_INDEX_URL"] == "https://pypi.org/simple"
    for tool in ("conda", "pixi"):
        res = proj("env", "--for", tool, "--json", cwd=proj.proj)
        assert res.rc == 0, res.err
        assert res.json()["env"]["CONDA_OVERRIDE_CUDA"] == "12.4"
        assert res.json()["env"]["CUDAARCHS"] == "80;90"
    # a target driver too old for the build is said
    (proj.proj / ".cuda-version").write_text("12.4\ndriver = 470.57.02\n")
    res = proj("env", "--for", "uv", cwd=proj.proj)
    assert res.rc == 0 and "warning: cu124 needs a driver >= 525.60.13" in res.err, res.err
    (proj.proj / ".cuda-version").write_text("12.4\nsm = 8.x\n")
    assert_one_line_error(proj("env", "--for", "uv", cwd=proj.proj), 2)


def test_env_for_reads_the_gpus_present(proj, tmp_path):
    assert proj("install", "12.4").rc == 0
    sysroot = tmp_path / "sys"
    for addr, device in (("0000:65:00.0", "0x2330"), ("0000:66:00.0", "0x2204")):  # H100, 3090
        d = sysroot / "sys/bus/pci/devices" / addr
        d.mkdir(parents=True)
        (d / "vendor").write_text("0x10de\n")
        (d / "device").write_text(device + "\n")
        (d / "class").write_text("0x030000\n")
    res = proj("env", "12.4", "--for", "conda", cwd=proj.proj, env={"CUDAENV_SYSROOT": str(sysroot)})
    assert res.rc == 0, res.err
    e = exports(res.out)
    assert (e["CUDAARCHS"], e["TORCH_CUDA_ARCH_LIST"]) == ("86;90", "8.6;9.0")


# -- the doctor: which cuDNN loads, in the loader's order -----------------------------------------

def real_loader_pick(obj, ld_library_path):
    """What glibc's loader maps for `obj`'s libcudnn.so.9: the truth the doctor must match."""
    code = ("import ctypes,sys\nctypes.CDLL(sys.argv[1])\n"
            "print(next(l.split()[-1] for l in open('/proc/self/maps') if 'libcudnn.so' in l))")
    env = {"PATH": "/usr/bin:/bin"}
    if ld_library_path:
        env["LD_LIBRARY_PATH"] = ld_library_path
    return subprocess.run(["/usr/bin/python3", "-c", code, str(obj)], env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.mark.skipif(GCC is None, reason="needs gcc")
@pytest.mark.parametrize("dtags, wheel_wins", [("--disable-new-dtags", True), ("--enable-new-dtags", False)])
def test_doctor_says_which_cudnn_torch_loads_as_the_loader_does(cudaenv, tmp_path, dtags, wheel_wins):
    venv = tmp_path / "venv"
    site = site_of(venv)
    torch_wheel(site, "2.5.1", "12.4", ["nvidia-cudnn-cu12==9.1.0.70"])
    dist(site, "nvidia_cudnn_cu12", "9.1.0.70")
    wheel = site / "nvidia" / "cudnn" / "lib" / "libcudnn.so.9"
    cudnn_lib(wheel, 90100)
    cc_lib(site / "nvidia" / "cublas" / "lib" / "libcublas.so.12", "libcublas.so.12")
    # libtorch_cuda.so as PyTorch's wheels link it: NEEDED libcudnn.so.9, the wheels' folders on
    # its search path -- DT_RPATH (today's wheels, before LD_LIBRARY_PATH) or DT_RUNPATH (after)
    obj = site / "torch" / "lib" / "libtorch_cuda.so"
    cc_lib(obj, "libtorch_cuda.so", flags=[
        "-Wl,--no-as-needed", f"-L{wheel.parent}", "-l:libcudnn.so.9",
        f"-L{site / 'nvidia/cublas/lib'}", "-l:libcublas.so.12",
        "-Wl,-rpath,$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/cublas/lib", f"-Wl,{dtags}"])
    # an older cuDNN 9 on LD_LIBRARY_PATH, as a system CUDA setup leaves it
    other = tmp_path / "opt" / "cudnn" / "lib"
    cudnn_lib(other / "libcudnn.so.9", 90000)
    truth = real_loader_pick(obj, str(other))
    assert (os.path.realpath(truth) == os.path.realpath(wheel)) == wheel_wins, truth

    res = cudaenv("doctor", "--json", env={"VIRTUAL_ENV": str(venv), "LD_LIBRARY_PATH": str(other),
                                            "PATH": "/usr/bin:/bin"})
    probe = next(p for p in res.json()["probes"] if p["id"] == "frameworks")
    text = json.dumps(probe)
    said = next(d for d in probe["details"] if d.startswith("torch 2.5.1's libcudnn.so.9: "))
    said_path = said.split(": ", 1)[1].split(" (", 1)[0]
    assert os.path.realpath(said_path) == os.path.realpath(truth), (said, truth)
    if wheel_wins:
        assert "DT_RPATH of libtorch_cuda.so" in said
        assert "would load cuDNN" not in text
    else:
        assert "LD_LIBRARY_PATH" in said and "DT_RUNPATH" in said  # the wheel's copy comes later
        assert probe["status"] == "fail", text
        assert "would load cuDNN 9.0.0" in text and "it needs cuDNN 9.x with x >= 1" in text


def test_doctor_checks_torchs_pins_against_the_wheels_installed(cudaenv, tmp_path):
    """PyTorch 2.14's METADATA pins the cuda-toolkit[...] meta package and nvidia-cudnn-cu13
    exactly: the doctor compares them with what is installed, as pip check would."""
    venv = tmp_path / "venv"
    site = site_of(venv, "python3.12")
    torch_wheel(site, "2.14.0+cu130", "13.0", [
        'cuda-toolkit[cublas,cudart,cufft]==13.0.2; platform_system == "Linux"',
        'nvidia-cudnn-cu13==9.24.0.43; platform_system == "Linux"',
        'nvidia-nccl-cu13==2.30.7; platform_system == "Linux"'])
    dist(site, "cuda_toolkit", "13.0.2")
    dist(site, "nvidia_cudnn_cu13", "9.23.0.31")
    res = cudaenv("doctor", "--json", env={"VIRTUAL_ENV": str(venv), "PATH": "/usr/bin:/bin"})
    probe = next(p for p in res.json()["probes"] if p["id"] == "frameworks")
    text = json.dumps(probe)
    assert "torch 2.14.0+cu130 pins nvidia-cudnn-cu13==9.24.0.43 but 9.23.0.31 is installed" in text
    assert "torch 2.14.0+cu130 pins nvidia-nccl-cu13==2.30.7, which is not installed" in text
    assert "pins cuda-toolkit[cublas,cudart,cufft]==13.0.2: installed" in text
    assert "built for CUDA 13.0 (torch/version.py, build cu130)" in text


def test_install_and_use_a_torch_spec(proj):
    res = proj("install", "torch-2.5", "--json")
    assert res.rc == 0, res.err
    name = res.json()["versions"][0]["version"]
    assert name == "12.4.1+cudnn9.1.1.17", name  # cu124; the wheels' 9.1.0.70 is not mirrored here
    assert proj("use", "torch-2.5", cwd=proj.proj).rc == 0
    assert proj("prefix", cwd=proj.proj).out.strip().endswith(name)
    res = proj("use", "torch-2.5+cu118", cwd=proj.proj)
    assert_one_line_error(res, 9)
    assert "cudaenv install torch-2.5+cu118" in res.err


def test_doctor_says_the_selected_nvcc_is_another_major_than_torchs(proj, tmp_path):
    assert proj("install", "11.8").rc == 0
    venv = tmp_path / "venv"
    torch_wheel(site_of(venv), "2.5.1", "12.4")
    res = proj("doctor", "--json", cwd=proj.proj,
               env={"VIRTUAL_ENV": str(venv), "CUDAENV_VERSION": "11.8", "PATH": "/usr/bin:/bin"})
    probe = next(p for p in res.json()["probes"] if p["id"] == "frameworks")
    text = json.dumps(probe)
    assert "torch 2.5.1 was built for CUDA 12.4 but the selected nvcc is 11.8" in text, text
    assert "cpp_extension.py" in text and "cudaenv use --match" in text
