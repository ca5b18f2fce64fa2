"""global and rollback against a private sysroot with real ldconfig (-r), and the same switch
seen by the real loader inside a private mount namespace (reliability.md S and L rows, F10, F11)."""
import json
import os
import shutil
import stat
import subprocess
import time

import pytest

from conftest import PLATFORM, CC, EXE, assert_one_line_error
from conftest import LDCONFIG as PLATFORM_LDCONFIG

TF213 = "11.8.0+cudnn8.6.0.163"
TF216 = "12.4.1+cudnn9.1.1.17"
LDCONFIG = PLATFORM_LDCONFIG or shutil.which("ldconfig") or "/sbin/ldconfig"


def cache(s):
    out = subprocess.run([LDCONFIG, "-r", str(s), "-p"], capture_output=True, text=True).stdout
    return {line.split()[0]: line.split(" => ")[1] for line in out.splitlines() if " => " in line}


def link(s):
    p = s / "usr" / "local" / "cuda"
    return os.readlink(p) if p.is_symlink() else None


def test_global_switches_link_conf_and_cache(machine):
    s = machine.sysroot
    res = machine("global", "tf-2.13", "--json")
    assert res.rc == 0, res
    assert res.json()["changed"] is True and res.json()["ldconfig_ran"] is True
    assert link(s) == f"/opt/cudaenv/versions/{PLATFORM}/{TF213}"
    conf = s / "etc" / "ld.so.conf.d" / "000-cudaenv.conf"
    assert conf.read_text() == "/usr/local/cuda/lib64\n"
    assert stat.S_IMODE(conf.stat().st_mode) == 0o644
    c = cache(s)
    assert c["libcudart.so.11.0"] == "/usr/local/cuda/lib64/libcudart.so.11.0"
    assert c["libcudnn.so.8"] == "/usr/local/cuda/lib64/libcudnn.so.8"
    assert machine("global").out.strip() == TF213
    assert machine("version", cwd=machine.tmp).out.startswith(TF213)


def test_same_global_again_writes_nothing_and_runs_no_ldconfig(machine):
    s = machine.sysroot
    assert machine("global", "tf-2.13").rc == 0
    cache_file = s / "etc" / "ld.so.cache"
    before = (cache_file.stat().st_mtime_ns, (machine.root / "state.json").stat().st_mtime_ns)
    res = machine("global", "tf-2.13", "--json", env={"CUDAENV_LDCONFIG": "/bin/false"})
    assert res.rc == 0, res
    assert res.json()["changed"] is False and res.json()["ldconfig_ran"] is False
    assert (cache_file.stat().st_mtime_ns, (machine.root / "state.json").stat().st_mtime_ns) == before


def test_switch_and_rollback(machine):
    s = machine.sysroot
    assert machine("global", "tf-2.13").rc == 0
    assert machine("global", "tf-2.16").rc == 0
    assert "libcudart.so.12" in cache(s) and "libcudart.so.11.0" not in cache(s)
    res = machine("rollback")
    assert res.rc == 0, res
    assert link(s) == f"/opt/cudaenv/versions/{PLATFORM}/{TF213}"
    assert "libcudart.so.11.0" in cache(s)
    assert machine("global").out.strip() == TF213


def test_rollback_to_nothing_removes_link_and_conf(machine):
    s = machine.sysroot
    assert machine("global", "tf-2.13").rc == 0
    assert machine("rollback").rc == 0
    assert link(s) is None and not (s / "usr" / "local" / "cuda").exists()
    assert not (s / "etc" / "ld.so.conf.d" / "000-cudaenv.conf").exists()
    assert machine("global").out.strip() == "system"


