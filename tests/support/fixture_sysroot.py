"""Builds fixture machines for `cudaenv doctor`: a folder that CUDAENV_SYSROOT points at, holding
what the doctor reads on a real machine (PCI devices in /sys, /proc files, device nodes, the loader
configuration and a cache built by the real ldconfig, toolkit trees, site-packages), with real
ELF libraries compiled here: scripted libnvidia-ml.so.1 and libcuda.so.1 (tests/support/
fake_driver.c) and libcudart/libcublas/libcudnn that report the versions asked for.

    m = Machine(tmp_path / "sysroot", Libs(work_dir))
    m.healthy()                 # one A100, driver 550.54.15, CUDA 12.4 + cuDNN 9.1 at /usr/local/cuda
    m.gpu_conf(temp=(88, 90))   # then break what a test is about
    m.ldconfig()

Device nodes are plain files: the doctor only checks that they exist.
"""
import json
import os
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import fixture_mirror

SUPPORT = Path(__file__).resolve().parent
# The ldconfig that builds a machine's cache: CUDAENV_TEST_LDCONFIG (.ci/arm64: Debian's arm64 one,
# under qemu-user), else this machine's
LDCONFIG = os.environ.get("CUDAENV_TEST_LDCONFIG") or shutil.which("ldconfig") or "/sbin/ldconfig"
CHROOT = shutil.which("chroot") or "/usr/sbin/chroot"
CUDNN_LIBS = fixture_mirror.CUDNN_LIBS


MODULE_SIG_MAGIC = b"~Module signature appended~\n"
# EFI_CERT_X509_GUID a5c059a1-94e4-4aa7-87b5-ab155c2bf072 and shim's owner GUID, as stored (the
# first three fields little-endian)
EFI_CERT_X509_GUID = bytes.fromhex("a159c0a5e494a74a87b5ab155c2bf072")
SHIM_OWNER_GUID = bytes.fromhex("50ab5d6046e00043abb63dd810dd8b23")


class SigningKey:
    """A module signing key made by the real openssl: a self-signed certificate with `cn`."""

    def __init__(self, work, cn):
        self.dir = Path(tempfile.mkdtemp(dir=work))
        self.cn = cn
        self._run("req", "-new", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "36500", "-sha256",
                  "-subj", f"/CN={cn}", "-keyout", "key.pem", "-out", "cert.pem")
        self._run("x509", "-in", "cert.pem", "-outform", "DER", "-out", "cert.der")

    def _run(self, *args):
        subprocess.run(["openssl", *args], cwd=self.dir, check=True, capture_output=True)

    def der(self):
        return (self.dir / "cert.der").read_bytes()

    def sign(self, body):
        """The PKCS#7 sign-file appends (CMS_NOCERTS | CMS_BINARY | CMS_NOATTR, detached)."""
        (self.dir / "body").write_bytes(body)
        self._run("cms", "-sign", "-binary", "-noattr", "-nocerts", "-outform", "DER", "-md", "sha256",
                  "-signer", "cert.pem", "-inkey", "key.pem", "-in", "body", "-out", "body.p7s")
        return (self.dir / "body.p7s").read_bytes()


class Libs:
    """Compiles each library once per test session and hands out copies, for the platform of the
    cudaenv under test (the doctor's query children load them: an arm64 cudaenv, aarch64 ones)."""

    def __init__(self, work, plat=fixture_mirror.PLATFORM):
        self.work = Path(work)
        self.work.mkdir(parents=True, exist_ok=True)
        self.compiler = fixture_mirror.Compiler(self.work, plat)
        self.cache = {}

    def build(self, out, soname, source, defines=()):
        key = (out, soname, source, tuple(defines))
        if key not in self.cache:
            d = self.work / f"lib{len(self.cache)}"
            d.mkdir()
            src = d / "src.c"
            src.write_text(source)
            subprocess.run([self.compiler.cc, "-shared", "-fPIC", "-O0", *defines, "-o", str(d / out),
                            str(src), "-Wl,-soname," + soname], check=True)
            self.cache[key] = d / out
        return self.cache[key]

    def fake_driver(self, which):
        source = (SUPPORT / "fake_driver.c").read_text()
        if which == "nvml":
            return self.build("libnvidia-ml.so.1", "libnvidia-ml.so.1", source, ["-DFAKE_NVML"])
        return self.build("libcuda.so.1", "libcuda.so.1", source, ["-DFAKE_CUDA"])


# What differs between the machines the fixtures lay out, by Debian architecture: the multiarch
# triplet, NVIDIA's targets/ folder of a server toolkit, how the driver names its architecture in
# /proc/driver/nvidia/version, and the running kernel.
ARCHES = {
    "amd64": dict(triplet="x86_64-linux-gnu", target="x86_64-linux", module_arch="x86_64",
                  kernel="6.1.0-27-amd64", kernel_text="Linux version 6.1.0-27-amd64 (debian-kernel@lists.debian.org)"),
    # Ubuntu's 64K-page kernel for Grace, as NVIDIA's Grace benchmarking guide shows it booted
    # (BOOT_IMAGE=/boot/vmlinuz-6.2.0-1012-nvidia-64k,
    # https://nvidia.github.io/grace-cpu-benchmarking-guide/platform/index.html)
    "arm64": dict(triplet="aarch64-linux-gnu", target="sbsa-linux", module_arch="aarch64",
                  kernel="6.2.0-1012-nvidia-64k", kernel_text="Linux version 6.2.0-1012-nvidia-64k (buildd@bos02-arm64-012)"),
}


