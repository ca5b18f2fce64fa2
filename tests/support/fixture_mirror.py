#!/usr/bin/env python3
"""Builds a fixture mirror: NVIDIA's exact archive layouts holding real ELF libraries.

    fixture_mirror.py DIR [--cudaenv CUDAENV] [--platform P ...]

writes
    DIR/mirror/    a tree laid out like https://developer.download.nvidia.com/compute:
                   cuda/redist/redistrib_<v>.json, cuda/redist/<comp>/linux-x86_64/<comp>-linux-x86_64-<v>-archive.tar.xz,
                   cudnn/redist/redistrib_<v>.json, cudnn/redist/cudnn/linux-x86_64/cudnn-...-archive.tar.xz,
                   (with cublas=True) cublas/redist/redistrib_<label>.json,
                   cublas/redist/libcublas/linux-x86_64/libcublas-linux-x86_64-<v>_cuda12-archive.tar.xz,
                   redist/cudnn/v8.2.4/cudnn-11.4-linux-x64-v8.2.4.15.tgz (the old cuda/lib64 layout)
    DIR/reference/ NVIDIA-format redistrib files and a small facts.json, the generator's input
    DIR/manifests/ cudaenv manifests made from DIR/reference by `cudaenv __generate-manifests`
                   (when CUDAENV is given), plus the project's profiles.json

Libraries are compiled here with gcc: real SONAMEs, real version functions
(cudaRuntimeGetVersion, cudnnGetVersion), so the loader, ldconfig and dlopen treat them as the
real thing. nvcc is a script that prints NVIDIA's version banner.

The platform is a parameter: each release is built for the platforms asked for among those NVIDIA
ships it for (RELEASE_PLATFORMS: Jetson's linux-aarch64 exists for CUDA 11.8 and 12.4 and cuDNN
9.1, not for CUDA 13 or cuDNN 8.6), each platform's libraries compiled for its architecture
(aarch64-linux-gnu-gcc for linux-sbsa and linux-aarch64 on an x86_64 machine).
"""
import argparse
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import platform as host
import tempfile
from pathlib import Path

PLATFORM = "linux-x86_64"  # the default platform, and the only one the old tgz layout has
ARCH = {"linux-x86_64": "x86_64", "linux-sbsa": "aarch64", "linux-aarch64": "aarch64"}
# NVIDIA's target folder (targets/<triple>) and Debian's multiarch triplet, per platform
TARGET_TRIPLE = {"linux-x86_64": "x86_64-linux", "linux-sbsa": "sbsa-linux", "linux-aarch64": "aarch64-linux"}
MULTIARCH = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu"}
# The platforms NVIDIA publishes each fixture release for (the real indexes: linux-aarch64 in
# CUDA 11.8, 12.0-12.2, 12.4-12.9 and cuDNN 8.9, 9.0-9.20 only; ../shared/reference/jetson.json)
ALL = ("linux-x86_64", "linux-sbsa", "linux-aarch64")
RELEASE_PLATFORMS = {"11.8.0": ALL, "12.4.1": ALL, "13.4.2": ("linux-x86_64", "linux-sbsa"),
                     "8.6.0.163": ("linux-x86_64", "linux-sbsa"), "9.1.1.17": ALL,
                     "9.27.0.42": ("linux-x86_64", "linux-sbsa"), "9.24.0.43": ("linux-x86_64",)}
# components NVIDIA ships for some platforms only
COMPONENT_PLATFORMS = {"cuda_compat": ("linux-x86_64",), "cuda_compat_orin": ("linux-sbsa",)}
NVIDIA = "https://developer.download.nvidia.com/compute"