@pytest.mark.parametrize("kind", ["directory", "alternatives", "foreign"])
def test_foreign_link_or_directory_is_refused_then_forced_and_rolled_back(machine, kind, tmp_path):
    s = machine.sysroot
    target = s / "usr" / "local" / "cuda"
    if kind == "directory":
        (target / "lib64").mkdir(parents=True)
        (target / "lib64" / "keep").write_text("runfile install\n")
    elif kind == "alternatives":
        target.symlink_to("/etc/alternatives/cuda")
    else:
        target.symlink_to("/opt/other-cuda")
    res = machine("global", "tf-2.13")
    assert_one_line_error(res, 7)
    assert "--force" in res.err
    assert machine("global", "tf-2.13", "--force").rc == 0
    assert link(s) == f"/opt/cudaenv/versions/{PLATFORM}/{TF213}"
    assert machine("rollback").rc == 0
    if kind == "directory":
        assert (target / "lib64" / "keep").read_text() == "runfile install\n"
    else:
        assert link(s) == ("/etc/alternatives/cuda" if kind == "alternatives" else "/opt/other-cuda")


@pytest.mark.parametrize("kind", ["directory", "alternatives", "runfile_link"])
def test_global_system_hands_back_what_force_replaced_even_after_other_switches(machine, kind):
    """global --force over NVIDIA's layout, then other switches (the journal's `previous` no longer
    knows the start): `global system` puts back what cudaenv found, from ROOT/machine-before
    (which the package's purge reads too), and removes the record."""
    s = machine.sysroot
    target = s / "usr" / "local" / "cuda"
    if kind == "directory":
        (target / "lib64").mkdir(parents=True)
        (target / "lib64" / "keep").write_text("runfile install\n")
    elif kind == "alternatives":
        target.symlink_to("/etc/alternatives/cuda")
    else:  # NVIDIA's runfile: /usr/local/cuda -> /usr/local/cuda-12.4/
        (s / "usr" / "local" / "cuda-12.4").mkdir(parents=True)
        target.symlink_to("/usr/local/cuda-12.4/")
    assert machine("global", "tf-2.13", "--force").rc == 0
    record = machine.root / "machine-before"
    assert record.is_file() and f"kind {'foreign_link' if kind == 'runfile_link' else kind}" in \
        record.read_text(), record.read_text()
    assert machine("global", "tf-2.16").rc == 0
    assert machine("global", "tf-2.13").rc == 0
    res = machine("global", "system", "--json")
    assert res.rc == 0, res
    if kind == "directory":
        assert not target.is_symlink() and (target / "lib64" / "keep").read_text() == "runfile install\n"
        assert res.json()["restored"].startswith("/usr/local/cuda.cudaenv-moved-")
        assert not any(p.name.startswith("cuda.cudaenv-moved-") for p in (s / "usr" / "local").iterdir())
    else:
        want = "/etc/alternatives/cuda" if kind == "alternatives" else "/usr/local/cuda-12.4/"
        assert link(s) == want and res.json()["restored"] == want
    assert not (s / "etc" / "ld.so.conf.d" / "000-cudaenv.conf").exists()
    assert not record.exists()
    assert machine("global").out.strip() == "system"
    # the machine's own CUDA is back: replacing it again needs --force again
    assert_one_line_error(machine("global", "tf-2.13"), 7)


def test_a_hand_back_interrupted_after_the_link_went_is_finished_by_the_next_global_system(machine):
    """Killed after cudaenv's link went and before the directory came back: the record remains, and
    the next `global system` (with no link at all) puts it back."""
    s = machine.sysroot
    target = s / "usr" / "local" / "cuda"
    (target / "lib64").mkdir(parents=True)
    (target / "lib64" / "keep").write_text("runfile install\n")
    assert machine("global", "tf-2.13", "--force").rc == 0
    target.unlink()  # where a kill -9 between the two steps leaves it
    res = machine("global", "system")
    assert res.rc == 0, res
    assert (target / "lib64" / "keep").read_text() == "runfile install\n"
    assert not (machine.root / "machine-before").exists()


def test_rollback_after_a_hand_back_replaces_it_again_and_global_system_brings_it_back(machine):
    s = machine.sysroot
    target = s / "usr" / "local" / "cuda"
    (target / "lib64").mkdir(parents=True)
    (target / "lib64" / "keep").write_text("runfile install\n")
    assert machine("global", "tf-2.13", "--force").rc == 0
    assert machine("global", "system").rc == 0
    assert not target.is_symlink()
    res = machine("rollback")
    assert res.rc == 0, res
    assert link(s) == f"/opt/cudaenv/versions/{PLATFORM}/{TF213}"
    assert "kind directory" in (machine.root / "machine-before").read_text()
    assert machine("global", "system").rc == 0
    assert (target / "lib64" / "keep").read_text() == "runfile install\n"


