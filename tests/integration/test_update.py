"""The update channel (docs/channel.md): signed manifests bundles served by a real nginx on loopback.

A machine ships the fixture manifests as its floor (serial 100, `manifests =` in its config); the
channel offers a bundle of the newer fixture manifests (serial 101: CUDA 13.4.2 and cuDNN 9.27,
which the floor does not know), signed with a site key in /etc/cudaenv/keys/. Tampered, truncated,
wrong-key, downgraded, expired and future bundles are refused with their exit code and the set in
use left as it was; kill -9 at every step of an update and at random moments leaves the old set or
the new one, never a mixture; two updates at once make one switch; a fleet host with no route to
the channel updates from its mirror's copy and installs what only the new bundle knows. Skipped
where nginx is not installed (.ci/deps installs it).

Bundles for the cases cudaenv's own tool never makes (another format, a newer schema) are signed
by the openssl command line, an Ed25519 implementation independent of the one under test.
"""
import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import AS_USER, EXE, MachineNamespace, assert_one_line_error, leftovers
from nginx import NGINX, Nginx

FLOOR_SERIAL = 100
NEW_SERIAL = 101


def run(*args, env=None, prefix=()):
    return subprocess.run([*prefix, EXE, *args], capture_output=True, text=True, env=env, timeout=60)


def with_release(src, dst, serial, created="2026-12-01T00:00:00Z"):
    shutil.copytree(src, dst)
    (dst / "release.json").write_text(json.dumps(
        {"schema": "cudaenv.manifest/1", "kind": "release", "serial": serial, "created": created,
         "requires": "0.1.0"}))
    return dst


def make_bundle(manifests, key, out, *extra):
    res = run("__bundle", "make", "--from", str(manifests), "--key", str(key), "--out", str(out), *extra)
    assert res.returncode == 0, res.stderr
    return out


def openssl_sign(secret_file, message, work):
    """Ed25519 by the openssl CLI over `message` with a cudaenv secret key file."""
    seed = Path(secret_file).read_text().split()[1]
    der = work / "k.der"
    der.write_bytes(bytes.fromhex("302e020100300506032b657004220420" + seed))
    pem = work / "k.pem"
    subprocess.run(["openssl", "pkey", "-inform", "DER", "-in", der, "-out", pem], check=True)
    msg = work / "msg"
    msg.write_bytes(message)
    sig = work / "sig"
    subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", pem, "-rawin", "-in", msg, "-out", sig],
                   check=True)
    return sig.read_bytes().hex()


def key_id(pub_file):
    import hashlib
    raw = bytes.fromhex(Path(pub_file).read_text().split()[1])
    return hashlib.sha256(raw).hexdigest()[:16]


def forge(valid_bundle, secret, pub, work, fmt="cudaenv-bundle/1", **payload_changes):
    """A bundle whose payload is `valid_bundle`'s with changes, signed by openssl."""
    head, payload = valid_bundle.read_bytes().split(b"\n\n", 1)
    doc = json.loads(payload)
    doc.update(payload_changes)
    payload = (json.dumps(doc) + "\n").encode()
    sig = openssl_sign(secret, fmt.encode() + b"\n" + payload, work)
    return f"{fmt}\nsignature {key_id(pub)} {sig}\n\n".encode() + payload