# CUDA releases: component -> (version, [(real file, soname, [symlinks], exported C function)])
CUDA = {
    "11.8.0": {
        "date": "2022-10-03",
        "components": {
            "cuda_cudart": ("11.8.89", [("libcudart.so.11.8.89", "libcudart.so.11.0", ["libcudart.so"],
                                         "int cudaRuntimeGetVersion(int *v) { *v = 11080; return 0; }")]),
            "cuda_nvcc": ("11.8.89", []),
            "cuda_nvrtc": ("11.8.89", [("libnvrtc.so.11.8.89", "libnvrtc.so.11.2", ["libnvrtc.so"],
                                        "int nvrtcVersion(int *a, int *b) { *a = 11; *b = 8; return 0; }")]),
            "cuda_cupti": ("11.8.87", [("libcupti.so.11.8.87", "libcupti.so.11.8", ["libcupti.so"],
                                        "int cuptiGetVersion(unsigned *v) { *v = 18; return 0; }")]),
            "cuda_nvtx": ("11.8.86", [("libnvToolsExt.so.1.0.0", "libnvToolsExt.so.1", ["libnvToolsExt.so"],
                                       "int nvtxInitialize(const void *r) { (void)r; return 0; }")]),
            "libcublas": ("11.11.3.6", [
                ("libcublasLt.so.11.11.3.6", "libcublasLt.so.11", ["libcublasLt.so"],
                 "int cublasLtGetVersion(void) { return 111103; }"),
                ("libcublas.so.11.11.3.6", "libcublas.so.11", ["libcublas.so"],
                 "int cublasGetVersion_v2(void *h, int *v) { (void)h; *v = 111103; return 0; }")]),
            "libcufft": ("10.9.0.58", [("libcufft.so.10.9.0.58", "libcufft.so.10", ["libcufft.so"],
                                        "int cufftGetVersion(int *v) { *v = 10900; return 0; }")]),
            "libcurand": ("10.3.0.86", [("libcurand.so.10.3.0.86", "libcurand.so.10", ["libcurand.so"],
                                         "int curandGetVersion(int *v) { *v = 10300; return 0; }")]),
            "libcusolver": ("11.4.1.48", [("libcusolver.so.11.4.1.48", "libcusolver.so.11", ["libcusolver.so"],
                                           "int cusolverGetVersion(int *v) { *v = 11401; return 0; }")]),
            "libcusparse": ("11.7.5.86", [("libcusparse.so.11.7.5.86", "libcusparse.so.11", ["libcusparse.so"],
                                           "int cusparseGetVersion(void *h, int *v) { (void)h; *v = 11705; return 0; }")]),
            "cuda_cuobjdump": ("11.8.86", []),
        },
        "nvcc_banner": "Cuda compilation tools, release 11.8, V11.8.89\nBuild cuda_11.8.r11.8/compiler.31833905_0",
        "driver": "520.61.05",
    },
    "12.4.1": {
        "date": "2024-04-03",
        "components": {
            "cuda_cudart": ("12.4.127", [("libcudart.so.12.4.127", "libcudart.so.12", ["libcudart.so"],
                                          "int cudaRuntimeGetVersion(int *v) { *v = 12040; return 0; }")]),
            "cuda_nvcc": ("12.4.131", []),
            "libcublas": ("12.4.5.8", [("libcublas.so.12.4.5.8", "libcublas.so.12", ["libcublas.so"],
                                        "int cublasGetVersion_v2(void *h, int *v) { (void)h; *v = 120405; return 0; }")]),
            "libnvjitlink": ("12.4.127", [("libnvJitLink.so.12.4.127", "libnvJitLink.so.12", ["libnvJitLink.so"],
                                           "int nvJitLinkVersion(unsigned *a, unsigned *b) { *a = 12; *b = 4; return 0; }")]),
            # NVIDIA's forward-compatibility libraries, as 13.1 on ship them: compat/ holds a newer
            # driver's libcuda, the index nests the archive under a cuda_variant
            "cuda_compat": ("560.35.03", [("libcuda.so.560.35.03", "libcuda.so.1", ["libcuda.so"],
                                           "int cuDriverGetVersion(int *v) { *v = 12060; return 0; }\n"
                                           "int cuInit(unsigned f) { (void)f; return 0; }"),
                                          ("libnvidia-ptxjitcompiler.so.560.35.03", "libnvidia-ptxjitcompiler.so.1", [],
                                           "int __cudaenv_fixture_ptxjit(void) { return 0; }")]),
        },
        "nvcc_banner": "Cuda compilation tools, release 12.4, V12.4.131\nBuild cuda_12.4.r12.4/compiler.34097967_0",
        "driver": "550.54.15",
    },
}

# Releases after facts.json (built with newer=True): CUDA 13.4's index as NVIDIA writes it from
# 13.4 on -- no nvidia_driver, cuda_compat or fabricmanager; a windows-arm64 platform; renamed
# `name` fields -- and a cuDNN whose index facts.json does not list, shipping cudnn_jit.
CUDA_NEWER = {
    "13.4.2": {
        "date": "2026-09-16",
        "components": {
            "cuda_cudart": ("13.4.75", [("libcudart.so.13.4.75", "libcudart.so.13", ["libcudart.so"],
                                         "int cudaRuntimeGetVersion(int *v) { *v = 13040; return 0; }")]),
            "cuda_nvcc": ("13.4.78", []),
            "libcublas": ("13.5.1.2", [("libcublas.so.13.5.1.2", "libcublas.so.13", ["libcublas.so"],
                                        "int cublasGetVersion_v2(void *h, int *v) { (void)h; *v = 130501; return 0; }")]),
            "libnvjitlink": ("13.4.75", [("libnvJitLink.so.13.4.75", "libnvJitLink.so.13", ["libnvJitLink.so"],
                                          "int nvJitLinkVersion(unsigned *a, unsigned *b) { *a = 13; *b = 4; return 0; }")]),
            # Orin's forward-compatibility driver for CUDA 13 (linux-sbsa only, from 13.2; the
            # real 13.4.2 index: cuda_compat_orin 13.4.47145772)
            "cuda_compat_orin": ("13.4.47145772", [("libcuda.so.1.1", "libcuda.so.1", ["libcuda.so"],
                                                    "int cuDriverGetVersion(int *v) { *v = 13040; return 0; }\n"
                                                    "int cuInit(unsigned f) { (void)f; return 0; }")]),
        },
        "nvcc_banner": "Cuda compilation tools, release 13.4, V13.4.78\nBuild cuda_13.4.r13.4/compiler.36400000_0",
        "names": {"cuda_nvcc": "Cuda Nvcc", "cuda_cudart": "Cuda Cudart"},
        "windows_arm64": True,
    },
}
# A release after the reference (built with driver_compat=True): NVIDIA publishes CUDA 13.5.0 --
# the mirror has its index and archives -- but the reference knows it only as announced
# (cuda-2026-12-supplement.json's cuda_13_5); DIR/reference-later adds its index, as a later
# manifests set would.
CUDA_LATER = {
    "13.5.0": {
        "date": "2026-11-04",
        "components": {
            "cuda_cudart": ("13.5.37", [("libcudart.so.13.5.37", "libcudart.so.13", ["libcudart.so"],
                                         "int cudaRuntimeGetVersion(int *v) { *v = 13050; return 0; }")]),
            "cuda_nvcc": ("13.5.40", []),
            "libcublas": ("13.9.0.1", [("libcublas.so.13.9.0.1", "libcublas.so.13", ["libcublas.so"],
                                        "int cublasGetVersion_v2(void *h, int *v) { (void)h; *v = 130900; return 0; }")]),
        },
        "nvcc_banner": "Cuda compilation tools, release 13.5, V13.5.40\nBuild cuda_13.5.r13.5/compiler.37000000_0",
    },
}
RELEASE_PLATFORMS["13.5.0"] = ("linux-x86_64", "linux-sbsa")
# NVIDIA's per-driver index (compute/nvidia-driver/redist/redistrib_<driver>.json, from CUDA 13.4
# where cuda_compat lives), nested by a CUDA minor: driver -> (date, the CUDA minor, compat libs)
DRIVER_INDEXES = {
    "620.70.10": ("2026-11-23", "13.5", [
        ("libcuda.so.620.70.10", "libcuda.so.1", ["libcuda.so"],
         "int cuDriverGetVersion(int *v) { *v = 13050; return 0; }\n"
         "int cuInit(unsigned f) { (void)f; return 0; }"),
        ("libnvidia-ptxjitcompiler.so.620.70.10", "libnvidia-ptxjitcompiler.so.1", [],
         "int __cudaenv_fixture_ptxjit(void) { return 0; }")]),
}


