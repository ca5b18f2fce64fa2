"""The machine-wide root (issue: Ship): root's default root and the config file under the sysroot,
world-readable versions whatever the umask, and an unprivileged user (a real uid, via setpriv)
who sees the machine-wide versions read-only under their own root."""
import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import PLATFORM, EXE, assert_one_line_error, loader_sysroot

NOBODY = 65534


def modes(tree):
    bad = []
    for p in [tree, *tree.rglob("*")]:
        st = p.lstat()
        if stat.S_ISLNK(st.st_mode):
            continue
        m = st.st_mode & 0o7777
        if stat.S_ISDIR(st.st_mode) and m != 0o755:
            bad.append((str(p), oct(m)))
        if stat.S_ISREG(st.st_mode) and m not in (0o444, 0o555):  # read-only for all
            bad.append((str(p), oct(m)))
    return bad


def open_up(path):
    """Others may read what the fixtures made (session folders are 0700)."""
    for p in [path, *path.rglob("*")]:
        if not p.is_symlink():
            p.chmod(p.stat().st_mode | (0o055 if p.is_dir() else 0o044))
    for d in path.parents:
        if str(d) in ("/", "/tmp"):
            break
        d.chmod(d.stat().st_mode | 0o055)


@pytest.fixture
def system(inst, tmp_path):
    """A sysroot whose config file names the machine-wide root and the mirror; no CUDAENV_ROOT
    and no CUDAENV_MIRROR: what root gets on a fresh machine."""
    if os.geteuid() != 0:
        pytest.skip("needs root (the machine-wide root is root's default)")
    s = loader_sysroot(tmp_path / "sys")
    (s / "etc" / "cudaenv").mkdir(parents=True)
    (s / "etc" / "cudaenv" / "config").write_text(
        f"# the fleet's settings\nroot = /srv/cudaenv\nmirror = {inst.server.url}\n")
    for k in ("CUDAENV_ROOT", "CUDAENV_MIRROR"):
        inst.env.pop(k, None)
    inst.env["CUDAENV_SYSROOT"] = str(s)
    inst.sysroot = s
    inst.system_root = s / "srv" / "cudaenv"
    return inst


def test_root_installs_into_the_configured_machine_wide_root_world_readable_whatever_the_umask(system):
    def umask077():
        os.umask(0o077)

    proc = subprocess.run([EXE, "install", "tf-2.13", "--json"], env=system.env, capture_output=True,
                          text=True, preexec_fn=umask077, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)["versions"][0]
    assert doc["prefix"] == str(system.system_root / "versions" / PLATFORM / "11.8.0+cudnn8.6.0.163")
    assert system.server.requests, "the config file's mirror was not used"
    assert not (Path(system.env["HOME"]) / ".cudaenv").exists()
    for area in ("versions", "store"):
        assert modes(system.system_root / area) == []
    nvcc = system.system_root / "versions" / PLATFORM / "11.8.0+cudnn8.6.0.163" / "bin" / "nvcc"
    assert nvcc.stat().st_mode & 0o7777 == 0o555
    listing = system("list", "--json").json()
    assert listing["root"] == str(system.system_root)
    assert [v["upstream"] for v in listing["versions"]] == [False]


def test_a_malformed_config_file_is_a_usage_error_naming_its_line(system):
    (system.sysroot / "etc" / "cudaenv" / "config").write_text("root = /srv/cudaenv\nmirorr = x\n")
    res = system("list")
    assert_one_line_error(res, 2)
    assert "etc/cudaenv/config:2: unknown setting 'mirorr'" in res.err


def test_global_refuses_a_version_other_users_cannot_read(system):
    assert system("install", "tf-2.13").rc == 0
    lib = next((system.system_root / "versions" / PLATFORM / "11.8.0+cudnn8.6.0.163" / "lib64").glob("libcudnn.so.8.*"))
    lib.chmod(0o600)  # an administrator's chmod, or a copy made under umask 077
    res = system("global", "tf-2.13")
    assert_one_line_error(res, 7)
    assert "other users could not load it" in res.err and lib.name in res.err
    assert not (system.sysroot / "usr" / "local" / "cuda").exists()
    lib.chmod(0o644)
    assert system("global", "tf-2.13").rc == 0


def as_nobody(system, home, *args, env=None):
    e = dict(system.env, HOME=str(home))
    e.update(env or {})
    cmd = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", EXE, *args]
    proc = subprocess.run(cmd, env=e, capture_output=True, text=True, cwd=str(home), timeout=120)

    class R:
        rc, out, err = proc.returncode, proc.stdout, proc.stderr

        def json(self):
            return json.loads(self.out)

        def __repr__(self):
            return f"rc={self.rc}\nstdout:\n{self.out}\nstderr:\n{self.err}"
    return R()