class Machine:
    """A sysroot (config, site keys, the floor) and a root, driven through the real binary."""

    def __init__(self, tmp, name, floor, config, keys):
        self.sysroot = tmp / name / "sys"
        (self.sysroot / "etc/cudaenv/keys").mkdir(parents=True)
        for k in keys:
            shutil.copy(k, self.sysroot / "etc/cudaenv/keys" / Path(k).name)
        shutil.copytree(floor, self.sysroot / "floor")
        (self.sysroot / "etc/cudaenv/config").write_text("manifests = /floor\n" + config)
        self.root = tmp / name / "root"
        self.home = tmp / name / "home"
        self.home.mkdir()
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("CUDA", "CUDAENV_", "LD_LIBRARY_PATH", "NVIDIA_"))}
        self.env.update(HOME=str(self.home), CUDAENV_ROOT=str(self.root), CUDAENV_SYSROOT=str(self.sysroot),
                        NO_COLOR="1", LC_ALL="C.UTF-8", CUDAENV_RETRIES="0", CUDAENV_LOCK_TIMEOUT="30",
                        CUDAENV_CONNECT_TIMEOUT="3", CUDAENV_STALL_TIMEOUT="3")

    ns = None

    def __call__(self, *args, env=None):
        """cudaenv as an ordinary user of this machine (its trust under the sysroot)."""
        e = dict(self.env)
        e.update(env or {})
        return run(*args, env=e, prefix=AS_USER)

    def as_root(self, *args, env=None):
        """cudaenv as the machine's root: its trust from the machine's own /etc/cudaenv and
        /var/lib/cudaenv -- here the sysroot's, bound there in a private mount namespace."""
        if os.geteuid() != 0:
            pytest.skip("root's view of a machine needs root (mount namespaces)")
        if self.ns is None:
            self.ns = MachineNamespace(self.sysroot.parent / "ns", self.sysroot)
        e = dict(self.env)
        e.update(env or {})
        return run(*args, env=e, prefix=self.ns.prefix)

    def close(self):
        if self.ns is not None:
            self.ns.close()

    def popen(self, *args, env=None):
        e = dict(self.env)
        e.update(env or {})
        return subprocess.Popen([*AS_USER, EXE, *args], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)

    def serial(self):
        res = self("--version")
        assert res.returncode == 0, res.stderr
        line = next(l for l in res.stdout.splitlines() if l.startswith("manifests serial: "))
        return int(line.split()[2])

    def state(self):
        """What a reader sees: current.json's bytes and the sets in the root."""
        m = self.root / "manifests"
        cur = (m / "current.json").read_bytes() if (m / "current.json").exists() else None
        sets = sorted(p.name for p in m.iterdir() if p.name != "current.json") if m.exists() else []
        return cur, sets


@pytest.fixture
def chan(fixture_dir, newer_fixture_dir, tmp_path):
    if not NGINX:
        pytest.skip("nginx is not installed")
    if not shutil.which("openssl"):
        pytest.skip("the openssl command is not installed")
    site = tmp_path / "site"
    res = run("__bundle", "keygen", "--out", str(site), "--comment", "test site")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "site.secret").stat().st_mode & 0o077 == 0
    other = tmp_path / "other"
    assert run("__bundle", "keygen", "--out", str(other)).returncode == 0
    floor = with_release(fixture_dir / "manifests", tmp_path / "floor", FLOOR_SERIAL)
    newer = with_release(newer_fixture_dir / "manifests", tmp_path / "newer", NEW_SERIAL)
    served = tmp_path / "channel"
    served.mkdir()
    make_bundle(newer, tmp_path / "site.secret", served / "manifests.bundle")
    srv = Nginx(tmp_path / "nginx", {"/channel/": served, "/nvidia/": newer_fixture_dir / "mirror",
                                     "/fleet/": tmp_path / "fleet-mirror"})
    (tmp_path / "fleet-mirror").mkdir()
    m = Machine(tmp_path, "host", floor, f"channel = {srv.url('/channel')}\n", [tmp_path / "site.pub"])
    m.env["CUDAENV_MIRROR"] = srv.url("/nvidia")

    class Chan:
        pass
    c = Chan()
    c.machine, c.nginx, c.served, c.tmp = m, srv, served, tmp_path
    c.floor, c.newer = floor, newer
    c.secret, c.pub = tmp_path / "site.secret", tmp_path / "site.pub"
    c.other_secret = tmp_path / "other.secret"
    c.good = (served / "manifests.bundle").read_bytes()
    yield c
    m.close()
    srv.stop()