def build_driver_index(compilers, mirror, driver, spec):
    """One per-driver index in NVIDIA's layout, its cuda_compat archives holding compat/ with a
    real libcuda; returns the reference's transcription of it (entries_seen's format)."""
    date, line, libs = spec
    variant = f"cuda{line}"
    comp = {"name": "CUDA compat L4T", "license": "CUDA Driver", "version": driver, "cuda_variant": [line]}
    seen = {"driver": driver, "release_date": date, "cuda_compat_variant": line}
    for plat, compiler in compilers.items():
        if plat not in ("linux-x86_64", "linux-sbsa"):
            continue
        top = f"cuda_compat-{plat}-{driver}_{variant}-archive"
        rel = f"cuda_compat/{plat}/{top}.tar.xz"
        files = [("LICENSE", b"NVIDIA fixture license\n", 0o644, "file", None)]
        files += lib_files(compiler, "compat", libs)
        out = mirror / "nvidia-driver" / "redist" / rel
        write_archive(out, top, files)
        artifact = {"relative_path": rel, "sha256": sha256(out),
                    "md5": hashlib.md5(out.read_bytes()).hexdigest(), "size": str(out.stat().st_size)}
        comp[plat] = {variant: artifact}
        seen[f"cuda_compat_{plat}"] = artifact
    index = {"release_date": date, "release_label": driver, "release_product": "nvidia-driver",
             "cuda_compat": comp}
    (mirror / "nvidia-driver" / "redist" / f"redistrib_{driver}.json").write_text(json.dumps(index, indent=4))
    return seen


def cuda_supplement_2026(entries):
    """cuda-2026-12-supplement.json as ../shared/reference writes it: 13.5 released with its index
    not known, and the per-driver indexes seen."""
    return {
        "_about": "fixture",
        "cuda_13_5": {
            "status": "released (fixture: NVIDIA's 13.5 release notes)",
            "source_release_notes": "fixture release notes",
            "table1_component_versions": {"CUDA Runtime (cudart)": "13.5.37"},
            "redistrib_index": "NOT FOUND (fixture)",
            "release_date": "NOT READ (fixture)",
            "driver_requirement": {"table3_or_branch_row": "NOT READ (fixture)",
                                   "inferred_branch": "R620 (INFERRED, fixture): first R620 driver seen",
                                   "evidence": "fixture driver index"},
            "sm_support": "NOT FOUND (fixture)",
        },
        "nvidia_driver_redist_index": {"source": "fixture_mirror.py", "entries_seen": entries},
    }


CUDNN_NEWER = {
    # the JIT library's file name is this fixture's (libcudnn_jit.so.9): cudaenv takes whatever
    # libraries the cudnn_jit archive holds and flattens them into lib64 beside cuDNN's
    "9.27.0.42": {"label": "9.27.0", "variants": ["13"], "libdir": "lib", "date": "2026-09-29",
                  "jit": True},
}

# A cuDNN known from the opening of NVIDIA's index page alone (cudnn-redist-excerpts-2026.json,
# as the real 9.23-9.28 are): its full index is on the mirror, with cudnn_jit, but the reference
# holds only the excerpt -- the linux-x86_64 archive -- and says the rest is not known.
CUDNN_EXCERPT = {
    "9.24.0.43": {"label": "9.24.0", "variants": ["13"], "libdir": "lib", "date": "2026-07-02",
                  "jit": True},
}

# cuBLAS patch releases (NVIDIA's own index tree from March 2026: compute/cublas/redist/
# redistrib_<label>.json, release_product "cublas", one component libcublas whose archives are
# nested by cuda_variant): label -> libcublas version, date, the CUDA line the reference says it
# replaces and on what basis. Built with cublas=True, for CUDA 12.4.1 (libcublas 12.4.5.8).
CUBLAS_PATCHES = {
    "12.4.6": {"version": "12.4.6.3", "date": "2026-03-16", "line": "12.4",
               "basis": "INFERRED from version numbering (fixture)", "fixes": None},
    "12.4.7": {"version": "12.4.7.1", "date": "2026-10-29", "line": "12.4",
               "basis": "PRIMARY: the fixture's release notes name it for CUDA 12.4",
               "fixes": {"bug": "cublasLtMatmul() gave wrong results in the fixture",
                         "source": "fixture release notes (PRIMARY)"}},
}


