"""Shims, init and the shell function, the prompt hook and completions, driven through real bash,
zsh and fish."""
import os
import pty
import select
import shutil
import subprocess
import time

import pytest

from conftest import PLATFORM, CC, EXE, assert_one_line_error

TF213 = "11.8.0+cudnn8.6.0.163"
TF216 = "12.4.1+cudnn9.1.1.17"


@pytest.fixture
def env(inst, tmp_path):
    assert inst("install", "tf-2.13", "tf-2.16").rc == 0
    assert inst("install", "11.8", "--profile", "devel").rc == 0
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / ".cuda-version").write_text("tf-2.13\n")
    inst.proj = proj
    inst.shims = inst.root / "shims"
    return inst


def sh(shell, script, inst, cwd=None, extra=None):
    e = dict(inst.env)
    e.update(extra or {})
    args = [shell, "-c", script] if shell != "zsh" else ["zsh", "-f", "-c", script]
    if shell == "bash":
        args = ["bash", "--norc", "--noprofile", "-c", script]
    if not shutil.which(shell):
        pytest.skip(f"{shell} is not installed")
    return subprocess.run(args, cwd=cwd or inst.tmp, env=e, capture_output=True, text=True, timeout=60)


def test_install_rehashes_a_shim_per_tool(env):
    names = sorted(p.name for p in env.shims.iterdir())
    assert names == ["cuobjdump", "nvcc", "ptxas"]
    shim_exe = os.path.join(os.path.dirname(EXE), "cudaenv-shim")
    assert all(os.readlink(env.shims / n) == shim_exe for n in names)  # the small executable
    assert env("rehash", "--json").json()["changed"] is False


def test_shim_runs_the_selected_versions_tool(env):
    nvcc = str(env.shims / "nvcc")
    out = subprocess.run([nvcc, "--version"], cwd=env.proj, env=env.env, capture_output=True, text=True)
    assert "release 11.8, V11.8.89" in out.stdout
    e = dict(env.env, CUDAENV_VERSION="tf-2.16")
    out = subprocess.run([nvcc, "--version"], cwd=env.proj, env=e, capture_output=True, text=True)
    assert "release 12.4" in out.stdout
    # a tool the selected version lacks: the versions that have it are named
    out = subprocess.run([str(env.shims / "cuobjdump")], cwd=env.proj, env=env.env, capture_output=True, text=True)
    assert out.returncode == 127
    assert "'cuobjdump' is not in 11.8.0+cudnn8.6.0.163" in out.stderr and "it is in: 11.8.0" in out.stderr


def test_shim_guards_against_calling_itself(env):
    e = dict(env.env, CUDAENV_RECURSION_COUNT="8")
    out = subprocess.run([str(env.shims / "nvcc")], cwd=env.proj, env=e, capture_output=True, text=True)
    assert out.returncode == 127 and "called itself" in out.stderr


def test_shim_with_nothing_selected_uses_the_systems_tool(env, tmp_path):
    sysbin = tmp_path / "sysbin"
    sysbin.mkdir()
    (sysbin / "nvcc").write_text("#!/bin/sh\necho system-nvcc\n")
    (sysbin / "nvcc").chmod(0o755)
    e = dict(env.env, PATH=f"{env.shims}:{sysbin}:/usr/bin:/bin")
    out = subprocess.run([str(env.shims / "nvcc")], cwd=tmp_path, env=e, capture_output=True, text=True)
    assert out.stdout.strip() == "system-nvcc"


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_init_is_idempotent_and_shell_sets_the_version(env, shell):
    script = (f'eval "$("{EXE}" init - {shell})"; eval "$("{EXE}" init - {shell})"; '
              'echo "$PATH" | tr ":" "\\n" | grep -c cudaenv-shims-marker; '
              'cudaenv shell tf-2.16 && echo "V=$CUDAENV_VERSION" && nvcc --version | tail -1; '
              'cudaenv shell --unset; echo "U=${CUDAENV_VERSION-none}"; cudaenv shell 9.9; echo "rc=$?"')
    shims = str(env.shims)
    out = sh(shell, script.replace("cudaenv-shims-marker", shims), env, cwd=env.proj)
    lines = out.stdout.splitlines()
    assert lines[0] == "1", out  # the shims are on PATH once
    assert f"V={TF216}" in lines and "U=none" in lines and "rc=9" in lines
    assert any("cuda_12.4" in l for l in lines)


