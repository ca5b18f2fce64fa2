"""Selection (use, version, CUDAENV_VERSION, global), the project's TensorFlow, and exec/env/
which/prefix, against versions installed from the fixture mirror."""
import json
import os
import shutil
import subprocess

import pytest

from conftest import PLATFORM, CC, assert_one_line_error

TF213 = "11.8.0+cudnn8.6.0.163"
TF216 = "12.4.1+cudnn9.1.1.17"


@pytest.fixture
def two(inst, tmp_path):
    assert inst("install", "tf-2.13", "tf-2.16").rc == 0
    proj = tmp_path / "proj"
    (proj / "src" / "deep").mkdir(parents=True)
    inst.proj = proj
    return inst


def test_nothing_selected_is_system(two):
    res = two("version", cwd=two.proj)
    assert res.rc == 0
    assert res.out.startswith("system")


def test_use_pins_the_project_and_version_says_where_from(two):
    res = two("use", "tf-2.13", "--json", cwd=two.proj)
    assert res.rc == 0, res
    assert res.json()["changed"] is True and res.json()["version"] == TF213
    assert (two.proj / ".cuda-version").read_text() == "tf-2.13\n"
    deep = two.proj / "src" / "deep"
    res = two("version", cwd=deep)
    assert res.out.splitlines()[0] == f"{TF213} (set by {two.proj / '.cuda-version'})"
    assert "tensorflow 2.13 (from .cuda-version)" in res.out
    again = two("use", "tf-2.13", "--json", cwd=two.proj)
    assert again.json()["changed"] is False


def test_selection_order(two):
    (two.proj / ".cuda-version").write_text("tf-2.13\n")
    (two.root / "state.json").write_text(json.dumps({"global": TF216}))
    assert two("version", cwd=two.proj).out.startswith(TF213)
    assert two("version", cwd=two.proj, env={"CUDAENV_VERSION": TF216}).out.startswith(
        f"{TF216} (set by CUDAENV_VERSION)")
    assert two("version", cwd=two.tmp).out.startswith(f"{TF216} (set by {two.root / 'state.json'} (global))")


@pytest.mark.parametrize("raw", [b"\x00\n", b"11.8.0\x00/../x\n", b"\x1b[2J\x1b]0;pwned\x07" + TF213.encode() + b"\n",
                                 b"..\n", b".\n", b"../versions\n", b"/etc\n", b"11.8\rtf-2.16\n",
                                 b"\xc0\xae\xc0\xae\n"])
def test_a_version_file_with_control_bytes_or_no_name_is_refused_and_shown_escaped(two, raw):
    """A NUL once cut the name short and selected versions/ itself; control bytes were echoed
    to the terminal. Every command that reads the selection refuses, on one escaped line."""
    (two.proj / ".cuda-version").write_bytes(raw)
    for args in (("version",), ("prefix",), ("exec", "true"), ("env",)):
        res = two(*args, cwd=two.proj)
        assert_one_line_error(res, 2)
        assert "which is no version or SPEC" in res.err, (args, res.err)
        assert not any(c in res.err for c in "\x00\x1b\x07\r"), repr(res.err)
    shim = subprocess.run([str(two.root / "shims" / "nvcc"), "--version"], cwd=two.proj,
                          env=two.env, capture_output=True)
    assert shim.returncode == 127 and b"\x1b" not in shim.stderr and b"\x00" not in shim.stderr, shim


