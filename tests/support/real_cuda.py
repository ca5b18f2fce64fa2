#!/usr/bin/python3
"""NVIDIA's real CUDA 11.8 binaries, repacked into NVIDIA's redistrib layout.

    real_cuda.py [--cache DIR] [--cudaenv EXE]

Debian 12's non-free component ships NVIDIA's own CUDA 11.8 binaries (nvidia-cuda-toolkit,
libcudart11.0, libnvvm4, nvidia-cuda-dev; 11.8.89~11.8.0-5~deb12u1). This script

1. downloads those .debs with `apt-get download` through a private apt configuration: the
   machine's own Debian source URIs are copied at run time with `contrib non-free` added, into a
   state folder of its own (the machine's apt sources and lists are never changed, and no host
   name is written anywhere in the repository);
2. repacks the files into the archives NVIDIA publishes for CUDA 11.8.0 -- cuda_cudart,
   cuda_nvcc, cuda_cuobjdump, each `<comp>-linux-x86_64-<v>-archive/` with NVIDIA's folders
   (bin/, include/, lib/, nvvm/) and NVIDIA's nvcc.profile -- and writes an NVIDIA-format
   redistrib_11.8.0.json for them (real sha256 and sizes);
3. with --cudaenv, turns that into cudaenv manifests with the real generator.

Everything lands in the cache (default $CUDAENV_REAL_CACHE, else /var/cache/cudaenv-tests as
root, else ~/.cache/cudaenv-tests): debs/ (kept, ~870 MB), and real-<key>/ with mirror/,
reference/ and manifests/. A second run finds everything there and does nothing.
"""
import argparse
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixture_mirror  # noqa: E402

PLATFORM = "linux-x86_64"
PACKAGES = ["nvidia-cuda-toolkit", "libcudart11.0", "libnvvm4", "nvidia-cuda-dev"]
DEB_VERSION_PREFIX = "11.8"  # the packages' upstream version: 11.8.89~11.8.0-...
CUDA_VERSION = "11.8.0"
CUDART = "11.8.89"
DRIVER_FLOOR = "520.61.05"  # CUDA 11.8 GA's driver (Table 3)

# NVIDIA's nvcc.profile for 11.8 redistrib archives (the file format nvcc reads; paths relative
# to the nvcc binary, $(_TARGET_DIR_) = targets/x86_64-linux).
NVCC_PROFILE = """
TOP              = $(_HERE_)/..

NVVMIR_LIBRARY_DIR = $(TOP)/$(_NVVM_BRANCH_)/libdevice

LD_LIBRARY_PATH += $(TOP)/lib:
PATH            += $(TOP)/$(_NVVM_BRANCH_)/bin:$(_HERE_):

INCLUDES        +=  "-I$(TOP)/$(_TARGET_DIR_)/include" $(_SPACE_)

LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)/stubs" "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)"

CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
"""

# headers that belong to other components (cuBLAS, cuFFT, ...) and stay out of cuda_cudart
OTHER_LIBRARY_HEADERS = ("cublas", "cufft", "curand", "cusolver", "cusparse", "npp", "nvjpeg",
                         "nvrtc", "nvToolsExt", "nvblas", "cudalibxt", "nvPTXCompiler", "nv_decode",
                         "fatbinary_section")
NVCC_HEADERS = ("crt/", "fatbinary_section.h", "nvPTXCompiler.h")


def default_cache():
    if os.environ.get("CUDAENV_REAL_CACHE"):
        return Path(os.environ["CUDAENV_REAL_CACHE"])
    if os.geteuid() == 0:
        return Path("/var/cache/cudaenv-tests")
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cudaenv-tests"


# --- 1. the .debs, through a private apt configuration --------------------------------------

