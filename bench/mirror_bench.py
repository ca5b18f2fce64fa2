#!/usr/bin/env python3
"""Mirror benchmark (not a test): `cudaenv mirror` against curl downloading the same files in
parallel from the same loopback nginx.

    /usr/bin/python3 bench/mirror_bench.py --cudaenv build/release/src/cudaenv [--runs 3] [--jobs 4]

Payload: install_bench.py's (bench/.payload: ~620 MB of xz archives in NVIDIA's layout plus the
CUDA index, 10 files), served by a real nginx on loopback (sendfile). In each run, side by side:
  (a) cudaenv mirror cuda-99.0.0 --to DIR -j N   (verified while streaming, published by rename)
  (b) curl --parallel --parallel-max N -o ... for the same URLs (no verification)
Reports wall times, the throughput ratio b/a (the issue's target: >= 0.9) and cudaenv's peak RSS.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import install_bench  # noqa: E402
from install_bench import VERSION, payload, timed  # noqa: E402
sys.path.insert(0, str(HERE.parent / "tests" / "support"))
from nginx import NGINX, Nginx  # noqa: E402



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cudaenv", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=4)
    args = ap.parse_args()
    if not NGINX:
        raise SystemExit("nginx is needed (apt install nginx-light)")
    cudaenv = str(Path(args.cudaenv).resolve())
    install_bench.PLATFORM = install_bench.fixture_mirror.binary_platform(cudaenv)  # the payload's
    out = payload(cudaenv)
    rows = []
    with tempfile.TemporaryDirectory(dir=HERE) as tmp:
        tmp = Path(tmp)
        srv = Nginx(tmp / "nginx", {"/": out / "mirror"}, workers=2, access_log=False)
        url = srv.url("/")
        try:
            env = dict(os.environ, CUDAENV_ROOT=str(tmp / "root"), CUDAENV_MANIFESTS=str(out / "manifests"),
                       CUDAENV_MIRROR=url, NO_COLOR="1")
            plan = json.loads(subprocess.run(
                [cudaenv, "--json", "mirror", f"cuda-{VERSION}", "--to", str(tmp / "plan"), "--dry-run"],
                env=env, capture_output=True, text=True, check=True).stdout)
            files = [f["path"] for f in plan["files"]]
            total = sum(f["size"] for f in plan["files"])
            for run in range(args.runs):
                for d in ("a", "b"):
                    shutil.rmtree(tmp / d, ignore_errors=True)
                a, _, out_a = timed([cudaenv, "--json", "mirror", f"cuda-{VERSION}", "--to", str(tmp / "a"),
                                     "--jobs", str(args.jobs)], env=env)
                (tmp / "b").mkdir()
                curl = ["curl", "-sSf", "--parallel", "--parallel-max", str(args.jobs)]
                for i, f in enumerate(files):
                    curl += ["-o", str(tmp / "b" / str(i)), f"{url}/{f}"]
                b, _, _ = timed(curl)
                # cudaenv's own peak RSS: its VmHWM, as mirror --json reports it (a child's
                # ru_maxrss starts from this Python's, which holds the payload's file list)
                peak_kib = json.loads(out_a)["stats"]["peak_rss_kib"]
                rows.append({"a_cudaenv_mirror": a, "b_curl_parallel": b,
                             "a_mib_per_s": total / a / 2**20, "b_mib_per_s": total / b / 2**20,
                             "a_peak_rss_mib": peak_kib / 1024})
                print(f"run {run + 1}: cudaenv mirror {a:.2f} s ({total / a / 2**20:.0f} MiB/s), "
                      f"curl --parallel {b:.2f} s ({total / b / 2**20:.0f} MiB/s), "
                      f"throughput ratio {b / a:.2f}, peak RSS {peak_kib / 1024:.1f} MiB", flush=True)
        finally:
            srv.stop()
    med = lambda k: sorted(r[k] for r in rows)[len(rows) // 2]
    print(json.dumps({"files": len(files), "mib": total >> 20, "jobs": args.jobs, "runs": rows,
                      "median": {k: med(k) for k in rows[0]},
                      "throughput_ratio": med("b_curl_parallel") / med("a_cudaenv_mirror")}, indent=2))


if __name__ == "__main__":
    main()
