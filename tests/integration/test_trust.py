"""The channel's trust, attacked for real (docs/channel.md, "Threat model").

A site channel with its own root metadata (/etc/cudaenv/channel.root: root key A, bundle key B)
served on loopback by a fault-injecting server; bundles and root metadata made by cudaenv's own
maintainer commands, and the shapes those refuse to make forged with the openssl command line.
Each test mounts one attack -- a rotation that lacks a signature, a dropped or revoked key whose
set is still in use, a changed pin, a payload nested two million levels deep, a member named
twice, a channel that drips, a clock years off (faketime), a root process pointed at a test's
keys, a floor after a purge -- and checks the exit code, the message and what stays in use.
"""
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import AS_USER, EXE, MachineNamespace, Result
from fault_server import FaultServer
from test_update import Machine, key_id, openssl_sign, with_release

FLOOR = 100
# ASan's and TSan's shadow memory counts in a process's RSS: the memory bound is cudaenv's own
# only in a plain build
SANITIZED = os.environ.get("CUDAENV_TEST_SANITIZED") == "1"


def faketime(clock):
    """argv and environment additions for a clock `clock` away (libfaketime, LD_PRELOAD'ed: under
    ASan the runtime must be told the preload is expected)."""
    env = {}
    if SANITIZED:
        env["ASAN_OPTIONS"] = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS", ""),
                                                     "verify_asan_link_order=0"]))
    return ["faketime", "-f", clock], env


def assert_one_line_error(res, code):
    """conftest's error contract, for a subprocess.CompletedProcess."""
    from conftest import assert_one_line_error as check
    check(Result(res), code)