def os_codename():
    for line in Path("/etc/os-release").read_text().splitlines():
        if line.startswith("VERSION_CODENAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return ""


def machine_sources():
    """(uri, suite, signed_by) of the machine's Debian sources, from both apt formats."""
    codename = os_codename()
    found = []
    etc = Path("/etc/apt")
    one_line = [etc / "sources.list"] + sorted((etc / "sources.list.d").glob("*.list"))
    for f in one_line:
        if not f.is_file():
            continue
        for line in f.read_text().splitlines():
            words = line.split("#", 1)[0].split()
            if len(words) < 3 or words[0] != "deb":
                continue
            opts = ""
            if words[1].startswith("["):
                end = next(i for i, w in enumerate(words) if w.endswith("]"))
                opts = " ".join(words[1:end + 1])
                words = [words[0]] + words[end + 1:]
            signed = ""
            for o in opts.strip("[]").split():
                if o.startswith("signed-by="):
                    signed = o.split("=", 1)[1]
            found.append((words[1], words[2], signed))
    for f in sorted((etc / "sources.list.d").glob("*.sources")):
        for stanza in f.read_text().split("\n\n"):
            fields = {}
            for line in stanza.splitlines():
                if line.startswith("#") or ":" not in line:
                    continue
                k, v = line.split(":", 1)
                fields[k.strip().lower()] = v.strip()
            if "deb" not in fields.get("types", "").split() or fields.get("enabled", "yes") == "no":
                continue
            for uri in fields.get("uris", "").split():
                for suite in fields.get("suites", "").split():
                    found.append((uri, suite, fields.get("signed-by", "")))
    # only the distribution's own archives (its suites are named after the release)
    return [s for s in found if codename and s[1].split("-")[0] == codename]


def fetch_debs(cache):
    debs = cache / "debs"
    have = {p: sorted(debs.glob(f"{p}_{DEB_VERSION_PREFIX}*.deb")) for p in PACKAGES}
    if all(have.values()):
        return {p: v[-1] for p, v in have.items()}
    sources = machine_sources()
    if not sources:
        raise SystemExit("real_cuda: this machine has no Debian apt source to copy "
                         "(looked in /etc/apt/sources.list and sources.list.d)")
    apt = cache / "apt"
    shutil.rmtree(apt, ignore_errors=True)
    for d in ("lists/partial", "archives/partial", "sources.list.d", "preferences.d"):
        (apt / d).mkdir(parents=True)
    stanzas = []
    for uri, suite, signed in sources:
        stanza = f"Types: deb\nURIs: {uri}\nSuites: {suite}\nComponents: main contrib non-free\n"
        if signed:
            stanza += f"Signed-By: {signed}\n"
        stanzas.append(stanza)
    (apt / "sources.list.d" / "cudaenv-tests.sources").write_text("\n".join(stanzas))
    conf = apt / "apt.conf"
    conf.write_text(
        f'Dir::State "{apt}";\nDir::State::Lists "{apt}/lists";\n'
        f'Dir::State::status "/var/lib/dpkg/status";\nDir::Cache "{apt}";\n'
        f'Dir::Cache::archives "{apt}/archives";\nDir::Etc::SourceList "/dev/null";\n'
        f'Dir::Etc::SourceParts "{apt}/sources.list.d";\nDir::Etc::Preferences "/dev/null";\n'
        f'Dir::Etc::PreferencesParts "{apt}/preferences.d";\nAPT::Sandbox::User "root";\n')
    env = dict(os.environ, APT_CONFIG=str(conf), DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], env=env, check=True)
    debs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        subprocess.run(["apt-get", "download", "-qq", *PACKAGES], env=env, cwd=tmp, check=True)
        for f in Path(tmp).glob("*.deb"):
            os.replace(f, debs / f.name)  # a whole file, or none
    have = {p: sorted(debs.glob(f"{p}_{DEB_VERSION_PREFIX}*.deb")) for p in PACKAGES}
    missing = [p for p, v in have.items() if not v]
    if missing:
        raise SystemExit(f"real_cuda: apt-get download gave no {', '.join(missing)} "
                         f"{DEB_VERSION_PREFIX}.x")
    return {p: v[-1] for p, v in have.items()}


# --- 2. repack into NVIDIA's redistrib layout -------------------------------------------------

def unpack(deb, dest, members=None):
    """The deb's files under dest (only `members`, tar wildcards, when given)."""
    dest.mkdir(parents=True, exist_ok=True)
    cmd = f"dpkg-deb --fsys-tarfile '{deb}' | tar -x -C '{dest}'"
    if members:
        cmd += " --wildcards " + " ".join(f"'{m}'" for m in members)
    subprocess.run(["bash", "-o", "pipefail", "-c", cmd], check=True)


def add_tree_file(files, rel, src):
    st = src.lstat()
    if src.is_symlink():
        files.append((rel, None, 0o777, "symlink", os.readlink(src)))
    else:
        files.append((rel, src.read_bytes(), 0o755 if st.st_mode & 0o111 else 0o644, "file", None))