class Machine:
    def __init__(self, root, libs, arch="amd64"):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.libs = libs
        self.gpus = []
        self.driver_settings = {}
        self.arch = arch
        a = ARCHES[arch]
        self.triplet = a["triplet"]
        self.multiarch = f"/usr/lib/{self.triplet}"
        self.target = a["target"]

    # -- files ------------------------------------------------------------------------------
    def p(self, machine_path):
        return self.root / machine_path.lstrip("/")

    def write(self, machine_path, text, mode=0o644):
        f = self.p(machine_path)
        f.parent.mkdir(parents=True, exist_ok=True)
        if f.is_symlink():
            f.unlink()
        f.write_text(text) if isinstance(text, str) else f.write_bytes(text)
        f.chmod(mode)
        return f

    def link(self, machine_path, target):
        f = self.p(machine_path)
        f.parent.mkdir(parents=True, exist_ok=True)
        if f.is_symlink() or f.exists():
            f.unlink()
        f.symlink_to(target)

    def remove(self, machine_path):
        f = self.p(machine_path)
        if f.is_symlink() or f.is_file():
            f.unlink()
        elif f.is_dir():
            shutil.rmtree(f)

    def copy(self, src, machine_path, mode=0o755):
        f = self.p(machine_path)
        f.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, f)
        f.chmod(mode)

    def shared_lib(self, libdir, real, soname, links, source):
        built = self.libs.build(real, soname, source)
        self.copy(built, f"{libdir}/{real}")
        if soname != real:
            self.link(f"{libdir}/{soname}", real)
        for l in links:
            self.link(f"{libdir}/{l}", soname)

    # -- the machine ------------------------------------------------------------------------
    def base(self):
        self.write("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n")
        self.p("/etc/ld.so.conf.d").mkdir(parents=True, exist_ok=True)
        self.p("/var/cache/ldconfig").mkdir(parents=True, exist_ok=True)
        self.p(self.multiarch).mkdir(parents=True, exist_ok=True)
        self.write("/proc/sys/kernel/osrelease", ARCHES[self.arch]["kernel"] + "\n")
        self.write("/proc/version", ARCHES[self.arch]["kernel_text"] + "\n")
        self.write("/proc/1/cgroup", "0::/init.scope\n")
        self.write("/usr/share/misc/pci.ids",
                   "# fixture pci.ids\n1002  Advanced Micro Devices, Inc. [AMD/ATI]\n\t1234  Some Radeon\n"
                   "10de  NVIDIA Corporation\n\t1db4  GV100GL [Tesla V100 PCIe 16GB]\n"
                   "\t20b0  GA100 [A100 SXM4 40GB]\n\t\t10de 134f  A100 SXM4 40GB\n"
                   "\t2330  GH100 [H100 SXM5 80GB]\n\t1180  GK104 [GeForce GTX 680]\n"
                   "10df  Emulex Corporation\n")
        self.write("/usr/bin/gcc", "#!/bin/sh\necho 12.2.0\n", 0o755)

    def pci_gpu(self, address="0000:65:00.0", device="0x20b0", width=(16, 16),
                speed=("16.0 GT/s PCIe", "16.0 GT/s PCIe"), vendor="0x10de", cls="0x030200"):
        d = f"/sys/bus/pci/devices/{address}"
        self.write(f"{d}/vendor", vendor + "\n")
        self.write(f"{d}/class", cls + "\n")
        self.write(f"{d}/device", device + "\n")
        self.write(f"{d}/current_link_width", f"{width[0]}\n")
        self.write(f"{d}/max_link_width", f"{width[1]}\n")
        self.write(f"{d}/current_link_speed", speed[0] + "\n")
        self.write(f"{d}/max_link_speed", speed[1] + "\n")

    def kernel_driver(self, version="550.54.15", nodes=("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia0")):
        self.write("/proc/driver/nvidia/version",
                   f"NVRM version: NVIDIA UNIX x86_64 Kernel Module  {version}  Thu Feb 22 01:44:30 UTC 2024\n"
                   "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n")
        self.p("/sys/module/nvidia").mkdir(parents=True, exist_ok=True)
        for n in nodes:
            self.write(n, "")
        # the kernel log since boot, in /dev/kmsg's record format: the module loading, no Xid
        self.write("/dev/kmsg",
                   "6,512,4183021,-;nvidia: loading out-of-tree module taints kernel.\n"
                   f"6,530,4400100,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  {version}\n"
                   " SUBSYSTEM=module\n")

    def hgx(self, switches=4, fabric_manager="550.54.15", running=True):
        """An HGX board: NVSwitches on the PCI bus (NVIDIA, class 0x0680, H100's LS10 0x22a3) and
        NVIDIA's fabric manager (None: not installed), its service running or not."""
        for i in range(switches):
            d = f"/sys/bus/pci/devices/0000:{0x05 + i:02x}:00.0"
            self.write(f"{d}/vendor", "0x10de\n")
            self.write(f"{d}/class", "0x068000\n")
            self.write(f"{d}/device", "0x22a3\n")
        self.remove("/usr/bin/nv-fabricmanager")
        if fabric_manager:
            self.write("/usr/bin/nv-fabricmanager",
                       f"#!/bin/sh\necho 'Fabric Manager version is : {fabric_manager}'\n", mode=0o755)
        self.remove("/proc/4242")
        if fabric_manager and running:
            # as Linux shows it: comm cut to 15 bytes (TASK_COMM_LEN), the full name in cmdline
            self.write("/proc/4242/comm", "nv-fabricmanage\n")
            self.write("/proc/4242/cmdline",
                       "/usr/bin/nv-fabricmanager\0-c\0/usr/share/nvidia/nvswitch/fabricmanager.cfg\0")

    def cdi_spec(self, driver="550.54.15", gpus=1):
        """/etc/cdi/nvidia.yaml as `nvidia-ctk cdi generate` writes it for `driver` and `gpus`."""
        lib = "/usr/lib/x86_64-linux-gnu"
        devices = "".join(f"- name: \"{i}\"\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia{i}\n"
                          for i in range(gpus))
        self.write("/etc/cdi/nvidia.yaml",
                   "---\ncdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n" + devices +
                   "containerEdits:\n  deviceNodes:\n  - path: /dev/nvidiactl\n  - path: /dev/nvidia-uvm\n"
                   f"  mounts:\n  - hostPath: {lib}/libcuda.so.{driver}\n    containerPath: {lib}/libcuda.so.{driver}\n"
                   "    options:\n    - ro\n    - nosuid\n")

    def xid(self, xid, bus="0000:65:00", text="", times=1):
        """Xid events in the kernel log, as the driver writes them."""
        with self.p("/dev/kmsg").open("a") as log:
            for i in range(times):
                log.write(f"4,{900 + i},{91234567 + i},-;NVRM: Xid (PCI:{bus}): {xid}, pid='<unknown>', "
                          f"name=<unknown>, {text}\n")

    def no_kernel_driver(self):
        self.remove("/proc/driver/nvidia")
        self.remove("/sys/module/nvidia")
        for n in ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia0"):
            self.remove(n)

    def kernel_upgraded(self, new="6.1.0-28-amd64"):
        """Rebooted into a newer kernel that DKMS built no nvidia module for (the module and
        DKMS's tree are still the old kernel's)."""
        self.no_kernel_driver()
        old = self.p("/proc/sys/kernel/osrelease").read_text().strip()
        self.module_installed(old)
        self.p(f"/var/lib/dkms/nvidia/550.54.15/{old}/x86_64/module").mkdir(parents=True, exist_ok=True)
        self.write("/proc/sys/kernel/osrelease", new + "\n")

    def module_installed(self, kernel=None, signed=False, key=None, compress=None):
        """The nvidia module on disk for `kernel` (the running one by default), as DKMS installs
        it. `signed` appends the bare signature magic; `key` (a signing_key()) signs it the way the
        kernel's scripts/sign-file does: a detached PKCS#7 without attributes or certificates,
        `struct module_signature` (id_type 2 = PKCS#7, sig_len big-endian) and the magic.
        `compress` is "xz" (as Debian's kmod: --check=crc32), "gzip" or "zstd", run for real."""
        kernel = kernel or self.p("/proc/sys/kernel/osrelease").read_text().strip()
        body = b"\x7fELF nvidia module"
        if key:
            sig = key.sign(body)
            body += sig + struct.pack(">BBBBB3xI", 0, 0, 2, 0, 0, len(sig)) + MODULE_SIG_MAGIC
        elif signed:
            body += MODULE_SIG_MAGIC
        folder = f"/lib/modules/{kernel}/updates/dkms"
        if self.p(folder).exists():
            shutil.rmtree(self.p(folder))
        self.write(f"{folder}/nvidia.ko", body)
        if compress:
            args = {"xz": ["xz", "--check=crc32"], "gzip": ["gzip"], "zstd": ["zstd", "-q", "--rm"]}
            subprocess.run([*args[compress], str(self.p(f"{folder}/nvidia.ko"))], check=True)

    def mok_list(self, *keys, var="MokListRT"):
        """shim's MOK list as efivarfs shows it: 4 attribute bytes, then one EFI_SIGNATURE_LIST per
        certificate (EFI_CERT_X509_GUID; each EFI_SIGNATURE_DATA is an owner GUID, then the DER).
        `var="db"` writes the firmware's db instead."""
        guid = "605dab50-e046-4300-abb8-bb99cb02c3b4" if var.startswith("MokListRT") else \
            "d719b2cb-3d3a-4596-a3bc-dad00e67656f"
        data = b"\x07\x00\x00\x00"
        for k in keys:
            der = k.der()
            data += (EFI_CERT_X509_GUID + struct.pack("<III", 28 + 16 + len(der), 0, 16 + len(der))
                     + SHIM_OWNER_GUID + der)
        self.write(f"/sys/firmware/efi/efivars/{var}-{guid}", data)

    def container_toolkit(self, version="1.17.8-1", config=None):
        """The NVIDIA Container Toolkit on the host: its config.toml (`config`, else the file
        1.17.8's `nvidia-ctk config default` writes, without the compat keys) and the package in
        dpkg's status."""
        if config is None:
            config = ("#accept-nvidia-visible-devices-as-volume-mounts = false\n"
                      "disable-require = false\n"
                      "supported-driver-capabilities = \"compat32,compute,display,graphics,ngx,utility,video\"\n\n"
                      "[nvidia-container-cli]\nenvironment = []\nldconfig = \"@/sbin/ldconfig\"\n"
                      "load-kmods = true\n\n[nvidia-container-runtime]\nlog-level = \"info\"\n"
                      "mode = \"auto\"\nruntimes = [\"docker-runc\", \"runc\", \"crun\"]\n\n"
                      "[nvidia-container-runtime.modes.cdi]\nannotation-prefixes = [\"cdi.k8s.io/\"]\n"
                      "default-kind = \"nvidia.com/gpu\"\nspec-dirs = [\"/etc/cdi\", \"/var/run/cdi\"]\n\n"
                      "[nvidia-container-runtime.modes.csv]\n"
                      "mount-spec-path = \"/etc/nvidia-container-runtime/host-files-for-container.d\"\n")
        self.write("/etc/nvidia-container-runtime/config.toml", config)
        status = self.p("/var/lib/dpkg/status")
        stanzas = status.read_text().split("\n\n") if status.exists() else []
        old = "".join(s + "\n\n" for s in stanzas
                      if s.strip() and not s.startswith("Package: nvidia-container-toolkit-base\n"))
        self.write("/var/lib/dpkg/status", old + "Package: nvidia-container-toolkit-base\n"
                   "Status: install ok installed\nArchitecture: amd64\n"
                   f"Version: {version}\n\n")

    def compat_libs(self, driver="570.124.06", cuda="12.4", loaded=False):
        """NVIDIA's cuda-compat-<major>-<minor> package in an image: the forward-compatibility
        libcuda in /usr/local/cuda-<cuda>/compat (reached through /usr/local/cuda when that links
        there). `loaded`: the toolkit's ldconfig mode put the folder in the loader's path (the
        hook's 00-compat-*.conf), and the cache is rebuilt."""
        folder = f"/usr/local/cuda-{cuda}/compat"
        self.copy(self.libs.fake_driver("cuda"), f"{folder}/libcuda.so.{driver}")
        self.link(f"{folder}/libcuda.so.1", f"libcuda.so.{driver}")
        if not self.p("/usr/local/cuda").exists():
            self.link("/usr/local/cuda", f"/usr/local/cuda-{cuda}")
        if loaded:
            self.write("/etc/ld.so.conf.d/00-compat-1.conf", folder + "\n")
        self.ldconfig()

    def nouveau(self):
        """nouveau bound the GPU at boot: the nvidia module is installed but not loaded."""
        self.no_kernel_driver()
        self.module_installed()
        self.write("/proc/modules", "nouveau 2732032 0 - Live 0x0000000000000000\n"
                   "drm_display_helper 184320 1 nouveau, Live 0x0000000000000000\n")
        self.p("/sys/module/nouveau").mkdir(parents=True, exist_ok=True)

    def secure_boot(self, on=True):
        """The firmware's SecureBoot variable as efivarfs shows it: 4 attribute bytes, the value."""
        self.write("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
                   b"\x06\x00\x00\x00" + (b"\x01" if on else b"\x00"))

    def add_gpu(self, name="NVIDIA A100-SXM4-40GB", bus="00000000:65:00.0", cc=(8, 0), mig=None,
                mig_instances=(), temp=(45, 90), throttle=0x0, persistence=1, ecc=(0, 0), remap=(0, 0),
                retired_pending=None):
        self.gpus.append(dict(name=name, bus=bus, cc=cc, mig=mig, mig_instances=list(mig_instances),
                              temp=temp, throttle=throttle, persistence=persistence, ecc=ecc, remap=remap,
                              retired_pending=retired_pending))

    def driver_libs(self, driver="550.54.15", cuda=12040, init=0, nvml_init=0,
                    libdir="/usr/lib/x86_64-linux-gnu"):
        self.driver_settings = dict(driver=driver, cuda=cuda, init=init, nvml_init=nvml_init, libdir=libdir)
        for which, name in (("nvml", "libnvidia-ml.so.1"), ("cuda", "libcuda.so.1")):
            self.copy(self.libs.fake_driver(which), f"{libdir}/{name}")
        self.gpu_conf()

    def gpu_conf(self, **changes):
        """Rewrites fake_gpu.conf; `changes` update the first GPU (or the driver settings)."""
        for k, v in changes.items():
            if k in self.driver_settings or k == "smoke":
                self.driver_settings[k] = v
            else:
                self.gpus[0][k] = v
        s = self.driver_settings
        lines = [f"driver {s['driver']}", f"cuda {s['cuda']}", f"init {s['init']}", f"nvml_init {s['nvml_init']}",
                 f"smoke {s.get('smoke', 'ok')}"]
        for g in self.gpus:
            lines += [f"gpu {g['name']}", f"bus {g['bus']}"]
            if g["cc"]:
                lines.append(f"cc {g['cc'][0]} {g['cc'][1]}")
            if g["mig"] is not None:
                lines.append(f"mig {g['mig'][0]} {g['mig'][1]}")
                lines += [f"mig_instance {m}" for m in g["mig_instances"]]
            if g["temp"]:
                lines.append(f"temp {g['temp'][0]} {g['temp'][1]}")
            if g["throttle"] is not None:
                lines.append(f"throttle {g['throttle']:x}")
            if g.get("persistence") is not None:
                lines.append(f"persistence {g['persistence']}")
            if g.get("ecc") is not None:
                lines.append(f"ecc {g['ecc'][0]} {g['ecc'][1]}")
            if g.get("remap") is not None:
                lines.append(f"remap {g['remap'][0]} {g['remap'][1]}")
            if g.get("retired_pending") is not None:
                lines.append(f"retired_pending {g['retired_pending']}")
            if g.get("fabric") is not None:
                lines.append(f"fabric {g['fabric'][0]} {g['fabric'][1]}")
        self.write(f"{s['libdir']}/fake_gpu.conf", "\n".join(lines) + "\n")

    def toolkit(self, prefix="/usr/local/cuda-12.4", cuda="12.4.1", cudart="12.4.127", runtime_int=None,
                nvcc="12.4.131", cudnn="9.1.1", cudnn_header=None, cudnn_cudart=None, missing=(),
                stub=True, full_version_file=True, runtime_rc=0, header=True, soname=None):
        """A toolkit tree as NVIDIA's redist archives lay it out, with cuDNN flattened into lib64."""
        major, minor = (int(x) for x in cuda.split(".")[:2])
        runtime_int = runtime_int if runtime_int is not None else major * 1000 + minor * 10
        lib = f"{prefix}/lib64"
        # CUDA 10.x names the runtime by major.minor (libcudart.so.10.2), 11.x by 11.0
        soname = soname or ("libcudart.so.11.0" if major == 11 else
                            f"libcudart.so.{major}.{minor}" if major <= 10 else f"libcudart.so.{major}")
        real = f"libcudart.so.{cudart}" if full_version_file else soname
        # runtime_rc != 0: a CUDA 11 runtime without a driver returns 35 and leaves *v as it was
        body = f"*v = {runtime_int}; return 0;" if runtime_rc == 0 else f"(void)v; return {runtime_rc};"
        self.shared_lib(lib, real, soname, ["libcudart.so"], f"int cudaRuntimeGetVersion(int *v) {{ {body} }}")
        if header:
            self.write(f"{prefix}/include/cuda_runtime_api.h",
                       f"#define CUDART_VERSION_H\n#define CUDART_VERSION  {major * 1000 + minor * 10}\n")
        self.shared_lib(lib, f"libcublas.so.{major}.{minor}.0.1", f"libcublas.so.{major}", ["libcublas.so"],
                        "int cublasGetVersion_v2(void *h, int *v) { (void)h; *v = 1; return 0; }")
        if nvcc:
            banner = f"Cuda compilation tools, release {'.'.join(nvcc.split('.')[:2])}, V{nvcc}\n" \
                     f"Build cuda_{'.'.join(nvcc.split('.')[:2])}.r0/compiler.0_0"
            self.write(f"{prefix}/bin/nvcc", fixture_mirror.nvcc_script(banner), 0o755)
        self.write(f"{prefix}/version.json", json.dumps({"cuda": {"name": "CUDA SDK", "version": cuda}}))
        if stub:
            self.write(f"{lib}/stubs/libcuda.so", b"\x7fELF stub")
        if cudnn:
            cmaj, cmin, cpatch = (int(x) for x in cudnn.split(".")[:3])
            code = cmaj * (10000 if cmaj >= 9 else 1000) + cmin * 100 + cpatch
            cudart_code = cudnn_cudart if cudnn_cudart is not None else major * 1000 + minor * 10
            for name in CUDNN_LIBS[cmaj]:
                if name in missing:
                    continue
                self.shared_lib(lib, f"{name}.so.{cudnn}", f"{name}.so.{cmaj}", [f"{name}.so"],
                                "#include <stddef.h>\n"
                                f"size_t cudnnGetVersion(void) {{ return {code}; }}\n"
                                f"size_t cudnnGetCudartVersion(void) {{ return {cudart_code}; }}")
            self.write(f"{prefix}/include/cudnn_version.h",
                       fixture_mirror.cudnn_header(cudnn_header or cudnn))
        return prefix

    def cudnn_copy(self, libdir, version="8.2.4", cuda_major=11, package=None, header_dir=None):
        """A second cuDNN outside any toolkit: NVIDIA's libcudnn8 deb lays it into the multiarch
        folder and dpkg lists its files in /var/lib/dpkg/info/<package>.list."""
        cmaj, cmin, cpatch = (int(x) for x in version.split(".")[:3])
        code = cmaj * (10000 if cmaj >= 9 else 1000) + cmin * 100 + cpatch
        files = []
        for name in CUDNN_LIBS[cmaj]:
            self.shared_lib(libdir, f"{name}.so.{version}", f"{name}.so.{cmaj}", [],
                            "#include <stddef.h>\n"
                            f"size_t cudnnGetVersion(void) {{ return {code}; }}\n"
                            f"size_t cudnnGetCudartVersion(void) {{ return {cuda_major * 1000}; }}")
            files += [f"{libdir}/{name}.so.{version}", f"{libdir}/{name}.so.{cmaj}"]
        if header_dir:
            self.write(f"{header_dir}/cudnn_version_v{cmaj}.h", fixture_mirror.cudnn_header(version))
            files.append(f"{header_dir}/cudnn_version_v{cmaj}.h")
        if package:
            self.write(f"/var/lib/dpkg/info/{package}.list",
                       "/.\n/usr\n/usr/lib\n" + "".join(f + "\n" for f in files))

    def whereami(self, *sonames, ld_library_path=None):
        """What the real glibc loader picks in this machine: a program dlopens each SONAME
        inside `chroot` (with this host's libc and ld.so copied in, the cache rebuilt by the real
        ldconfig) and prints where each came from. Returns {soname: (path, real path) or None},
        machine paths."""
        src = self.libs.work / "whereami.c"
        exe = self.libs.work / "whereami"
        if not exe.exists():
            src.write_text(
                "#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <link.h>\n#include <limits.h>\n"
                "#include <stdio.h>\n#include <stdlib.h>\n"
                "int main(int argc, char **argv) {\n"
                "  for (int i = 1; i < argc; ++i) {\n"
                "    void *h = dlopen(argv[i], RTLD_LAZY); struct link_map *m = 0; char real[PATH_MAX];\n"
                "    if (h && dlinfo(h, RTLD_DI_LINKMAP, &m) == 0 && realpath(m->l_name, real))\n"
                "      printf(\"%s=%s=%s\\n\", argv[i], m->l_name, real);\n"
                "    else printf(\"%s==\\n\", argv[i]);\n"
                "  }\n  return 0;\n}\n")
            subprocess.run([self.libs.compiler.cc, "-O0", "-o", str(exe), str(src)], check=True)
        for lib in ("libc.so.6",):
            real = os.path.realpath(f"/lib/x86_64-linux-gnu/{lib}")
            self.copy(real, f"/usr/lib/x86_64-linux-gnu/{lib}")
        self.p("/lib64").mkdir(parents=True, exist_ok=True) if not self.p("/lib64").is_symlink() else None
        self.copy(os.path.realpath("/lib64/ld-linux-x86-64.so.2"), "/lib64/ld-linux-x86-64.so.2")
        self.copy(exe, "/usr/local/bin/cudaenv-whereami")
        self.ldconfig()
        out = subprocess.run([CHROOT, str(self.root), "/usr/local/bin/cudaenv-whereami", *sonames],
                             check=True, capture_output=True, text=True,
                             env={"PATH": "/usr/bin:/bin",
                                  **({"LD_LIBRARY_PATH": ld_library_path} if ld_library_path else {})}).stdout
        found = {}
        for line in out.splitlines():
            soname, path, real = line.split("=", 2)
            found[soname] = (path, real) if path else None
        return found

    def whereami_real(self, machine_path):
        """The real path of a machine path, as the chroot sees it (links resolved in the root)."""
        path = Path("/")
        todo = [c for c in machine_path.split("/") if c]
        hops = 0
        while todo:
            c = todo.pop(0)
            if c == ".":
                continue
            if c == "..":
                path = path.parent
                continue
            nxt = path / c
            host = self.p(str(nxt))
            if host.is_symlink():
                hops += 1
                assert hops < 40, machine_path
                target = os.readlink(host)
                todo = [x for x in target.split("/") if x] + todo
                path = Path("/") if target.startswith("/") else path
                continue
            path = nxt
        return str(path)

    def ld_conf(self, name, *dirs):
        self.write(f"/etc/ld.so.conf.d/{name}", "".join(d + "\n" for d in dirs))

    def site_packages(self, venv="/opt/venv", py="python3.11"):
        return f"{venv}/lib/{py}/site-packages"

    def tensorflow(self, version="2.16.1", cuda="12.3", cudnn="8", cuda_build=True, venv="/opt/venv",
                   package="tensorflow"):
        site = self.site_packages(venv)
        self.p(f"{site}/{package}-{version}.dist-info").mkdir(parents=True, exist_ok=True)
        self.write(f"{site}/{package}-{version}.dist-info/METADATA", f"Name: {package}\nVersion: {version}\n")
        if package != "tensorflow_cpu":
            info = {"cpu_compiler": "/usr/lib/llvm-17/bin/clang", "is_cuda_build": cuda_build,
                    "is_rocm_build": False}
            if cuda_build:
                info.update(cuda_version=cuda, cudnn_version=cudnn,
                            cuda_compute_capabilities=["sm_50", "sm_60", "sm_70", "sm_80", "compute_90"])
            # as TensorFlow's gen_build_info.py writes it: module constants up to 2.2, then an
            # OrderedDict of the sorted pairs
            if tuple(int(x) for x in version.split(".")[:2]) < (2, 3):
                text = f"is_rocm_build = False\nis_cuda_build = {cuda_build}\n\n"
                if cuda_build:
                    text += f"cuda_version_number = {cuda!r}\ncudnn_version_number = {cudnn!r}\n"
            else:
                text = ("import collections\n\nbuild_info = collections.OrderedDict(" +
                        repr(sorted(info.items())) + ")\n")
            self.write(f"{site}/tensorflow/python/platform/build_info.py", text)

    def torch(self, version="2.3.0+cu121", cuda="12.1", venv="/opt/venv"):
        site = self.site_packages(venv)
        self.p(f"{site}/torch-{version}.dist-info").mkdir(parents=True, exist_ok=True)
        cuda_line = f"cuda: Optional[str] = '{cuda}'" if cuda else "cuda: Optional[str] = None"
        self.write(f"{site}/torch/version.py",
                   f"from typing import Optional\n__version__ = '{version}'\ndebug = False\n{cuda_line}\n")

    def merged_usr(self):
        """Debian 12 / Ubuntu as installed: /lib, /lib64 and /sbin are links into /usr, and
        x86_64-linux-gnu.conf lists both names of the multiarch folder; NVIDIA's CUDA debs add
        000_cuda.conf and 988_cuda-12.conf naming targets/x86_64-linux/lib through links."""
        for top in ("lib", "lib64", "sbin", "bin"):
            self.p(f"/usr/{top}").mkdir(parents=True, exist_ok=True)
            if not self.p(f"/{top}").is_symlink():
                self.link(f"/{top}", f"usr/{top}")
        self.ld_conf("x86_64-linux-gnu.conf", "# Multiarch support", "/usr/local/lib/x86_64-linux-gnu",
                     "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu")
        self.ld_conf("libc.conf", "/usr/local/lib")
        prefix = "/usr/local/cuda-12.4"
        self.link(f"{prefix}/targets/x86_64-linux/lib", "../../lib64")
        self.link("/usr/local/cuda-12", "/usr/local/cuda-12.4")
        self.ld_conf("000_cuda.conf", "/usr/local/cuda/targets/x86_64-linux/lib")
        self.ld_conf("988_cuda-12.conf", "/usr/local/cuda-12/targets/x86_64-linux/lib")
        self.ldconfig()
        return self

    def debian12_nvidia_debs(self, driver="550.54.15", gpu_device="0x20b0"):
        """A healthy Debian 12 machine as NVIDIA's own packages lay it out: merged /usr; an A100
        on x16 gen4 under its PCIe root port, sysfs linking /sys/bus/pci/devices to the device
        under its bridge; the open kernel module 550's /proc/driver/nvidia/version and the
        driver's libraries by their full version (libcuda.so.1 -> libcuda.so.550.54.15); CUDA 12.4
        from cuda-toolkit-12-4 (targets/x86_64-linux/{lib,include} real folders, lib64 and include
        links to them, /usr/local/cuda and /usr/local/cuda-12 through /etc/alternatives,
        000_cuda.conf and 988_cuda-12.conf); cuDNN 9.1.1 from cudnn9-cuda-12 in the multiarch
        folder, its header under /usr/include/x86_64-linux-gnu reached through alternatives.
        On a Machine(arch="arm64") the same packages for arm64: aarch64-linux-gnu folders, the
        toolkit in targets/sbsa-linux, the module "for aarch64", `gpu_device` the GPU's PCI id."""
        self.base()
        t, multiarch = self.triplet, self.multiarch
        for top in ("lib", "lib64", "sbin", "bin"):
            self.p(f"/usr/{top}").mkdir(parents=True, exist_ok=True)
            self.link(f"/{top}", f"usr/{top}")
        self.ld_conf(f"{t}.conf", "# Multiarch support", f"/usr/local/lib/{t}", f"/lib/{t}", f"/usr/lib/{t}")
        self.ld_conf("libc.conf", "# libc default configuration", "/usr/local/lib")
        # PCI: the root port and the GPU under it, as the kernel lays sysfs out
        port, gpu = "0000:64:00.0", "0000:65:00.0"
        dev = f"/sys/devices/pci0000:64/{port}"
        for d, vendor, device, cls in ((dev, "0x8086", "0x347a", "0x060400"),
                                       (f"{dev}/{gpu}", "0x10de", gpu_device, "0x030200")):
            self.write(f"{d}/vendor", vendor + "\n")
            self.write(f"{d}/device", device + "\n")
            self.write(f"{d}/class", cls + "\n")
            self.write(f"{d}/current_link_width", "16\n")
            self.write(f"{d}/max_link_width", "16\n")
            self.write(f"{d}/current_link_speed", "16.0 GT/s PCIe\n")
            self.write(f"{d}/max_link_speed", "16.0 GT/s PCIe\n")
        self.link(f"/sys/bus/pci/devices/{port}", f"../../../devices/pci0000:64/{port}")
        self.link(f"/sys/bus/pci/devices/{gpu}", f"../../../devices/pci0000:64/{port}/{gpu}")
        # the driver: open kernel module, libraries by their full version
        self.write("/proc/driver/nvidia/version",
                   f"NVRM version: NVIDIA UNIX Open Kernel Module for {ARCHES[self.arch]['module_arch']}  {driver}  Release Build  "
                   "(dvs-builder@U16-I3-B03-4-3)  Thu Feb 22 01:25:25 UTC 2024\n"
                   "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n")
        self.write("/sys/module/nvidia/version", driver + "\n")
        for n in ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia0"):
            self.write(n, "")
        kernel = ARCHES[self.arch]["kernel"]
        self.write(f"/lib/modules/{kernel}/updates/dkms/nvidia.ko", b"")
        self.p(f"/var/lib/dkms/nvidia/{driver}/{kernel}/{ARCHES[self.arch]['module_arch']}/module").mkdir(parents=True)
        self.add_gpu()
        self.driver_settings = dict(driver=driver, cuda=12040, init=0, nvml_init=0, libdir=multiarch)
        for which, name in (("nvml", "libnvidia-ml.so"), ("cuda", "libcuda.so")):
            self.copy(self.libs.fake_driver(which), f"{multiarch}/{name}.{driver}")
            self.link(f"{multiarch}/{name}.1", f"{name}.{driver}")
        self.gpu_conf()
        # CUDA 12.4 from NVIDIA's debs
        prefix = "/usr/local/cuda-12.4"
        self.debs_toolkit(prefix, "12")
        # cuDNN 9.1.1 from cudnn9-cuda-12
        self.cudnn_copy(multiarch, "9.1.1", cuda_major=12, package=f"libcudnn9-cuda-12:{self.arch}",
                        header_dir=f"/usr/include/{t}")
        self.link("/etc/alternatives/cudnn_version_h", f"/usr/include/{t}/cudnn_version_v9.h")
        self.link("/usr/include/cudnn_version.h", "/etc/alternatives/cudnn_version_h")
        self.ldconfig()
        return self

    def debs_toolkit(self, prefix, major, cuda="12.4.1", nvcc="12.4.131", cudart="12.4.127", target=None):
        """A toolkit as NVIDIA's cuda-toolkit debs lay it out: targets/<target>/{lib,include} real
        folders, lib64 and include links to them, /usr/local/cuda and /usr/local/cuda-<major>
        through /etc/alternatives, 000_cuda.conf and 988_cuda-<major>.conf."""
        target = target or self.target
        for sub in ("lib", "include"):
            self.p(f"{prefix}/targets/{target}/{sub}").mkdir(parents=True, exist_ok=True)
        self.link(f"{prefix}/lib64", f"targets/{target}/lib")
        self.link(f"{prefix}/include", f"targets/{target}/include")
        self.toolkit(prefix=prefix, cuda=cuda, nvcc=nvcc, cudart=cudart, cudnn=None)
        self.link("/etc/alternatives/cuda", prefix)
        self.link(f"/etc/alternatives/cuda-{major}", prefix)
        self.link("/usr/local/cuda", "/etc/alternatives/cuda")
        self.link(f"/usr/local/cuda-{major}", f"/etc/alternatives/cuda-{major}")
        self.ld_conf("000_cuda.conf", f"/usr/local/cuda/targets/{target}/lib")
        self.ld_conf(f"988_cuda-{major}.conf", f"/usr/local/cuda-{major}/targets/{target}/lib")

    def grace_gh200(self, driver="580.65.06", tuned=True):
        """A GH200 node on Ubuntu with NVIDIA's arm64 debs (debian12_nvidia_debs on arm64: the
        open module for aarch64, libraries in /usr/lib/aarch64-linux-gnu, CUDA 12.4 in
        targets/sbsa-linux, cuDNN 9 with its header in /usr/include/aarch64-linux-gnu), the GPU
        NVIDIA GH200 120GB (PCI 0x2342 in gpu-support.json) and its memory as NUMA nodes: node0
        holds the 72 Grace cores and LPDDR5X, node1 the GPU's HBM and no CPU, nodes 2-8 neither
        (lscpu on a GH200: "NUMA node(s): 9 / NUMA node0 CPU(s): 0-71 / NUMA node1..8 CPU(s):"
        empty, https://github.com/bytedance/xpu-perf/issues/129; sysfs's node<N>/cpulist and
        node<N>/meminfo "Node N MemTotal: ... kB" as the kernel writes them). `tuned`: the kernel
        NVIDIA's Grace guides ask for (64K pages: hpage_pmd_size 512 MiB; numa_balancing=disable
        and init_on_alloc=0 on the command line, as the benchmarking guide's /proc/cmdline), else
        Ubuntu's defaults (4K pages: 2 MiB; balancing on; CONFIG_INIT_ON_ALLOC_DEFAULT_ON=y)."""
        assert self.arch == "arm64"
        self.debian12_nvidia_debs(driver=driver, gpu_device="0x2342")
        self.gpus[0].update(name="NVIDIA GH200 120GB", cc=(9, 0))
        self.gpu_conf()
        nodes = "/sys/devices/system/node"
        for n in range(9):
            cpus = "0-71" if n == 0 else ""
            kb = 503316480 if n == 0 else 100663296 if n == 1 else 0
            self.write(f"{nodes}/node{n}/cpulist", cpus + "\n")
            self.write(f"{nodes}/node{n}/meminfo", f"Node {n} MemTotal:       {kb} kB\nNode {n} MemFree:        {kb} kB\n")
        self.grace_kernel(tuned)
        return self

    def grace_kernel(self, tuned):
        kernel = self.p("/proc/sys/kernel/osrelease").read_text().strip()
        self.write("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "536870912\n" if tuned else "2097152\n")
        self.write("/proc/sys/kernel/numa_balancing", "0\n" if tuned else "1\n")
        extra = " numa_balancing=disable init_on_alloc=0" if tuned else ""
        self.write("/proc/cmdline", f"BOOT_IMAGE=/boot/vmlinuz-{kernel} root=UUID=76c84c6d-a59f-4a8d-903e-4cb9ef69b970 ro"
                   f" rd.driver.blacklist=nouveau nouveau.modeset=0{extra}\n")
        self.write(f"/boot/config-{kernel}", "#\n# Linux/arm64 Kernel Configuration\n#\nCONFIG_INIT_ON_ALLOC_DEFAULT_ON=y\n"
                   + ("CONFIG_ARM64_64K_PAGES=y\n" if tuned else "CONFIG_ARM64_4K_PAGES=y\n"))

    # Jetson: the SoC as L4T shows it. /etc/nv_tegra_release's first line and the device tree's
    # NUL-separated compatible are Thor's as jetson-stats printed them from an AGX Thor devkit
    # ("# R38 (release), REVISION: 2.0, GCID: 41844464, BOARD: generic, EABI: aarch64, DATE: ...";
    # "nvidia,p4071-0000+p3834-0008 nvidia,p3834-0008 nvidia,tegra264",
    # https://github.com/rbonghi/jetson_stats/issues/711); the Orin devkit's by the same pattern
    # with its own parts (carrier p3737-0000, module p3701-0005, SoC tegra234) and L4T 36.4.3 =
    # JetPack 6.2 (https://github.com/balena-os/balena-jetson-orin/pull/541).
    JETSONS = {
        "orin": dict(release="# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64, "
                             "DATE: Wed Jan  8 01:49:37 UTC 2025\n",
                     compatible="nvidia,p3737-0000+p3701-0005\0nvidia,p3701-0005\0nvidia,tegra234\0",
                     kernel="5.15.148-tegra", cuda="12.6", cuda_full="12.6.68", target="aarch64-linux",
                     # JetPack 6 keeps L4T's libraries in <multiarch>/nvidia (ldconfig -p on an Orin
                     # Nano, https://github.com/apptainer/apptainer/issues/3646)
                     libdir="/usr/lib/aarch64-linux-gnu/nvidia", nvml="Orin (nvgpu)", module=None, cudnn="9.3.0"),
        "thor": dict(release="# R38 (release), REVISION: 2.0, GCID: 41844464, BOARD: generic, EABI: aarch64, "
                             "DATE: Fri Aug 22 00:55:42 UTC 2025\n",
                     compatible="nvidia,p4071-0000+p3834-0008\0nvidia,p3834-0008\0nvidia,tegra264\0",
                     kernel="6.8.12-tegra", cuda="13.0", cuda_full="13.0.48", target="sbsa-linux",
                     # JetPack 7 keeps them in <multiarch>/tegra, libnvidia-ml.so.1 among them (ls on
                     # JetPack 7.2, https://github.com/ollama/ollama/issues/18067); Thor's GPU driver
                     # is the OpenRM nvidia.ko (Jetson Linux r39.2 guide, nv-load-display-modules)
                     # and reports 580.00 (https://github.com/vllm-project/vllm/issues/34470)
                     libdir="/usr/lib/aarch64-linux-gnu/tegra", nvml="NVIDIA Thor", module="580.00",
                     # cuDNN 9.12 with CUDA 13.0 on JetPack 7.1
                     # (https://github.com/rbonghi/jetson_stats/issues/820)
                     cudnn="9.12.0"),
    }

    def jetson(self, soc="orin", nvml=True, libcuda=True):
        """A Jetson devkit flashed with JetPack: L4T's release file and device tree, the GPU driver
        built with L4T (no driver package, no DKMS; Orin's nvgpu has no /proc/driver/nvidia), its
        libcuda.so.1 -> libcuda.so.1.1 in L4T's folder listed by nvidia-tegra.conf (the layout of
        https://github.com/libretro/flycast/issues/521), the JetPack CUDA under /usr/local/cuda-X.Y
        in targets/aarch64-linux (Orin) or targets/sbsa-linux (Thor, CUDA 13), and cuDNN 9 from
        NVIDIA's arm64 debs in the multiarch folder. No PCI GPU: the iGPU is a platform device."""
        assert self.arch == "arm64"
        j = self.JETSONS[soc]
        self.base()
        for top in ("lib", "sbin", "bin"):
            self.p(f"/usr/{top}").mkdir(parents=True, exist_ok=True)
            self.link(f"/{top}", f"usr/{top}")
        t = self.triplet
        self.ld_conf(f"{t}.conf", "# Multiarch support", f"/usr/local/lib/{t}", f"/lib/{t}", f"/usr/lib/{t}")
        self.write("/proc/sys/kernel/osrelease", j["kernel"] + "\n")
        self.write("/etc/nv_tegra_release", j["release"])
        self.write("/proc/device-tree/compatible", j["compatible"].encode())
        if j["module"]:
            self.write("/proc/driver/nvidia/version",
                       f"NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  {j['module']}  Release Build  "
                       "(buildbrain@mobile-u64-6289-d7000)  Fri Aug 22 00:41:20 PDT 2025\n"
                       "GCC version:  gcc version 13.2.0 (Ubuntu 13.2.0-23ubuntu4)\n")
            self.p("/sys/module/nvidia").mkdir(parents=True, exist_ok=True)
        else:
            self.p("/sys/module/nvgpu").mkdir(parents=True, exist_ok=True)
        libdir = j["libdir"]
        self.ld_conf("nvidia-tegra.conf", libdir)
        self.driver_settings = dict(driver=j["module"] or "540.4.0", cuda=int(j["cuda"].split(".")[0]) * 1000
                                    + int(j["cuda"].split(".")[1]) * 10, init=0, nvml_init=0, libdir=libdir)
        self.gpus.append(dict(name=j["nvml"], bus="", cc=None, mig=None, mig_instances=[], temp=None,
                              throttle=None, persistence=None, ecc=None, remap=None, retired_pending=None))
        if libcuda:
            self.copy(self.libs.fake_driver("cuda"), f"{libdir}/libcuda.so.1.1")
            self.link(f"{libdir}/libcuda.so.1", "libcuda.so.1.1")
        if nvml:
            self.copy(self.libs.fake_driver("nvml"), f"{libdir}/libnvidia-ml.so.1")
        self.gpu_conf()
        prefix = f"/usr/local/cuda-{j['cuda']}"
        self.debs_toolkit(prefix, j["cuda"].split(".")[0], cuda=j["cuda_full"], nvcc=j["cuda_full"],
                          cudart=j["cuda_full"], target=j["target"])
        self.cudnn_copy(self.multiarch, j["cudnn"], cuda_major=int(j["cuda"].split(".")[0]),
                        package=f"libcudnn9-cuda-{j['cuda'].split('.')[0]}:arm64", header_dir=f"/usr/include/{t}")
        self.link("/etc/alternatives/cudnn_version_h", f"/usr/include/{t}/cudnn_version_v9.h")
        self.link("/usr/include/cudnn_version.h", "/etc/alternatives/cudnn_version_h")
        self.ldconfig()
        return self

    def ldconfig(self):
        # -i: the aux cache keys files by inode and ctime (seconds); a fixture that replaces a library
        # within the second on a recycled inode would get the old file's SONAME back
        subprocess.run([LDCONFIG, "-i", "-r", str(self.root)], check=True, capture_output=True)

    def healthy(self):
        """One A100 at x16 with driver 550.54.15; CUDA 12.4.1 + cuDNN 9.1.1 at /usr/local/cuda-12.4
        (linked from /usr/local/cuda, listed by NVIDIA's 988_cuda-12.conf); gcc 12."""
        self.base()
        self.pci_gpu()
        self.kernel_driver()
        self.add_gpu()
        self.driver_libs()
        self.toolkit()
        self.link("/usr/local/cuda", "/usr/local/cuda-12.4")
        self.ld_conf("988_cuda-12.conf", "/usr/local/cuda-12.4/lib64")
        self.ldconfig()
        return self

    def env(self, **extra):
        e = {"PATH": "/usr/local/cuda/bin:/usr/bin:/bin"}
        e.update(extra)
        return e
