"""Everyday use (issue 14): the first hour of a pyenv, rustup or uv user, command by command.
Real binary, fixture mirror, real ldconfig for the machine-wide commands."""
import json
import os
import pty
import re
import select
import subprocess
import time

import pytest

from conftest import PLATFORM, EXE, MANIFESTS, assert_one_line_error
from test_global import cache, link

TF213 = "11.8.0+cudnn8.6.0.163"
TF216 = "12.4.1+cudnn9.1.1.17"


@pytest.fixture
def two(inst, tmp_path):
    assert inst("install", "tf-2.13", "tf-2.16").rc == 0
    proj = tmp_path / "proj"
    proj.mkdir()
    inst.proj = proj
    return inst


# -- 1. the way back to "no cudaenv version" -------------------------------------------------------

@pytest.mark.parametrize("how", [["system"], ["--unset"]])
def test_global_system_and_unset_remove_link_and_conf_and_rollback_restores(machine, how):
    s = machine.sysroot
    assert machine("global", "tf-2.13").rc == 0
    res = machine("global", *how, "--json")
    assert res.rc == 0, res
    assert res.json()["changed"] is True and res.json()["version"] == "system"
    assert res.json()["previous"] == TF213 and res.json()["ldconfig_ran"] is True
    assert link(s) is None and not (s / "etc" / "ld.so.conf.d" / "000-cudaenv.conf").exists()
    assert "libcudart.so.11.0" not in cache(s)
    assert machine("global").out.strip() == "system"
    again = machine("global", *how, "--json")
    assert again.json()["changed"] is False
    # journalled like a switch: rollback brings the version back
    assert machine("rollback").rc == 0
    assert link(s) == f"/opt/cudaenv/versions/{PLATFORM}/{TF213}" and "libcudart.so.11.0" in cache(s)


def test_global_unset_leaves_a_link_cudaenv_does_not_own(machine, tmp_path):
    s = machine.sysroot
    other = tmp_path / "vendor-cuda"
    other.mkdir()
    os.symlink(str(other), s / "usr" / "local" / "cuda")
    res = machine("global", "--unset")
    assert res.rc == 0, res
    assert os.readlink(s / "usr" / "local" / "cuda") == str(other)


def test_use_unset_and_use_system_remove_the_pin(two):
    assert two("use", "tf-2.13", cwd=two.proj).rc == 0
    res = two("use", "--unset", "--json", cwd=two.proj)
    assert res.rc == 0 and res.json()["changed"] is True
    assert not (two.proj / ".cuda-version").exists()
    assert two("version", cwd=two.proj).out.startswith("system")
    assert two("use", "--unset", "--json", cwd=two.proj).json()["changed"] is False
    assert two("use", "tf-2.13", cwd=two.proj).rc == 0
    res = two("use", "system", cwd=two.proj)
    assert res.rc == 0 and "removes this project's pin" in res.err
    assert not (two.proj / ".cuda-version").exists()
    assert_one_line_error(two("use", cwd=two.proj), 2)


# -- 2. global warns, never refuses, from a project ---------------------------------------------------

def test_global_from_a_project_that_pins_another_tensorflow_warns_and_switches(machine, tmp_path):
    proj = tmp_path / "tfproj"
    proj.mkdir()
    (proj / "requirements.txt").write_text("tensorflow==2.13.1\n")
    res = machine("global", "tf-2.16", cwd=proj)
    assert res.rc == 0, res
    assert link(machine.sysroot) == f"/opt/cudaenv/versions/{PLATFORM}/{TF216}"
    assert "warning:" in res.err and "requirements.txt" in res.err and "cudaenv use" in res.err
    # from elsewhere: the same switch, no warning (the working directory decides nothing)
    assert machine("global", "tf-2.13", cwd=machine.tmp).err == ""
    # use and shell keep refusing
    assert_one_line_error(machine("use", "12.4", cwd=proj), 8)


# -- 3. list: what is selected here and why ------------------------------------------------------------