def write_component(mirror, comp, version, files):
    top = f"{comp}-{PLATFORM}-{version}-archive"
    rel = f"{comp}/{PLATFORM}/{top}.tar.xz"
    out = mirror / "cuda" / "redist" / rel
    files = [("LICENSE", b"NVIDIA Software License Agreement (repacked from Debian's "
              b"non-free nvidia-cuda-toolkit for tests)\n", 0o644, "file", None)] + files
    out.parent.mkdir(parents=True, exist_ok=True)
    # xz preset 1: the format NVIDIA uses, at a speed a test run can afford
    with open(out, "wb") as raw, tarfile.open(fileobj=raw, mode="w:xz", preset=1) as tar:
        fixture_mirror.tar_add(tar, top + "/", kind="dir")
        made = set()
        for rel_path, data, mode, kind, target in sorted(files, key=lambda f: f[0]):
            parts = rel_path.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                d = "/".join(parts[:i])
                if d not in made:
                    made.add(d)
                    fixture_mirror.tar_add(tar, f"{top}/{d}/", kind="dir")
            fixture_mirror.tar_add(tar, f"{top}/{rel_path}", data, mode, kind, target)
    return {"name": comp, "license": "CUDA Toolkit", "version": version,
            PLATFORM: {"relative_path": rel, "sha256": fixture_mirror.sha256(out),
                       "md5": hashlib.md5(out.read_bytes()).hexdigest(),
                       "size": str(out.stat().st_size)}}


def repack(debs, out):
    mirror = out / "mirror"
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        x = Path(tmp)
        for p in ("nvidia-cuda-toolkit", "libcudart11.0", "libnvvm4"):
            unpack(debs[p], x)
        unpack(debs["nvidia-cuda-dev"], x, ["./usr/include/*",
                                            "./usr/lib/x86_64-linux-gnu/libcudart_static.a",
                                            "./usr/lib/x86_64-linux-gnu/libcudadevrt.a",
                                            "./usr/lib/x86_64-linux-gnu/libculibos.a",
                                            "./usr/lib/x86_64-linux-gnu/stubs/libcuda.so"])
        inc = x / "usr/include"
        lib = x / "usr/lib/x86_64-linux-gnu"
        tk = x / "usr/lib/nvidia-cuda-toolkit"
        ubin = x / "usr/bin"

        # cuda_cudart: the runtime, its headers, the static runtime and the driver stub
        cudart = []
        for f in sorted(inc.rglob("*")):
            rel = str(f.relative_to(inc))
            if f.is_dir() or rel.startswith(NVCC_HEADERS) or rel.startswith(OTHER_LIBRARY_HEADERS) \
                    or rel.startswith(("thrust/", "cub/", "cuda/", "nv/")) or rel == "nvvm.h":
                continue
            add_tree_file(cudart, "include/" + rel, f)
        cudart.append((f"lib/libcudart.so.{CUDART}", (lib / f"libcudart.so.{CUDART}").read_bytes(),
                       0o755, "file", None))
        cudart.append(("lib/libcudart.so.11.0", None, 0o777, "symlink", f"libcudart.so.{CUDART}"))
        cudart.append(("lib/libcudart.so", None, 0o777, "symlink", "libcudart.so.11.0"))
        for a in ("libcudart_static.a", "libcudadevrt.a", "libculibos.a"):
            add_tree_file(cudart, "lib/" + a, lib / a)
        add_tree_file(cudart, "lib/stubs/libcuda.so", lib / "stubs/libcuda.so")

        # cuda_nvcc: the compiler driver and its tools, NVVM, the crt headers
        nvcc = [("bin/nvcc.profile", NVCC_PROFILE.encode(), 0o644, "file", None)]
        add_tree_file(nvcc, "bin/nvcc", tk / "bin/nvcc")  # /usr/bin/nvcc is Debian's wrapper
        for tool in ("ptxas", "fatbinary", "nvlink", "cudafe++", "bin2c", "__nvcc_device_query"):
            add_tree_file(nvcc, "bin/" + tool, ubin / tool)
        for stub in ("link.stub", "prelink.stub"):
            add_tree_file(nvcc, "bin/crt/" + stub, tk / "bin/crt" / stub)
        add_tree_file(nvcc, "nvvm/bin/cicc", tk / "bin/cicc")
        add_tree_file(nvcc, "nvvm/libdevice/libdevice.10.bc", tk / "libdevice/libdevice.10.bc")
        add_tree_file(nvcc, "nvvm/include/nvvm.h", inc / "nvvm.h")
        add_tree_file(nvcc, "nvvm/lib64/libnvvm.so.4.0.0", lib / "libnvvm.so.4.0.0")
        nvcc.append(("nvvm/lib64/libnvvm.so.4", None, 0o777, "symlink", "libnvvm.so.4.0.0"))
        nvcc.append(("nvvm/lib64/libnvvm.so", None, 0o777, "symlink", "libnvvm.so.4"))
        for f in sorted(inc.rglob("*")):
            rel = str(f.relative_to(inc))
            if not f.is_dir() and rel.startswith(NVCC_HEADERS):
                add_tree_file(nvcc, "include/" + rel, f)

        cuobjdump = []
        add_tree_file(cuobjdump, "bin/cuobjdump", ubin / "cuobjdump")

        doc = {"release_date": "2022-10-03", "release_label": CUDA_VERSION, "release_product": "cuda"}
        doc["cuda_cudart"] = write_component(mirror, "cuda_cudart", CUDART, cudart)
        doc["cuda_nvcc"] = write_component(mirror, "cuda_nvcc", CUDART, nvcc)
        doc["cuda_cuobjdump"] = write_component(mirror, "cuda_cuobjdump", "11.8.86", cuobjdump)
    text = json.dumps(doc, indent=4)
    (mirror / "cuda" / "redist" / f"redistrib_{CUDA_VERSION}.json").write_text(text)
    return text


