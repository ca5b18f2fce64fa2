#!/usr/bin/python3
"""Writes the fuzz targets' seed corpora (tests/fuzz/corpus/<target>/seed-*) from the project's own
manifests, trimmed NVIDIA indexes (data/reference) and small tars built here.
Run from the repository root; the output is committed. Crash inputs a fuzzer finds are committed
beside them as corpus/<target>/regress-*, and never regenerated."""
import io
import json
import pathlib
import sys
import tarfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fuzz" / "corpus"
REFERENCE = ROOT / "data" / "reference"


def put(target, name, data):
    d = OUT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / f"seed-{name}").write_bytes(data if isinstance(data, bytes) else data.encode())


def manifests():
    m = ROOT / "manifests"
    docs = [
        (0, "cuda-11.8", m / "cuda" / "11.8.0.json"),
        (0, "cuda-10.0", m / "cuda" / "10.0.130.json"),
        (1, "cudnn-8.6", m / "cudnn" / "8.6.0.163.json"),
        (1, "cudnn-7.6", m / "cudnn" / "7.6.5.32.json"),
        (2, "tensorflow", m / "frameworks" / "tensorflow.json"),
        (3, "gpus", m / "gpus.json"),
        (4, "profiles", m / "profiles.json"),
        (5, "rules", m / "rules.json"),
        (6, "indexes", m / "indexes.json"),
        (7, "advisories", m / "advisories.json"),
        (8, "cublas", m / "cublas.json"),
    ]
    for kind, name, path in docs:
        doc = json.loads(path.read_text())
        if kind == 0:  # a few components keep the seed small
            keep = sorted(doc.get("components", {}))[:3]
            doc["components"] = {k: doc["components"][k] for k in keep}
        if kind == 7:  # one advisory of each product keeps it small
            seen, keep = set(), []
            for a in doc["advisories"]:
                product = a["affects"][0]["product"]
                if product not in seen:
                    seen.add(product)
                    keep.append(a)
            doc["advisories"] = keep
        if kind == 8:
            doc["patches"] = doc["patches"][:2]
        put("manifest", name, bytes([kind]) + json.dumps(doc, indent=1).encode())


def redistrib():
    for name in ("cuda-redistrib_11.8.0.json", "cuda-redistrib_12.4.1.json", "cudnn-redistrib_8.9.7.29.json",
                 "cudnn-redistrib_9.8.0.json"):
        path = REFERENCE / name
        if not path.exists():
            print(f"skipped {name}: {REFERENCE} is not there", file=sys.stderr)
            continue
        doc = json.loads(path.read_text())
        keys = [k for k in doc if isinstance(doc[k], dict)]
        for k in keys[3:]:
            del doc[k]
        put("redistrib", name.removesuffix(".json"), json.dumps(doc, indent=1))


def specs():
    for i, s in enumerate(["tf-2.13", "11.8", "11.8+cudnn-8.6", "cuda-12.4.1+cudnn-9.8.0", "tensorflow==2.15.1",
                           "12", "12.4.1.3.2.1", "tf-2.13+cudnn-8.6", "cudnn/12.4", "lib/libcudart.so.11.8.89",
                           "%2e%2e/etc", "torch-2.1", "11.8.0+cudnn8.6.0.163"]):
        put("spec", f"{i:02d}", s)


def selection():
    texts = {
        "version": "11.8\n",
        "comment": "# pinned for the lab\n  tf-2.13   # team\n",
        "pair": "11.8.0+cudnn8.6.0.163",
        "crlf": "12.4\r\n",
        "requirements": "numpy==1.26\ntensorflow==2.13.1\n",
        "extras": "tensorflow[and-cuda]~=2.15\n",
        "pipfile": '[packages]\ntensorflow-gpu = "==2.10"\n',
        "conda": "dependencies:\n  - python=3.10\n  - tensorflow=2.13\n",
        "pyproject": '[project]\ndependencies = ["tensorflow>=2.14,<2.15"]\n',
        "config": "# fleet settings\nroot = /opt/cudaenv\nmirror = http://10.0.0.5/nvidia\nmanifests = /srv/m\n",
        "config-crlf": "mirror=https://m.example/x # c\n\nroot=/data\r\n",
    }
    for name, text in texts.items():
        put("selection", name, text)