def test_list_marks_what_is_selected_here_and_the_global(machine, tmp_path):
    assert machine("global", "tf-2.16").rc == 0
    proj = tmp_path / "p"
    proj.mkdir()
    (proj / ".cuda-version").write_text("tf-2.13\n")
    out = machine("list", cwd=proj).out
    sel = [l for l in out.splitlines() if l.startswith("* ")]
    assert len(sel) == 1 and sel[0].startswith(f"* {TF213}"), out
    assert f"(selected here by {proj / '.cuda-version'})" in sel[0]
    glob = [l for l in out.splitlines() if TF216 in l][0]
    assert glob.startswith("  ") and "(global: " in glob
    doc = machine("list", "--json", cwd=proj).json()
    by = {v["version"]: v for v in doc["versions"]}
    assert by[TF213]["selected"] and not by[TF213]["global"]
    assert by[TF216]["global"] and not by[TF216]["selected"]
    assert doc["selected"] == {"version": TF213, "origin": str(proj / ".cuda-version"), "error": None}
    # elsewhere the global is what is selected, said once
    out = machine("list", cwd=machine.tmp).out
    line = [l for l in out.splitlines() if l.startswith("* ")][0]
    assert TF216 in line and "(global)" in line and "(global: " not in line


def test_list_with_nothing_selected_says_system(two):
    out = two("list", cwd=two.proj).out
    assert "* system  (nothing selects a cudaenv version here)" in out
    assert not any(l.startswith("* 1") for l in out.splitlines())


def test_list_available_marks_installed_and_runfile_only_rows_and_filters(two):
    out = two("list", "--available", "cuda", "12").out
    assert "12.4.1*" in out and "11.8" not in out
    real = {"CUDAENV_MANIFESTS": str(MANIFESTS)}  # every TensorFlow row, the runfile era's too
    out = two("list", "--available", "tensorflow", "2.1", env=real).out
    rows = [l for l in out.splitlines()[1:] if l.strip()]
    assert rows and all(re.match(r"^[* ] 2\.1\s", l) for l in rows), out  # 2.1 only, not 2.10-2.19
    doc = two("list", "--available", "tensorflow", "--json", env=real).json()
    rows = {r["series"]: r for r in doc["frameworks"][0]["releases"]}
    # installed: a version with the row's own CUDA and cuDNN (2.16's is 12.3 + 8.9, not 12.4 + 9.1)
    assert rows["2.13"]["installed"] is True and rows["2.16"]["installed"] is False
    runfile = [s for s, r in rows.items() if r["runfile_only"]]
    assert "2.4" in runfile and "2.13" not in runfile
    text = two("list", "--available", "tensorflow", env=real).out
    assert re.search(r"^\* 2\.13 ", text, re.M) and re.search(r"^  2\.4 .*\(CUDA from its runfile\)$", text, re.M)
    assert re.search(r"^  1\.15 .*\(CUDA from its runfile\)$", text, re.M)
    cuda = {r["version"]: r for r in two("list", "--available", "cuda", "--json", env=real).json()["cuda"]}
    assert cuda["10.0.130"]["source"] == "runfile" and cuda["10.0.130"]["installable"] is True
    assert_one_line_error(two("list", "--available", "cuda", "x.y"), 2)


# -- 4. install with no SPEC -----------------------------------------------------------------------------

def test_install_without_a_spec_installs_what_the_project_asks_for(inst, tmp_path):
    proj = tmp_path / "p"
    (proj / "sub").mkdir(parents=True)
    (proj / ".cuda-version").write_text("tf-2.13\n")
    res = inst("install", "--json", cwd=proj / "sub")
    assert res.rc == 0, res
    assert res.json()["versions"][0]["version"] == TF213
    req = tmp_path / "q"
    req.mkdir()
    (req / "requirements.txt").write_text("tensorflow[and-cuda]==2.16.1\n")
    res = inst("install", "--dry-run", cwd=req)
    assert res.rc == 0 and f"would install {TF216}" in res.out
    assert "installing tf-2.16 (from " in res.err and "requirements.txt:1" in res.err
    nothing = tmp_path / "empty"
    nothing.mkdir()
    res = inst("install", cwd=nothing)
    assert_one_line_error(res, 2)
    assert "install needs a SPEC" in res.err