@pytest.mark.parametrize("record", [
    "kind directory\nmoved_to /opt/victim\n",                       # not a name cudaenv moves to
    "kind directory\nmoved_to /usr/local/cuda.cudaenv-moved-../../opt/victim\n",
    "kind other\ntarget /opt/victim\n",
])
def test_a_forged_record_is_never_acted_on(machine, record):
    s = machine.sysroot
    victim = s / "opt" / "victim"
    victim.mkdir(parents=True)
    (victim / "f").write_text("precious\n")
    assert machine("global", "tf-2.13").rc == 0
    (machine.root / "machine-before").write_text(record)
    res = machine("global", "system", "--json")
    assert res.rc == 0, res
    assert res.json()["restored"] is None
    assert (victim / "f").read_text() == "precious\n"
    assert not (s / "usr" / "local" / "cuda").exists() and link(s) is None


def test_failing_ldconfig_puts_everything_back(machine):
    s = machine.sysroot
    assert machine("global", "tf-2.13").rc == 0
    conf = (s / "etc" / "ld.so.conf.d" / "000-cudaenv.conf").read_text()
    for fake in ("/bin/false", str(s / "no-such-ldconfig")):
        res = machine("global", "tf-2.16", env={"CUDAENV_LDCONFIG": fake})
        assert_one_line_error(res, 6)
        assert link(s) == f"/opt/cudaenv/versions/{PLATFORM}/{TF213}"
        assert (s / "etc" / "ld.so.conf.d" / "000-cudaenv.conf").read_text() == conf
        assert machine("global").out.strip() == TF213


def test_l1_hanging_ldconfig_is_killed_at_its_timeout_and_everything_put_back(machine):
    s = machine.sysroot
    assert machine("global", "tf-2.13").rc == 0
    conf = (s / "etc" / "ld.so.conf.d" / "000-cudaenv.conf").read_text()
    fake = machine.tmp / "hanging-ldconfig"
    fake.write_text("#!/bin/sh\nexec sleep 60\n")
    fake.chmod(0o755)
    started = time.monotonic()
    res = machine("global", "tf-2.16", env={"CUDAENV_LDCONFIG": str(fake), "CUDAENV_LDCONFIG_TIMEOUT": "1"})
    took = time.monotonic() - started
    assert_one_line_error(res, 6)
    assert "did not finish within 1 s" in res.err
    assert took < 20, took  # not the 60 s the fake would sleep
    assert link(s) == f"/opt/cudaenv/versions/{PLATFORM}/{TF213}"
    assert (s / "etc" / "ld.so.conf.d" / "000-cudaenv.conf").read_text() == conf
    assert machine("global").out.strip() == TF213
    assert machine("global", "tf-2.16").rc == 0  # the real ldconfig then switches normally


def test_kill_after_the_temporary_link_leaves_the_old_link(machine):
    s = machine.sysroot
    assert machine("global", "tf-2.13").rc == 0
    res = machine("global", "tf-2.16", env={"CUDAENV_FAILPOINTS": "switch-after-tmplink:kill"})
    assert res.rc == -9
    assert link(s) == f"/opt/cudaenv/versions/{PLATFORM}/{TF213}"  # never missing, never half-switched
    assert machine("global", "tf-2.16").rc == 0
    assert [p.name for p in (s / "usr" / "local").iterdir()] == ["cuda"]  # the temporary link is swept


def test_kill_after_the_rename_is_finished_by_the_next_run(machine):
    s = machine.sysroot
    assert machine("global", "tf-2.13").rc == 0
    res = machine("global", "tf-2.16", env={"CUDAENV_FAILPOINTS": "switch-after-rename:kill"})
    assert res.rc == -9
    assert json.loads((machine.root / "state.json").read_text())["pending"] == TF216
    res = machine("global", "tf-2.16", "--json")
    assert res.rc == 0 and res.json()["changed"] is True
    assert "libcudart.so.12" in cache(s)
    assert "pending" not in json.loads((machine.root / "state.json").read_text())
    assert machine("rollback").rc == 0  # the journal still knows the state before the switch
    assert link(s) == f"/opt/cudaenv/versions/{PLATFORM}/{TF213}"