def build_cublas_patch(compilers, mirror, label, spec):
    """One patch release in NVIDIA's layout: its index and, per platform, an archive holding real
    libcublas.so.<v> and libcublasLt.so.<v> (cublasGetVersion_v2 answering the patch's version)."""
    v = spec["version"]
    major = v.split(".")[0]
    number = int(v.split(".")[0]) * 10000 + int(v.split(".")[1]) * 100 + int(v.split(".")[2])
    libs = [(f"libcublasLt.so.{v}", f"libcublasLt.so.{major}", ["libcublasLt.so"],
             f"int cublasLtGetVersion(void) {{ return {number}; }}"),
            (f"libcublas.so.{v}", f"libcublas.so.{major}", ["libcublas.so"],
             f"int cublasGetVersion_v2(void *h, int *v) {{ (void)h; *v = {number}; return 0; }}")]
    entry = {"name": "CUDA cuBLAS", "license": "CUDA Toolkit", "version": v}
    for plat, compiler in compilers.items():
        if plat not in ("linux-x86_64", "linux-sbsa"):
            continue  # NVIDIA's cuBLAS patch indexes list no linux-aarch64 (Jetson) archive
        top = f"libcublas-{plat}-{v}_cuda{major}-archive"
        rel = f"libcublas/{plat}/{top}.tar.xz"
        files = [("LICENSE", b"NVIDIA fixture license\n", 0o644, "file", None),
                 ("include/cublas_api.h", f"#define CUBLAS_VER_PATCH {v.split('.')[2]}\n".encode(),
                  0o644, "file", None)]
        files += lib_files(compiler, "lib", libs)
        out = mirror / "cublas" / "redist" / rel
        write_archive(out, top, files)
        entry[plat] = {f"cuda{major}": {"relative_path": rel, "sha256": sha256(out),
                                        "md5": hashlib.md5(out.read_bytes()).hexdigest(),
                                        "size": str(out.stat().st_size)}}
    entry["cuda_variant"] = [major]
    index = {"release_date": spec["date"], "release_label": label, "release_product": "cublas",
             "libcublas": entry}
    (mirror / "cublas" / "redist" / f"redistrib_{label}.json").write_text(json.dumps(index, indent=4))
    # the reference's transcription of it (advisories.json's cublas_patches, as
    # ../shared/reference writes it)
    return {"release_label": label, "version": v, "release_date": spec["date"],
            "cuda_variant": [major],
            "index_url": f"{NVIDIA}/cublas/redist/redistrib_{label}.json",
            "applies_to_cuda_line": spec["line"], "applies_basis": spec["basis"],
            "fixes": spec["fixes"] or {"bug": "NOT FOUND (fixture)", "source": None},
            "archives": {p: a for p, a in entry.items() if p.startswith("linux-")},
            "source": "fixture_mirror.py"}


CUDNN_LIBS = {
    8: ["libcudnn", "libcudnn_ops_infer", "libcudnn_ops_train", "libcudnn_cnn_infer",
        "libcudnn_cnn_train", "libcudnn_adv_infer", "libcudnn_adv_train"],
    9: ["libcudnn", "libcudnn_graph", "libcudnn_engines_precompiled", "libcudnn_engines_runtime_compiled",
        "libcudnn_heuristic", "libcudnn_ops", "libcudnn_cnn", "libcudnn_adv"],
}

# cuDNN releases in the redist layout: version -> (cuda variant, lib folder inside the archive)
CUDNN_REDIST = {
    "8.6.0.163": {"label": "8.6.0", "variants": ["11"], "libdir": "lib", "date": "2022-10-03"},
    # 9.x archives put their engines in a nested folder here, to exercise the flattening
    "9.1.1.17": {"label": "9.1.1", "variants": ["12"], "libdir": "lib", "nested": "lib/engines", "date": "2024-05-01"},
}
# The old layout: cuda/include + cuda/lib64, gzip
# (NVIDIA's SBSA file of the same release: cudnn-11.4-linux-aarch64sbsa-v8.2.4.15.tgz, TGZ_PATHS)
CUDNN_TGZ = {"version": "8.2.4.15", "cuda": "11.4",
             "path": "redist/cudnn/v8.2.4/cudnn-11.4-linux-x64-v8.2.4.15.tgz"}


def random_bytes(n, seed):
    """Deterministic incompressible bytes."""
    out = bytearray()
    counter = 0
    while len(out) < n:
        out += hashlib.sha256(f"{seed}:{counter}".encode()).digest()
        counter += 1
    return bytes(out[:n])


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def binary_platform(exe):
    """NVIDIA's platform for the architecture a binary was built for (its ELF e_machine): tests
    and benchmarks make their fixtures for the platform of the cudaenv under test (an arm64 build
    run under qemu-user gets linux-sbsa archives holding aarch64 libraries)."""
    try:
        with open(exe, "rb") as f:
            head = f.read(20)
    except OSError:
        return PLATFORM
    machine = int.from_bytes(head[18:20], "little") if head[:4] == b"\x7fELF" else 0
    return {62: "linux-x86_64", 183: "linux-sbsa"}.get(machine, PLATFORM)