# -- 6. shell without init, init and $SHELL, completions ------------------------------------------------

def test_shell_without_init_says_how_to_enable_it(two):
    res = two("shell", "12.4", env={"SHELL": "/usr/bin/zsh"})
    assert_one_line_error(res, 2)
    assert "shell integration is not enabled" in res.err
    assert 'eval "$(cudaenv init - zsh)"' in res.err and "~/.zshrc" in res.err


@pytest.mark.parametrize("sh,line", [("/bin/zsh", 'eval "$(cudaenv init - zsh)"'),
                                     ("/usr/bin/fish", "cudaenv init - fish | source"),
                                     ("/bin/bash", 'eval "$(cudaenv init - bash)"'),
                                     ("/bin/tcsh", 'eval "$(cudaenv init - bash)"')])
def test_init_follows_shell(cudaenv, sh, line):
    res = cudaenv("init", env={"SHELL": sh})
    assert res.rc == 0 and line in res.out
    doc = cudaenv("init", "--json", env={"SHELL": sh}).json()
    assert doc["line"] == line and doc["shell"] in ("bash", "zsh", "fish") and "code" in doc


def test_completions_command_and_flag_and_version_candidates(two):
    res = two("completions", "zsh")
    assert res.rc == 0 and "compdef _cudaenv cudaenv" in res.out
    assert "complete -F _cudaenv_complete" in two("completions", env={"SHELL": "/bin/bash"}).out
    flags = two("__complete", "install", "--", "--").out.split()
    assert {"--profile", "--dry-run", "--jobs", "--allow-unpinned"} <= set(flags)
    assert TF213 not in flags
    values = two("__complete", "uninstall", "--", "").out.split()
    assert TF213 in values and TF216 in values and "--yes" in values
    assert two("__complete", "use", "--", "1").out.split().count(TF213) == 1
    assert "--unset" in two("__complete", "global", "--", "--u").out.split()


# -- 7. uninstall takes SPECs, asks on a terminal; gc ---------------------------------------------------

def test_uninstall_takes_the_same_specs_as_use(two):
    res = two("uninstall", "12.4", "--json")
    assert res.rc == 0, res
    assert res.json()["removed"][0]["version"] == TF216
    assert two("use", "12.4", cwd=two.proj).rc == 9
    res = two("rm", "tf-2.13", "-y")
    assert res.rc == 0 and f"removed {TF213}" in res.out
    assert_one_line_error(two("remove", "tf-2.13"), 9)


def _on_a_terminal(inst, args, answer, env=None):
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(str(inst.tmp))
        os.execve(EXE, [EXE, *args], env or inst.env)
    out = b""
    sent = False
    deadline = time.time() + 30
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        if not sent and b"[y/N]" in out:
            os.write(fd, answer + b"\n")
            sent = True
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def test_uninstall_asks_on_a_terminal(two):
    rc, out = _on_a_terminal(two, ["uninstall", "tf-2.16"], b"n")
    assert rc == 1 and f"remove {TF216}" in out and "nothing removed" in out
    assert (two.root / "versions" / PLATFORM / TF216).exists()
    rc, out = _on_a_terminal(two, ["uninstall", "tf-2.16"], b"y")
    assert rc == 0 and f"removed {TF216}" in out
    assert not (two.root / "versions" / PLATFORM / TF216).exists()