def test_umask_077_still_gives_a_world_readable_conf(machine):
    res = subprocess.run(["sh", "-c", f'umask 077; exec "{EXE}" global tf-2.13'], env=machine.env,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    conf = machine.sysroot / "etc" / "ld.so.conf.d" / "000-cudaenv.conf"
    assert stat.S_IMODE(conf.stat().st_mode) == 0o644


def test_the_real_loader_follows_the_switch(machine, tmp_path):
    """Inside a private mount namespace, the sysroot's /etc and /usr/local are the machine's: a
    program linked against libcudart resolves through the ld.so cache into the global version. The
    program's own loader lists what it loads (LD_TRACE_LOADED_OBJECTS: ldd's way, for whatever
    architecture the program is: the arm64 loader under qemu-user in .ci/arm64)."""
    if not shutil.which("unshare"):
        pytest.skip("needs unshare")
    s = machine.sysroot
    probe = tmp_path / "probe.c"
    probe.write_text('#include <stdio.h>\nint cudaRuntimeGetVersion(int*);\n'
                     'int main(void){int v=0;cudaRuntimeGetVersion(&v);printf("%d\\n",v);return 0;}\n')
    for name, version in (("probe11", TF213), ("probe12", TF216)):
        lib = machine.root / "versions" / PLATFORM / version / "lib64"
        subprocess.run([CC, str(probe), "-o", str(tmp_path / name), f"-L{lib}", "-lcudart"], check=True)

    def run_inside(program):
        script = (f'mount --make-rprivate / && mount -t tmpfs tmpfs /opt && mkdir /opt/cudaenv && '
                  f'mount --bind "{machine.root}" /opt/cudaenv && mount --bind "{s}/usr/local" /usr/local && '
                  f'mount --bind "{s}/etc" /etc && LD_TRACE_LOADED_OBJECTS=1 "{program}" | grep cudart; "{program}"')
        return subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True)

    assert machine("global", "tf-2.13").rc == 0
    out = run_inside(tmp_path / "probe11")
    if "mount:" in out.stderr:
        pytest.skip("cannot mount here: " + out.stderr.strip())
    assert "/usr/local/cuda/lib64/libcudart.so.11.0" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "11080"
    assert machine("global", "tf-2.16").rc == 0
    out = run_inside(tmp_path / "probe12")
    assert "/usr/local/cuda/lib64/libcudart.so.12" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "12040"
    assert run_inside(tmp_path / "probe11").returncode != 0  # CUDA 11's program no longer finds its runtime


def test_l3_foreign_cuda_conf_files_are_named(machine):
    s = machine.sysroot
    (s / "etc" / "ld.so.conf.d" / "988_cuda-12.conf").write_text("/usr/local/cuda-12.4/targets/x86_64-linux/lib\n")
    (s / "etc" / "ld.so.conf.d" / "libc.conf").write_text("/usr/local/lib\n")
    res = machine("global", "tf-2.13", "--json")
    assert res.rc == 0, res
    warnings = res.json()["warnings"]
    assert len(warnings) == 1 and "/etc/ld.so.conf.d/988_cuda-12.conf" in warnings[0]
    assert "cudaenv: warning: /etc/ld.so.conf.d/988_cuda-12.conf also lists" in res.err


def test_l5_library_path_override_is_warned_by_which(machine):
    (machine.tmp / ".cuda-version").write_text("tf-2.13\n")
    res = machine("which", "nvcc", env={"LD_LIBRARY_PATH": "/usr/local/cuda-10.2/lib64:/opt/mine"})
    assert res.rc == 0
    assert "warning: LD_LIBRARY_PATH has '/usr/local/cuda-10.2/lib64'" in res.err
    assert "/opt/mine" not in res.err


