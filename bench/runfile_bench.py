#!/usr/bin/env python3
"""Runfile install benchmark (not a test): cudaenv reading a CUDA runfile against running it.

    /usr/bin/python3 bench/runfile_bench.py --cudaenv build/release/src/cudaenv [--runs 3]

Payload: a CUDA 11.0-style runfile made with Debian's makeself (gzip, as NVIDIA's), its
builds/<component>/ folders holding real shared libraries cut from the machine (a real CUDA
toolkit in /usr/local/cuda-13.0 when there is one, read only; else /usr/lib), plus the parts a
runtime install never takes -- a bundled "driver" and "Nsight" -- so that about 40% of the
payload is the runtime profile's. Built once into bench/.payload-runfile and reused. Served on
loopback. In each run, side by side:
  (a) cudaenv install 11.0 (runtime profile; fresh root): download, verify, stream the
      payload, take the profile's members
  (b) the usual way: curl -o, sha256sum, `sh file.run --noexec --target DIR` (makeself
      unpacks everything), then cp -a the same components' folders into a prefix
Reports wall times, the ratio a/b, bytes written by (a) against the runfile's size, and the
peak RSS of (a) (target: <= 64 MiB).
"""
import argparse
import hashlib
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
import legacy_mirror as lm  # noqa: E402
from fault_server import FaultServer  # noqa: E402

RUNTIME = ["cuda_cudart", "cuda_nvrtc", "libcublas", "libcufft", "libcurand", "libcusolver",
           "libcusparse", "cuda_cupti", "cuda_nvtx", "cuda_nvcc", "libnvjitlink"]
# the runtime's real libraries by component; cuda_cudart gets a libcudart.so.11.0 built here (the
# install checks the runfile's runtime has CUDA 11's soname)
PREFIXES = {"libcufft": "libcufft", "libcusparse": "libcusparse", "libcusolver": "libcusolver",
            "libcurand": "libcurand", "cuda_nvrtc": "libnvrtc", "libcublas": "libcublas",
            "libnvjitlink": "libnvJitLink"}
SMOKE = os.environ.get("CUDAENV_BENCH_SMOKE") == "1"  # .ci/bench-smoke: a run, not a timing
TARGET = (8 << 20) if SMOKE else 300 << 20  # bytes of runtime payload, about


def sources():
    real = Path("/usr/local/cuda-13.0/lib")
    if real.is_dir() and not SMOKE:
        out = {}
        for p in sorted(real.iterdir()):
            if p.is_file():  # and the soname links, which the libraries load each other by
                for comp, prefix in PREFIXES.items():
                    if p.name.startswith(prefix):
                        out.setdefault(comp, []).append(p)
        if sum(p.stat().st_size for ps in out.values() for p in ps) > 100 << 20:
            return out
    libs = sorted((p for p in Path("/usr/lib/x86_64-linux-gnu").glob("*.so*")
                   if p.is_file() and not p.is_symlink()), key=lambda p: p.name)
    out, i = {}, 0
    for p in libs:
        out.setdefault(list(PREFIXES)[i % len(PREFIXES)], []).append(p)
        i += 1
    return out


def build_payload(cache):
    run = cache / "cuda_11.0.3_450.51.06_linux.run"
    if run.exists():
        return run
    with tempfile.TemporaryDirectory() as work:
        pkg = Path(work) / "pkg"
        total = 0
        for comp, files in sources().items():
            lib = pkg / "builds" / comp / "targets" / "x86_64-linux" / "lib"
            lib.mkdir(parents=True, exist_ok=True)
            for f in files:
                if f.is_symlink():
                    os.symlink(os.readlink(f), lib / f.name)
                elif total <= TARGET:
                    shutil.copy(f, lib / f.name)
                    total += f.stat().st_size
            os.symlink("targets/x86_64-linux/lib", pkg / "builds" / comp / "lib64")
        cc = lm.fm.Compiler(work)
        cudart = pkg / "builds" / "cuda_cudart" / "targets" / "x86_64-linux" / "lib"
        cudart.mkdir(parents=True)
        shutil.copy(cc.shared("libcudart.so.11.0.221", "libcudart.so.11.0",
                              "int cudaRuntimeGetVersion(int *v) { *v = 11000; return 0; }"), cudart)
        os.symlink("libcudart.so.11.0.221", cudart / "libcudart.so.11.0")
        (pkg / "builds" / "cuda_nvcc" / "bin").mkdir(parents=True)
        (pkg / "builds" / "cuda_nvcc" / "bin" / "nvcc").write_text("#!/bin/sh\n")
        # what a runtime install never takes: about 60% of the payload
        rest = total * 3 // 2
        for name, share in (("NVIDIA-Linux-x86_64-450.51.06.run", 2), ("nsight_systems/bin/nsys", 1)):
            p = pkg / "builds" / name
            p.parent.mkdir(parents=True, exist_ok=True)
            with open(p, "wb") as out:
                left = rest * share // 3
                for f in (f for fs in sources().values() for f in fs):
                    if left <= 0:
                        break
                    data = f.read_bytes()[:left]
                    out.write(data)
                    left -= len(data)
        (pkg / "cuda-installer").write_text("#!/bin/sh\nexit 1\n")
        (pkg / "cuda-installer").chmod(0o755)
        cache.mkdir(parents=True, exist_ok=True)
        # One plain `tar czf` of the tree, as NVIDIA's makeself 2.1 writes its payload (makeself
        # 2.4.5 appends member by member and, on a tree this size, wrote one member twice), put
        # behind the header of a small makeself runfile with its sizes rewritten.
        payload = Path(work) / "payload.tgz"
        subprocess.run(["tar", "-C", str(pkg), "-czf", str(payload), "."], check=True)
        tiny = Path(work) / "tiny"
        tiny.mkdir()
        (tiny / "x").write_text("x")
        head = lm.make_runfile(tiny, Path(work) / "tiny.run").read_bytes()
        lines = head.split(b"\n")
        skip = next(int(l.split(b'"')[1]) for l in lines if l.startswith(b'skip="'))
        size = payload.stat().st_size
        # the header tells the payload's own MD5 and CRC as makeself computes them; cudaenv
        # checks both, so they are rewritten with the sizes
        md5 = hashlib.md5(payload.read_bytes()).hexdigest().encode()
        crc = subprocess.run(["cksum", str(payload)], capture_output=True, check=True).stdout.split()[0]
        fields = {b'filesizes="': b'filesizes="%d"' % size, b'MD5="': b'MD5="' + md5 + b'"',
                  b'CRCsum="': b'CRCsum="' + crc + b'"'}
        header = [next((v for k, v in fields.items() if l.startswith(k)), l) for l in lines[:skip]]
        with open(run, "wb") as out, open(payload, "rb") as src:
            out.write(b"\n".join(header) + b"\n")
            shutil.copyfileobj(src, out, 1 << 20)
    return run


