"""kill -9 at random moments (reliability.md F rows, issue 11 item 13): an install and a global
are killed after a random delay, again and again, and after every kill the root and the machine
must hold: no half version or store entry visible, the link never missing or dangling, the rerun
succeeds and leaves nothing behind. The seed is printed (CUDAENV_KILL_SEED reruns one campaign)."""
import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import PLATFORM, EXE, leftovers

TF213 = "11.8.0+cudnn8.6.0.163"
TF216 = "12.4.1+cudnn9.1.1.17"
# kills that must land while the process runs (a kill after it ended proves nothing); the
# campaign goes on until that many did, at most four times as many tries
KILLS = int(os.environ.get("CUDAENV_KILLS", "60"))


def _seed():
    seed = int(os.environ.get("CUDAENV_KILL_SEED", str(int(time.time()))))
    print(f"kill campaign seed {seed} (CUDAENV_KILL_SEED={seed} reruns it)")
    return random.Random(seed)


def _run_and_kill(args, env, cwd, delay):
    """Starts cudaenv, SIGKILLs it after `delay` seconds; True when it was still running."""
    p = subprocess.Popen([EXE, *args], env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        p.wait(timeout=delay)
        return False
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGKILL)
        p.wait()
        return True


def _published_are_whole(root):
    """Every entry visible in versions/ and store/ is complete: its record is there and names
    what is on disk."""
    for area, record in (("versions", ".cudaenv-version.json"), ("store", ".cudaenv-complete.json")):
        base = root / area
        if not base.exists():
            continue
        entries = list(base.iterdir())
        if area == "versions":  # versions/<platform>/<name>
            assert all(p.is_dir() and not p.is_symlink() for p in entries), entries
            entries = [v for p in entries for v in p.iterdir()]
        for entry in entries:
            assert entry.is_dir() and not entry.is_symlink(), entry
            rec = entry / record
            assert rec.is_file(), f"half-done {entry} is visible"
            doc = json.loads(rec.read_text())
            if area == "versions":
                files = sum(1 for p in entry.rglob("*") if p.is_file() and not p.is_symlink()
                            and p.name not in (record, "version.json"))
                assert files == doc["files"], (entry, files, doc["files"])


def test_install_killed_at_random_moments(inst):
    rng = _seed()
    # how long one install into an empty root takes here, to spread the kills over all of it
    spans = []
    for _ in range(3):
        shutil.rmtree(inst.root, ignore_errors=True)
        t0 = time.monotonic()
        assert inst("install", "tf-2.13").rc == 0
        spans.append(time.monotonic() - t0)
    span = sorted(spans)[1]
    landed = tries = 0
    while landed < KILLS and tries < 4 * KILLS:
        i = tries
        tries += 1
        shutil.rmtree(inst.root)
        delay = rng.uniform(0, span)
        landed += _run_and_kill(["install", "tf-2.13"], inst.env, inst.tmp, delay)
        _published_are_whole(inst.root)
        listed = inst("list", "--json")
        assert listed.rc == 0, listed
        res = inst("install", "tf-2.13", "--json")
        assert res.rc == 0, (i, delay, res)
        assert leftovers(inst.root) == [], (i, delay, leftovers(inst.root))
        _published_are_whole(inst.root)
    print(f"install: {tries} kills over {span:.2f} s runs, {landed} while running")
    assert landed >= KILLS


def test_global_killed_at_random_moments(machine):
    rng = _seed()
    link = machine.sysroot / "usr" / "local" / "cuda"
    versions = {f"/opt/cudaenv/versions/{PLATFORM}/{v}" for v in (TF213, TF216)}
    spans = []
    for v in ("tf-2.13", "tf-2.16", "tf-2.13"):
        t0 = time.monotonic()
        assert machine("global", v).rc == 0
        spans.append(time.monotonic() - t0)
    span = sorted(spans)[1]
    landed = tries = 0
    while landed < KILLS and tries < 4 * KILLS:
        i = tries
        tries += 1
        want = rng.choice(["tf-2.13", "tf-2.16"])
        delay = rng.uniform(0, span)
        landed += _run_and_kill(["global", want], machine.env, machine.tmp, delay)
        # the link is never missing or dangling: it names one of the versions, whole
        assert link.is_symlink(), (i, delay)
        target = os.readlink(link)
        assert target in versions, (i, delay, target)
        assert (machine.sysroot / target.lstrip("/") / ".cudaenv-version.json").is_file()
        assert not [p for p in link.parent.iterdir() if p.name.startswith(".cuda.") and
                    not p.name.startswith(".cuda.tmp-")], list(link.parent.iterdir())
        # the rerun finishes what was interrupted and says what is there
        res = machine("global", want, "--json")
        assert res.rc == 0, (i, delay, res)
        said = machine("global").out.strip()
        assert os.readlink(link) == f"/opt/cudaenv/versions/{PLATFORM}/{said}", (i, said)
        assert [p.name for p in link.parent.iterdir() if p.name.startswith(".cuda.tmp-")] == []
        state = json.loads((machine.root / "state.json").read_text())
        assert "pending" not in state, state
    print(f"global: {tries} kills over {span:.2f} s runs, {landed} while running")
    assert landed >= KILLS


def test_concurrent_installs_and_uninstalls_keep_the_root_whole(inst):
    """Rounds of installs and uninstalls of two versions at once: the lock serialises them, and
    after each round every version is whole or absent, and nothing is left behind."""
    rng = _seed()
    rounds, per_round = 5, 8
    for r in range(rounds):
        cmds = [rng.choice([["install", "tf-2.13"], ["install", "tf-2.16"],
                            ["uninstall", TF213], ["uninstall", TF216]])
                for _ in range(per_round)]
        procs = [subprocess.Popen([EXE, *c], env=inst.env, cwd=inst.tmp, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for c in cmds]
        for c, p in zip(cmds, procs):
            out, err = p.communicate(timeout=120)
            # an uninstall of what is not (or no longer) there is a clean refusal, never a crash
            assert p.returncode in ((0,) if c[0] == "install" else (0, 9)), (c, p.returncode, err)
        _published_are_whole(inst.root)
        assert leftovers(inst.root) == [], leftovers(inst.root)
        listed = inst("list", "--json")
        assert listed.rc == 0, listed
    print(f"concurrency: {rounds} rounds of {per_round} installs/uninstalls at once")