def test_an_unprivileged_user_sees_the_machine_wide_versions_read_only(system, tmp_path):
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) is missing")
    assert system("install", "tf-2.13").rc == 0
    assert system("global", "tf-2.13").rc == 0
    open_up(system.fixture)
    open_up(system.sysroot / "etc")
    home = tmp_path / "home-nobody"
    home.mkdir()
    os.chown(home, NOBODY, NOBODY)
    version = "11.8.0+cudnn8.6.0.163"
    prefix = system.system_root / "versions" / PLATFORM / version

    listing = as_nobody(system, home, "list", "--json")
    assert listing.rc == 0, listing
    doc = listing.json()
    assert doc["root"] == str(home / ".cudaenv")
    assert doc["upstreams"] == [str(system.system_root)]
    assert [(v["version"], v["upstream"], v["active"]) for v in doc["versions"]] == [(version, True, True)]
    text = as_nobody(system, home, "list")
    assert "machine-wide" in text.out and "read-only" in text.out, text

    # the machine's global selects it, and so can a project pin
    assert as_nobody(system, home, "prefix").out.strip() == str(prefix)
    ran = as_nobody(system, home, "exec", "nvcc", "--version")
    assert ran.rc == 0 and "11.8" in ran.out, ran
    (home / "proj").mkdir()
    os.chown(home / "proj", NOBODY, NOBODY)
    used = as_nobody(system, home / "proj", "use", version)
    assert used.rc == 0, used
    assert as_nobody(system, home / "proj", "prefix").out.strip() == str(prefix)

    # nothing of the machine-wide root can be changed from here
    rm = as_nobody(system, home, "uninstall", version)
    assert_one_line_error(rm, 6)
    assert "needs root" in rm.err and "sudo cudaenv uninstall" in rm.err
    assert prefix.is_dir()
    glob = as_nobody(system, home, "global", version)
    assert_one_line_error(glob, 7)

    # install finds it there: nothing downloaded, nothing written in the user's root
    before = len(system.server.requests)
    again = as_nobody(system, home, "install", "tf-2.13", "--json")
    assert again.rc == 0, again
    assert again.json()["changed"] is False and again.json()["versions"][0]["prefix"] == str(prefix)
    assert len(system.server.requests) == before
    assert not (home / ".cudaenv" / "versions" / PLATFORM / version).exists()

    # a version of their own goes into their own root
    own = as_nobody(system, home, "install", "tf-2.16", "--json")
    assert own.rc == 0, own
    mine = own.json()["versions"][0]
    assert mine["prefix"].startswith(str(home / ".cudaenv" / "versions"))
    assert {v["version"]: v["upstream"] for v in as_nobody(system, home, "list", "--json").json()["versions"]} \
        == {version: True, mine["version"]: False}


def test_one_version_in_both_roots_is_listed_twice_with_the_one_that_wins(system, tmp_path):
    """A user installed tf-2.16 in their own root before root installed it machine-wide: both copies
    are listed, with their origin; the user's own wins (it is searched first)."""
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) is missing")
    open_up(system.fixture)
    open_up(system.sysroot / "etc")
    home = tmp_path / "home-nobody"
    home.mkdir()
    os.chown(home, NOBODY, NOBODY)
    own = as_nobody(system, home, "install", "tf-2.16", "--json")
    assert own.rc == 0, own
    version = own.json()["versions"][0]["version"]
    mine = Path(own.json()["versions"][0]["prefix"])
    assert system("install", "tf-2.16").rc == 0
    theirs = system.system_root / "versions" / PLATFORM / version
    assert theirs.is_dir() and mine.is_dir()

    doc = as_nobody(system, home, "list", "--json").json()
    copies = [v for v in doc["versions"] if v["version"] == version]
    assert [(v["origin"], v["root"], v["wins"], v["shadowed_by"]) for v in copies] == [
        ("root", str(home / ".cudaenv"), True, None),
        ("upstream", str(system.system_root), False, str(mine))]
    text = as_nobody(system, home, "list").out.splitlines()
    lines = [l for l in text if version in l]
    assert len(lines) == 2, text
    assert "wins over the copy below" in lines[0], text
    assert "machine-wide" in lines[1] and f"not used: {mine} wins" in lines[1], text
    # and every command means the winner
    assert as_nobody(system, home, "prefix", version).out.strip() == str(mine)
    # root's own list has one copy: it does not search users' roots
    assert [v["version"] for v in system("list", "--json").json()["versions"]].count(version) == 1


def test_a_strict_umask_creates_the_default_root_open_to_every_user(inst, tmp_path):
    """Issue 25 (6): root with umask 077 on a fresh machine, inside a private mount namespace (a
    tmpfs /opt, /etc as an overlay): /opt/cudaenv and every folder cudaenv makes on the way to a
    version are 0755, and `global` then switches to it."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare")
    open_up(inst.fixture)
    for d in ("upper", "work"):
        (tmp_path / d).mkdir()
    env = dict(inst.env)
    env.pop("CUDAENV_ROOT")
    script = (
        'set -e; mount --make-rprivate / && mount -t tmpfs -o mode=0755 tmpfs /opt && '
        f'mount -t overlay overlay -o lowerdir=/etc,upperdir={tmp_path}/upper,workdir={tmp_path}/work /etc && '
        'mount -t tmpfs -o mode=0755 tmpfs /usr/local || { echo "mount: failed" >&2; exit 99; }; '
        'umask 077; "$0" install tf-2.13 >/dev/null; "$0" global tf-2.13 >/dev/null; '
        'find /opt/cudaenv -type d -printf "%m %p\\n"; readlink /usr/local/cuda')
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script, EXE], env=env, capture_output=True,
                          text=True, timeout=180)
    if proc.returncode == 99:
        pytest.skip("cannot mount here: " + proc.stderr.strip())
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    folders = dict(reversed(line.split(" ", 1)) for line in lines[:-1])
    assert f"/opt/cudaenv/versions/{PLATFORM}/11.8.0+cudnn8.6.0.163" in folders
    assert {p: m for p, m in folders.items() if m != "755"} == {}
    assert lines[-1] == f"/opt/cudaenv/versions/{PLATFORM}/11.8.0+cudnn8.6.0.163"