def test_gc_keeps_pinned_global_and_rollback_targets_and_frees_the_rest(machine, tmp_path):
    assert machine("install", "11.8", "--profile", "devel").rc == 0
    proj = tmp_path / "pinned"
    proj.mkdir()
    assert machine("use", "tf-2.16", cwd=proj).rc == 0  # recorded for gc
    # a failed install's leftovers: a store entry no version uses, a partial download
    (machine.root / "store" / "orphan-entry").mkdir(parents=True)
    (machine.root / "store" / "orphan-entry" / "lib.so").write_bytes(b"x" * 5000)
    (machine.root / "cache" / "downloads").mkdir(parents=True, exist_ok=True)
    (machine.root / "cache" / "downloads" / ("ab" * 32 + ".partial")).write_bytes(b"y" * 3000)
    before = machine("list", "--json").json()["versions"]
    res = machine("gc", "--json", cwd=machine.tmp)
    assert res.rc == 0, res
    doc = res.json()
    assert doc["dry_run"] is True
    names = {(i["kind"], i["name"]) for i in doc["items"]}
    assert ("version", "11.8.0") in names and ("version", TF213) in names
    assert ("store", "orphan-entry") in names and ("download", "ab" * 32 + ".partial") in names
    assert ("version", TF216) not in names and "pinned by" in doc["kept"][TF216]
    assert doc["bytes"] >= 8000
    assert machine("list", "--json").json()["versions"] == before  # a dry run changes nothing
    assert "cudaenv gc --apply" in machine("gc", cwd=machine.tmp).out
    # the global and rollback's target are kept too
    assert machine("global", "tf-2.13").rc == 0
    assert machine("global", "tf-2.16").rc == 0
    doc = machine("gc", "--json", cwd=machine.tmp).json()
    assert doc["kept"][TF213] == "what `cudaenv rollback` returns to"
    assert doc["kept"][TF216] in ("the global version",) or "pinned by" in doc["kept"][TF216]
    res = machine("gc", "--apply", "--json", cwd=machine.tmp)
    assert res.rc == 0, res
    left = {v["version"] for v in machine("list", "--json").json()["versions"]}
    assert left == {TF213, TF216}
    assert not (machine.root / "store" / "orphan-entry").exists()
    assert list((machine.root / "cache" / "downloads").iterdir()) == []
    # what is left still works: its store entries were kept
    assert machine("exec", "--", "nvcc", "--version", env={"CUDAENV_VERSION": TF216}).rc == 0
    # a pin whose project is gone no longer keeps anything
    (proj / ".cuda-version").unlink()
    assert machine("global", "tf-2.13").rc == 0
    doc = machine("gc", "--json", cwd=machine.tmp).json()
    assert TF216 in doc["kept"]  # rollback's target now
    assert all("pinned by" not in why for why in doc["kept"].values())
    assert len(list((machine.root / "pins").iterdir())) == 1
    assert machine("gc", "--apply", cwd=machine.tmp).rc == 0
    assert list((machine.root / "pins").iterdir()) == []  # the stale record went with it



def test_gc_reads_pin_records_of_every_format(machine, tmp_path):
    """Pins go through the record codec: today's cudaenv.pin/1, cudaenv 0.1.0's {"schema": 1} (still
    keeps its project's version), a later format (left alone) and a damaged one (gc's to remove)."""
    assert machine("install", "tf-2.16").rc == 0
    proj = tmp_path / "old-pin"
    proj.mkdir()
    (proj / ".cuda-version").write_text("tf-2.16\n")
    pins = machine.root / "pins"
    pins.mkdir(exist_ok=True)
    (pins / "legacy.json").write_text(json.dumps({"schema": 1, "dir": str(proj)}) + "\n")
    (pins / "later.json").write_text(json.dumps({"schema": "cudaenv.pin/2", "dir": str(proj)}))
    (pins / "damaged.json").write_text("{not json")
    doc = machine("gc", "--json", cwd=machine.tmp).json()
    assert "pinned by " + str(proj / ".cuda-version") in doc["kept"][TF216], doc["kept"]
    assert machine("gc", "--apply", cwd=machine.tmp).rc == 0
    assert sorted(p.name for p in pins.iterdir()) == ["later.json", "legacy.json"]
    assert machine("use", "tf-2.16", cwd=proj).rc == 0  # rewritten in today's format
    records = [json.loads(p.read_text()) for p in pins.iterdir() if p.name not in ("later.json", "legacy.json")]
    assert records == [{"schema": "cudaenv.pin/1", "dir": str(proj)}]