def compiler_for(plat):
    """gcc for the platform's architecture: this machine's own, else Debian's cross compiler."""
    arch = ARCH[plat]
    native = host.machine() == arch
    for name in ([] if not native else ["gcc", "cc"]) + [MULTIARCH[arch] + "-gcc"]:
        if shutil.which(name):
            return shutil.which(name)
    sys.exit(f"fixture_mirror: no C compiler for {plat} ({MULTIARCH[arch]}-gcc: "
             "apt-get install gcc-" + arch.replace("_", "-") + "-linux-gnu)")


class Compiler:
    def __init__(self, work, plat=PLATFORM):
        self.work = Path(work) / plat
        self.work.mkdir(parents=True, exist_ok=True)
        self.cc = compiler_for(plat)

    def shared(self, out, soname, source, needed=()):
        src = self.work / (out + ".c")
        src.write_text(source + "\n")
        cmd = [self.cc, "-shared", "-fPIC", "-O0", "-o", str(self.work / out), str(src), "-Wl,-soname," + soname]
        for lib in needed:
            cmd += ["-L", str(self.work), "-l:" + lib]
        subprocess.run(cmd, check=True)
        return self.work / out


def tar_add(tar, name, data=None, mode=0o644, kind="file", target=None):
    info = tarfile.TarInfo(name)
    info.mtime = 1700000000
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    if kind == "dir":
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        tar.addfile(info)
    elif kind == "symlink":
        info.type = tarfile.SYMTYPE
        info.linkname = target
        info.mode = 0o777
        tar.addfile(info)
    else:
        info.size = len(data)
        info.mode = mode
        tar.addfile(info, io.BytesIO(data))


