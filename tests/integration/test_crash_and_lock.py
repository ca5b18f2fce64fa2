"""kill -9 at failpoints (F7-F9), and the lock (C1, C3-C5)."""
import json
import os
import subprocess
import time

import pytest

from conftest import PLATFORM, EXE, assert_one_line_error, component_path, leftovers, snapshot

TF213 = "11.8.0+cudnn8.6.0.163"


@pytest.mark.parametrize("point", ["download-half", "extract-midway", "publish-before"])
def test_kill_before_publish_leaves_nothing_visible_and_the_rerun_completes(inst, point):
    res = inst("install", "tf-2.13", env={"CUDAENV_FAILPOINTS": f"{point}:kill"})
    assert res.rc == -9, res
    assert not (inst.root / "versions" / PLATFORM / TF213).exists()
    assert "versions" not in inst("list", "--json").json() or inst("list", "--json").json()["versions"] == []
    res = inst("install", "tf-2.13", "--json")
    assert res.rc == 0, res
    assert res.json()["changed"] is True
    assert leftovers(inst.root) == []
    again = inst("install", "tf-2.13", "--json")
    assert again.rc == 0 and again.json()["changed"] is False


def test_kill_during_download_resumes(inst):
    inst.env["CUDAENV_FAILPOINTS"] = "download-half:kill"
    inst.env["CUDAENV_RETRIES"] = "0"
    assert inst("install", "11.8", "--jobs", "1").rc == -9
    partials = [p for p in leftovers(inst.root) if p.endswith(".partial")]
    assert partials
    del inst.env["CUDAENV_FAILPOINTS"]
    inst.server.clear()
    assert inst("install", "11.8", "--jobs", "1").rc == 0
    # the killed download (the first component, cuda_cudart: 600 KiB) resumes where it stopped
    first = component_path(inst.fixture, "11.8.0", "cuda_cudart")
    ranges = [r for p, r in inst.server.requests if p == first]
    assert len(ranges) == 1 and ranges[0].startswith("bytes=") and ranges[0] != "bytes=0-", ranges
    assert leftovers(inst.root) == []


def test_kill_right_after_publish_leaves_a_complete_version(inst):
    res = inst("install", "tf-2.13", env={"CUDAENV_FAILPOINTS": "publish-after:kill"})
    assert res.rc == -9
    assert (inst.root / "versions" / PLATFORM / TF213 / ".cudaenv-version.json").is_file()
    again = inst("install", "tf-2.13", "--json")
    assert again.rc == 0 and again.json()["changed"] is False


