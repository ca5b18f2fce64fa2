#!/usr/bin/env python3
"""Install benchmark (not a test): cudaenv install against the naive way and the xz limit.

    /usr/bin/python3 bench/install_bench.py --cudaenv build/release/src/cudaenv [--runs 3]

Payload: >= 1 GiB uncompressed across >= 8 components shaped like a real toolkit, xz -6
compressed like NVIDIA's archives, in NVIDIA's layout, built once into bench/.payload and
reused. It is cut from a real CUDA toolkit when one is installed (/usr/local/cuda-13.0, read
only), else from the machine's own shared libraries. Served on loopback. In each run, side by
side:
  (a) cudaenv install                           (fresh root)
  (b) naive: per component curl -o, sha256sum, tar -xJf, in sequence
  (c) limit: xz -dc of every component to /dev/null, two at a time
  (z) cudaenv install from a recompressed mirror of the same archives (`cudaenv mirror
      --recompress zstd`, made once into bench/.payload/zmirror with a key of its own, which the
      installing host trusts through CUDAENV_SYSROOT): the zstd copies instead of xz
Reports wall times, ratios a/b, a/c and a/z (issue 30's target: a/z >= 3), and the peak RSS of (a)
and (z). With --baseline OTHER, each run also installs with that binary (a0: another build, say
the commit before a change), right after (a) and against the same (b) and (c), so the two compare
within one invocation.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "support"))
from fault_server import FaultServer  # noqa: E402
from as_user import AS_USER  # noqa: E402
import fixture_mirror  # noqa: E402

PLATFORM = "linux-x86_64"  # main() sets the platform of the cudaenv under test
VERSION = "99.0.0"
# CUDAENV_BENCH_SMOKE=1 (.ci/bench-smoke): a few MiB of the machine's own libraries, so CI runs
# the whole benchmark once and a benchmark that breaks fails CI; its numbers mean nothing.
SMOKE = os.environ.get("CUDAENV_BENCH_SMOKE") == "1"
TARGET = (8 << 20) if SMOKE else 1100 << 20  # bytes of payload


# Component -> file-name prefixes taken from the real toolkit's lib/ (libcublasLt, cuDNN and NCCL
# are left out to keep the one-time compression within minutes; what stays is ~1.3 GiB).
LIB_GROUPS = {
    "libcufft": ("libcufft",),
    "libcusparse": ("libcusparse",),
    "libcusolver": ("libcusolver",),
    "libcurand": ("libcurand",),
    "cuda_nvrtc": ("libnvrtc.so", "libnvrtc-builtins.so"),
    "libnvjitlink": ("libnvJitLink",),
    "libcublas": ("libcublas.so",),
    "cuda_cudart": ("libcudart", "libcudadevrt", "libcupti"),
}


def source_files():
    """(component, path) of real binaries to build components from."""
    real = Path("/usr/local/cuda-13.0")
    files = []
    if (real / "lib").is_dir() and not SMOKE:
        for p in sorted((real / "lib").iterdir()):
            if p.is_file() and not p.is_symlink():
                for comp, prefixes in LIB_GROUPS.items():
                    if p.name.startswith(prefixes):
                        files.append((comp, p))
                        break
        for sub in ("bin", "nvvm", "include"):
            for p in sorted((real / sub).rglob("*")):
                if p.is_file() and not p.is_symlink():
                    files.append(("cuda_" + sub, p))  # kept at its path below real/sub
    else:
        # the machine's own libraries for the platform of the cudaenv under test (an arm64 build:
        # the :arm64 ones multiarch installed); plugins in subfolders (gconv's EUC-CN.so needs its
        # libGB.so beside it) would not load from lib64, which cudaenv checks
        multiarch = Path("/usr/lib", fixture_mirror.MULTIARCH[fixture_mirror.ARCH[PLATFORM]])
        libs = sorted(p for p in multiarch.glob("*.so*") if p.is_file() and not p.is_symlink())
        names = list(LIB_GROUPS)
        files = [(names[i % len(names)], p) for i, p in enumerate(libs)]
    return files


def build_payload(out):
    mirror = out / "mirror"
    ref = out / "reference"
    shutil.rmtree(out, ignore_errors=True)
    mirror.mkdir(parents=True)
    ref.mkdir()
    groups = {}
    total = 0
    for group, path in source_files():
        if total >= TARGET:
            break
        size = path.stat().st_size
        groups.setdefault(group, []).append(path)
        total += size
    redist = {"release_date": "2026-01-01", "release_label": VERSION, "release_product": "cuda"}
    for group, paths in sorted(groups.items()):
        comp = group
        cver = "1.0.0"
        top = f"{comp}-{PLATFORM}-{cver}-archive"
        rel = f"{comp}/{PLATFORM}/{top}.tar.xz"
        tar_path = out / "tmp.tar"
        with tarfile.open(tar_path, "w") as tar:
            tar.add(str(out), arcname=top, recursive=False)
            for p in paths:
                if comp in ("cuda_bin", "cuda_nvvm", "cuda_include"):
                    sub = comp[5:]
                    rel_name = p.relative_to(Path("/usr/local/cuda-13.0") / sub)
                    tar.add(str(p), arcname=f"{top}/{sub}/{rel_name}", recursive=False)
                else:
                    tar.add(str(p), arcname=f"{top}/lib/{p.name}", recursive=False)
        dest = mirror / "cuda" / "redist" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        with open(dest, "wb") as f:
            subprocess.run(["xz", "-6", "-T2", "-c", str(tar_path)], stdout=f, check=True)
        tar_path.unlink()
        h = hashlib.sha256(dest.read_bytes()).hexdigest()
        redist[comp] = {"name": comp, "license": "bench", "version": cver,
                        PLATFORM: {"relative_path": rel, "sha256": h, "size": str(dest.stat().st_size)}}
        print(f"  {comp}: {len(paths)} files", file=sys.stderr)
    if "cuda_cudart" not in redist:  # the manifests need a runtime component to call it CUDA
        raise SystemExit("payload has no cudart group")
    text = json.dumps(redist, indent=4)
    (mirror / "cuda" / "redist" / f"redistrib_{VERSION}.json").write_text(text)
    (ref / f"cuda-redistrib_{VERSION}.json").write_text(text)
    facts = {"tensorflow": [], "cuda_min_driver": [], "cuda_minor_version_compatibility": {},
             "cuda_runfile_installers": {"versions": {}}, "cuda_sm_support": {"per_cuda": {}},
             "nvcc_host_gcc_max": {}, "gpus_detail": [],
             "cudnn_releases": {"releases": [], "sublibraries": {}}, "redist_manifest_sha256": {"registry": {}}}
    (ref / "facts.json").write_text(json.dumps(facts))
    (out / "uncompressed_bytes").write_text(str(total))


def payload(cudaenv):
    # one payload per platform: an arm64 cudaenv's is made of aarch64 libraries, in linux-sbsa paths
    out = HERE / ((".payload-smoke" if SMOKE else ".payload") +
                  ("" if PLATFORM == "linux-x86_64" else "-" + PLATFORM))
    if not (out / "uncompressed_bytes").exists():
        print("building the payload once (xz -6 takes minutes)...", file=sys.stderr)
        build_payload(out)
    man = out / "manifests"
    shutil.rmtree(man, ignore_errors=True)
    man.mkdir()
    subprocess.run([cudaenv, "__generate-manifests", "--reference", str(out / "reference"), "--out", str(man)],
                   check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(man / "frameworks", ignore_errors=True)  # the payload has no framework rows
    # Its runtime archive carries the real toolkit's libcudart.so.13.*, not one named for the
    # payload's made-up component version: keep it out of the runtime-file check.
    rel = man / "cuda" / f"{VERSION}.json"
    doc = json.loads(rel.read_text())
    doc["components"]["bench_runtime"] = doc["components"].pop("cuda_cudart")
    rel.write_text(json.dumps(doc, indent=2))
    profiles = {"schema": "cudaenv.manifest/1", "kind": "profiles",
                "profiles": [{"name": "runtime", "description": "everything", "all": True, "exclude": []}]}
    (man / "profiles.json").write_text(json.dumps(profiles))
    rules = {"schema": "cudaenv.manifest/1", "kind": "rules", "cudnn": {}}
    (man / "rules.json").write_text(json.dumps(rules))
    return out


def recompressed_mirror(cudaenv, out, srv):
    """bench/.payload/zmirror: the payload's archives mirrored and recompressed (made once; a rerun
    re-hashes and reuses the copies), the key that signs it, and a sysroot that trusts the key."""
    keys = out / "keys"
    if not (keys / "site.secret").exists():
        shutil.rmtree(keys, ignore_errors=True)
        keys.mkdir()
        subprocess.run([cudaenv, "__bundle", "keygen", "--out", str(keys / "site")], check=True,
                       stdout=subprocess.DEVNULL)
    sysroot = out / "sysroot"
    (sysroot / "etc/cudaenv/keys").mkdir(parents=True, exist_ok=True)
    shutil.copy(keys / "site.pub", sysroot / "etc/cudaenv/keys/site.pub")
    zdir = out / "zmirror"
    with tempfile.TemporaryDirectory(dir=HERE) as work:
        env = dict(os.environ, CUDAENV_ROOT=str(Path(work) / "root"), CUDAENV_MANIFESTS=str(out / "manifests"),
                   CUDAENV_MIRROR=srv.url, NO_COLOR="1")
        if not (zdir / "cudaenv-recompressed" / "index").exists():
            print("recompressing the payload once (zstd -19 takes minutes)...", file=sys.stderr)
        proc = subprocess.run([cudaenv, "--json", "mirror", f"cuda-{VERSION}", "--to", str(zdir), "--recompress",
                               "zstd", "--sign-key", str(keys / "site.secret")], env=env,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"cudaenv mirror --recompress failed: {proc.stderr}")
    doc = json.loads(proc.stdout)["recompressed"]
    return zdir, sysroot, doc




def timed(cmd, env=None, shell=False):
    """Wall seconds, the peak RSS (KiB) of the process tree, and its stdout."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, shell=shell, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    err = proc.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd} failed: {err}")
    return wall, usage.ru_maxrss, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cudaenv", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--baseline", help="another cudaenv binary, installed with in every run too (a0)")
    args = ap.parse_args()
    cudaenv = str(Path(args.cudaenv).resolve())
    global PLATFORM
    PLATFORM = fixture_mirror.binary_platform(cudaenv)
    installers = [("a", cudaenv)]
    if args.baseline:
        installers.append(("a0", str(Path(args.baseline).resolve())))
    out = payload(cudaenv)
    archives = sorted((out / "mirror").rglob("*.tar.xz"))
    uncompressed = int((out / "uncompressed_bytes").read_text())
    compressed = sum(a.stat().st_size for a in archives)
    srv = FaultServer(out / "mirror")
    zdir, sysroot, zdoc = recompressed_mirror(cudaenv, out, srv)
    zsrv = FaultServer(zdir)
    zstd_bytes = zdoc["recompressed_bytes"]
    manifest = json.loads((out / "reference" / f"cuda-redistrib_{VERSION}.json").read_text())
    rows = []
    try:
        for run in range(args.runs):
            with tempfile.TemporaryDirectory(dir=HERE) as work:
                work = Path(work)
                env = dict(os.environ, CUDAENV_ROOT=str(work / "root"), CUDAENV_MANIFESTS=str(out / "manifests"),
                           CUDAENV_MIRROR=srv.url, NO_COLOR="1")
                got = {}
                # the first to install alternates, so neither always meets a cold page cache
                for name, exe in (installers if run % 2 == 0 else installers[::-1]):
                    wall, tree_rss, out_a = timed([exe, "--json", "install", f"cuda-{VERSION}", "--jobs",
                                                   str(args.jobs)], env=env)
                    got[name] = (wall, tree_rss, json.loads(out_a)["stats"]["peak_rss_kib"])
                    shutil.rmtree(work / "root")
                zenv = dict(env, CUDAENV_MIRROR=zsrv.url, CUDAENV_SYSROOT=str(sysroot), CUDAENV_RECOMPRESSED="on")
                # the host trusts the site's key through its sysroot: an ordinary user (a root
                # cudaenv takes its keys from the machine itself, docs/channel.md)
                z, ztree, zout = timed([*AS_USER, cudaenv, "--json", "install", f"cuda-{VERSION}", "--jobs",
                                        str(args.jobs)], env=zenv)
                zdoc_run = json.loads(zout)
                if not all(x["recompressed"] for x in zdoc_run["versions"][0]["archives"]):
                    raise SystemExit("the install from the recompressed mirror did not use the zstd copies")
                zrss = zdoc_run["stats"]["peak_rss_kib"]
                shutil.rmtree(work / "root")
                a, tree_rss, rss = got["a"]
                naive = ["set -e"]
                for comp, entry in manifest.items():
                    if not isinstance(entry, dict):
                        continue
                    rel = entry[PLATFORM]["relative_path"]
                    f = work / Path(rel).name
                    naive.append(f"curl -sf -o {f} {srv.url}/cuda/redist/{rel}")
                    naive.append(f"echo '{entry[PLATFORM]['sha256']}  {f}' | sha256sum -c --quiet -")
                    naive.append(f"mkdir -p {work}/naive && tar -xJf {f} -C {work}/naive && rm {f}")
                b, _, _ = timed("\n".join(naive), shell=True)
                shutil.rmtree(work / "naive", ignore_errors=True)
                c, _, _ = timed("printf '%s\\0' " + " ".join(str(x) for x in archives) +
                             " | xargs -0 -P2 -n1 sh -c 'xz -dc \"$0\" > /dev/null'", shell=True)
                row = {"a_install": a, "b_naive": b, "c_xz_limit": c, "a_peak_rss_mib": rss / 1024,
                       "a_tree_peak_rss_mib": tree_rss / 1024, "a_c": a / c,
                       "z_install": z, "z_peak_rss_mib": zrss / 1024, "a_z": a / z}
                line = (f"run {run + 1}: install {a:.2f} s, naive {b:.2f} s, xz limit {c:.2f} s, "
                        f"a/b {a / b:.2f}, a/c {a / c:.2f}, peak RSS {rss / 1024:.1f} MiB "
                        f"(with the dlopen check child: {tree_rss / 1024:.1f} MiB); "
                        f"from the recompressed mirror {z:.2f} s, a/z {a / z:.2f}, peak RSS {zrss / 1024:.1f} MiB")
                if "a0" in got:
                    a0, tree0, rss0 = got["a0"]
                    row.update({"a0_install": a0, "a0_peak_rss_mib": rss0 / 1024,
                                "a0_tree_peak_rss_mib": tree0 / 1024, "a0_c": a0 / c})
                    line += f"; baseline {a0:.2f} s, a0/c {a0 / c:.2f}, peak RSS {rss0 / 1024:.1f} MiB"
                rows.append(row)
                print(line, flush=True)
    finally:
        srv.close()
        zsrv.close()
    med = lambda k: sorted(r[k] for r in rows)[len(rows) // 2]
    summary = {"components": len(archives), "uncompressed_mib": uncompressed >> 20,
               "compressed_mib": compressed >> 20, "zstd_mib": zstd_bytes >> 20, "runs": rows,
               "median": {k: med(k) for k in rows[0]},
               "ratio_a_b": med("a_install") / med("b_naive"), "ratio_a_c": med("a_install") / med("c_xz_limit"),
               "ratio_a_z": med("a_install") / med("z_install")}
    if args.baseline:
        summary["ratio_a0_c"] = med("a0_install") / med("c_xz_limit")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