def write_archive(path, top, files, compression="xz"):
    """files: list of (relpath, bytes|None, mode, kind, target); directories are implied."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # reproducible: the same release built twice is the same bytes (gzip's header would carry the
    # time), as NVIDIA's file is the same file whichever fixture mirror serves it
    with open(path, "wb") as raw, \
            (gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if compression == "gz" else io.BytesIO()) as gz, \
            tarfile.open(fileobj=gz if compression == "gz" else raw, mode="w" if compression == "gz" else "w:xz") as tar:
        tar_add(tar, top + "/", kind="dir")
        made = set()
        for rel, data, fmode, kind, target in files:
            parts = rel.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                d = "/".join(parts[:i])
                if d not in made:
                    made.add(d)
                    tar_add(tar, f"{top}/{d}/", kind="dir")
            tar_add(tar, f"{top}/{rel}", data, fmode, kind, target)


def lib_files(compiler, libdir, libs):
    files = []
    for real, soname, links, source in libs:
        data = compiler.shared(real, soname, source).read_bytes()
        files.append((f"{libdir}/{real}", data, 0o755, "file", None))
        files.append((f"{libdir}/{soname}", None, 0, "symlink", real))
        for link in links:
            files.append((f"{libdir}/{link}", None, 0, "symlink", soname))
    return files


def nvcc_script(banner):
    lines = "\\n".join(["nvcc: NVIDIA (R) Cuda compiler driver",
                         "Copyright (c) 2005-2024 NVIDIA Corporation"] + banner.split("\n"))
    # The real nvcc binary names the environment variables it reads: NVCC_PREPEND_FLAGS and
    # NVCC_APPEND_FLAGS always; NVCC_CCBIN from 12.x on (11.8's has no NVCC_CCBIN; 13.0's has).
    major = int(banner.split("release ", 1)[1].split(".", 1)[0]) if "release " in banner else 0
    reads = "NVCC_PREPEND_FLAGS NVCC_APPEND_FLAGS" + (" NVCC_CCBIN" if major >= 12 else "")
    # --fixture-env (the fixture's, not nvcc's): what the shim gave it
    return ("#!/bin/sh\n# reads " + reads + "\n"
            "case \"$1\" in --version|-V) printf '%b\\n' '" + lines + "';; "
            "--fixture-env) echo \"LD_LIBRARY_PATH=$LD_LIBRARY_PATH\";; "
            "*) echo 'nvcc fatal   : No input files specified'; exit 1;; esac\n").encode()


def build_cuda(compilers, mirror, version, spec):
    entries = {"release_date": spec["date"], "release_label": version, "release_product": "cuda"}
    names = spec.get("names", {})
    for comp, (cver, libs) in spec["components"].items():
        for plat, compiler in compilers.items():
            if plat in RELEASE_PLATFORMS[version] and plat in COMPONENT_PLATFORMS.get(comp, ALL):
                build_cuda_component(entries, names, compiler, plat, mirror, version, spec, comp, cver, libs)
    text = json.dumps(entries, indent=4)
    (mirror / "cuda" / "redist" / f"redistrib_{version}.json").write_text(text)
    return text


def build_cuda_component(entries, names, compiler, plat, mirror, version, spec, comp, cver, libs):
    if True:
        compat = comp == "cuda_compat"
        variant = "cuda" + ".".join(version.split(".")[:2])
        top = f"{comp}-{plat}-{cver}" + (f"_{variant}" if compat else "") + "-archive"
        rel = f"{comp}/{plat}/{top}.tar.xz"
        files = [("LICENSE", b"NVIDIA fixture license\n", 0o644, "file", None)]
        files += lib_files(compiler, {"cuda_compat": "compat", "cuda_compat_orin": "compat_orin"}.get(comp, "lib"), libs)
        if comp == "cuda_cudart":
            major, minor = (int(x) for x in version.split(".")[:2])
            files.append(("include/cuda_runtime_api.h",
                          f"#define CUDART_VERSION {major * 1000 + minor * 10}\n".encode(), 0o644, "file", None))
            # a static runtime, as NVIDIA ships: incompressible, so downloads take many chunks
            files.append(("lib/libcudart_static.a", b"!<arch>\n" + random_bytes(600 * 1024, version),
                          0o644, "file", None))
        if comp == "cuda_nvcc":
            files.append(("bin/nvcc", nvcc_script(spec["nvcc_banner"]), 0o755, "file", None))
            files.append(("bin/ptxas", b"#!/bin/sh\necho 'ptxas: NVIDIA (R) Ptx optimizing assembler'\n", 0o755, "file", None))
            files.append(("nvvm/libdevice/libdevice.10.bc", b"BC\xc0\xde fixture", 0o644, "file", None))
        if comp == "cuda_cuobjdump":
            files.append(("bin/cuobjdump", b"#!/bin/sh\necho 'cuobjdump: NVIDIA (R) CUDA Object Utility'\n", 0o755, "file", None))
        out = mirror / "cuda" / "redist" / rel
        write_archive(out, top, files)
        artifact = {"relative_path": rel, "sha256": sha256(out),
                    "md5": hashlib.md5(out.read_bytes()).hexdigest(), "size": str(out.stat().st_size)}
        entry = entries.setdefault(comp, {"name": names.get(comp, comp), "license": "CUDA Toolkit",
                                          "version": cver})
        entry[plat] = {variant: artifact} if compat else artifact
        if compat:
            entry["cuda_variant"] = [variant[4:]]
        if spec.get("windows_arm64"):
            # a platform cudaenv does not serve: listed, never downloaded
            entry["windows-arm64"] = {"relative_path": f"{comp}/windows-arm64/{comp}-windows-arm64-{cver}-archive.zip",
                                      "sha256": "0" * 64, "md5": "0" * 32, "size": "1"}


def cudnn_header(version):
    major, minor, patch = (int(x) for x in version.split(".")[:3])
    mult = 10000 if major >= 9 else 1000
    return (f"#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n"
            f"#define CUDNN_MAJOR {major}\n#define CUDNN_MINOR {minor}\n#define CUDNN_PATCHLEVEL {patch}\n"
            f"#define CUDNN_VERSION (CUDNN_MAJOR * {mult} + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n#endif\n").encode()


def cudnn_lib_specs(version):
    major, minor, patch = (int(x) for x in version.split(".")[:3])
    code = major * (10000 if major >= 9 else 1000) + minor * 100 + patch
    short = f"{major}.{minor}.{patch}"
    return [(f"{lib}.so.{short}", f"{lib}.so.{major}", [f"{lib}.so"],
             f"#include <stddef.h>\nsize_t cudnnGetVersion(void) {{ return {code}; }}")
            for lib in CUDNN_LIBS[major]]


def build_cudnn_redist(compilers, mirror, version, spec):
    label = spec["label"]
    component = {"name": "NVIDIA CUDA Deep Neural Network library", "license": "cudnn",
                 "version": version, "cuda_variant": spec["variants"]}
    plats = {p: c for p, c in compilers.items() if p in RELEASE_PLATFORMS[version]}
    for (plat, compiler), variant in [(pc, v) for pc in plats.items() for v in spec["variants"]]:
        top = f"cudnn-{plat}-{version}_cuda{variant}-archive"
        rel = f"cudnn/{plat}/{top}.tar.xz"
        specs = cudnn_lib_specs(version)
        files = [("LICENSE", b"cuDNN fixture license\n", 0o644, "file", None)]
        nested = spec.get("nested")
        main = [s for s in specs if not (nested and "engines" in s[0])]
        engines = [s for s in specs if nested and "engines" in s[0]]
        files += lib_files(compiler, spec["libdir"], main)
        if engines:
            files += lib_files(compiler, nested, engines)
        files.append(("include/cudnn_version.h", cudnn_header(version), 0o644, "file", None))
        files.append(("include/cudnn.h", b"#include \"cudnn_version.h\"\n", 0o644, "file", None))
        out = mirror / "cudnn" / "redist" / rel
        write_archive(out, top, files)
        component.setdefault(plat, {})[f"cuda{variant}"] = {
            "relative_path": rel, "sha256": sha256(out), "md5": hashlib.md5(out.read_bytes()).hexdigest(),
            "size": str(out.stat().st_size)}
    doc = {"release_date": spec["date"], "release_label": label, "release_product": "cudnn",
           "cudnn": component}
    if spec.get("jit"):
        jit = {"name": "NVIDIA CUDA Deep Neural Network Graph JIT library", "license": "cudnn",
               "version": version, "cuda_variant": spec["variants"]}
        major = version.split(".")[0]
        short = ".".join(version.split(".")[:3])
        for (plat, compiler), variant in [(pc, v) for pc in plats.items() for v in spec["variants"]]:
            top = f"cudnn_jit-{plat}-{version}_cuda{variant}-archive"
            rel = f"cudnn_jit/{plat}/{top}.tar.xz"
            files = [("LICENSE", b"cuDNN fixture license\n", 0o644, "file", None)]
            files += lib_files(compiler, "lib", [(f"libcudnn_jit.so.{short}", f"libcudnn_jit.so.{major}",
                                                  ["libcudnn_jit.so"], "int cudnnJitFixture(void) { return 1; }")])
            out = mirror / "cudnn" / "redist" / rel
            write_archive(out, top, files)
            jit.setdefault(plat, {})[f"cuda{variant}"] = {
                "relative_path": rel, "sha256": sha256(out), "md5": hashlib.md5(out.read_bytes()).hexdigest(),
                "size": str(out.stat().st_size)}
        doc["cudnn_jit"] = jit
        # samples: sources only, never installed
        doc["cudnn_samples"] = {"name": "NVIDIA cuDNN samples", "license": "cudnn", "version": version,
                                "source": {"relative_path": f"cudnn_samples/source/cudnn_samples-source-{version}-archive.tar.xz",
                                           "sha256": "0" * 64, "md5": "0" * 32, "size": "1"}}
    text = json.dumps(doc, indent=4)
    (mirror / "cudnn" / "redist" / f"redistrib_{label}.json").write_text(text)
    return label, text


def cudnn_excerpt(index, spec):
    """What the opening of an index page shows, in the excerpts' format: its linux-x86_64
    archives; SBSA for CUDA 13, cudnn_jit and the samples cut off."""
    comp = index["cudnn"]
    known = {"linux-x86_64": {k: {f: v[f] for f in ("relative_path", "sha256", "md5", "size")}
                              for k, v in comp.get("linux-x86_64", {}).items()}}
    return {"release_label": spec["label"], "release_date": index["release_date"], "version": comp["version"],
            "index_url": f"{NVIDIA}/cudnn/redist/redistrib_{spec['label']}.json",
            "cuda_variant": spec["variants"], "archives_known": known,
            "archives_unknown": ["linux-sbsa cuda13", "windows-x86_64", "cudnn_jit", "cudnn_samples"]}


TGZ_PATHS = {"linux-x86_64": CUDNN_TGZ["path"],
             "linux-sbsa": "redist/cudnn/v8.2.4/cudnn-11.4-linux-aarch64sbsa-v8.2.4.15.tgz"}


def build_cudnn_tgz(compiler, mirror, plat=PLATFORM):
    v = CUDNN_TGZ["version"]
    files = [("NVIDIA_SLA_cuDNN_Support.txt", b"fixture\n", 0o644, "file", None)]
    files += lib_files(compiler, "lib64", cudnn_lib_specs(v))
    files.append(("lib64/libcudnn_static.a", b"!<arch>\n", 0o644, "file", None))
    files.append(("include/cudnn_version.h", cudnn_header(v), 0o644, "file", None))
    files.append(("include/cudnn.h", b"#include \"cudnn_version.h\"\n", 0o644, "file", None))
    out = mirror / TGZ_PATHS[plat]
    write_archive(out, "cuda", files, compression="gz")
    return sha256(out), out.stat().st_size


def facts(cuda_versions, cudnn_entries):
    return {
        "tensorflow": [
            {"tf": "2.13", "tf_version": "2.13.0", "package": "tensorflow", "os": "linux", "python": "3.8-3.11",
             "cuda": "11.8", "cudnn": "8.6", "compiler": "Clang 16.0.0", "build_tools": "Bazel 5.3.0"},
            {"tf": "2.16", "tf_version": "2.16.1", "package": "tensorflow", "os": "linux", "python": "3.9-3.12",
             "cuda": "12.4", "cudnn": "9.1", "compiler": "Clang 17.0.6", "build_tools": "Bazel 6.5.0"},
        ],
        "cuda_min_driver": [{"cuda": v, "table3_label": v, "linux_min_driver": CUDA[v]["driver"]} for v in cuda_versions],
        "cuda_minor_version_compatibility": {"11.x": {"linux_min": "450.80.02"}, "12.x": {"linux_min": "525.60.13"}},
        "cuda_runfile_installers": {"versions": {}},
        "cuda_sm_support": {"per_cuda": {
            "11.8": {"min_sm": "sm_35", "max_sm": "sm_90", "real_archs": ["sm_35", "sm_80", "sm_90"]},
            "12.4": {"min_sm": "sm_50", "max_sm": "sm_90", "real_archs": ["sm_50", "sm_80", "sm_90"]}}},
        "nvcc_host_gcc_max": {"11.8": {"gcc_max": "11", "clang_max": "14"}, "12.4": {"gcc_max": "13", "clang_max": "17"}},
        "gpus_detail": [{"name": "NVIDIA A100", "compute_capability": "8.0", "architecture": "Ampere"}],
        "cudnn_releases": {"releases": cudnn_entries, "sublibraries": {
            "8": {"libs": CUDNN_LIBS[8], "version_header": "cudnn_version.h"},
            "9": {"libs": CUDNN_LIBS[9], "version_header": "cudnn_version.h"}}},
        "redist_manifest_sha256": {"registry": {}},
    }


def supplement():
    """cudaenv-supplement.json for the newer releases: 13.4's driver branch and compilers."""
    return {"driver_branches": [{"cuda": "13.4", "branch": 615, "source": "fixture: the 13.4 release notes' driver branch"}],
            "host_compilers": [{"cuda": "13.4", "gcc_max": "16", "clang_max": "22", "source": "fixture"}],
            "sm_support": [{"cuda": "13.4", "same_as": "12.4", "source": "fixture"}]}