def spawn(inst, *args, env=None):
    e = dict(inst.env)
    e.update(env or {})
    return subprocess.Popen([EXE, *args], env=e, cwd=inst.tmp, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_c1_two_identical_installs_one_installs_one_waits(inst):
    first = spawn(inst, "install", "tf-2.13", "--json", env={"CUDAENV_FAILPOINTS": "lock-acquired:sleep=2"})
    time.sleep(0.5)
    second = spawn(inst, "install", "tf-2.13", "--json")
    out1, err1 = first.communicate(timeout=60)
    out2, err2 = second.communicate(timeout=60)
    assert first.returncode == 0, err1
    assert second.returncode == 0, err2
    changed = sorted([json.loads(out1)["changed"], json.loads(out2)["changed"]])
    assert changed == [False, True]
    assert [p.name for p in (inst.root / "versions" / PLATFORM).iterdir()] == [TF213]


def test_c4_hung_holder_times_out_naming_its_pid(inst):
    holder = spawn(inst, "install", "11.8", env={"CUDAENV_FAILPOINTS": "lock-acquired:sleep=20"})
    try:
        time.sleep(1)
        res = inst("install", "tf-2.13", env={"CUDAENV_LOCK_TIMEOUT": "1"})
        assert_one_line_error(res, 75)
        assert f"PID {holder.pid}" in res.err
        assert "help:" in res.err
    finally:
        holder.kill()
        holder.wait()


def _wait_for_lock(path, timeout=10):
    st = os.stat(path)
    want = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    deadline = time.time() + timeout
    while time.time() < deadline:
        if any(want in line and "->" not in line for line in open("/proc/locks")):
            return
        time.sleep(0.05)
    raise AssertionError("the holder never took the lock")


@pytest.mark.parametrize("attack", ["delete", "replace", "replace-with-a-link"])
def test_c6_the_lock_cannot_be_lost_by_deleting_or_replacing_the_lock_file(inst, tmp_path, attack):
    """Once, deleting <root>/.lock while a run held it let a second run proceed beside the first."""
    inst.root.mkdir(parents=True)
    (inst.root / ".lock").write_text("")
    holder = spawn(inst, "rehash", env={"CUDAENV_FAILPOINTS": "lock-acquired:sleep=20"})
    try:
        _wait_for_lock(inst.root)
        lock = inst.root / ".lock"
        lock.unlink()
        if attack == "replace":
            lock.write_text("")
        elif attack == "replace-with-a-link":
            lock.symlink_to(tmp_path / "elsewhere")
        res = inst("rehash", env={"CUDAENV_LOCK_TIMEOUT": "1"})
        assert_one_line_error(res, 75)
        assert f"PID {holder.pid}" in res.err
    finally:
        holder.kill()
        holder.wait()


def test_c6_a_root_replaced_between_open_and_flock_is_locked_again(inst, tmp_path):
    """A run that opened the root, then found it replaced (moved aside and recreated) by the time
    it held the lock, locks the new one: where another run holds it, it waits like any other."""
    inst.root.mkdir(parents=True)
    late = spawn(inst, "rehash", env={"CUDAENV_FAILPOINTS": "lock-opened:sleep=2", "CUDAENV_LOCK_TIMEOUT": "2"})
    time.sleep(0.7)  # late has opened the old root and sleeps before flock
    inst.root.rename(tmp_path / "old-root")
    inst.root.mkdir()
    holder = spawn(inst, "rehash", env={"CUDAENV_FAILPOINTS": "lock-acquired:sleep=20"})
    try:
        _wait_for_lock(inst.root)
        out, err = late.communicate(timeout=30)
        assert late.returncode == 75, err
        assert f"PID {holder.pid}" in err
    finally:
        holder.kill()
        holder.wait()


def test_c5_stale_lock_file_is_no_obstacle(inst):
    inst.root.mkdir(parents=True)
    (inst.root / ".lock").write_text("12345\n")
    res = inst("install", "11.8", env={"CUDAENV_LOCK_TIMEOUT": "1"})
    assert res.rc == 0, res


def test_c3_uninstall_of_the_active_version_is_refused(inst):
    assert inst("install", "tf-2.13").rc == 0
    (inst.root / "state.json").write_text(json.dumps({"global": TF213}))
    before = snapshot(inst.root)
    assert_one_line_error(inst("uninstall", TF213), 7)
    assert snapshot(inst.root) == before


def test_insecure_root_is_refused(inst):
    inst.root.mkdir(parents=True)
    os.chmod(inst.root, 0o777)
    res = inst("install", "11.8")
    assert_one_line_error(res, 6)
    assert "anyone may write" in res.err


def test_a_resume_onto_a_changed_file_restarts_once_from_zero(inst, tmp_path):
    """The partial file is the start of a file the server no longer has: appending the rest of
    the new one can never match. Discard it, download once more from zero, and say so."""
    first = component_path(inst.fixture, "11.8.0", "cuda_cudart")
    good = (inst.fixture / "mirror" / first.lstrip("/")).read_bytes()
    old = tmp_path / "extra" / first.lstrip("/")
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_bytes(bytes(b ^ 0x5A for b in good))  # the file as it was: same size, other bytes
    inst.env["CUDAENV_RETRIES"] = "0"  # the restart must not depend on retries
    res = inst("install", "11.8", "--jobs", "1", env={"CUDAENV_FAILPOINTS": "download-half:kill"})
    assert res.rc == -9
    assert any(p.endswith(".partial") for p in leftovers(inst.root))
    old.unlink()  # the server now has the new file, the one the manifest pins
    inst.server.clear()
    res = inst("install", "11.8", "--jobs", "1")
    assert res.rc == 0, res
    assert "did not match the server's file" in res.err and "downloaded again from the start" in res.err
    ranges = [r for p, r in inst.server.requests if p == first]
    assert len(ranges) == 2 and ranges[0].startswith("bytes=") and ranges[0] != "bytes=0-", ranges
    assert ranges[1] in (None, "", "bytes=0-"), ranges
    assert leftovers(inst.root) == []


def test_a_restart_that_still_does_not_match_is_an_integrity_error(inst, tmp_path):
    first = component_path(inst.fixture, "11.8.0", "cuda_cudart")
    good = (inst.fixture / "mirror" / first.lstrip("/")).read_bytes()
    bad = tmp_path / "extra" / first.lstrip("/")
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_bytes(bytes(b ^ 0x5A for b in good))
    inst.env["CUDAENV_RETRIES"] = "0"
    assert inst("install", "11.8", "--jobs", "1", env={"CUDAENV_FAILPOINTS": "download-half:kill"}).rc == -9
    inst.server.clear()
    res = inst("install", "11.8", "--jobs", "1")
    assert_one_line_error(res, 4)
    assert "checksum mismatch" in res.err
    assert len([r for p, r in inst.server.requests if p == first]) == 2  # resumed, then once from zero
    assert not any(p.endswith(".partial") for p in leftovers(inst.root))


def test_downloads_a_killed_run_left_are_swept_and_others_kept(inst):
    assert inst("install", "tf-2.13").rc == 0
    downloads = inst.root / "cache" / "downloads"
    store_entry = next((inst.root / "store").iterdir()).name
    sha12 = store_entry[-12:]
    extracted = downloads / (sha12 + "0" * 52)          # verified, and already in the store
    extracted.write_text("x")
    stale = downloads / ("a" * 64 + ".partial")          # a resume that never came
    stale.write_text("x")
    os.utime(stale, (time.time() - 30 * 86400,) * 2)
    fresh = downloads / ("b" * 64 + ".partial")          # may still be resumed
    fresh.write_text("x")
    foreign = downloads / "notes.txt"                    # not a name cudaenv gives
    foreign.write_text("x")
    assert inst("install", "tf-2.16").rc == 0
    assert not extracted.exists() and not stale.exists()
    assert fresh.exists() and foreign.exists()


@pytest.mark.parametrize("then", [("install", "tf-2.13"), ("rehash",)])
def test_kill_between_swapping_shims_and_dropping_the_old_ones_is_swept_by_the_next_run(inst, then):
    # Found by the kill campaign in CI: the old shims stayed in .staging because the next run had
    # nothing to do (already installed, shims already right) and returned before sweeping.
    assert inst("install", "tf-2.13").rc == 0
    shims = inst.root / "shims"
    victim = sorted(shims.iterdir())[0]
    victim.unlink()  # the shims are now wrong, so rehash swaps in a new set
    res = inst("rehash", env={"CUDAENV_FAILPOINTS": "shims-swapped:kill"})
    assert res.rc == -9, res
    assert victim.is_symlink()  # the new set is in place
    assert any(p.startswith(str(inst.root / ".staging" / "shims-")) for p in leftovers(inst.root))
    res = inst(*then)
    assert res.rc == 0, res
    assert leftovers(inst.root) == []