def test_a_huge_version_file_or_word_is_refused_short_by_every_reader(two):
    """The shim reads .cuda-version at every call: a sparse 1 GiB file that starts with a real
    version is refused by its size (one line, exit 2), never read whole; a 60 KiB first word is
    no version, quoted 120 bytes at most."""
    f = two.proj / ".cuda-version"
    f.write_text(TF213 + "\n")
    os.truncate(f, 1 << 30)
    for args in (("version",), ("prefix",), ("exec", "true"), ("env",), ("env", "--for", "pip")):
        res = two(*args, cwd=two.proj)
        assert_one_line_error(res, 2)
        assert f"'{f}' is larger than 64 KiB" in res.err, (args, res.err)
    shim = subprocess.run([str(two.root / "shims" / "nvcc"), "--version"], cwd=two.proj,
                          env=two.env, capture_output=True, text=True)
    assert shim.returncode == 127 and "larger than 64 KiB" in shim.stderr, shim
    f.write_text("a" * (60 << 10) + "\n")
    res = two("version", cwd=two.proj)
    assert_one_line_error(res, 2)
    assert len(res.err) < 1024 and "too long" in res.err, res.err[:300]


def test_cudaenv_version_with_control_bytes_is_refused(two):
    res = two("version", cwd=two.proj, env={"CUDAENV_VERSION": "\x1b[31m" + TF213})
    assert_one_line_error(res, 2)
    assert "CUDAENV_VERSION names '\\x1b[31m" in res.err, res.err


def test_pinned_but_not_installed_says_how_to_fix(two):
    (two.proj / ".cuda-version").write_text("12.9\n")
    res = two("version", cwd=two.proj)
    assert_one_line_error(res, 9)
    assert f"version '12.9' is not installed (set by {two.proj / '.cuda-version'})" in res.err
    assert "help: cudaenv install 12.9" in res.err


@pytest.mark.parametrize("name,text", [
    ("requirements.txt", "numpy\ntensorflow==2.13.1\n"),
    ("requirements-gpu.txt", "tensorflow[and-cuda]==2.13.0\n"),
    ("pyproject.toml", '[project]\ndependencies = ["tensorflow==2.13.1"]\n'),
    ("Pipfile", '[packages]\ntensorflow = "==2.13.1"\n'),
    ("environment.yml", "dependencies:\n  - tensorflow=2.13\n"),
])
def test_use_refuses_what_the_projects_tensorflow_cannot_use(two, name, text):
    (two.proj / name).write_text(text)
    res = two("use", "12.4", cwd=two.proj)
    assert_one_line_error(res, 8)
    assert "CUDA 12.4.1 is incompatible" in res.err and name in res.err
    assert "--force" in res.err
    assert not (two.proj / ".cuda-version").exists()
    assert two("use", "11.8", cwd=two.proj).rc == 0  # its own pair is fine
    assert two("use", "12.4", "--force", cwd=two.proj).rc == 0


def test_tensorflow_installed_in_the_active_environment_counts(two, tmp_path):
    venv = tmp_path / "venv"
    (venv / "lib" / "python3.11" / "site-packages" / "tensorflow-2.16.1.dist-info").mkdir(parents=True)
    res = two("use", "tf-2.13", cwd=two.proj, env={"VIRTUAL_ENV": str(venv)})
    assert res.rc == 0  # the SPEC names the framework itself
    res = two("use", "11.8", cwd=two.proj, env={"VIRTUAL_ENV": str(venv)})
    assert_one_line_error(res, 8)
    assert "tensorflow-2.16.1.dist-info" in res.err


