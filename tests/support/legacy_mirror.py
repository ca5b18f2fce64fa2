#!/usr/bin/env python3
"""Builds a legacy mirror: a CUDA 11.0 runfile installer made with Debian's makeself in NVIDIA's
11.x internal layout, a CUDA 10.0 one nesting the toolkit's own runfile (10.x layout), and cuDNN
8.0 and 7.4 .tgz archives, all holding real ELF libraries; plus facts for TensorFlow 2.4 and 1.15
and cudaenv manifests generated from them.

    legacy_mirror.py DIR --cudaenv CUDAENV [--xz]

The runfile's payload is what `sh cuda_11.0.3_450.51.06_linux.run --noexec --keep` unpacks: one
folder per component under builds/ (cuda_cudart, cuda_nvcc, cuda_cupti, libcublas, ...), each laid
out like the installed toolkit -- targets/x86_64-linux/{lib,include} with lib64 and include
linking there -- and beside them the bundled driver's own runfile, Nsight and the installer,
which a runtime install must never take.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import io
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixture_mirror as fm  # noqa: E402

CUDA = "11.0.3"
DRIVER = "450.51.06"
RUNFILE = f"cuda/{CUDA}/local_installers/cuda_{CUDA}_{DRIVER}_linux.run"
CUDNN = {"version": "8.0.5.39", "cuda": "11.0",
         "path": "redist/cudnn/v8.0.5/cudnn-11.0-linux-x64-v8.0.5.39.tgz"}
TRIPLE = "x86_64-linux"

# component -> [(real file, soname, [links], C source)]; nvcc and cupti are laid out apart
LIBS = {
    "cuda_cudart": [("libcudart.so.11.0.221", "libcudart.so.11.0", ["libcudart.so"],
                     "int cudaRuntimeGetVersion(int *v) { *v = 11000; return 0; }")],
    "cuda_nvrtc": [("libnvrtc.so.11.0.221", "libnvrtc.so.11.0", ["libnvrtc.so"],
                    "int nvrtcVersion(int *a, int *b) { *a = 11; *b = 0; return 0; }")],
    "libcublas": [("libcublasLt.so.11.2.0.252", "libcublasLt.so.11", ["libcublasLt.so"],
                   "int cublasLtGetVersion(void) { return 110200; }"),
                  ("libcublas.so.11.2.0.252", "libcublas.so.11", ["libcublas.so"],
                   "int cublasGetVersion_v2(void *h, int *v) { (void)h; *v = 110200; return 0; }")],
    "libcufft": [("libcufft.so.10.2.1.245", "libcufft.so.10", ["libcufft.so"],
                  "int cufftGetVersion(int *v) { *v = 10201; return 0; }")],
    "libcurand": [("libcurand.so.10.2.1.245", "libcurand.so.10", ["libcurand.so"],
                   "int curandGetVersion(int *v) { *v = 10201; return 0; }")],
    "libcusolver": [("libcusolver.so.10.6.0.245", "libcusolver.so.10", ["libcusolver.so"],
                     "int cusolverGetVersion(int *v) { *v = 10600; return 0; }")],
    "libcusparse": [("libcusparse.so.11.1.1.245", "libcusparse.so.11", ["libcusparse.so"],
                     "int cusparseGetVersion(void *h, int *v) { (void)h; *v = 11101; return 0; }")],
}
NVCC_BANNER = "Cuda compilation tools, release 11.0, V11.0.221\nBuild cuda_11.0_bu.TC445_37.28845127_0"
# What a runtime install must not write: bytes that make the runfile much bigger than the install
NOT_TAKEN_BYTES = 3 << 20


def write(path, data, mode=0o644):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(mode)


def link(path, target):
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)


def component_tree(cc, pkg, comp, libs):
    """builds/<comp>/targets/x86_64-linux/lib + lib64 -> targets/x86_64-linux/lib, as NVIDIA's."""
    base = pkg / "builds" / comp
    lib = base / "targets" / TRIPLE / "lib"
    for real, soname, links, source in libs:
        write(lib / real, cc.shared(real, soname, source).read_bytes(), 0o755)
        link(lib / soname, real)
        for name in links:
            link(lib / name, soname)
    link(base / "lib64", f"targets/{TRIPLE}/lib")
    inc = base / "targets" / TRIPLE / "include"
    inc.mkdir(parents=True, exist_ok=True)
    link(base / "include", f"targets/{TRIPLE}/include")
    return base