def tar(entries, fmt=tarfile.GNU_FORMAT):
    """A tar of (name, kind, data); USTAR_FORMAT puts 'ustar' at byte 257, what a runfile header's
    payload check takes as a plain tar."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for name, kind, data in entries:
            info = tarfile.TarInfo(name)
            if kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                t.addfile(info)
            elif kind == "link":
                info.type, info.linkname = tarfile.SYMTYPE, data
                t.addfile(info)
            elif kind == "hard":
                info.type, info.linkname = tarfile.LNKTYPE, data
                t.addfile(info)
            else:
                info.size, info.mode = len(data), 0o755 if kind == "exe" else 0o644
                t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def archives():
    top = "cuda_cudart-linux-x86_64-11.8.89-archive"
    elf = b"\x7fELF\x02\x01\x01" + bytes(57)
    put("archive", "nvidia-layout", tar([
        (top, "dir", None), (f"{top}/lib", "dir", None), (f"{top}/include", "dir", None),
        (f"{top}/lib/libcudart.so.11.8.89", "file", elf),
        (f"{top}/lib/libcudart.so.11.0", "link", "libcudart.so.11.8.89"),
        (f"{top}/lib/libcudart.so", "link", "libcudart.so.11.0"),
        (f"{top}/lib/libcudart_static.a", "hard", f"{top}/lib/libcudart.so.11.8.89"),
        (f"{top}/include/cuda_runtime.h", "file", b"#pragma once\n"),
        (f"{top}/bin", "dir", None), (f"{top}/bin/nvcc", "exe", b"#!/bin/sh\n"),
        (f"{top}/LICENSE", "file", b"license\n"),
    ]))
    put("archive", "link-chain-escape", tar([
        (top, "dir", None), (f"{top}/lib", "dir", None),
        (f"{top}/lib/up", "link", ".."), (f"{top}/lib/x", "link", "up/../../etc/passwd"),
    ]))
    put("archive", "case-twins", tar([
        (top, "dir", None), (f"{top}/Foo.h", "file", b"a"), (f"{top}/foo.h", "file", b"b"),
    ]))
    put("archive", "absolute", tar([(top, "dir", None), ("/etc/cron.d/x", "file", b"x")]))
    put("archive", "link-loop", tar([
        (top, "dir", None), (f"{top}/a", "link", "b"), (f"{top}/b", "link", "a"),
    ]))


def makeself(payload, md5=None):
    """A makeself 2.4-style header (skip="N") in front of `payload`, MD5 declared when given."""
    lines = ["#!/bin/sh", "# This script was generated using Makeself 2.4.5", 'label="inner"',
             f'filesizes="{len(payload)}"', f'MD5="{md5 or "0" * 32}"', 'CRCsum="0000000000"',
             'skip="SKIP"', "exit 0"]
    lines[6] = f'skip="{len(lines)}"'
    return ("\n".join(lines) + "\n").encode() + payload


def selected():
    elf = b"\x7fELF\x02\x01\x01" + bytes(57)
    payload = tar([
        ("builds", "dir", None),
        ("builds/cuda_cudart/targets/x86_64-linux/lib/libcudart.so.11.0.221", "file", elf),
        ("builds/cuda_cudart/targets/x86_64-linux/lib/libcudart.so.11.0", "link", "libcudart.so.11.0.221"),
        ("builds/cuda_cudart/targets/x86_64-linux/include/cuda_runtime.h", "file", b"#pragma once\n"),
        ("builds/libcublas/lib64/libcublas.so.11", "file", elf),
        ("builds/NVIDIA-Linux-x86_64-450.51.06.run", "exe", b"#!/bin/sh\n"),
        ("builds/nsight_systems/bin/nsys", "exe", b"x"),
    ])
    put("selected", "cuda11-runfile-payload", bytes([3]) + b"#!\n" + payload)
    put("selected", "traversal-in-a-skipped-member", bytes([0]) + tar([
        ("builds/cuda_demo_suite/../../../escaped", "file", b"x")]))


def nested():
    import hashlib
    inner_payload = tar([
        ("bin", "dir", None), ("bin/nvcc", "file", b"#!/bin/sh\n"),
        ("targets/x86_64-linux/lib/libcudart.so.10.0.130", "file", b"\x7fELF" + bytes(60)),
        ("targets/x86_64-linux/lib/libcudart.so.10.0", "link", "libcudart.so.10.0.130"),
    ], tarfile.USTAR_FORMAT)
    inner = makeself(inner_payload, hashlib.md5(inner_payload).hexdigest())
    put("nested", "cuda10-nested-installer", tar([
        ("run_files", "dir", None),
        ("run_files/cuda-linux.10.0.130-24817639.run", "exe", inner),
        ("run_files/cuda-samples.10.0.130-24817639-linux.run", "exe", b"#!/bin/sh\n"),
    ]))
    put("nested", "inner-md5-mismatch", tar([
        ("run_files/cuda-linux.10.0.130-24817639.run", "exe", makeself(inner_payload, "f" * 32))]))


def xz():
    import lzma
    top = "cuda_cudart-linux-x86_64-11.8.89-archive"
    body = tar([(top, "dir", None), (f"{top}/lib", "dir", None),
                (f"{top}/lib/libcudart.so.11.8.89", "file", b"\x7fELF" + bytes(60)),
                (f"{top}/lib/libcudart.so.11.0", "link", "libcudart.so.11.8.89")])
    put("xz", "tar-to-compress", bytes([0]) + body)
    put("xz", "raw-xz-stream", bytes([1]) + lzma.compress(body, format=lzma.FORMAT_XZ, preset=0))
    put("xz", "raw-xz-truncated", bytes([1]) + lzma.compress(body, format=lzma.FORMAT_XZ)[:-20])


def recompressed():
    import shutil
    import subprocess
    top = "cuda_cudart-linux-x86_64-12.4.127-archive"
    body = tar([(top, "dir", None), (f"{top}/lib", "dir", None),
                (f"{top}/lib/libcudart.so.12.4.127", "file", b"\x7fELF" + bytes(60)),
                (f"{top}/lib/libcudart.so.12", "link", "libcudart.so.12.4.127")])
    entry = {"original": {"path": f"cuda/redist/cuda_cudart/linux-x86_64/{top}.tar.xz",
                          "sha256": "a" * 64, "size": 1000},
             "path": f"cudaenv-recompressed/cuda/redist/cuda_cudart/linux-x86_64/{top}.tar.zst",
             "sha256": "b" * 64, "size": 900, "codec": "zstd"}
    payload = json.dumps({"schema": "cudaenv.recompressed/1", "created": "2026-12-07T00:00:00Z",
                          "archives": [entry]}).encode()
    put("recompressed", "signed-payload", bytes([1]) + payload)
    put("recompressed", "whole-index-unknown-key", bytes([0]) + b"cudaenv-recompressed/1\nsignature "
        + b"0" * 16 + b" " + b"1" * 128 + b"\n\n" + payload)
    put("recompressed", "tar-to-compress", bytes([2]) + body)
    if shutil.which("zstd"):  # the raw frames need the zstd tool; the harness makes the rest
        raw = subprocess.run(["zstd", "-q", "-c", "--check"], input=body, capture_output=True,
                             check=True).stdout
        put("recompressed", "raw-zstd-frame", bytes([3]) + raw)
        put("recompressed", "raw-zstd-truncated", bytes([3]) + raw[:-9])


def module_signature():
    """A module signed as the kernel's sign-file signs it (a detached PKCS#7 without attributes or
    certificates, struct module_signature, the magic), and MokListRT as efivarfs shows it, both
    made with the real openssl."""
    import struct
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        def run(*args):
            subprocess.run(args, cwd=d, check=True, capture_output=True)
        run("openssl", "req", "-new", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "36500",
            "-subj", "/CN=DKMS module signing key", "-keyout", "k.key", "-out", "k.pem")
        run("openssl", "x509", "-in", "k.pem", "-outform", "DER", "-out", "k.der")
        body = b"\x7fELF nvidia module"
        pathlib.Path(d, "body").write_bytes(body)
        run("openssl", "cms", "-sign", "-binary", "-noattr", "-nocerts", "-outform", "DER",
            "-md", "sha256", "-signer", "k.pem", "-inkey", "k.key", "-in", "body", "-out", "s.p7s")
        sig = pathlib.Path(d, "s.p7s").read_bytes()
        cert = pathlib.Path(d, "k.der").read_bytes()
    info = struct.pack(">BBBBB3xI", 0, 0, 2, 0, 0, len(sig))
    put("module_signature", "signed-module", b"\0" + body + sig + info + b"~Module signature appended~\n")
    put("module_signature", "unsigned-module", b"\0" + body)
    x509 = bytes.fromhex("a159c0a5e494a74a87b5ab155c2bf072")
    owner = bytes.fromhex("50ab5d6046e00043abb63dd810dd8b23")
    lst = x509 + struct.pack("<III", 28 + 16 + len(cert), 0, 16 + len(cert)) + owner + cert
    put("module_signature", "moklist", b"\1" + lst)


if __name__ == "__main__":
    manifests()
    redistrib()
    specs()
    selection()
    archives()
    selected()
    nested()
    xz()
    recompressed()
    module_signature()
