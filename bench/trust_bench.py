#!/usr/bin/env python3
"""What checking a channel set's signers costs the commands that read manifests (not a test).

    /usr/bin/python3 bench/trust_bench.py --cudaenv build/release/src/cudaenv [--runs 200]

Builds the fixture mirror (tests/support), a site channel with its own root metadata (version 1
installed as channel.root, version 2 rotated in through the channel) and a bundle of the fixture
manifests, takes it with `cudaenv update` into a temporary root, and then times, side by side in
one run, `cudaenv --version` and `cudaenv resolve tf-2.13`:

  checked   the set chosen as every command chooses it: its recorded signers against the trust
            state (the keys folder, the first root, the root metadata taken, the floor)
  given     the same set named by CUDAENV_MANIFESTS: nothing chosen, nothing checked (the floor
            of what a command reading these manifests can cost)
  legacy    the set as an older cudaenv recorded it (no signers in release.json): its bundle's
            header is read and the keys hashed, which loads libcrypto

Run as root, every command runs as an ordinary user in a user namespace (a root cudaenv takes its
trust from the machine itself, never from the bench's sysroot).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "support"))
import fixture_mirror  # noqa: E402
from fault_server import FaultServer  # noqa: E402
from as_user import AS_USER  # noqa: E402



def median_ms(cmd, runs, env):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        res = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append((time.perf_counter() - t) * 1000)
        if res.returncode != 0:
            raise SystemExit(f"{cmd} failed: {res.stderr.decode()}")
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cudaenv", required=True)
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args()
    exe = str(Path(args.cudaenv).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        tmp.chmod(0o755)
        data = fixture_mirror.build(tmp / "fixture", exe, platforms=(fixture_mirror.binary_platform(exe),))

        def run(*a):
            subprocess.run([exe, *a], check=True, stdout=subprocess.DEVNULL)

        for k in "AB":
            run("__bundle", "keygen", "--out", str(tmp / k))
        sysroot = tmp / "sysroot"
        (sysroot / "etc" / "cudaenv" / "keys").mkdir(parents=True)
        # the machine's floor: the fixture manifests at serial 100 (the channel's set is the same
        # releases at a newer serial, so no pin changes)
        shutil.copytree(data / "manifests", sysroot / "floor")
        (sysroot / "floor" / "release.json").write_text(json.dumps(
            {"schema": "cudaenv.manifest/1", "kind": "release", "serial": 100,
             "created": "2026-12-01T00:00:00Z", "requires": "0.1.0"}))
        (sysroot / "etc" / "cudaenv" / "config").write_text("manifests = /floor\n")
        channel = tmp / "channel"
        (channel / "root").mkdir(parents=True)
        run("__bundle", "root", "--version", "1", "--root-key", str(tmp / "A.pub"), "--bundle-key",
            str(tmp / "A.pub"), "--sign", str(tmp / "A.secret"), "--out", str(sysroot / "etc/cudaenv/channel.root"))
        run("__bundle", "root", "--version", "2", "--root-key", str(tmp / "A.pub"), "--bundle-key",
            str(tmp / "B.pub"), "--sign", str(tmp / "A.secret"), "--out", str(channel / "root" / "2.root"))
        run("__bundle", "make", "--from", str(data / "manifests"), "--key", str(tmp / "B.secret"), "--serial", time.strftime("%Y%m%d01", time.gmtime()),
            "--out", str(channel / "manifests.bundle"))
        srv = FaultServer(channel)
        root = tmp / "root"
        env = {k: v for k, v in os.environ.items() if not k.startswith("CUDAENV_")}
        env.update(CUDAENV_ROOT=str(root), CUDAENV_SYSROOT=str(sysroot), CUDAENV_CHANNEL=srv.url,
                   HOME=str(tmp), NO_COLOR="1")
        res = subprocess.run([*AS_USER, exe, "update"], env=env, capture_output=True, text=True)
        if res.returncode != 0:
            raise SystemExit(f"cudaenv update failed: {res.stderr}")
        srv.close()
        current = json.loads((root / "manifests" / "current.json").read_text())
        setdir = root / "manifests" / current["set"]
        given = dict(env, CUDAENV_MANIFESTS=str(setdir))
        n = args.runs
        rows = []
        for what, cmd in (("--version", ["--version"]), ("resolve tf-2.13", ["resolve", "tf-2.13"])):
            checked = median_ms([*AS_USER, exe, *cmd], n, env)
            base = median_ms([*AS_USER, exe, *cmd], n, given)
            rows.append((what, checked, base))
        release = json.loads((setdir / "release.json").read_text())
        legacy_release = dict(release)
        legacy_release.pop("signed_by", None)
        (setdir / "release.json").write_text(json.dumps(legacy_release))
        legacy = median_ms([*AS_USER, exe, "--version"], n, env)
        (setdir / "release.json").write_text(json.dumps(release))
        print(f"trust check, medians of {n} runs (ms):")
        print(f"  {'command':<18} {'checked':>9} {'given':>9} {'ratio':>7}")
        for what, checked, base in rows:
            print(f"  {what:<18} {checked:9.2f} {base:9.2f} {checked / base:7.2f}")
        print(f"  {'--version legacy':<18} {legacy:9.2f} {rows[0][2]:9.2f} {legacy / rows[0][2]:7.2f}")


if __name__ == "__main__":
    main()