def cudaenv(*args):
    res = subprocess.run([EXE, *args], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return res


class Channel:
    """Keys, a served channel folder and a host that follows it."""

    def __init__(self, tmp, fixture_dir, newer_fixture_dir):
        self.tmp = tmp
        self.keys = tmp / "keys"
        self.keys.mkdir()
        for k in "ABCDEK":
            cudaenv("__bundle", "keygen", "--out", str(self.keys / k), "--comment", f"test key {k}")
        self.floor = with_release(fixture_dir / "manifests", tmp / "floor", FLOOR)
        self.newer_src = newer_fixture_dir / "manifests"
        self.served = tmp / "channel"
        (self.served / "root").mkdir(parents=True)
        self.srv = FaultServer(self.served, newer_fixture_dir / "mirror")
        self.host = Machine(tmp, "host", self.floor, f"channel = {self.srv.url}\n", [])
        self.host.env["CUDAENV_MIRROR"] = self.srv.url
        self.root(1, root=["A"], bundle=["B"], sign=["A"], out=self.host.sysroot / "etc/cudaenv/channel.root")

    def pub(self, k):
        return str(self.keys / f"{k}.pub")

    def secret(self, k):
        return str(self.keys / f"{k}.secret")

    def root(self, version, root, bundle, sign, root_threshold=1, bundle_threshold=1, out=None, extra=()):
        out = out or self.served / "root" / f"{version}.root"
        args = ["__bundle", "root", "--version", str(version), "--out", str(out),
                "--root-threshold", str(root_threshold), "--bundle-threshold", str(bundle_threshold), *extra]
        for k in root:
            args += ["--root-key", self.pub(k)]
        for k in bundle:
            args += ["--bundle-key", self.pub(k)]
        for k in sign:
            args += ["--sign", self.secret(k)]
        cudaenv(*args)
        return out

    def bundle(self, serial, *keys, files=None, out=None):
        """A bundle of the newer fixture manifests at `serial`, signed by `keys`."""
        src = self.tmp / f"set-{serial}"
        if not src.exists():
            with_release(self.newer_src, src, serial)
        for rel, text in (files or {}).items():
            (src / rel).write_text(text)
        out = out or self.served / "manifests.bundle"
        args = ["__bundle", "make", "--from", str(src), "--out", str(out)]
        for k in keys:
            args += ["--key", self.secret(k)]
        cudaenv(*args)
        return out

    def trust_dir(self):
        return self.host.root / "trust"

    def close(self):
        self.host.close()
        self.srv.close()


@pytest.fixture
def ch(fixture_dir, newer_fixture_dir, tmp_path):
    c = Channel(tmp_path, fixture_dir, newer_fixture_dir)
    yield c
    c.close()


def serial(m):
    return m.serial()


def warnings_of(m):
    res = m("--version")
    return [l for l in res.stdout.splitlines() if l.startswith("warning: ")]


def recorded_roots(ch):
    return sorted(p.name for p in ch.trust_dir().glob("*/roots/*.root"))


def sign_payload(payload, signers, fmt, work):
    """An envelope around `payload` (bytes) signed by openssl with each (secret, pub)."""
    head = fmt + "\n"
    message = fmt.encode() + b"\n" + payload
    for secret, pub in signers:
        head += f"signature {key_id(pub)} {openssl_sign(secret, message, work)}\n"
    return head.encode() + b"\n" + payload


# -- keys: rotation, thresholds, revocation ---------------------------------------------------


def test_keys_rotate_through_the_channel_and_a_dropped_key_stops_counting(ch):
    m = ch.host
    ch.bundle(101, "B")
    assert m("update").returncode == 0 and serial(m) == 101
    # version 2: root keys A and C (two must sign), bundles signed by D
    ch.root(2, root=["A", "C"], bundle=["D"], sign=["A", "C"], root_threshold=2)
    ch.bundle(102, "D")
    check = m("update", "--check", "--json")
    assert check.returncode == 0, check.stderr
    doc = json.loads(check.stdout)
    assert doc["roots_taken"] == [2] and doc["state"] == "available"
    assert recorded_roots(ch) == [] and serial(m) == 101  # --check writes nothing
    res = m("update")
    assert res.returncode == 0, res.stderr
    assert "took the channel's root metadata version 2" in res.stdout
    assert recorded_roots(ch) == ["2.root"] and serial(m) == 102
    # version 3 drops D: the bundle D signed is refused, and the set D signed stops being used at once
    ch.root(3, root=["A", "C"], bundle=["E"], sign=["A", "C"], root_threshold=2)
    res = m("update")
    assert_one_line_error(res, 4)
    assert "signed by no key this machine trusts" in res.stderr
    assert recorded_roots(ch) == ["2.root", "3.root"]  # the revocation took effect all the same
    # the set D signed was cleared from the root: nothing of it is used
    assert not (m.root / "manifests" / "current.json").exists()
    assert serial(m) == FLOOR
    resolve = m("resolve", "13.4+cudnn-9.27")
    assert resolve.returncode == 9, resolve.stderr
    ch.bundle(103, "E")
    assert m("update").returncode == 0 and serial(m) == 103


@pytest.mark.parametrize("case", ["one-of-two", "new-keys-only", "skips-a-version", "expired",
                                  "unknown-field", "not-the-next-version-number"])
def test_root_metadata_that_does_not_follow_is_refused_and_nothing_is_taken(ch, case):
    m = ch.host
    ch.bundle(101, "B")
    assert m("update").returncode == 0
    work = ch.tmp / "forge"
    work.mkdir()
    two = ch.served / "root" / "2.root"
    if case == "one-of-two":  # the new root needs A and C; only A signed
        ch.root(2, root=["A", "C"], bundle=["D"], sign=["A"], root_threshold=2)
        want = "signed by 1 of the 2 keys root metadata version 2's own requires"
    elif case == "new-keys-only":  # the keys trusted now did not agree
        ch.root(2, root=["C"], bundle=["D"], sign=["C"])
        want = "signed by no key this machine trusts"
    elif case == "skips-a-version":
        ch.root(3, root=["A"], bundle=["D"], sign=["A"], out=two)
        want = "is version 3 where version 2 was asked for"
    elif case == "not-the-next-version-number":
        ch.root(1, root=["A"], bundle=["D"], sign=["A"], out=two)
        want = "is version 1 where version 2 was asked for"
    elif case == "expired":
        ch.root(2, root=["A"], bundle=["D"], sign=["A"],
                extra=["--created", "2026-01-01T00:00:00Z", "--valid-days", "30"])
        want = "expired on 2026-01-31T00:00:00Z"
    else:
        ch.root(2, root=["A"], bundle=["D"], sign=["A"])
        head, payload = two.read_bytes().split(b"\n\n", 1)
        doc = json.loads(payload)
        doc["roles"]["mirror"] = {"keys": [], "threshold": 1}
        two.write_bytes(sign_payload(json.dumps(doc).encode(), [(ch.secret("A"), ch.pub("A"))],
                                     "cudaenv-root/1", work))
        want = "'roles' has the field 'mirror', which this schema does not have"
    ch.bundle(102, "D")
    res = m("update")
    assert_one_line_error(res, 4)
    assert want in res.stderr, res.stderr
    if case != "expired":
        assert recorded_roots(ch) == []
    assert serial(m) == 101


def test_a_bundle_needs_as_many_signatures_as_the_root_metadata_asks(ch):
    m = ch.host
    ch.root(2, root=["A"], bundle=["D", "E"], sign=["A"], bundle_threshold=2)
    ch.bundle(101, "D")
    res = m("update")
    assert_one_line_error(res, 4)
    assert "signed by 1 of the 2 keys root metadata version 2 requires" in res.stderr
    assert serial(m) == FLOOR
    ch.bundle(101, "D", "E")
    assert m("update").returncode == 0 and serial(m) == 101


def test_a_key_this_machine_revokes_counts_no_more_at_once(ch):
    """A site key leaks: the administrator revokes it on the machine (keys/<name>.revoked) before
    any new root metadata exists. A set it signed is no longer used and no bundle it signs is
    taken; a root metadata version it signs is refused too."""
    m = ch.host
    keys = m.sysroot / "etc/cudaenv/keys"
    shutil.copy(ch.pub("K"), keys / "K.pub")
    ch.bundle(105, "K")
    assert m("update").returncode == 0 and serial(m) == 105
    (keys / "K.pub").rename(keys / "K.revoked")
    # no command uses the set K signed from now on, before any update: --version, the doctor,
    # resolve, install
    assert serial(m) == FLOOR
    assert any("is not used: signed by a key this machine has revoked" in w for w in warnings_of(m)), \
        warnings_of(m)
    doctor = m("doctor", "--only", "cudaenv", "--json")
    assert "signed by a key this machine has revoked" in doctor.stdout, doctor.stdout
    assert m("resolve", "13.4+cudnn-9.27").returncode == 9
    assert m("install", "13.4+cudnn-9.27").returncode == 9
    res = m("update")
    assert_one_line_error(res, 4)
    assert "no longer trusts (revoked)" in res.stderr
    # the set it signed was cleared from the root meanwhile
    assert not (m.root / "manifests" / "current.json").exists()
    # even the channel's own root key, revoked here, signs no new root metadata
    shutil.copy(ch.pub("A"), keys / "A.revoked")
    ch.root(2, root=["A"], bundle=["B"], sign=["A"])
    ch.bundle(106, "B")
    res = m("update")
    assert_one_line_error(res, 4)
    assert "revoked" in res.stderr and recorded_roots(ch) == []


# -- pins ------------------------------------------------------------------------------------


def change_a_pin(manifests):
    """The sha256 of CUDA 11.8.0's cudart archive in `manifests`, changed; returns (path, old, new)."""
    f = manifests / "cuda" / "11.8.0.json"
    doc = json.loads(f.read_text())
    a = doc["components"]["cuda_cudart"]["platforms"]["linux-x86_64"]
    old, new = a["sha256"], "e" * 64
    a["sha256"] = new
    f.write_text(json.dumps(doc, indent=2))
    return a["path"], old, new


def test_a_changed_pin_must_be_declared_and_is_named(ch):
    m = ch.host
    src = with_release(ch.newer_src, ch.tmp / "set-101", 101)
    path, old, new = change_a_pin(src)
    ch.bundle(101, "B")
    res = m("update", "--check")
    assert_one_line_error(res, 4)
    assert f"changes the sha256 pinned for {path} (CUDA 11.8.0 cuda_cudart linux-x86_64) from {old} to {new} " \
           "without declaring it" in res.stderr
    assert serial(m) == FLOOR
    repins = {"schema": "cudaenv.manifest/1", "kind": "repins", "repins": [
        {"path": path, "was": old, "now": new, "date": "2026-12-07", "reason": "NVIDIA republished the archive"}]}
    ch.bundle(101, "B", files={"repins.json": json.dumps(repins)})
    res = m("update", "--check")
    assert res.returncode == 0, res.stderr
    assert f"repinned {path}: CUDA 11.8.0 cuda_cudart linux-x86_64: sha256 {old[:12]}... -> " \
           f"{new[:12]}... (2026-12-07: NVIDIA republished the archive)" in res.stdout
    res = m("update", "--json")
    doc = json.loads(res.stdout)
    assert any(c["kind"] == "repinned" and c["subject"] == path for c in doc["changes"]), doc["changes"]


def test_the_maintainer_cannot_sign_an_undeclared_pin_change(ch):
    """`__bundle make --previous DIR` checks what hosts will check, before anything is signed."""
    src = with_release(ch.newer_src, ch.tmp / "set-101", 101)
    path, old, new = change_a_pin(src)
    out = ch.tmp / "refused.bundle"
    res = subprocess.run([EXE, "__bundle", "make", "--from", str(src), "--key", ch.secret("B"), "--out", str(out),
                          "--previous", str(ch.floor)], capture_output=True, text=True, timeout=60)
    assert_one_line_error(res, 2)
    assert f"refusing to sign: {path} (CUDA 11.8.0 cuda_cudart linux-x86_64) changes from {old} to {new}" \
        in res.stderr
    assert not out.exists()
    (src / "repins.json").write_text(json.dumps({"schema": "cudaenv.manifest/1", "kind": "repins", "repins": [
        {"path": path, "was": old, "now": new, "date": "2026-12-07", "reason": "republished"}]}))
    res = subprocess.run([EXE, "__bundle", "make", "--from", str(src), "--key", ch.secret("B"), "--out", str(out),
                          "--previous", str(ch.floor)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("how", ["moved", "url-elsewhere"])
def test_a_pin_moved_with_its_hash_is_still_a_changed_pin(ch, how):
    """A signer changes a hash and the archive's place with it (another path, or a URL on another
    host): the pin is the same pin, known by what it is, and the change must be declared."""
    m = ch.host
    src = with_release(ch.newer_src, ch.tmp / "set-101", 101)
    f = src / "cuda" / "11.8.0.json"
    doc = json.loads(f.read_text())
    a = doc["components"]["cuda_cudart"]["platforms"]["linux-x86_64"]
    if how == "moved":
        a["path"] = a["path"].replace("-archive.tar.xz", "-archive-1.tar.xz")
    else:
        del a["path"]
        a["url"] = "https://elsewhere.example/cuda_cudart.tar.xz"
    a["sha256"] = "e" * 64
    f.write_text(json.dumps(doc, indent=2))
    ch.bundle(101, "B")
    res = m("update", "--check")
    assert_one_line_error(res, 4)
    assert "(CUDA 11.8.0 cuda_cudart linux-x86_64)" in res.stderr and "without declaring it" in res.stderr


def test_a_release_dropped_and_added_back_with_another_hash_is_a_changed_pin(ch):
    """Laundering a pin in two steps: one bundle drops CUDA 11.8.0 (allowed), the next adds it back
    with another hash. The host's pin history remembers what it pinned."""
    m = ch.host
    src = with_release(ch.newer_src, ch.tmp / "set-101", 101)
    (src / "cuda" / "11.8.0.json").unlink()
    ch.bundle(101, "B")
    res = m("update")
    assert res.returncode == 0 and "removed  CUDA 11.8.0" in res.stdout, (res.stdout, res.stderr)
    back = with_release(ch.newer_src, ch.tmp / "set-102", 102)
    change_a_pin(back)
    ch.bundle(102, "B")
    res = m("update")
    assert_one_line_error(res, 4)
    assert "(CUDA 11.8.0 cuda_cudart linux-x86_64)" in res.stderr and "without declaring it" in res.stderr
    assert serial(m) == 101


def test_a_pin_of_a_release_known_only_by_its_index_is_named_too(ch):
    """CUDA 13.1.0 and cuDNN 9.7.0 are known to the real manifests only by their index's sha256:
    the pin install trusts first. Changing it is a change like any other."""
    m = ch.host
    def indexes(sha):
        return json.dumps({"schema": "cudaenv.manifest/1", "kind": "indexes", "cuda": [], "cudnn": [
            {"version": "9.7.0", "path": "cudnn/redist/redistrib_9.7.0.json", "sha256": sha}]})
    (m.sysroot / "floor" / "indexes.json").write_text(indexes("a" * 64))
    ch.bundle(101, "B", files={"indexes.json": indexes("b" * 64)})
    res = m("update", "--check")
    assert_one_line_error(res, 4)
    assert "cudnn/redist/redistrib_9.7.0.json (cuDNN 9.7.0 index (known by its index))" in res.stderr


# -- shape, size, time ---------------------------------------------------------------------


def forged_bundle(ch, payload_text):
    work = ch.tmp / "forge"
    work.mkdir(exist_ok=True)
    return sign_payload(payload_text.encode(), [(ch.secret("B"), ch.pub("B"))], "cudaenv-bundle/1", work)


def good_payload(ch, serial=101):
    out = ch.bundle(serial, "B", out=ch.tmp / "good.bundle")
    return json.loads(out.read_bytes().split(b"\n\n", 1)[1])


@pytest.mark.parametrize("case", ["member-twice", "nested-two-million", "unknown-field", "file-nested"])
def test_a_signed_bundle_is_read_exactly_and_within_bounds(ch, case):
    m = ch.host
    doc = good_payload(ch)
    if case == "member-twice":
        # the second profiles.json would win in a lax reader
        text = json.dumps(doc)
        text = text.replace('"files": {', '"files": {"profiles.json": "{}", ', 1)
        want = "the key 'profiles.json' is given twice in one object"
    elif case == "nested-two-million":
        text = json.dumps(doc)[:-1] + ', "x": ' + "[" * 2_000_000 + "]" * 2_000_000 + "}"
        want = "nested deeper than 8 levels"
    elif case == "unknown-field":
        doc["mirrors"] = ["http://elsewhere"]
        text = json.dumps(doc)
        want = "its payload has the field 'mirrors', which this schema does not have"
    else:
        doc["files"]["cuda/99.0.0.json"] = "[" * 100 + "]" * 100
        text = json.dumps(doc)
        want = "file 'cuda/99.0.0.json': nested deeper than 16 levels"
    (ch.served / "manifests.bundle").write_bytes(forged_bundle(ch, text))
    t = time.monotonic()
    # the child's own peak memory, from /usr/bin/time (a lax parser took 167 MB for the deep one)
    res = subprocess.run([*AS_USER, "/usr/bin/time", "-q", "-f", "maxrss_kib=%M", EXE, "update"], env=dict(m.env),
                         capture_output=True, text=True, timeout=60)
    took = time.monotonic() - t
    lines = res.stderr.strip().splitlines()
    peak_kib = int(lines[-1].split("=")[1])
    res.stderr = "\n".join(lines[:-1]) + "\n"
    assert_one_line_error(res, 4)
    assert want in res.stderr, res.stderr
    assert took < 10 and (SANITIZED or peak_kib < 64 * 1024), (took, peak_kib)
    assert serial(m) == FLOOR


def test_a_bundle_over_the_size_cap_and_an_endless_answer_are_refused(ch):
    m = ch.host
    doc = good_payload(ch)
    doc["files"]["profiles.json"] += " " * (9 << 20)
    (ch.served / "manifests.bundle").write_bytes(forged_bundle(ch, json.dumps(doc)))
    res = m("update")
    assert_one_line_error(res, 4)
    assert "is larger than 8388608 bytes" in res.stderr
    ch.srv.fault("/manifests.bundle", {"kind": "endless"})
    t = time.monotonic()
    res = m("update")
    assert_one_line_error(res, 4)
    assert "is larger than 8388608 bytes" in res.stderr and time.monotonic() - t < 15
    assert serial(m) == FLOOR


def test_a_channel_that_drips_is_given_up_at_the_deadline(ch):
    m = ch.host
    ch.bundle(101, "B")
    # 2 KiB/s: above the stall floor (1 KiB/s), so only the overall deadline stops it
    ch.srv.fault("/manifests.bundle", {"kind": "drip", "rate": 2048, "secs": 60})
    t = time.monotonic()
    res = m("update", env={"CUDAENV_CHANNEL_TIMEOUT": "3", "CUDAENV_STALL_TIMEOUT": "30"})
    took = time.monotonic() - t
    assert_one_line_error(res, 3)
    assert "did not finish in time (3 s, CUDAENV_CHANNEL_TIMEOUT)" in res.stderr
    assert 2.5 < took < 8, took
    assert serial(m) == FLOOR


def test_mixed_and_redirected_bundles_are_refused(ch):
    m = ch.host
    a = ch.bundle(101, "B", out=ch.tmp / "a.bundle").read_bytes()
    b = ch.bundle(102, "B", out=ch.tmp / "b.bundle").read_bytes()
    # one bundle's signature over another's payload: mix-and-match
    (ch.served / "manifests.bundle").write_bytes(a.split(b"\n\n", 1)[0] + b"\n\n" + b.split(b"\n\n", 1)[1])
    res = m("update")
    assert_one_line_error(res, 4)
    assert "does not verify" in res.stderr
    # a redirect to a copy signed by a key this machine does not trust
    elsewhere = ch.tmp / "elsewhere"
    elsewhere.mkdir()
    ch.bundle(103, "K", out=elsewhere / "manifests.bundle")
    other = FaultServer(elsewhere)
    try:
        ch.srv.fault("/manifests.bundle", {"kind": "redirect", "to": other.url + "/manifests.bundle"})
        res = m("update")
        assert_one_line_error(res, 4)
        assert "signed by no key this machine trusts" in res.stderr
    finally:
        other.close()
    assert serial(m) == FLOOR


@pytest.mark.skipif(not shutil.which("faketime"), reason="faketime is not installed")
@pytest.mark.parametrize("clock,want", [("+3y", "expired on"), ("-2y", "made in the future")])
def test_a_clock_far_ahead_or_behind_takes_no_bundle(ch, clock, want):
    m = ch.host
    ch.bundle(101, "B")
    argv, extra = faketime(clock)
    res = subprocess.run([*AS_USER, *argv, EXE, "update"], env=dict(m.env, **extra), capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 4, res.stderr
    assert want in res.stderr, res.stderr
    assert serial(m) == FLOOR


@pytest.mark.skipif(not shutil.which("faketime"), reason="faketime is not installed")
def test_root_metadata_past_its_expiry_freezes_no_host_silently(ch):
    """A channel whose root metadata was not re-signed: a host years later takes no bundle, and
    says why (a frozen channel), rather than trusting keys nobody vouches for any more."""
    m = ch.host
    ch.root(2, root=["A"], bundle=["B"], sign=["A"], extra=["--valid-days", "30"])
    ch.bundle(101, "B")
    argv, extra = faketime("+60d")
    res = subprocess.run([*AS_USER, *argv, EXE, "update"], env=dict(m.env, **extra),
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 4, res.stderr
    assert "root metadata (version 2" in res.stderr and "expired on" in res.stderr
    assert serial(m) == FLOOR


# -- where trust lives: root, the environment, the floor -----------------------------------


def test_a_root_process_takes_no_trust_from_the_environment(ch):
    """sudo -E or a CI job: CUDAENV_SYSROOT points a root cudaenv at a folder whose keys and
    channel.root the caller chose. Root reads the machine's own (here: none) and refuses."""
    if os.geteuid() != 0:
        pytest.skip("needs root")
    m = ch.host
    shutil.copy(ch.pub("K"), m.sysroot / "etc/cudaenv/keys/K.pub")
    ch.bundle(101, "K")
    machine = ch.tmp / "the-machine"
    ns = MachineNamespace(ch.tmp / "ns-empty", machine)  # the machine's /etc/cudaenv: empty
    try:
        res = subprocess.run([*ns.prefix, EXE, "update"], env=dict(m.env), capture_output=True, text=True,
                             timeout=60)
        assert_one_line_error(res, 4)
        assert "signed by no key this machine trusts" in res.stderr
        assert not list((machine / "var/lib/cudaenv").rglob("*"))  # nothing recorded
        assert not (m.root / "manifests" / "current.json").exists()
        # nor does a root process take manifests anyone else could have written: a set planted in
        # a machine-wide root under the sysroot, claiming the release key, or a folder given to it
        planted = m.sysroot / "opt/cudaenv/manifests"
        shutil.copytree(ch.newer_src, planted / "2026120799-aaaaaaaaaaaa")
        (planted / "2026120799-aaaaaaaaaaaa" / "release.json").write_text(json.dumps(
            {"schema": "cudaenv.manifest/1", "kind": "release", "serial": 2026120799,
             "created": "2026-12-07T00:00:00Z", "requires": "0.1.0",
             "signed_by": [Path(ch.pub("A")).read_text().split()[1]]}))
        (planted / "current.json").write_text(json.dumps(
            {"schema": "cudaenv.manifests/1", "set": "2026120799-aaaaaaaaaaaa", "serial": 2026120799,
             "sha256": "0" * 64, "channel": "x", "updated": "2026-12-07T00:00:00Z"}))
        subprocess.run(["chown", "-R", "1000:1000", str(m.sysroot / "opt")], check=True)
        env = dict(m.env, CUDAENV_ROOT="")
        res = subprocess.run([*ns.prefix, EXE, "--version"], env=env, capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stderr
        assert "manifests serial: 100 (shipped" in res.stdout, res.stdout
        assert "owned by uid 1000" in res.stdout and "root alone can write" in res.stdout, res.stdout
        given = dict(m.env, CUDAENV_MANIFESTS=str(planted / "2026120799-aaaaaaaaaaaa"))
        res = subprocess.run([*ns.prefix, EXE, "resolve", "tf-2.13"], env=given, capture_output=True, text=True,
                             timeout=60)
        assert_one_line_error(res, 2)
        assert "refusing the manifests" in res.stderr and "owned by uid 1000" in res.stderr
    finally:
        ns.close()
    # the same command as an ordinary user, whose sysroot is its own business, takes it
    assert m("update").returncode == 0 and serial(m) == 101


def test_the_rollback_floor_outlives_a_purge_and_judges_users_too(ch):
    """Root takes serial 102 into the machine-wide root; the package is purged and reinstalled
    (the machine-wide root is gone); the channel -- or a mirror -- serves serial 101 again: it is
    refused against the floor in /var/lib/cudaenv/trust. A user's set signed by a key the machine
    later revokes does not outrank the machine's."""
    if os.geteuid() != 0:
        pytest.skip("needs root")
    m = ch.host
    machine_root = m.sysroot / "opt" / "cudaenv"
    ch.bundle(102, "B")
    res = m.as_root("update", env={"CUDAENV_ROOT": ""})
    assert res.returncode == 0, res.stderr
    floors = list((m.sysroot / "var/lib/cudaenv/trust").glob("*/floor.json"))
    assert len(floors) == 1 and json.loads(floors[0].read_text())["serial"] == 102
    shutil.rmtree(machine_root)  # what `apt purge` removes; /var/lib/cudaenv/trust stays
    ch.bundle(101, "B")
    res = m.as_root("update", env={"CUDAENV_ROOT": ""})
    assert_one_line_error(res, 4)
    assert "older than serial 102 this machine took" in res.stderr and "rollback floor" in res.stderr
    # a user took a bundle a leaked site key signed; the machine revokes the key and moves on
    keys = m.sysroot / "etc/cudaenv/keys"
    shutil.copy(ch.pub("K"), keys / "K.pub")
    ch.bundle(2026120150, "K")
    assert m("update").returncode == 0 and serial(m) == 2026120150
    (keys / "K.pub").rename(keys / "K.revoked")
    ch.bundle(103, "B")
    assert m.as_root("update", env={"CUDAENV_ROOT": ""}).returncode == 0
    assert serial(m) == 103  # the user's leaked set no longer outranks the machine's
    # the revocation outlives /etc/cudaenv (what a purge removes): root's update recorded it
    (keys / "K.revoked").unlink()
    assert list((m.sysroot / "var/lib/cudaenv/trust/revoked").glob("*.revoked"))
    ch.bundle(104, "K")
    res = m.as_root("update", env={"CUDAENV_ROOT": ""})
    assert_one_line_error(res, 4)
    assert "no longer trusts (revoked)" in res.stderr
    assert serial(m) == 103
    ch.bundle(103, "B")
    res = m("update")
    assert res.returncode == 0 and "up to date" in res.stdout, res.stderr
    assert "removed the manifests set serial 2026120150" in res.stderr
    assert not (m.root / "manifests" / "current.json").exists()
