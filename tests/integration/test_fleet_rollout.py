"""A real rollout (issue: Fleet): three hosts, each a real sshd on its own loopback port inside its
own mount namespace (/usr, /etc and /var overlays of this machine's, so dpkg installs the .deb
privately; /run a tmpfs), each with its own machine (CUDAENV_SYSROOT, set by sshd: a GPU, a driver,
its own /usr/local/cuda, ld.so.conf.d and ld.so.cache, rebuilt by the real ldconfig); a real nginx
serving a `cudaenv mirror` tree; the real ansible-playbook over ssh with serial: 1 and
max_fail_percentage: 0, running the role from packaging/ansible with the package the `deb`
workflow built (CUDAENV_DEB; .ci/package builds it before the suites run)."""
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

import fixture_sysroot  # noqa: E402
from conftest import PLATFORM, AS_USER, EXE, open_to_others
from nginx import NGINX, Nginx, free_port

ROOT = Path(__file__).resolve().parents[2]
COLLECTIONS = ROOT / "packaging" / "ansible"
PLAYBOOK = shutil.which("ansible-playbook")
SSHD = "/usr/sbin/sshd"
DEB = os.environ.get("CUDAENV_DEB")
A, B = "11.8.0+cudnn8.6.0.163", "12.4.1+cudnn9.1.1.17"
DRIVERS = {"gpu1": ("550.54.15", 12040), "gpu2": ("520.61.05", 11080), "gpu3": ("550.54.15", 12040)}


def wait_port(port, proc, what):
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if proc.poll() is not None:
                raise AssertionError(f"{what} exited: {proc.stderr.read().decode() if proc.stderr else ''}")
            time.sleep(0.05)
    raise AssertionError(f"{what} did not listen on {port}")


HOST_SCRIPT = r"""
set -e
w=$1; shift
mount -t tmpfs -o mode=0755 fleet-host "$w/ns"
for d in usr etc var; do
  mkdir -p "$w/ns/upper/$d" "$w/ns/work/$d"
  mount -t overlay "overlay-$d" -o "lowerdir=/$d,upperdir=$w/ns/upper/$d,workdir=$w/ns/work/$d" "/$d"
done
mount -t tmpfs -o mode=0755 fleet-run /run
mkdir -p /run/sshd
# a fleet host's own root home: not this machine's ~/.bashrc (which here runs pyenv's init at
# every ssh command Ansible sends)
mount -t tmpfs -o mode=0700 fleet-root /root
exec "$@"
"""


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("needs root: mount namespaces, sshd, dpkg")
    missing = [n for n, ok in (("ansible-playbook", PLAYBOOK), ("sshd", os.path.exists(SSHD)), ("nginx", NGINX),
                               ("CUDAENV_DEB (a package built by `cmake --workflow --preset deb`)",
                                DEB and os.path.exists(DEB))) if not ok]
    if missing:
        pytest.skip("missing: " + ", ".join(missing))
    base = tmp_path_factory.mktemp("fleet")
    open_to_others(base)
    procs = []
    try:
        yield from _fleet(base, procs)
    finally:
        # every sshd (its sessions included: every process in a host's mount namespace) and
        # nginx stops, even when a test failed
        spaces = set()
        for p in procs:
            try:
                spaces.add(os.readlink(f"/proc/{p.pid}/ns/mnt"))
            except OSError:
                pass
        spaces.discard(os.readlink("/proc/self/ns/mnt"))
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if os.readlink(f"/proc/{pid}/ns/mnt") in spaces:
                    os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


