#!/usr/bin/env python3
"""Doctor benchmark (not a test): the median wall time of a full `cudaenv doctor` run.

    /usr/bin/python3 bench/doctor_bench.py --cudaenv build/release/src/cudaenv [--runs 50]

Times, side by side in one run: the full doctor on this machine (sysroot /, whatever toolkit it
has), the full doctor on a fixture machine with a GPU, a driver and CUDA 12.4 + cuDNN 9.1
(tests/support/fixture_sysroot.py; every probe runs and asks its libraries), `--only gpu` (the
doctor's own start-up), and for scale the children a full run starts anyway: `ldconfig -p` and
`cudaenv __doctor-query cudart` on one library; and the full doctor here again with a root that
keeps its answers (warm: only the live children start). Targets: a full run <= 50 ms, warm
<= 20 ms, at the median.

    --baseline OTHER_CUDAENV   also times the doctor rows with another binary (a build of the
                               commit before), interleaved with these, and prints each ratio
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "support"))
import fixture_sysroot  # noqa: E402


def timings(cmd, runs, env):
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out.append((time.perf_counter() - t) * 1000)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cudaenv", required=True)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--baseline", help="another cudaenv to time side by side (the doctor rows)")
    args = ap.parse_args()
    exe = str(Path(args.cudaenv).resolve())
    baseline = str(Path(args.baseline).resolve()) if args.baseline else None
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        machine = fixture_sysroot.Machine(tmp / "sys", fixture_sysroot.Libs(tmp / "libs")).healthy()
        # CUDAENV_MANIFESTS is kept: a binary copied out of its build tree (a baseline) finds no
        # manifests of its own, and without them the doctor skips the compiler probe entirely
        base = {k: v for k, v in os.environ.items()
                if k == "CUDAENV_MANIFESTS" or not k.startswith(("CUDAENV_", "LD_LIBRARY_PATH"))}
        # cold: a root that never exists, so no run can remember anything for the next
        base.update(CUDAENV_ROOT=str(tmp / "no-root"), NO_COLOR="1")
        fixture_env = dict(base, CUDAENV_SYSROOT=str(machine.root), CUDAENV_ROOT=str(tmp / "fixture-root"),
                           **machine.env())
        ldconfig = fixture_sysroot.LDCONFIG
        lib = machine.p("/usr/local/cuda-12.4/lib64/libcudart.so.12")
        # cold: no root, so nothing is remembered; warm: a root whose answers are kept
        warm_root = tmp / "warm-root"
        warm_root.mkdir()
        warm = dict(base, CUDAENV_ROOT=str(warm_root))
        doctor_rows = [
            ("doctor, this machine (sysroot /)", [exe, "doctor"], base),
            ("doctor, this machine, warm (answers kept)", [exe, "doctor"], warm),
            ("doctor, fixture machine with a GPU", [exe, "doctor"], fixture_env),
            ("doctor --only gpu (start-up)", [exe, "doctor", "--only", "gpu"], fixture_env),
        ]
        rows = list(doctor_rows)
        if baseline:
            # its own warm root: each binary's answers are its own
            (tmp / "warm-root-baseline").mkdir()
            for name, cmd, env in doctor_rows:
                if env is warm:
                    env = dict(base, CUDAENV_ROOT=str(tmp / "warm-root-baseline"))
                rows.append((name + " [baseline]", [baseline] + cmd[1:], env))
        rows += [
            ("ldconfig -p (one child it runs)", [ldconfig, "-p"], base),
            ("__doctor-query cudart (one child it runs)", [exe, "__doctor-query", "cudart", str(lib)], base),
        ]
        # warm the page cache once, then interleave the rows so that load hits all of them alike
        for _, cmd, env in rows:
            subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples = {name: [] for name, _, _ in rows}
        for _ in range(args.runs):
            for name, cmd, env in rows:
                samples[name] += timings(cmd, 1, env)
        print(f"{'':55} {'median':>9} {'p90':>9}   ({args.runs} runs each, interleaved)")
        for name, _, _ in rows:
            s = sorted(samples[name])
            p90 = s[int(len(s) * 0.9) - 1]
            print(f"{name:55} {statistics.median(s):7.1f}ms {p90:7.1f}ms")
        if baseline:
            print()
            for name, _, _ in doctor_rows:
                ratio = statistics.median(samples[name]) / statistics.median(samples[name + " [baseline]"])
                print(f"{name:55} {ratio:6.2f}x the baseline")
        if (tmp / "no-root").exists():
            raise SystemExit("the cold rows' root was made by a run: they were not cold")
        full = statistics.median(samples["doctor, this machine (sysroot /)"])
        warm_ms = statistics.median(samples["doctor, this machine, warm (answers kept)"])
        print(f"\ntarget: full run <= 50 ms: {'met' if full <= 50 else 'MISSED'} ({full:.1f} ms); "
              f"warm <= 20 ms: {'met' if warm_ms <= 20 else 'MISSED'} ({warm_ms:.1f} ms)")


if __name__ == "__main__":
    main()