def test_c2_install_switch_and_uninstall_at_once_are_serialised(machine):
    """Three state changes started together: the lock serialises them, and the journal agrees
    with the link at the end."""
    import time as _time
    assert machine("install", "11.8").rc == 0
    e = dict(machine.env, CUDAENV_FAILPOINTS="lock-acquired:sleep=1")
    procs = [subprocess.Popen([EXE, *args], env=e, cwd=machine.tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for args in (["global", "tf-2.16"], ["uninstall", "11.8.0"], ["install", "11.8+cudnn-8.6", "--json"])]
    for p in procs:
        p.communicate(timeout=120)
    assert [p.returncode for p in procs] == [0, 0, 0]
    state = json.loads((machine.root / "state.json").read_text())
    assert state["global"] == TF216 and "pending" not in state
    assert link(machine.sysroot) == f"/opt/cudaenv/versions/{PLATFORM}/{TF216}"
    assert not (machine.root / "versions" / PLATFORM / "11.8.0").exists()


def test_s4_switch_to_a_version_that_is_not_installed(machine):
    assert machine("global", "tf-2.13").rc == 0
    res = machine("global", "12.9")
    assert_one_line_error(res, 7)
    assert "help: cudaenv install 12.9" in res.err
    assert link(machine.sysroot) == f"/opt/cudaenv/versions/{PLATFORM}/{TF213}"


def test_s8_root_reached_through_a_symlink_gives_a_canonical_target(machine):
    s = machine.sysroot
    alias = s / "opt" / "cudaenv-alias"
    alias.symlink_to("cudaenv")  # /opt/cudaenv-alias -> cudaenv, inside the sysroot
    res = machine("global", "tf-2.16", env={"CUDAENV_ROOT": str(alias)})
    assert res.rc == 0, res
    assert link(s) == f"/opt/cudaenv/versions/{PLATFORM}/{TF216}"


def test_l2_no_entry_refers_to_a_removed_version(machine):
    s = machine.sysroot
    assert machine("global", "tf-2.13").rc == 0
    assert machine("uninstall", TF216).rc == 0
    assert machine("global", "tf-2.13", "--json").json()["changed"] is False
    confs = "".join(p.read_text() for p in (s / "etc" / "ld.so.conf.d").iterdir())
    assert TF216 not in confs
    assert all(TF216 not in path for path in cache(s).values())
    assert "libcudart.so.11.0" in cache(s)


def _consistent(machine):
    """What `cudaenv global` says is where /usr/local/cuda points, and the journal's `previous`
    is a state the machine was really in."""
    said = machine("global").out.strip()
    target = link(machine.sysroot)
    if said == "system":
        assert target is None or "/opt/cudaenv/versions/" not in target, (said, target)
    else:
        assert target == f"/opt/cudaenv/versions/{PLATFORM}/{said}", (said, target)
    return said


def test_concurrent_globals_then_rollback_keep_the_journal_true(machine):
    """Once the journal was read before the lock: two concurrent globals, then rollback, left
    `cudaenv global` saying system while the link pointed at 11.8."""
    procs_per_round, rounds = 6, 4
    for r in range(rounds):
        procs = [subprocess.Popen([EXE, "global", ("tf-2.13", "tf-2.16")[(i + r) % 2]], env=machine.env,
                                  cwd=machine.tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for i in range(procs_per_round)]
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
        now = _consistent(machine)
        state = json.loads((machine.root / "state.json").read_text())
        assert state["global"] == now and "pending" not in state
        before = state["previous"]["global"]
        res = machine("rollback", "--json")
        assert res.rc == 0, res
        assert _consistent(machine) == before


@pytest.mark.parametrize("text", ["{not json", "[]", '{"global": 5}', '{"schema": "cudaenv.state/9"}',
                                  '{"previous": {"link": {"kind": "sideways"}}}'])
def test_a_damaged_state_file_is_an_error_with_a_hint_not_an_empty_state(machine, text):
    assert machine("global", "tf-2.13").rc == 0
    (machine.root / "state.json").write_text(text)
    before = link(machine.sysroot)
    for args in (("global",), ("global", "tf-2.16"), ("rollback",), ("version",), ("list",)):
        res = machine(*args, cwd=machine.tmp)
        assert_one_line_error(res, 4)
        assert "state.json" in res.err and "help:" in res.err, (args, res.err)
    assert link(machine.sysroot) == before
    assert (machine.root / "state.json").read_text() == text


def test_things_planted_at_temporary_names_are_never_touched(machine, tmp_path):
    """Once every `.cuda.cudaenv-*` next to the link was deleted, whoever made it. Now temporary
    names are unpredictable, a taken one is skipped, and only cudaenv's own leftovers go."""
    s = machine.sysroot
    local = s / "usr" / "local"
    planted = {
        ".cuda.tmp-0123456789abcdef": "dir",           # cudaenv's pattern, but a folder
        ".cuda.tmp-fedcba9876543210": "file",
        ".cuda.tmp-00000000000000aa": "link-elsewhere",  # a link, but not into our versions
        ".cuda.cudaenv-12345": "dir",                  # the old pattern
    }
    for name, kind in planted.items():
        p = local / name
        if kind == "dir":
            p.mkdir()
            (p / "precious").write_text("x")
        elif kind == "file":
            p.write_text("precious")
        else:
            p.symlink_to(tmp_path)
    conf_d = s / "etc" / "ld.so.conf.d"
    (conf_d / ".000-cudaenv.conf.tmp-zzzz").write_text("not ours: not the pattern\n")
    assert machine("global", "tf-2.13").rc == 0
    assert machine("global", "tf-2.16").rc == 0
    for name, kind in planted.items():
        assert (local / name).is_symlink() or (local / name).exists(), name
    assert (local / ".cuda.tmp-0123456789abcdef" / "precious").read_text() == "x"
    assert (conf_d / ".000-cudaenv.conf.tmp-zzzz").exists()


def test_what_a_killed_switch_left_is_swept_by_the_next(machine):
    s = machine.sysroot
    assert machine("global", "tf-2.13").rc == 0
    res = machine("global", "tf-2.16", env={"CUDAENV_FAILPOINTS": "switch-after-tmplink:kill"})
    assert res.rc == -9
    local = s / "usr" / "local"
    left = [p.name for p in local.iterdir() if p.name.startswith(".cuda.tmp-")]
    assert len(left) == 1, left  # the temporary link, pointing at the new version
    # a kill inside write_file_atomic leaves temporary copies of the conf file and the journal
    (s / "etc" / "ld.so.conf.d" / ".000-cudaenv.conf.tmp-00000000deadbeef").write_text("x")
    (machine.root / ".state.json.tmp-00000000deadbeef").write_text("x")
    assert machine("global", "tf-2.16").rc == 0
    assert [p.name for p in local.iterdir() if p.name.startswith(".cuda.tmp-")] == []
    assert not (s / "etc" / "ld.so.conf.d" / ".000-cudaenv.conf.tmp-00000000deadbeef").exists()
    assert not (machine.root / ".state.json.tmp-00000000deadbeef").exists()


@pytest.mark.parametrize("text", ["{oops", '{"schema": "cudaenv.version/2", "name": "x"}',
                                  '{"schema": "cudaenv.version/1", "name": "x", "cuda": 11}'])
def test_a_damaged_version_record_is_named_never_read_as_defaults(machine, text):
    """The version record is typed: another schema or a field of the wrong type is an error that
    names the file (exit 4), list says the version is damaged, and install composes it again."""
    assert machine("install", "tf-2.13").rc == 0
    assert machine("global", "tf-2.16").rc == 0
    record = machine.root / "versions" / PLATFORM / TF213 / ".cudaenv-version.json"
    record.write_text(text)
    before = link(machine.sysroot)
    res = machine("global", TF213)
    assert_one_line_error(res, 4)
    assert ".cudaenv-version.json" in res.err, res.err
    assert link(machine.sysroot) == before
    listed = machine("list", "--json")
    assert listed.rc == 0, listed
    damaged = [v for v in listed.json()["versions"] if v["version"] == TF213]
    assert damaged and ".cudaenv-version.json" in damaged[0]["problem"], listed.json()
    assert "damaged:" in machine("list").out
    res = machine("install", "tf-2.13", "--json")
    assert res.rc == 0 and res.json()["changed"] is True, res
    assert json.loads(record.read_text())["schema"] == "cudaenv.version/1"
    assert machine("global", TF213).rc == 0