def test_a_release_only_the_newer_bundle_knows_installs_after_update(chan):
    m = chan.machine
    assert m.serial() == FLOOR_SERIAL
    before = m("resolve", "13.4+cudnn-9.27")
    assert before.returncode == 9, before.stderr  # the floor does not know CUDA 13.4
    check = m("update", "--check")
    assert check.returncode == 0, check.stderr
    assert "would update the manifests: serial 100" in check.stdout
    assert "new      CUDA 13.4.2" in check.stdout and "new      cuDNN 9.27.0.42" in check.stdout
    assert "nothing written (--check)" in check.stdout
    assert not (m.root / "manifests").exists()  # --check writes nothing, not even the root
    res = m("update", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["state"] == "updated" and doc["before"]["serial"] == FLOOR_SERIAL
    assert doc["offered"]["serial"] == NEW_SERIAL and doc["offered"]["key"] == key_id(chan.pub)
    assert any(c["kind"] == "new" and c["subject"] == "CUDA 13.4.2" for c in doc["changes"])
    assert m.serial() == NEW_SERIAL
    cur, sets = m.state()
    assert len(sets) == 1 and json.loads(cur)["serial"] == NEW_SERIAL
    # the set is the bundle's files, readable by everyone, with the signed bundle itself
    setdir = m.root / "manifests" / sets[0]
    assert (setdir / "manifests.bundle").read_bytes() == chan.good
    assert (setdir / "cuda" / "13.4.2.json").stat().st_mode & 0o777 == 0o644
    assert leftovers(m.root) == []
    got = m("install", "13.4+cudnn-9.27", "--json")
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["versions"][0]["version"] == "13.4.2+cudnn9.27.0.42"
    again = m("update")
    assert again.returncode == 0 and "up to date (serial 101" in again.stdout, again.stderr
    assert m.state() == (cur, sets)


def refused_bundle(chan, case):
    work = chan.tmp / "forge"
    work.mkdir(exist_ok=True)
    good = chan.served / "manifests.bundle"
    if case == "tampered":
        data = bytearray(chan.good)
        at = data.index(b'release_date')
        data[at + 1] ^= 0x20  # one letter's case, deep in the signed payload
        return bytes(data), 4, "does not verify"
    if case == "truncated":
        return chan.good[: len(chan.good) * 2 // 3], 4, "does not verify"
    if case == "unsigned":
        head, payload = chan.good.split(b"\n\n", 1)
        return b"cudaenv-bundle/1\n\n" + payload, 4, "not signed"
    if case == "header-cut":
        return chan.good[:40], 4, "truncated"
    if case == "wrong-key":
        out = make_bundle(chan.newer, chan.other_secret, work / "b")
        return out.read_bytes(), 4, "signed by no key this machine trusts"
    if case == "downgraded":
        older = with_release(chan.newer, work / "older", FLOOR_SERIAL - 1)
        return make_bundle(older, chan.secret, work / "b").read_bytes(), 4, "older than the serial in use"
    if case == "expired":
        return (forge(good, chan.secret, chan.pub, work, created="2025-11-01T00:00:00Z",
                      expires="2026-01-01T00:00:00Z"), 4, "expired on 2026-01-01")
    if case == "future-schema":
        return forge(good, chan.secret, chan.pub, work, schema="cudaenv.bundle/2"), 8, "this cudaenv reads cudaenv.bundle/1"
    if case == "future-format":
        return forge(good, chan.secret, chan.pub, work, fmt="cudaenv-bundle/2"), 8, "in format 2"
    if case == "needs-newer-cudaenv":
        return forge(good, chan.secret, chan.pub, work, requires="99.1.0"), 8, "needs cudaenv 99.1.0 or newer (this is cudaenv"
    if case == "not-a-manifest-name":
        head, payload = chan.good.split(b"\n\n", 1)
        doc = json.loads(payload)
        doc["files"]["../../etc/cron.d/x.json"] = "{}"
        return forge(good, chan.secret, chan.pub, work, files=doc["files"]), 4, "not a manifest file's name"
    if case == "manifests-that-do-not-load":
        doc = json.loads(chan.good.split(b"\n\n", 1)[1])
        doc["files"]["cuda/13.4.2.json"] = doc["files"]["cuda/13.4.2.json"].replace('"13.4.2"', '"13.4.9"', 1)
        return forge(good, chan.secret, chan.pub, work, files=doc["files"]), 4, "do not load"
    raise AssertionError(case)


CASES = ["tampered", "truncated", "unsigned", "header-cut", "wrong-key", "downgraded", "expired", "future-schema",
         "future-format", "needs-newer-cudaenv", "not-a-manifest-name", "manifests-that-do-not-load"]


@pytest.mark.parametrize("case", CASES)
def test_a_refused_bundle_leaves_the_set_in_use(chan, case):
    m = chan.machine
    data, code, words = refused_bundle(chan, case)
    (chan.served / "manifests.bundle").write_bytes(data)
    for args in (("update", "--check"), ("update",)):
        res = m(*args)
        assert_one_line_error(type("R", (), {"rc": res.returncode, "err": res.stderr, "out": res.stdout})(), code)
        assert words in res.stderr, res.stderr
    assert m.serial() == FLOOR_SERIAL
    assert m.state() == (None, []) and leftovers(m.root) == []


@pytest.mark.parametrize("case", ["tampered", "downgraded", "expired", "wrong-key"])
def test_a_refused_bundle_after_an_update_keeps_the_updated_set(chan, case):
    m = chan.machine
    assert m("update").returncode == 0
    state = m.state()
    data, code, words = refused_bundle(chan, case)
    if case == "downgraded":  # the floor's own serial, now older than the set in use
        data = make_bundle(chan.floor, chan.secret, chan.tmp / "floor.bundle").read_bytes()
        words = "serial 100, older than the serial in use (101, channel)"
    (chan.served / "manifests.bundle").write_bytes(data)
    res = m("update")
    assert res.returncode == code and words in res.stderr, res.stderr
    assert m.state() == state and m.serial() == NEW_SERIAL
    assert m("resolve", "13.4+cudnn-9.27").returncode == 0


def test_a_channel_that_is_missing_or_unreachable_is_a_network_error(chan):
    m = chan.machine
    res = m("update", "--channel", chan.nginx.url("/nowhere"))
    assert res.returncode == 3 and "HTTP 404" in res.stderr, res.stderr
    res = m("update", "--channel", "http://127.0.0.1:9/channel")
    assert res.returncode == 3, res.stderr
    assert m.state() == (None, [])


def test_a_site_key_file_that_is_not_a_key_is_a_usage_error(chan):
    m = chan.machine
    (m.sysroot / "etc/cudaenv/keys/broken.pub").write_text("ssh-ed25519 AAAA... admin@host\n")
    res = m("update")
    assert res.returncode == 2 and "broken.pub" in res.stderr, res.stderr
    assert m.state() == (None, [])


def test_update_refuses_a_fixed_manifests_directory(chan):
    res = chan.machine("update", env={"CUDAENV_MANIFESTS": str(chan.floor)})
    assert res.returncode == 2 and "CUDAENV_MANIFESTS" in res.stderr, res.stderr


@pytest.mark.parametrize("point", ["update-fetched", "update-staged", "update-published", "update-switched"])
def test_kill_at_each_step_leaves_the_old_set_or_the_new_one(chan, point):
    m = chan.machine
    res = m("update", env={"CUDAENV_FAILPOINTS": f"{point}:kill"})
    assert res.returncode == -signal.SIGKILL, res.stderr
    switched = point == "update-switched"
    assert m.serial() == (NEW_SERIAL if switched else FLOOR_SERIAL)
    assert (m("resolve", "13.4+cudnn-9.27").returncode == 0) == switched
    again = m("update")
    assert again.returncode == 0, again.stderr
    assert ("up to date" in again.stdout) == switched
    assert m.serial() == NEW_SERIAL
    cur, sets = m.state()
    assert sets == [json.loads(cur)["set"]]  # the killed run's set was replaced, not kept beside
    assert leftovers(m.root) == []
    assert m("resolve", "13.4+cudnn-9.27").returncode == 0


def test_kill_at_random_moments_never_shows_a_mixture(chan):
    m = chan.machine
    rng = random.Random(26)
    for i in range(16):
        # alternate between the two bundles so every run has a switch to make
        newer = i % 2 == 0
        target = NEW_SERIAL + i
        src = with_release(chan.newer if newer else chan.floor, chan.tmp / f"s{i}", target)
        make_bundle(src, chan.secret, chan.served / "manifests.bundle")
        p = m.popen("update")
        time.sleep(rng.uniform(0.0, 1.5))  # before, during, or after the switch
        p.send_signal(signal.SIGKILL)
        p.communicate()
        serial = m.serial()
        assert serial in (target - 1, target) or (i == 0 and serial == FLOOR_SERIAL), serial
        # whatever it shows, it is a whole set: the catalog loads and agrees with its serial
        listed = m("list", "--available", "--json")
        assert listed.returncode == 0, listed.stderr
        assert m("update").returncode == 0
        assert m.serial() == target
    cur, sets = m.state()
    assert json.loads(cur)["set"] in sets  # sets younger than an hour are kept for readers
    assert leftovers(m.root) == []


def test_two_updates_at_once_make_one_switch(chan):
    m = chan.machine
    procs = [m.popen("update", "--json") for _ in range(2)]
    outs = [p.communicate() for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    states = sorted(json.loads(o[0])["state"] for o in outs)
    assert states == ["up_to_date", "updated"], outs  # the serial is checked again under the lock
    cur, sets = m.state()
    assert len(sets) == 1 and json.loads(cur)["serial"] == NEW_SERIAL
    assert leftovers(m.root) == []


def test_a_fleet_host_updates_from_its_mirror_with_no_route_to_the_channel(chan):
    admin = chan.machine
    assert admin("update").returncode == 0
    fleet = chan.tmp / "fleet-mirror"
    res = admin("mirror", "13.4+cudnn-9.27", "--to", str(fleet), "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["channel"] == "cudaenv-channel/manifests.bundle"
    assert (fleet / "cudaenv-channel" / "manifests.bundle").read_bytes() == chan.good
    assert admin("mirror", "--verify", str(fleet)).returncode == 0
    # a host that only knows its mirror: no `channel =`, and the default channel unreachable here
    host = Machine(chan.tmp, "fleet-host", chan.floor, f"mirror = {chan.nginx.url('/fleet')}\n", [chan.pub])
    before = len(chan.nginx.requests())
    res = host("update")
    assert res.returncode == 0, res.stderr
    assert host.serial() == NEW_SERIAL
    asked = [r[0] for r in chan.nginx.requests()[before:]]
    # the root metadata's next version first (none here: the keys did not change), then the bundle
    assert asked == ["/fleet/cudaenv-channel/root/2.root", "/fleet/cudaenv-channel/manifests.bundle"], asked
    got = host("install", "13.4+cudnn-9.27")
    assert got.returncode == 0, got.stderr
    assert all(r[0].startswith("/fleet/") for r in chan.nginx.requests()[before:])
    # the mirror's copy replaced by an older signed bundle: the host refuses to go back
    older = make_bundle(chan.floor, chan.secret, chan.tmp / "older.bundle")
    shutil.copy(older, fleet / "cudaenv-channel" / "manifests.bundle")
    res = host("update")
    assert res.returncode == 4 and "older than the serial in use" in res.stderr, res.stderr
    assert host.serial() == NEW_SERIAL


def test_the_machine_wide_update_reaches_every_user(chan):
    m = chan.machine
    machine_root = m.sysroot / "opt" / "cudaenv"
    if os.geteuid() != 0:
        pytest.skip("the machine-wide root is root's")
    res = m.as_root("update", env={"CUDAENV_ROOT": ""})
    assert res.returncode == 0, res.stderr
    assert (machine_root / "manifests" / "current.json").exists()
    # a user's root sees the machine-wide set (an upstream) without updating itself
    assert m.serial() == NEW_SERIAL
    assert m("resolve", "13.4+cudnn-9.27").returncode == 0
    assert not (m.root / "manifests" / "current.json").exists()


def test_version_says_when_the_manifests_are_old(chan):
    m = chan.machine
    (m.sysroot / "floor" / "release.json").write_text(json.dumps(
        {"schema": "cudaenv.manifest/1", "kind": "release", "serial": FLOOR_SERIAL,
         "created": "2025-01-01T00:00:00Z", "requires": "0.1.0"}))
    out = m("--version").stdout
    assert "manifests serial: 100 (shipped, made 2025-01-01)" in out
    assert "days old (serial 100): run `cudaenv update`" in out


def test_a_link_planted_as_the_roots_manifests_folder_is_refused(chan):
    m = chan.machine
    outside = chan.tmp / "outside"
    outside.mkdir()
    (outside / "theirs").write_text("theirs\n")
    m.root.mkdir(parents=True)
    (m.root / "manifests").symlink_to(outside, target_is_directory=True)
    res = m("update")
    assert res.returncode == 5 and "that cudaenv did not make" in res.stderr, res.stderr
    assert sorted(p.name for p in outside.iterdir()) == ["theirs"]
    # and a reader never follows it to a set someone else wrote there
    (outside / "current.json").write_text(json.dumps(
        {"schema": "cudaenv.manifests/1", "set": "999-aaaaaaaaaaaa", "serial": 999, "sha256": "",
         "channel": "", "updated": ""}))
    shutil.copytree(chan.newer, outside / "999-aaaaaaaaaaaa")
    (outside / "999-aaaaaaaaaaaa" / "release.json").write_text(json.dumps(
        {"schema": "cudaenv.manifest/1", "kind": "release", "serial": 999, "created": "2026-12-01T00:00:00Z",
         "requires": "0.1.0"}))
    assert m.serial() == FLOOR_SERIAL
    assert "is a link that cudaenv did not make (passed over)" in m("--version").stdout


def test_a_bundle_whose_serial_runs_ahead_or_that_lives_too_long_is_refused(chan):
    m = chan.machine
    work = chan.tmp / "forge"
    work.mkdir()
    good = chan.served / "manifests.bundle"
    for changes, words in (({"serial": 99999999999}, "runs ahead of its creation day"),
                           ({"expires": "2030-01-01T00:00:00Z"}, "more than 400 days"),
                           ({"created": "2030-01-01T00:00:00Z", "expires": "2030-02-01T00:00:00Z"},
                            "made in the future")):
        (chan.served / "manifests.bundle").write_bytes(forge(good, chan.secret, chan.pub, work, **changes))
        res = m("update")
        assert res.returncode == 4 and words in res.stderr, res.stderr
        (chan.served / "manifests.bundle").write_bytes(chan.good)
    assert m.state() == (None, [])


def test_a_set_signed_by_a_key_no_longer_trusted_does_not_hold_the_host(chan):
    """A key is compromised (or a signer erred) and the bad bundle is in use with a high serial:
    once the key is removed, the next update replaces it with the good, lower-serialled one."""
    m = chan.machine
    bad = with_release(chan.newer, chan.tmp / "bad", 2026120150)
    shutil.copy(chan.tmp / "other.pub", m.sysroot / "etc/cudaenv/keys/other.pub")
    make_bundle(bad, chan.other_secret, chan.served / "manifests.bundle")
    assert m("update").returncode == 0 and m.serial() == 2026120150
    (chan.served / "manifests.bundle").write_bytes(chan.good)  # serial 101, the site's key
    res = m("update")
    assert res.returncode == 4 and "older than the serial in use" in res.stderr, res.stderr
    (m.sysroot / "etc/cudaenv/keys/other.pub").unlink()
    res = m("update", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["state"] == "updated" and doc["before"]["serial"] == FLOOR_SERIAL
    # the set the removed key signed is cleared from the root, and said
    assert any("removed the manifests set serial 2026120150" in n and "signed by a key" in n
               for n in doc["notes"]), doc["notes"]
    assert m.serial() == NEW_SERIAL


def test_the_mirror_carries_the_channels_bundle_even_when_its_own_floor_is_newer(chan):
    """The mirror machine's package was upgraded (its floor now outranks the channel's set): the
    hosts it serves may run older packages, so the channel's bundle is still carried."""
    m = chan.machine
    assert m("update").returncode == 0
    release = json.loads((m.sysroot / "floor" / "release.json").read_text())
    release["serial"] = NEW_SERIAL + 50
    (m.sysroot / "floor" / "release.json").write_text(json.dumps(release))
    assert m.serial() == NEW_SERIAL + 50  # the newer floor wins here
    fleet = chan.tmp / "fleet-mirror"
    res = m("mirror", "11.8", "--to", str(fleet), "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["channel"] == "cudaenv-channel/manifests.bundle"
    assert (fleet / "cudaenv-channel" / "manifests.bundle").read_bytes() == chan.good
    # with a given manifests directory nothing is carried, and the mirror says why
    res = m("mirror", "11.8", "--to", str(chan.tmp / "other-mirror"), env={"CUDAENV_MANIFESTS": str(chan.floor)})
    assert res.returncode == 0 and "no update channel bundle carried" in res.stderr, res.stderr
    assert not (chan.tmp / "other-mirror" / "cudaenv-channel").exists()