def _fleet(base, procs):
    import fixture_mirror
    # the releases: a fixture mirror, mirrored by `cudaenv mirror`, served by nginx. The hosts'
    # manifests (their floor, serial 100) lack CUDA 13.4.2 and cuDNN 9.27: "next month's
    # release", which only the channel's bundle (serial 101, signed by the site's key) knows.
    fx = fixture_mirror.build(base / "fixture", EXE, ROOT / "manifests", newer=True)
    floor = base / "floor"
    shutil.copytree(fx / "manifests", floor)
    (floor / "cuda" / "13.4.2.json").unlink()
    (floor / "cudnn" / "9.27.0.42.json").unlink()
    for d, serial in ((floor, 100), (fx / "manifests", 101)):
        (d / "release.json").write_text(json.dumps({"schema": "cudaenv.manifest/1", "kind": "release",
                                                    "serial": serial, "created": "2026-12-01T00:00:00Z",
                                                    "requires": "0.1.0"}))
    site_key = base / "site"
    subprocess.run([EXE, "__bundle", "keygen", "--out", str(site_key)], check=True, stdout=subprocess.DEVNULL)
    (base / "upstream-channel").mkdir()
    subprocess.run([EXE, "__bundle", "make", "--from", str(fx / "manifests"), "--key", f"{site_key}.secret",
                    "--out", str(base / "upstream-channel" / "manifests.bundle")], check=True,
                   stdout=subprocess.DEVNULL)
    from fault_server import FaultServer
    upstream = FaultServer(fx / "mirror")
    try:
        env = dict(os.environ, CUDAENV_MANIFESTS=str(fx / "manifests"), CUDAENV_MIRROR=upstream.url,
                   CUDAENV_ROOT=str(base / "scratch-root"), NO_COLOR="1")
        res = subprocess.run([EXE, "mirror", "tf-2.13", "tf-2.16", "--to", str(base / "served")], env=env,
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
    finally:
        upstream.close()
    nginx = Nginx(base / "nginx", {"/nvidia/": base / "served", "/upstream-channel/": base / "upstream-channel"})
    procs.append(nginx.proc)
    mirror_url = nginx.url("/nvidia")

    # the throwaway key, and one sshd per host in its own mount namespace
    key = base / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    libs = fixture_sysroot.Libs(base / "libs")
    hosts = {}
    inventory = ["[gpu]"]
    for name, (driver, cuda) in DRIVERS.items():
        w = base / name
        (w / "ns").mkdir(parents=True)
        m = fixture_sysroot.Machine(w / "machine", libs)
        m.base()
        m.pci_gpu()
        m.kernel_driver(version=driver)
        m.add_gpu()
        m.driver_libs(driver=driver, cuda=cuda)
        m.ldconfig()
        # the role writes the host's /etc/cudaenv/config; cudaenv reads it under the sysroot, and
        # the site's manifests the config names are the machine's /srv/cudaenv/manifests
        os.symlink("/etc/cudaenv", m.p("/etc/cudaenv"))
        shutil.copytree(floor, m.p("/srv/cudaenv/manifests"))
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(w / "hostkey")], check=True)
        shutil.copy(f"{key}.pub", w / "authorized_keys")
        p = free_port()
        (w / "sshd_config").write_text(f"""
Port {p}
ListenAddress 127.0.0.1
HostKey {w}/hostkey
PidFile {w}/sshd.pid
AuthorizedKeysFile {w}/authorized_keys
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
SetEnv CUDAENV_SYSROOT={m.root}
Subsystem sftp internal-sftp
""")
        (w / "host.sh").write_text(HOST_SCRIPT)
        sshd = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "bash", str(w / "host.sh"), str(w),
                                 SSHD, "-D", "-e", "-f", str(w / "sshd_config")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        procs.append(sshd)
        wait_port(p, sshd, f"sshd of {name}")
        hosts[name] = m
        inventory.append(f"{name} ansible_host=127.0.0.1 ansible_port={p}")
    inventory += ["[gpu:vars]", "ansible_user=root", f"ansible_ssh_private_key_file={key}",
                  "ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'",
                  "ansible_python_interpreter=/usr/bin/python3"]
    (base / "hosts").write_text("\n".join(inventory) + "\n")
    (base / "ansible.cfg").write_text("[defaults]\nforks = 5\n")

    class Fleet:
        pass

    f = Fleet()
    f.base, f.hosts, f.mirror, f.nginx = base, hosts, mirror_url, nginx
    f.fixture, f.floor, f.key = fx, floor, site_key
    yield f


