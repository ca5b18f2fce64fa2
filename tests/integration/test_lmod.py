"""Modulefiles (issue 14, HPC): what `cudaenv modulefile` writes, loaded by the real Lmod (Debian's
lmod) in a real bash: the environment after `module load` is `cudaenv exec`'s, `unload` restores
it, `swap` moves between versions, family("cuda") keeps one CUDA module loaded."""
import os
import shutil
import subprocess

import pytest

from conftest import PLATFORM, assert_one_line_error

TF213 = "11.8.0+cudnn8.6.0.163"
TF216 = "12.4.1+cudnn9.1.1.17"
LMOD_INIT = "/usr/share/lmod/lmod/init/bash"
VARS = ("CUDA_HOME", "CUDA_PATH", "PATH", "LD_LIBRARY_PATH")


@pytest.fixture
def mods(inst, tmp_path):
    if not os.path.exists(LMOD_INIT):
        pytest.skip("Lmod is not installed (apt-get install lmod)")
    assert inst("install", "tf-2.13", "tf-2.16").rc == 0
    inst.modules = tmp_path / "modulefiles"
    for v in (TF213, TF216):
        res = inst("modulefile", v, "--to", str(inst.modules))
        assert res.rc == 0, res
    return inst


def lmod(inst, script, extra=None):
    env = dict(inst.env)
    env.update(extra or {})
    env.pop("MODULEPATH", None)
    env.pop("LOADEDMODULES", None)
    full = (f"source {LMOD_INIT}; module use {inst.modules}; {script}")
    return subprocess.run(["bash", "--norc", "--noprofile", "-c", full], env=env, capture_output=True,
                          text=True, timeout=120)


def dump(prefix):
    return "; ".join(f'echo "{prefix}{v}=${v}"' for v in VARS)


def parse(out, prefix):
    return {l[len(prefix):].split("=", 1)[0]: l.split("=", 1)[1] for l in out.splitlines()
            if l.startswith(prefix)}


def test_module_load_matches_exec_and_unload_restores(mods):
    base = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LD_LIBRARY_PATH": "/opt/mine/lib"}
    res = lmod(mods, f"{dump('B_')}; module load cuda/{TF213} && {dump('L_')}; "
                     f"module unload cuda/{TF213} && {dump('U_')}", extra=base)
    assert res.returncode == 0, res
    before, loaded, after = parse(res.stdout, "B_"), parse(res.stdout, "L_"), parse(res.stdout, "U_")
    ex = mods("exec", "--", "sh", "-c", "; ".join(f'echo "X_{v}=${v}"' for v in VARS),
              env={**base, "CUDAENV_VERSION": TF213})
    assert ex.rc == 0, ex
    assert loaded == parse(ex.out, "X_"), (loaded, ex.out)
    assert loaded["CUDA_HOME"] == str(mods.root / "versions" / PLATFORM / TF213)
    assert after == before  # unload puts everything back


def test_module_swap_and_family_keep_one_cuda(mods):
    res = lmod(mods, f"module load cuda/{TF213}; module swap cuda/{TF213} cuda/{TF216}; {dump('S_')}; "
                     f"module load cuda/{TF213}; {dump('F_')}; module -t list 2>&1")
    assert res.returncode == 0, res
    swapped = parse(res.stdout, "S_")
    assert swapped["CUDA_HOME"] == str(mods.root / "versions" / PLATFORM / TF216)
    assert TF213 not in swapped["PATH"] and TF213 not in swapped["LD_LIBRARY_PATH"]
    # loading another member of family "cuda" replaces the loaded one
    fam = parse(res.stdout, "F_")
    assert fam["CUDA_HOME"] == str(mods.root / "versions" / PLATFORM / TF213)
    assert TF216 not in fam["PATH"]
    loaded = [l for l in res.stdout.splitlines() + res.stderr.splitlines() if l.startswith("cuda/")]
    assert loaded == [f"cuda/{TF213}"], res


def test_tcl_modulefile_loads_in_lmod_too(mods, tmp_path):
    tcl = tmp_path / "tcl"
    assert mods("modulefile", TF216, "--tcl", "--to", str(tcl)).rc == 0
    text = (tcl / "cuda" / TF216).read_text()
    assert text.startswith("#%Module") and "conflict cuda" in text
    env = dict(mods.env)
    res = subprocess.run(["bash", "--norc", "--noprofile", "-c",
                          f"source {LMOD_INIT}; module use {tcl}; module load cuda/{TF216} && "
                          'echo "H=$CUDA_HOME"; module unload cuda/' + TF216 + '; echo "U=${CUDA_HOME-none}"'],
                         env=env, capture_output=True, text=True, timeout=120)
    assert f"H={mods.root / 'versions' / PLATFORM / TF216}" in res.stdout.splitlines(), res
    assert "U=none" in res.stdout.splitlines(), res


def test_env_shell_lmod_prints_the_modulefile(mods):
    res = mods("env", TF213, "--shell", "lmod")
    assert res.rc == 0 and 'family("cuda")' in res.out
    assert res.out == (mods.modules / "cuda" / f"{TF213}.lua").read_text()
    assert "conflict cuda" in mods("env", TF213, "--shell", "tcl").out
    assert_one_line_error(mods("modulefile", "9.9"), 9)