def manifests(cudaenv, out, run):
    doc = lm.facts(lm.fm.sha256(run), "0" * 64, 1, "1" * 64, "2" * 64, 1)
    return lm.generate(cudaenv, out, doc)


def tree_bytes(root):
    seen, total = set(), 0
    for d, _, files in os.walk(root):
        for f in files:
            st = os.lstat(os.path.join(d, f))
            if not os.path.islink(os.path.join(d, f)) and (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_size
    return total


def run_cudaenv(cudaenv, man, url, root):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDA", "CUDAENV_"))}
    env.update(CUDAENV_ROOT=str(root), CUDAENV_MANIFESTS=str(man), CUDAENV_MIRROR=url, HOME=str(root.parent))
    t = time.monotonic()
    res = subprocess.run(["/usr/bin/time", "-f", "%M", cudaenv, "install", "11.0", "--profile", "runtime", "--json"],
                         env=env, capture_output=True, text=True)
    wall = time.monotonic() - t
    if res.returncode != 0:
        sys.exit("cudaenv install failed:\n" + res.stderr)
    # cudaenv's own peak (the download, the stream, the extraction); /usr/bin/time's figure also
    # covers the verification child, which dlopens every library of the version
    rss_kib = (json.loads(res.stdout)["stats"]["peak_rss_kib"], int(res.stderr.strip().splitlines()[-1]))
    return wall, rss_kib, tree_bytes(root / "store")


def run_naive(url, sha, work):
    t = time.monotonic()
    dl = work / "cuda.run"
    subprocess.run(["curl", "-sSf", "-o", str(dl), url], check=True)
    got = subprocess.run(["sha256sum", str(dl)], capture_output=True, text=True, check=True).stdout.split()[0]
    assert got == sha
    # SETUP_NOCHECK: makeself's own MD5/CRC of the payload are skipped (this payload was put
    # behind another header; sha256sum above already checked the file) -- the faster baseline
    subprocess.run(["sh", str(dl), "--noexec", "--target", str(work / "x")], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=dict(os.environ, SETUP_NOCHECK="1"))
    prefix = work / "prefix"
    prefix.mkdir()
    for comp in RUNTIME:
        src = work / "x" / "builds" / comp
        if src.is_dir():
            subprocess.run(["cp", "-a", str(src), str(prefix / comp)], check=True)
    return time.monotonic() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cudaenv", required=True)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    run = build_payload(HERE / (".payload-runfile-smoke" if SMOKE else ".payload-runfile"))
    sha = lm.fm.sha256(run)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        man = manifests(os.path.abspath(args.cudaenv), tmp / "m", run)
        mirror = tmp / "mirror" / Path(lm.RUNFILE).parent
        mirror.mkdir(parents=True)
        os.link(run, mirror / run.name) if os.stat(run).st_dev == os.stat(mirror).st_dev else shutil.copy(run, mirror / run.name)
        (tmp / "none").mkdir()
        srv = FaultServer(tmp / "none", tmp / "mirror")
        a, b, rss, written = [], [], [], 0
        try:
            for i in range(args.runs):
                root = tmp / f"r{i}" / "root"
                root.parent.mkdir()
                wall, kib, written = run_cudaenv(os.path.abspath(args.cudaenv), man, srv.url, root)
                a.append(wall)
                rss.append(kib)
                shutil.rmtree(root.parent)
                work = tmp / f"n{i}"
                work.mkdir()
                b.append(run_naive(f"{srv.url}/{lm.RUNFILE}", sha, work))
                shutil.rmtree(work)
        finally:
            srv.close()
    size = run.stat().st_size
    ma, mb = statistics.median(a), statistics.median(b)
    print(json.dumps({"runfile_bytes": size, "written_bytes": written,
                      "written_of_runfile": round(written / size, 3),
                      "cudaenv_s": [round(x, 2) for x in a], "naive_s": [round(x, 2) for x in b],
                      "median_ratio_a_over_b": round(ma / mb, 3),
                      "peak_rss_mib": round(max(r[0] for r in rss) / 1024, 1),
                      "peak_rss_with_dlopen_check_child_mib": round(max(r[1] for r in rss) / 1024, 1)},
                     indent=2))


if __name__ == "__main__":
    main()