def playbook(fleet, target, *args, versions="[tf-2.13, tf-2.16]", extra=""):
    reports = fleet.base / "reports"
    reports.mkdir(exist_ok=True)
    book = fleet.base / "rollout.yml"
    # the complete example playbook of docs/fleet.md, with the test's paths
    book.write_text(f"""
- name: Roll CUDA out, one host at a time
  hosts: gpu
  serial: 1
  max_fail_percentage: 0
  gather_facts: false
  roles:
    - role: cudaenv.fleet.cudaenv
      vars:
        cudaenv_package: {DEB}
        cudaenv_mirror: {fleet.mirror}
        cudaenv_manifests: /srv/cudaenv/manifests
        cudaenv_versions: {versions}
        cudaenv_global: {target}
        cudaenv_gate_only: [driver-cuda, cuda-link]
        cudaenv_report_dir: {reports}
{extra}""")
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS), ANSIBLE_STDOUT_CALLBACK="json",
               ANSIBLE_NOCOLOR="1", ANSIBLE_CONFIG=str(fleet.base / "ansible.cfg"),
               ANSIBLE_LOCAL_TEMP=str(fleet.base / "ansible-tmp"),
               ANSIBLE_SSH_CONTROL_PATH_DIR=str(fleet.base / "cp"), ANSIBLE_RETRY_FILES_ENABLED="0")
    env = {k: v for k, v in env.items() if not k.startswith(("CUDAENV_", "CUDA_"))}
    proc = subprocess.run([PLAYBOOK, "-i", str(fleet.base / "hosts"), *args, str(book)], env=env,
                          capture_output=True, text=True, timeout=900)
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(f"no JSON from ansible-playbook (rc {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    tasks = {}
    for p in doc["plays"]:
        for t in p["tasks"]:
            for host, r in t["hosts"].items():
                tasks.setdefault(host, {})[t["task"]["name"].split(" : ", 1)[-1]] = r
    return proc.returncode, tasks, doc["stats"]


def failures(tasks):
    out = {}
    for h, rs in tasks.items():
        for k, r in rs.items():
            if r.get("failed"):
                items = [(i.get("msg"), i.get("hint")) for i in r.get("results", []) if i.get("failed")]
                out.setdefault(h, {})[k] = items or (r.get("msg"), r.get("hint"))
    return out


def link(m):
    return os.readlink(m.p("/usr/local/cuda")) if os.path.islink(m.p("/usr/local/cuda")) else None


def changed_tasks(results):
    return sorted(k for k, r in results.items() if r.get("changed"))


def test_a_rollout_stops_at_the_first_broken_host_and_puts_it_back(fleet):
    hosts = fleet.hosts
    # A: every host gets the package, the versions and CUDA 11.8 (every driver runs it)
    rc, a, stats = playbook(fleet, "tf-2.13")
    assert rc == 0, failures(a)
    for name, m in hosts.items():
        assert link(m) == f"/opt/cudaenv/versions/{PLATFORM}/{A}", name
        assert stats[name]["failures"] == 0 and stats[name]["changed"] > 0
        # a program linked against libcudart loads 11.8's through the machine's cache
        assert m.whereami("libcudart.so.11.0")["libcudart.so.11.0"][1].startswith(f"/opt/cudaenv/versions/{PLATFORM}/{A}/")
    served = [uri for uri, status, _ in fleet.nginx.requests() if status == "200"]
    assert any(u.startswith("/nvidia/cuda/redist/") for u in served)  # the hosts used the mirror

    # the same run again changes nothing on any host
    rc, again, stats = playbook(fleet, "tf-2.13")
    assert rc == 0
    for name in hosts:
        assert changed_tasks(again[name]) == [], (name, changed_tasks(again[name]))

    # B in check mode: a prediction, nothing changes
    rc, check, stats = playbook(fleet, "tf-2.16", "--check")
    assert rc == 0, failures(check)
    for name, m in hosts.items():
        # the switch, and the report the real run saves after it (check mode runs the doctor too)
        assert changed_tasks(check[name]) == ["Save the host's doctor report on the controller",
                                              "Switch the machine's CUDA"], (name, changed_tasks(check[name]))
        assert link(m) == f"/opt/cudaenv/versions/{PLATFORM}/{A}"

    # B for real: gpu1 switches; gpu2's driver (520) cannot run CUDA 12.4: its gate fails, the
    # switch is rolled back, the play stops; gpu3 is never touched
    rc, b, stats = playbook(fleet, "tf-2.16")
    assert rc != 0
    assert link(hosts["gpu1"]) == f"/opt/cudaenv/versions/{PLATFORM}/{B}"
    assert changed_tasks(b["gpu1"]) == changed_tasks(check["gpu1"])  # the check predicted it
    assert stats["gpu2"]["failures"] == 1
    assert b["gpu2"]["Roll the switch back"]["changed"] is True
    assert link(hosts["gpu2"]) == f"/opt/cudaenv/versions/{PLATFORM}/{A}"
    assert hosts["gpu2"].whereami("libcudart.so.11.0")["libcudart.so.11.0"][1].startswith(f"/opt/cudaenv/versions/{PLATFORM}/{A}/")
    assert "gpu3" not in b
    assert link(hosts["gpu3"]) == f"/opt/cudaenv/versions/{PLATFORM}/{A}"

    # every host's doctor agrees with what the play reported
    reports = fleet.base / "reports"
    table = subprocess.run([EXE, "--json", "report", str(reports)], capture_output=True, text=True)
    rows = {r["host"]: r for r in json.loads(table.stdout)["hosts"]}
    assert rows["gpu2"]["failures"] > 0 and rows["gpu2"]["worst"]["id"] == "driver-cuda"
    assert rows["gpu1"]["failures"] == 0 and rows["gpu1"]["cuda"].startswith("12.4")
    assert rows["gpu3"]["failures"] == 0 and rows["gpu3"]["cuda"].startswith("11.8")


def test_next_months_release_reaches_the_fleet_through_its_mirror(fleet):
    """The admin updates from the upstream channel and mirrors the new release; the mirror carries
    the signed bundle; every host, with no channel configured and no route to one, updates from
    its mirror's copy and installs what only that bundle knows."""
    base = fleet.base
    admin = base / "admin"
    (admin / "etc/cudaenv/keys").mkdir(parents=True)
    shutil.copy(f"{fleet.key}.pub", admin / "etc/cudaenv/keys/site.pub")
    shutil.copytree(fleet.floor, admin / "floor")
    (admin / "etc/cudaenv/config").write_text(f"manifests = /floor\nchannel = {fleet.nginx.url('/upstream-channel')}\n")
    from fault_server import FaultServer
    upstream = FaultServer(fleet.fixture / "mirror")
    try:
        env = dict(os.environ, CUDAENV_SYSROOT=str(admin), CUDAENV_MIRROR=upstream.url,
                   CUDAENV_ROOT=str(base / "admin-root"), NO_COLOR="1")
        env.pop("CUDAENV_MANIFESTS", None)
        # the admin's machine trusts the site key through its sysroot: an ordinary user (a root
        # cudaenv takes its keys from the machine itself)
        res = subprocess.run([*AS_USER, EXE, "update"], env=env, capture_output=True, text=True, timeout=120)
        assert res.returncode == 0 and "new      CUDA 13.4.2" in res.stdout, res.stderr
        res = subprocess.run([*AS_USER, EXE, "mirror", "13.4+cudnn-9.27", "--to", str(base / "served")], env=env,
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
    finally:
        upstream.close()
    assert (base / "served" / "cudaenv-channel" / "manifests.bundle").exists()
    before = len(fleet.nginx.requests())
    vars_ = f"        cudaenv_update: true\n        cudaenv_keys: [{fleet.key}.pub]\n"
    versions = "[tf-2.13, tf-2.16, 13.4+cudnn-9.27]"
    # check mode: the keys would be installed, so the update cannot be judged yet (skipped);
    # nothing is written
    # (what only the new bundle knows cannot be predicted before it is there: not asked yet)
    rc, check, stats = playbook(fleet, "tf-2.13", "--check", extra=vars_)
    assert rc == 0, failures(check)
    for name, m in fleet.hosts.items():
        assert check[name]["Install the site's channel keys"]["changed"] is True, name
        assert check[name]["Update the manifests from the channel"].get("skipped") is True, name
        assert not os.path.exists(m.p("/opt/cudaenv/manifests/current.json")), name
    rc, run, stats = playbook(fleet, "tf-2.13", versions=versions, extra=vars_)
    assert rc == 0, failures(run)
    new = "13.4.2+cudnn9.27.0.42"
    for name, m in fleet.hosts.items():
        up = run[name]["Update the manifests from the channel"]
        assert up["changed"] is True and up["previous_serial"] == 100 and up["serial"] == 101, (name, up)
        assert any(c["subject"] == "CUDA 13.4.2" for c in up["changes"])
        cur = json.loads(open(m.p("/opt/cudaenv/manifests/current.json")).read())
        assert cur["serial"] == 101 and cur["channel"] == fleet.mirror + "/cudaenv-channel", cur
        assert os.path.exists(m.p(f"/opt/cudaenv/versions/{PLATFORM}/{new}/lib64/libcudart.so.13")), name
        assert link(m) == f"/opt/cudaenv/versions/{PLATFORM}/{A}", name
    asked = [uri for uri, status, _ in fleet.nginx.requests()[before:]]
    assert asked.count("/nvidia/cudaenv-channel/manifests.bundle") == len(fleet.hosts)
    assert not any(u.startswith("/upstream-channel/") for u in asked)  # no host went past its mirror
    # the month after: a re-signed bundle (serial 102) reaches the mirror the same way; check mode
    # predicts the update on every host from the keys they now trust -- and nothing else: every
    # other task of the run above is settled -- and writes nothing
    subprocess.run([EXE, "__bundle", "make", "--from", str(fleet.fixture / "manifests"), "--key",
                    f"{fleet.key}.secret", "--serial", "102", "--out",
                    str(base / "upstream-channel" / "manifests.bundle")], check=True, stdout=subprocess.DEVNULL)
    upstream = FaultServer(fleet.fixture / "mirror")
    try:
        env["CUDAENV_MIRROR"] = upstream.url
        for args in (["update"], ["mirror", "13.4+cudnn-9.27", "--to", str(base / "served")]):
            res = subprocess.run([*AS_USER, EXE, *args], env=env, capture_output=True, text=True, timeout=300)
            assert res.returncode == 0, res.stderr
    finally:
        upstream.close()
    rc, check, stats = playbook(fleet, "tf-2.13", "--check", versions=versions, extra=vars_)
    assert rc == 0, failures(check)
    for name, m in fleet.hosts.items():
        assert changed_tasks(check[name]) == ["Update the manifests from the channel"], (name, changed_tasks(check[name]))
        assert check[name]["Update the manifests from the channel"]["serial"] == 102
        assert json.loads(open(m.p("/opt/cudaenv/manifests/current.json")).read())["serial"] == 101


def test_a_key_the_role_revokes_counts_for_nothing_on_any_host(fleet):
    """The site's signing key leaks: the role revokes it on every host (`cudaenv_revoked_keys`,
    /etc/cudaenv/keys/<name>.revoked). From then on no host takes a bundle it signed -- the
    mirror's serial 102 above is refused on the first host, and the rollout stops there."""
    revoke = f"        cudaenv_revoked_keys: [{fleet.key}.pub]\n"
    rc, run, stats = playbook(fleet, "tf-2.13", extra=revoke)
    assert rc == 0, failures(run)
    for name in fleet.hosts:
        assert run[name]["Revoke keys on the host"]["changed"] is True, name
    rc, run, stats = playbook(fleet, "tf-2.13", extra=revoke + "        cudaenv_update: true\n")
    assert rc != 0
    failed = failures(run)
    assert len(failed) == 1, failed
    (host, msg), = failed.items()
    assert "no longer trusts (revoked)" in json.dumps(msg), failed