def payload(cc, pkg):
    """The unpacked payload tree of a CUDA 11.0 runfile."""
    for comp, libs in LIBS.items():
        base = component_tree(cc, pkg, comp, libs)
        if comp == "cuda_cudart":
            write(base / "targets" / TRIPLE / "include" / "cuda_runtime_api.h",
                  b"#define CUDART_VERSION 11000\n")
            write(base / "targets" / TRIPLE / "lib" / "libcudart_static.a", b"!<arch>\n" + fm.random_bytes(64 << 10, "s"))
    nvcc = pkg / "builds" / "cuda_nvcc"
    write(nvcc / "bin" / "nvcc", fm.nvcc_script(NVCC_BANNER), 0o755)
    write(nvcc / "bin" / "ptxas", b"#!/bin/sh\necho 'ptxas: NVIDIA (R) Ptx optimizing assembler'\n", 0o755)
    write(nvcc / "bin" / "nvcc.profile", b"TOP = $(_HERE_)/..\nINCLUDES += \"-I$(TOP)/$(_TARGET_DIR_)/include\"\n")
    write(nvcc / "nvvm" / "libdevice" / "libdevice.10.bc", b"BC\xc0\xde fixture")
    cupti = pkg / "builds" / "cuda_cupti" / "extras" / "CUPTI" / "lib64"
    write(cupti / "libcupti.so.11.0.221", cc.shared("libcupti.so.11.0.221", "libcupti.so.11.0",
                                                    "int cuptiGetVersion(unsigned *v) { *v = 13; return 0; }").read_bytes(), 0o755)
    link(cupti / "libcupti.so.11.0", "libcupti.so.11.0.221")
    link(cupti / "libcupti.so", "libcupti.so.11.0")
    nvtx = pkg / "builds" / "cuda_nvtx" / "targets" / TRIPLE / "lib"
    write(nvtx / "libnvToolsExt.so.1.0.0", cc.shared("libnvToolsExt.so.1.0.0", "libnvToolsExt.so.1",
                                                     "int nvtxInitialize(const void *r) { (void)r; return 0; }").read_bytes(), 0o755)
    link(nvtx / "libnvToolsExt.so.1", "libnvToolsExt.so.1.0.0")
    link(pkg / "builds" / "cuda_nvtx" / "lib64", f"targets/{TRIPLE}/lib")
    # never taken by a runtime install: the driver, a profiler, docs, the installer
    write(pkg / "builds" / f"NVIDIA-Linux-x86_64-{DRIVER}.run",
          b"#!/bin/sh\necho the bundled driver installer must never run\nexit 1\n" + fm.random_bytes(NOT_TAKEN_BYTES // 2, "drv"), 0o755)
    write(pkg / "builds" / "nsight_systems" / "bin" / "nsys", fm.random_bytes(NOT_TAKEN_BYTES // 2, "nsys"), 0o755)
    write(pkg / "builds" / "cuda_documentation" / "EULA.txt", b"fixture EULA\n")
    write(pkg / "builds" / "version.json", json.dumps({"cuda": {"version": CUDA}}).encode())
    write(pkg / "cuda-installer", b"#!/bin/sh\necho the installer must never run\nexit 1\n", 0o755)


# CUDA 10.0: the runfile nests the toolkit's own makeself archive in run_files/
CUDA10 = "10.0.130"
DRIVER10 = "410.48"
RUNFILE10 = f"cuda/10.0/Prod/local_installers/cuda_{CUDA10}_{DRIVER10}_linux.run"
INNER10 = "cuda-linux.10.0.130-24817639.run"
CUDNN7 = {"version": "7.4.2.24", "cuda": "10.0",
          "path": "redist/cudnn/v7.4.2/cudnn-10.0-linux-x64-v7.4.2.24.tgz"}
LIBS10 = [
    ("libcudart.so.10.0.130", "libcudart.so.10.0", ["libcudart.so"], "int cudaRuntimeGetVersion(int *v) { *v = 10000; return 0; }"),
    ("libcublas.so.10.0.130", "libcublas.so.10.0", ["libcublas.so"], "int cublasGetVersion_v2(void *h, int *v) { (void)h; *v = 10000; return 0; }"),
    ("libcufft.so.10.0.145", "libcufft.so.10.0", ["libcufft.so"], "int cufftGetVersion(int *v) { *v = 10000; return 0; }"),
    ("libcurand.so.10.0.130", "libcurand.so.10.0", ["libcurand.so"], "int curandGetVersion(int *v) { *v = 10000; return 0; }"),
    ("libcusolver.so.10.0.130", "libcusolver.so.10.0", ["libcusolver.so"], "int cusolverGetVersion(int *v) { *v = 10000; return 0; }"),
    ("libcusparse.so.10.0.130", "libcusparse.so.10.0", ["libcusparse.so"], "int cusparseGetVersion(void *h, int *v) { (void)h; *v = 10000; return 0; }"),
    ("libnvrtc.so.10.0.130", "libnvrtc.so.10.0", ["libnvrtc.so"], "int nvrtcVersion(int *a, int *b) { *a = 10; *b = 0; return 0; }"),
    ("libnvToolsExt.so.1.0.0", "libnvToolsExt.so.1", ["libnvToolsExt.so"], "int nvtxInitialize(const void *r) { (void)r; return 0; }"),
    # devel and full only
    ("libnppc.so.10.0.130", "libnppc.so.10.0", ["libnppc.so"], "int nppGetLibVersion(void) { return 10000; }"),
    ("libnvgraph.so.10.0.130", "libnvgraph.so.10.0", ["libnvgraph.so"], "int nvgraphGetVersion(void) { return 10000; }"),
]
NVCC10_BANNER = "Cuda compilation tools, release 10.0, V10.0.130"


# CUDA 10.1: the toolkit tree is builds/cuda-toolkit/ (no nested runfile)
CUDA101 = "10.1.243"
RUNFILE101 = f"cuda/10.1/Prod/local_installers/cuda_{CUDA101}_418.87.00_linux.run"


def toolkit10(cc, tree, minor="10.0"):
    """The installed toolkit's layout: what cuda-linux.10.0.130-*.run holds (10.0), or
    builds/cuda-toolkit/ (10.1). Sonames carry the minor."""
    lib = tree / "targets" / TRIPLE / "lib"
    specs = [(r.replace("10.0", minor), so.replace("10.0", minor), links,
              src.replace("10000", "10010") if minor == "10.1" else src) for r, so, links, src in LIBS10]
    for real, soname, links, source in specs:
        write(lib / real, cc.shared(real, soname, source).read_bytes(), 0o755)
        link(lib / soname, real)
        for name in links:
            link(lib / name, soname)
    write(lib / "stubs" / "libcuda.so", cc.shared("stub_libcuda.so", "libcuda.so.1", "int cuInit(unsigned f) { (void)f; return 100; }").read_bytes(), 0o755)
    link(tree / "lib64", f"targets/{TRIPLE}/lib")
    write(tree / "targets" / TRIPLE / "include" / "cuda_runtime_api.h", b"#define CUDART_VERSION 10000\n")
    link(tree / "include", f"targets/{TRIPLE}/include")
    write(tree / "bin" / "nvcc", fm.nvcc_script(NVCC10_BANNER.replace("10.0", minor)), 0o755)
    write(tree / "lib" / "libcudart.so.7.0", b"32-bit library: never installed\n", 0o755)
    write(tree / "bin" / "nvcc.profile", b"TOP = $(_HERE_)/..\n")
    write(tree / "bin" / "ptxas", b"#!/bin/sh\necho 'ptxas: NVIDIA (R) Ptx optimizing assembler'\n", 0o755)
    write(tree / "bin" / "cuda-gdb", fm.random_bytes(NOT_TAKEN_BYTES // 4, "gdb10"), 0o755)
    write(tree / "nvvm" / "libdevice" / "libdevice.10.bc", b"BC\xc0\xde fixture")
    cupti = tree / "extras" / "CUPTI" / "lib64"
    write(cupti / f"libcupti.so.{minor}.130", cc.shared(f"libcupti.so.{minor}.130", f"libcupti.so.{minor}",
                                                        "int cuptiGetVersion(unsigned *v) { *v = 11; return 0; }").read_bytes(), 0o755)
    link(cupti / f"libcupti.so.{minor}", f"libcupti.so.{minor}.130")
    write(tree / "libnsight" / "nsight.jar", fm.random_bytes(NOT_TAKEN_BYTES // 4, "nsight10"))
    write(tree / "jre" / "bin" / "java", b"#!/bin/sh\nexit 1\n", 0o755)
    write(tree / "version.txt", b"CUDA Version 10.0.130\n")
    write(tree / "install-linux.pl", b"#!/usr/bin/perl\ndie 'never run';\n", 0o755)


def payload10(cc, work, pkg):
    """The outer payload of a CUDA 10.0 runfile: run_files/ with the toolkit's own runfile, the
    samples' and the driver's, and the installer."""
    tree = work / "toolkit10"
    toolkit10(cc, tree)
    (pkg / "run_files").mkdir(parents=True)
    make_runfile(tree, pkg / "run_files" / INNER10, label="CUDA Toolkit 10.0", script="./install-linux.pl")
    write(pkg / "run_files" / "cuda-samples.10.0.130-24817639-linux.run", b"#!/bin/sh\nexit 1\n" + fm.random_bytes(NOT_TAKEN_BYTES // 4, "samples"), 0o755)
    write(pkg / "run_files" / f"NVIDIA-Linux-x86_64-{DRIVER10}.run", b"#!/bin/sh\nexit 1\n" + fm.random_bytes(NOT_TAKEN_BYTES // 4, "drv10"), 0o755)
    write(pkg / "cuda-installer.pl", b"#!/usr/bin/perl\ndie 'never run';\n", 0o755)


def make_runfile(src, out, xz=False, label=f"CUDA Toolkit {CUDA}", script="./cuda-installer"):
    """Debian's makeself over `src`; the startup script is the installer, never run by cudaenv."""
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["makeself", "--quiet", "--nox11", "--xz" if xz else "--gzip", str(src), str(out),
           label, script]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def cksum(data):
    """POSIX cksum's CRC (what makeself writes as CRCsum): CRC-32 0x04C11DB7 MSB first, over the
    data and then its length's bytes, inverted."""
    crc = 0
    def feed(byte):
        nonlocal crc
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else crc << 1
            crc &= 0xFFFFFFFF
    for b in data:
        feed(b)
    n = len(data)
    while n:
        feed(n & 0xFF)
        n >>= 8
    return ~crc & 0xFFFFFFFF


def replace_payload(runfile, members, out, lie=None, checksums="fresh"):
    """A copy of `runfile` whose payload is a gzip tar of `members` [(name, bytes|None, kind, target)]
    written as raw names (a makeself run over a real folder cannot make '..' names). `filesizes`
    is rewritten to the new payload's size, or to `lie`. `checksums`: "fresh" rewrites the header's
    MD5 and CRCsum to the new payload's (what makeself itself would write), "stale" keeps the old
    payload's (a runfile altered after makeself made it), "none" zeroes them (--nomd5 --nocrc)."""
    data = runfile.read_bytes()
    head_lines = None
    for line in data[:1 << 20].split(b"\n"):
        if line.startswith(b'skip="'):
            head_lines = int(line.split(b'"')[1])
            break
    assert head_lines, "not a makeself 2.4 runfile"
    pos = 0
    for _ in range(head_lines):
        pos = data.index(b"\n", pos) + 1
    header = data[:pos]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, body, kind, target in members:
            fm.tar_add(tar, name, body, 0o755 if kind == "file" else 0o644, kind, target)
    body = buf.getvalue()
    lines = header.split(b"\n")
    for i, line in enumerate(lines):
        if line.startswith(b'filesizes="'):
            lines[i] = b'filesizes="%d"' % (lie if lie is not None else len(body))
        elif line.startswith(b'MD5="') and checksums != "stale":
            md5 = hashlib.md5(body).hexdigest() if checksums == "fresh" else "0" * 32
            lines[i] = b'MD5="%s"' % md5.encode()
        elif line.startswith(b'CRCsum="') and checksums != "stale":
            lines[i] = b'CRCsum="%d"' % (cksum(body) if checksums == "fresh" else 0)
        elif line.startswith(b'SHA="') and checksums != "stale" and line.strip(b'SHA="0') != b"":
            sha = hashlib.sha256(body).hexdigest() if checksums == "fresh" else "0" * 64
            lines[i] = b'SHA="%s"' % sha.encode()
    out.write_bytes(b"\n".join(lines) + body)
    return out


def build_cudnn_tgz(cc, mirror, spec=CUDNN):
    v = spec["version"]
    files = [("NVIDIA_SLA_cuDNN_Support.txt", b"fixture\n", 0o644, "file", None)]
    if v.startswith("7."):  # one library, and the version in cudnn.h itself
        code = 7402
        files += fm.lib_files(cc, "lib64", [("libcudnn.so.7.4.2", "libcudnn.so.7", ["libcudnn.so"],
                                             f"#include <stddef.h>\nsize_t cudnnGetVersion(void) {{ return {code}; }}")])
        files.append(("include/cudnn.h", fm.cudnn_header(v), 0o644, "file", None))
    else:
        files += fm.lib_files(cc, "lib64", fm.cudnn_lib_specs(v))
        files.append(("include/cudnn_version.h", fm.cudnn_header(v), 0o644, "file", None))
        files.append(("include/cudnn.h", b"#include \"cudnn_version.h\"\n", 0o644, "file", None))
    out = mirror / spec["path"]
    fm.write_archive(out, "cuda", files, compression="gz")
    return fm.sha256(out), out.stat().st_size


def facts(runfile_sha, cudnn_sha, cudnn_size, runfile10_sha, cudnn7_sha, cudnn7_size):
    def cudnn_release(spec, sha, size):
        return {"version": spec["version"], "builds": [
            {"cuda": spec["cuda"], "platforms": {fm.PLATFORM: {
                "url": f"{fm.NVIDIA}/{spec['path']}", "sha256": sha, "size": str(size)}}}]}
    return {
        "tensorflow": [{"tf": "2.4", "tf_version": "2.4.0", "package": "tensorflow", "os": "linux",
                        "python": "3.6-3.8", "cuda": "11.0", "cudnn": "8.0", "compiler": "GCC 7.3.1",
                        "build_tools": "Bazel 3.1.0"},
                       {"tf": "1.15", "tf_version": "1.15.0", "package": "tensorflow", "os": "linux",
                        "python": "2.7, 3.3-3.7", "cuda": "10.0", "cudnn": "7.4", "compiler": "GCC 7.3.1",
                        "build_tools": "Bazel 0.26.1"}],
        "cuda_min_driver": [{"cuda": CUDA, "table3_label": "11.0.3 GA", "linux_min_driver": "450.51.06"},
                            {"cuda": CUDA10, "table3_label": "10.0.130", "linux_min_driver": "410.48"}],
        "cuda_minor_version_compatibility": {"11.x": {"linux_min": "450.80.02"}},
        "cuda_runfile_installers": {"versions": {
            CUDA: {"runfile_bundled_linux_driver": DRIVER,
                   "runfiles": {"Linux-x86_64": {"url": f"{fm.NVIDIA}/{RUNFILE}", "sha256": runfile_sha}}},
            CUDA10: {"runfile_bundled_linux_driver": DRIVER10,
                     "runfiles": {"Linux-x86_64": {"url": f"{fm.NVIDIA}/{RUNFILE10}", "sha256": runfile10_sha}}}}},
        "cuda_sm_support": {"per_cuda": {"11.0": {"min_sm": "sm_35", "max_sm": "sm_80",
                                                  "real_archs": ["sm_35", "sm_70", "sm_80"]},
                                         "10.0": {"min_sm": "sm_30", "max_sm": "sm_75",
                                                  "real_archs": ["sm_30", "sm_70", "sm_75"]}}},
        "nvcc_host_gcc_max": {"11.0": {"gcc_max": "9", "clang_max": "9"},
                              "10.0": {"gcc_max": "7", "clang_max": "6.0"}},
        "gpus_detail": [{"name": "NVIDIA A100", "compute_capability": "8.0", "architecture": "Ampere"}],
        "cudnn_releases": {"releases": [cudnn_release(CUDNN, cudnn_sha, cudnn_size),
                                        cudnn_release(CUDNN7, cudnn7_sha, cudnn7_size)],
            "sublibraries": {"8": {"libs": fm.CUDNN_LIBS[8], "version_header": "cudnn_version.h"},
                             "7": {"libs": ["libcudnn"], "version_header": "cudnn.h"}}},
        "redist_manifest_sha256": {"registry": {}},
    }


def generate(cudaenv, out, fact_doc):
    ref = out / "reference"
    shutil.rmtree(ref, ignore_errors=True)
    ref.mkdir(parents=True)
    (ref / "facts.json").write_text(json.dumps(fact_doc, indent=2))
    man = out / "manifests"
    shutil.rmtree(man, ignore_errors=True)
    man.mkdir()
    subprocess.run([cudaenv, "__generate-manifests", "--reference", str(ref), "--out", str(man)],
                   check=True, stdout=subprocess.DEVNULL)
    shutil.copy(Path(__file__).resolve().parents[2] / "manifests" / "profiles.json", man / "profiles.json")
    return man


def build(out, cudaenv, xz=False):
    out = Path(out)
    mirror = out / "mirror"
    shutil.rmtree(mirror, ignore_errors=True)
    mirror.mkdir(parents=True)
    with __import__("tempfile").TemporaryDirectory() as work:
        cc = fm.Compiler(work)
        pkg = Path(work) / "pkg"
        payload(cc, pkg)
        run = make_runfile(pkg, mirror / RUNFILE, xz)
        cudnn_sha, cudnn_size = build_cudnn_tgz(cc, mirror)
        pkg10 = Path(work) / "pkg10"
        payload10(cc, Path(work), pkg10)
        run10 = make_runfile(pkg10, mirror / RUNFILE10, xz, label="CUDA 10.0", script="./cuda-installer.pl")
        cudnn7_sha, cudnn7_size = build_cudnn_tgz(cc, mirror, CUDNN7)
        pkg101 = Path(work) / "pkg101"
        toolkit10(cc, pkg101 / "builds" / "cuda-toolkit", "10.1")
        write(pkg101 / "builds" / "NVIDIA-Linux-x86_64-418.87.00.run", b"#!/bin/sh\nexit 1\n", 0o755)
        write(pkg101 / "cuda-installer", b"#!/bin/sh\nexit 1\n", 0o755)
        run101 = make_runfile(pkg101, mirror / RUNFILE101, xz, label="CUDA 10.1", script="./cuda-installer")
    doc = facts(fm.sha256(run), cudnn_sha, cudnn_size, fm.sha256(run10), cudnn7_sha, cudnn7_size)
    doc["cuda_runfile_installers"]["versions"][CUDA101] = {"runfiles": {"Linux-x86_64": {
        "url": f"{fm.NVIDIA}/{RUNFILE101}", "sha256": fm.sha256(run101)}}}
    doc["cuda_min_driver"].append({"cuda": CUDA101, "table3_label": "10.1.243", "linux_min_driver": "418.87.00"})
    generate(cudaenv, out, doc)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--cudaenv", required=True)
    ap.add_argument("--xz", action="store_true")
    args = ap.parse_args()
    build(args.dir, args.cudaenv, args.xz)
    print(args.dir)


if __name__ == "__main__":
    main()