def test_fish_init_and_shell(env):
    out = sh("fish", f'"{EXE}" init - fish | source; "{EXE}" init - fish | source; '
                     f'count (string match -- "{env.shims}" $PATH); '
                     'cudaenv shell tf-2.16; echo "V=$CUDAENV_VERSION"; nvcc --version | tail -n 1; '
                     'cudaenv shell --unset; echo "U=$CUDAENV_VERSION"', env, cwd=env.proj)
    lines = out.stdout.splitlines()
    assert lines[0] == "1", out
    assert f"V={TF216}" in lines and "U=" in lines
    assert any("cuda_12.4" in l for l in lines)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_hook_follows_the_directory_and_restores_on_leaving(env, shell, tmp_path):
    probe = tmp_path / "probe.c"
    probe.write_text('#include <stdio.h>\nint cudaRuntimeGetVersion(int*);\n'
                     'int main(void){int v=0;cudaRuntimeGetVersion(&v);printf("%d\\n",v);return 0;}\n')
    lib = env.root / "versions" / PLATFORM / TF213 / "lib64"
    subprocess.run([CC, str(probe), "-o", str(tmp_path / "train"), f"-L{lib}", "-lcudart"], check=True)
    train = tmp_path / "train"
    extra = {"LD_LIBRARY_PATH": "/opt/mine", "CUDA_HOME": "/opt/theirs"}
    if shell == "fish":
        script = (f'"{EXE}" init - fish | source; cd {env.proj}; _cudaenv_hook; echo "IN $CUDA_HOME|$LD_LIBRARY_PATH"; '
                  f'{train}; cd {tmp_path}; _cudaenv_hook; echo "OUT $CUDA_HOME|$LD_LIBRARY_PATH"')
    else:
        script = (f'eval "$("{EXE}" init - {shell})"; cd {env.proj}; _cudaenv_hook; '
                  f'echo "IN $CUDA_HOME|$LD_LIBRARY_PATH"; {train}; cd {tmp_path}; _cudaenv_hook; '
                  'echo "OUT $CUDA_HOME|$LD_LIBRARY_PATH"')
    out = sh(shell, script, env, extra=extra)
    lines = out.stdout.splitlines()
    prefix = str(env.root / "versions" / PLATFORM / TF213)
    assert f"IN {prefix}|{prefix}/lib64:/opt/mine" in lines, out
    assert "11080" in lines  # a plain program loads the project's libcudart
    assert "OUT /opt/theirs|/opt/mine" in lines  # leaving restores what was there


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_shell_then_the_same_line_sees_the_new_environment(env, shell):
    # `cudaenv shell 12.4 && echo $CUDA_HOME`: the function runs the hook itself
    glue = "; and " if shell == "fish" else " && "
    init = f'"{EXE}" init - fish | source' if shell == "fish" else f'eval "$("{EXE}" init - {shell})"'
    out = sh(shell, f'{init}; cudaenv shell tf-2.16{glue}echo "H=$CUDA_HOME"', env, cwd=env.tmp)
    assert f"H={env.root / 'versions' / PLATFORM / TF216}" in out.stdout.splitlines(), out


def test_zsh_cd_and_command_on_one_line_see_the_projects_environment(env):
    # zsh runs the hook on every directory change (chpwd), not only at the prompt
    out = sh("zsh", f'eval "$("{EXE}" init - zsh)"; cd {env.proj} && echo "H=$CUDA_HOME"', env, cwd=env.tmp)
    assert f"H={env.root / 'versions' / PLATFORM / TF213}" in out.stdout.splitlines(), out


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_hook_says_a_broken_pin_once_per_directory(env, shell, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / ".cuda-version").write_text("12.9\n")
    other = tmp_path / "bad2"
    other.mkdir()
    (other / ".cuda-version").write_text("10.2\n")
    script = (f'eval "$("{EXE}" init - {shell})"; cd {bad}; _cudaenv_hook; _cudaenv_hook; _cudaenv_hook; '
              f'cd {other}; _cudaenv_hook; _cudaenv_hook; cd {env.proj}; _cudaenv_hook; echo "H=$CUDA_HOME"')
    out = sh(shell, script, env, cwd=env.tmp)
    assert out.stderr.count("version '12.9' is not installed") == 1, out
    assert out.stderr.count("version '10.2' is not installed") == 1, out
    assert "help: cudaenv install 12.9" in out.stderr
    assert f"H={env.root / 'versions' / PLATFORM / TF213}" in out.stdout  # and a good pin still applies


def test_hook_in_an_interactive_bash_through_a_terminal(env):
    """PROMPT_COMMAND runs the hook by itself at each prompt, in a real interactive bash."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(env.tmp)
        os.execve("/bin/bash", ["bash", "--norc", "--noprofile", "-i"], dict(env.env, PS1="$ "))
    def send(text):
        os.write(fd, text.encode())
    def read_until(marker, timeout=20):
        buf = b""
        end = time.time() + timeout
        while time.time() < end and marker.encode() not in buf:
            r, _, _ = select.select([fd], [], [], 0.5)
            if r:
                try:
                    buf += os.read(fd, 4096)
                except OSError:
                    break
        return buf.decode(errors="replace")
    try:
        send(f'eval "$("{EXE}" init - bash)"\n')
        send(f"cd {env.proj}\n")
        send('echo "HOME=[$CUDA_HOME]"\n')
        out = read_until("HOME=[/")
        assert f"HOME=[{env.root}/versions/{PLATFORM}/{TF213}]" in out
        send("exit\n")
    finally:
        os.close(fd)
        os.waitpid(pid, 0)


def test_completions(env):
    out = sh("bash", f'eval "$("{EXE}" init - bash)"; complete -p cudaenv', env)
    assert "_cudaenv_complete" in out.stdout
    res = env("__complete", "install")
    assert "tf-2.13" in res.out.split() and "11.8.0" in res.out.split()
    assert TF213 in env("__complete", "use").out.split()
    assert "nvcc" in env("__complete", "which").out.split()
    assert {"--only", "cudnn", "libcuda", "driver-cuda"} <= set(env("__complete", "doctor").out.split())
    out = sh("bash", f'eval "$("{EXE}" init - bash)"; COMP_WORDS=(cudaenv ins); COMP_CWORD=1; '
                     '_cudaenv_complete; echo "${COMPREPLY[@]}"', env)
    assert out.stdout.strip() == "install"


def test_init_without_dash_prints_instructions(env):
    res = env("init", "zsh")
    assert res.rc == 0 and 'eval "$(cudaenv init - zsh)"' in res.out
    assert_one_line_error(env("init", "-", "tcsh"), 2)


@pytest.mark.parametrize("shell,name", [("bash", "cudaenv.bash"), ("zsh", "_cudaenv"), ("fish", "cudaenv.fish")])
def test_completion_files_are_up_to_date(cudaenv, shell, name):
    from conftest import MANIFESTS
    committed = (MANIFESTS.parent / "completions" / name).read_text()
    assert cudaenv("completions", shell).out == committed, "run: cudaenv completions " + shell