def build(out, cudaenv=None, project_manifests=None, newer=False, platforms=(PLATFORM,), cublas=False,
          driver_compat=False):
    """The mirror for `platforms` (each release built for those of them NVIDIA ships it for);
    with `cublas`, NVIDIA's cuBLAS patch tree too (CUBLAS_PATCHES) and the reference's
    advisories.json that describes it; with `driver_compat` (and `newer`), CUDA 13.5.0 on the
    mirror, announced in the reference (its index only in DIR/reference-later, made into
    DIR/manifests-later), and NVIDIA's per-driver index carrying its cuda_compat (DRIVER_INDEXES)."""
    out = Path(out)
    mirror = out / "mirror"
    ref = out / "reference"
    for d in (mirror, ref):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as work:
        ccs = {p: Compiler(work, p) for p in platforms}
        for version, spec in CUDA.items():
            text = build_cuda(ccs, mirror, version, spec)
            (ref / f"cuda-redistrib_{version}.json").write_text(text)
        cudnn_entries = []
        for version, spec in CUDNN_REDIST.items():
            label, text = build_cudnn_redist(ccs, mirror, version, spec)
            name = f"cudnn-redistrib_{label}.json"
            (ref / name).write_text(text)
            cudnn_entries.append({"version": version, "builds": [], "manifests": [name]})
        if newer:
            for version, spec in CUDA_NEWER.items():
                text = build_cuda(ccs, mirror, version, spec)
                (ref / f"cuda-redistrib_{version}.json").write_text(text)
            for version, spec in CUDNN_NEWER.items():
                label, text = build_cudnn_redist(ccs, mirror, version, spec)
                (ref / f"cudnn-redistrib_{label}.json").write_text(text)  # not in facts.json
            (ref / "cudaenv-supplement.json").write_text(json.dumps(supplement(), indent=2))
            excerpts = []
            for version, spec in CUDNN_EXCERPT.items():
                label, text = build_cudnn_redist(ccs, mirror, version, spec)  # the mirror's only
                excerpts.append(cudnn_excerpt(json.loads(text), spec))
            (ref / "cudnn-redist-excerpts-2026.json").write_text(json.dumps(
                {"_about": "fixture: the opening of NVIDIA's index pages", "releases": excerpts}, indent=1))
        if driver_compat:
            for version, spec in CUDA_LATER.items():
                later_index = build_cuda(ccs, mirror, version, spec)  # the mirror's only, for now
            seen = [build_driver_index(ccs, mirror, d, spec) for d, spec in DRIVER_INDEXES.items()]
            (ref / "cuda-2026-12-supplement.json").write_text(json.dumps(cuda_supplement_2026(seen), indent=1))
        if cublas:
            patches = [build_cublas_patch(ccs, mirror, label, spec) for label, spec in CUBLAS_PATCHES.items()]
            (ref / "advisories.json").write_text(json.dumps(
                {"_about": "fixture", "cublas_patches": {"_about": "fixture", "patches": patches}}, indent=1))
        # the old tgz layout: x86_64 and SBSA files (Jetson's came with JetPack, not as a tgz)
        tgz = {}
        for plat in [p for p in TGZ_PATHS if p in ccs] or [PLATFORM]:
            sha, size = build_cudnn_tgz(ccs.get(plat) or Compiler(work, plat), mirror, plat)
            tgz[plat] = {"url": f"{NVIDIA}/{TGZ_PATHS[plat]}", "sha256": sha, "size": str(size)}
        cudnn_entries.append({"version": CUDNN_TGZ["version"], "builds": [
            {"cuda": CUDNN_TGZ["cuda"], "platforms": tgz}]})
    doc = facts(list(CUDA), cudnn_entries)
    if newer:
        doc["cuda_minor_version_compatibility"]["13.x"] = {"first_release_linux_min": "580.65.06 (CUDA 13.0 GA, Table 3)"}
    (ref / "facts.json").write_text(json.dumps(doc, indent=2))
    # PyTorch's and JAX's tables as the project keeps them: their rows name the fixture's CUDA
    # 11.8 and 12.4 among others (torch-2.5+cu124, torch-2.0+cu118)
    real_ref = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "reference")
    shutil.copytree(os.path.join(real_ref, "frameworks"), ref / "frameworks", dirs_exist_ok=True)
    shutil.copy(os.path.join(real_ref, "cudaenv-frameworks.json"), ref / "cudaenv-frameworks.json")
    refs = [(ref, out / "manifests")]
    if driver_compat:
        later = out / "reference-later"
        shutil.rmtree(later, ignore_errors=True)
        shutil.copytree(ref, later)
        for version in CUDA_LATER:
            (later / f"cuda-redistrib_{version}.json").write_text(later_index)
        refs.append((later, out / "manifests-later"))
    for reference, man in refs if cudaenv else []:
        shutil.rmtree(man, ignore_errors=True)
        man.mkdir()
        subprocess.run([cudaenv, "__generate-manifests", "--reference", str(reference), "--out", str(man)],
                       check=True, stdout=subprocess.DEVNULL)
        src = Path(project_manifests) if project_manifests else Path(__file__).resolve().parents[2] / "manifests"
        shutil.copy(src / "profiles.json", man / "profiles.json")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--cudaenv", help="the cudaenv binary, to generate manifests")
    ap.add_argument("--platform", action="append", choices=ALL,
                    help="a platform to build (repeatable; default linux-x86_64)")
    args = ap.parse_args()
    build(args.dir, args.cudaenv, platforms=tuple(args.platform or [PLATFORM]))
    print(args.dir)


if __name__ == "__main__":
    main()