def test_exec_runs_with_the_versions_environment_and_passes_the_status(two, tmp_path):
    (two.proj / ".cuda-version").write_text(TF213 + "\n")
    res = two("exec", "--", "sh", "-c", 'echo "$CUDA_HOME|$CUDA_PATH|$LD_LIBRARY_PATH"; exit 7',
              cwd=two.proj)
    assert res.rc == 7
    prefix = str(two.root / "versions" / PLATFORM / TF213)
    home, path, ld = res.out.strip().split("|")
    assert home == prefix and path == prefix and ld.startswith(prefix + "/lib64")
    assert "release 11.8" in two("exec", "--", "nvcc", "--version", cwd=two.proj).out
    # a real program linked against libcudart loads the selected version's runtime
    probe = tmp_path / "probe.c"
    probe.write_text('#include <stdio.h>\nint cudaRuntimeGetVersion(int*);\n'
                     'int main(void){int v=0;cudaRuntimeGetVersion(&v);printf("%d\\n",v);return 0;}\n')
    lib = two.root / "versions" / PLATFORM / TF213 / "lib64"
    subprocess.run([CC, str(probe), "-o", str(tmp_path / "probe"), f"-L{lib}", "-lcudart"], check=True)
    assert two("exec", "--", str(tmp_path / "probe"), cwd=two.proj).out.strip() == "11080"
    # linked against CUDA 11's runtime (SONAME libcudart.so.11.0), it cannot load CUDA 12's
    wrong = two("exec", "--", str(tmp_path / "probe"), cwd=two.proj, env={"CUDAENV_VERSION": TF216})
    assert wrong.rc != 0 and "libcudart.so.11.0" in wrong.err
    lib12 = two.root / "versions" / PLATFORM / TF216 / "lib64"
    subprocess.run([CC, str(probe), "-o", str(tmp_path / "probe12"), f"-L{lib12}", "-lcudart"], check=True)
    assert two("exec", "--", str(tmp_path / "probe12"), cwd=two.proj,
               env={"CUDAENV_VERSION": TF216}).out.strip() == "12040"
    assert two("exec", "--", "no-such-tool", cwd=two.proj).rc == 127


def test_exec_gives_the_command_every_argument_verbatim(two):
    """Everything after the command's name is the command's: a `--` among its arguments, its own
    --version or -h; a leading `--` before the command is optional (pyenv/uv users omit it)."""
    (two.proj / ".cuda-version").write_text(TF213 + "\n")
    assert two("exec", "--", "printf", "%s|", "a", "b", cwd=two.proj).out == "a|b|"
    assert two("exec", "printf", "%s|", "a", "--", "b", cwd=two.proj).out == "a|--|b|"
    assert two("exec", "--", "printf", "%s|", "--", "-h", "--json", cwd=two.proj).out == "--|-h|--json|"
    res = two("exec", "nvcc", "--version", cwd=two.proj)
    assert res.rc == 0 and "release 11.8" in res.out and "cudaenv" not in res.out, res
    # global options stay cudaenv's when they come before the command word
    assert two("--no-color", "exec", "printf", "%s", "--version", cwd=two.proj).out == "--version"
    assert "Run a command" in two("exec", "--help", cwd=two.proj).out
    assert_one_line_error(two("exec", cwd=two.proj), 2)
    assert_one_line_error(two("exec", "--", cwd=two.proj), 2)


def test_which_prefix_and_env(two):
    (two.proj / ".cuda-version").write_text("tf-2.16\n")
    prefix = two.root / "versions" / PLATFORM / TF216
    assert two("prefix", cwd=two.proj).out.strip() == str(prefix)
    assert two("prefix", "tf-2.13", cwd=two.proj).out.strip() == str(two.root / "versions" / PLATFORM / TF213)
    assert two("which", "nvcc", cwd=two.proj).out.strip() == str(prefix / "bin" / "nvcc")
    res = two("which", "cuobjdump", cwd=two.proj)
    assert_one_line_error(res, 9)
    out = subprocess.run(["bash", "-c", 'eval "$("$0" env --shell bash)"; echo "$CUDA_HOME"; nvcc --version',
                          os.environ["CUDAENV_EXE"]], cwd=two.proj, env=two.env, capture_output=True, text=True)
    assert out.stdout.splitlines()[0] == str(prefix)
    assert "release 12.4" in out.stdout


def test_env_for_fish(two):
    if not shutil.which("fish"):
        pytest.skip("fish is not installed")
    (two.proj / ".cuda-version").write_text("tf-2.16\n")
    out = subprocess.run(["fish", "-c", f'{os.environ["CUDAENV_EXE"]} env --shell fish | source; echo $CUDA_HOME'],
                         cwd=two.proj, env=two.env, capture_output=True, text=True)
    assert out.stdout.strip() == str(two.root / "versions" / PLATFORM / TF216)