def facts():
    return {
        "tensorflow": [
            {"tf": "2.13", "tf_version": "2.13.0", "package": "tensorflow", "os": "linux",
             "python": "3.8-3.11", "cuda": "11.8", "cudnn": "8.6", "compiler": "Clang 16.0.0",
             "build_tools": "Bazel 5.3.0"}],
        "cuda_min_driver": [{"cuda": CUDA_VERSION, "table3_label": CUDA_VERSION,
                             "linux_min_driver": DRIVER_FLOOR}],
        "cuda_minor_version_compatibility": {"11.x": {"linux_min": "450.80.02"}},
        "cuda_runfile_installers": {"versions": {}},
        "cuda_sm_support": {"per_cuda": {"11.8": {"min_sm": "sm_35", "max_sm": "sm_90",
                                                  "real_archs": ["sm_35", "sm_80", "sm_90"]}}},
        "nvcc_host_gcc_max": {"11.8": {"gcc_max": "11", "clang_max": "14"}},
        "gpus_detail": [{"name": "NVIDIA A100", "compute_capability": "8.0", "architecture": "Ampere"}],
        "cudnn_releases": {"releases": [], "sublibraries": {
            "8": {"libs": fixture_mirror.CUDNN_LIBS[8], "version_header": "cudnn_version.h"},
            "9": {"libs": fixture_mirror.CUDNN_LIBS[9], "version_header": "cudnn_version.h"}}},
        "redist_manifest_sha256": {"registry": {}},
    }


def prepare(cache=None, cudaenv=None, project_manifests=None):
    """The repacked mirror, its reference files and (with cudaenv) manifests; cached."""
    cache = Path(cache or default_cache())
    cache.mkdir(parents=True, exist_ok=True)
    debs = fetch_debs(cache)
    key = hashlib.sha256("|".join(d.name for d in debs.values()).encode() +
                         Path(__file__).read_bytes()).hexdigest()[:16]
    out = cache / f"real-{key}"
    if not (out / "done").exists():
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        text = repack(debs, out)
        ref = out / "reference"
        ref.mkdir()
        (ref / f"cuda-redistrib_{CUDA_VERSION}.json").write_text(text)
        (ref / "facts.json").write_text(json.dumps(facts(), indent=2))
        (out / "done").write_text("\n".join(str(d) for d in debs.values()) + "\n")
        for old in cache.glob("real-*"):
            if old != out:
                shutil.rmtree(old, ignore_errors=True)
    if cudaenv:
        man = out / "manifests"
        if not (man / "profiles.json").exists():
            tmp = out / "manifests.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir()
            subprocess.run([cudaenv, "__generate-manifests", "--reference", str(out / "reference"),
                            "--out", str(tmp)], check=True, stdout=subprocess.DEVNULL)
            src = Path(project_manifests) if project_manifests else \
                Path(__file__).resolve().parents[2] / "manifests"
            shutil.copy(src / "profiles.json", tmp / "profiles.json")
            os.replace(tmp, man)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", help="cache folder (default: %(default)s)", default=str(default_cache()))
    ap.add_argument("--cudaenv", help="the cudaenv binary, to generate manifests")
    args = ap.parse_args()
    print(prepare(args.cache, args.cudaenv))


if __name__ == "__main__":
    main()