# -- 8. which knows libraries ----------------------------------------------------------------------------

def test_which_a_library_now_and_inside_exec(two):
    (two.proj / ".cuda-version").write_text("tf-2.13\n")
    res = two("which", "libcudnn.so.8", cwd=two.proj)
    assert res.rc == 0, res
    lib = str(two.root / "versions" / PLATFORM / TF213 / "lib64" / "libcudnn.so.8")
    assert re.search(rf"^in cudaenv exec: {re.escape(lib)} \(LD_LIBRARY_PATH\)$", res.out, re.M), res.out
    assert re.search(r"^now: +not found$", res.out, re.M), res.out
    assert "installed in:   " + TF213 in res.out
    doc = two("which", "libcudnn.so.8", "--json", cwd=two.proj).json()
    assert doc["kind"] == "library" and doc["exec"]["path"] == lib and doc["now"]["path"] is None
    assert doc["versions"] == [TF213]
    # with the version on LD_LIBRARY_PATH (the hook's doing), "now" is that file too
    env = {"LD_LIBRARY_PATH": str(two.root / "versions" / PLATFORM / TF213 / "lib64")}
    assert two("which", "libcudnn.so.8", "--json", cwd=two.proj, env=env).json()["now"]["path"] == lib
    assert_one_line_error(two("which", "libcudnn.so.7", cwd=two.proj), 9)
    doc = two("which", "nvcc", "--json", cwd=two.proj).json()
    assert doc["kind"] == "tool" and doc["path"].endswith(f"{TF213}/bin/nvcc")


# -- 9. help and errors ---------------------------------------------------------------------------------

def test_bare_cudaenv_prints_help_and_exits_0(cudaenv):
    res = cudaenv()
    assert res.rc == 0, res
    assert "SUBCOMMANDS" in res.out.upper() and "Exit codes:" in res.out, res.out
    assert "uninstall" in res.out and "modulefile" in res.out and "completions" in res.out


@pytest.mark.parametrize("command", ["rollback", "prefix", "which", "env", "rehash", "use", "global", "list",
                                     "uninstall", "gc", "modulefile", "completions", "shell", "init"])
def test_each_command_help_shows_its_own_examples(cudaenv, command):
    res = cudaenv(command, "--help")
    assert res.rc == 0
    assert "SPEC: tf-2.13 | tensorflow-2.13" not in res.out  # the top-level footer
    assert f"cudaenv {command}" in res.out.split("Examples:")[1] if "Examples:" in res.out else False, res.out


def test_mistyped_option_gets_did_you_mean(cudaenv):
    res = cudaenv("resolve", "tf-2.13", "--profil", "devel")
    assert_one_line_error(res, 2)
    assert "did you mean '--profile'?" in res.err and "cudaenv resolve --help" in res.err


def test_remove_and_rm_are_uninstall(cudaenv):
    assert "Remove installed versions" in cudaenv("remove", "--help").out
    res = cudaenv("remov", "x")
    assert_one_line_error(res, 2)
    assert "did you mean 'uninstall'?" in res.err


# -- 10. progress ------------------------------------------------------------------------------------------

def test_progress_has_an_overall_line_and_keeps_finished_rates(inst):
    res = inst("install", "tf-2.13")
    assert res.rc == 0, res
    assert re.search(r"^cudaenv: all: (\d+)/\1 archives, \S+ \S+ of \S+ \S+", res.err, re.M), res.err
    colour = {k: v for k, v in inst.env.items() if k != "NO_COLOR"}  # NO_COLOR: plain lines
    rc, out = _on_a_terminal(inst, ["install", "tf-2.16"], b"", env=colour)
    assert rc == 0, out
    rows = [l for l in out.replace("\r", "").splitlines() if "[####" in l and " done" in l]
    assert rows, out
    assert not any(" 0 B/s" in r for r in rows), rows
    assert re.search(r"all: (\d+)/\1 archives", out), out
