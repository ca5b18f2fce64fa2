"""The field corpus (tests/field/README.md): real machines from public bug reports, rebuilt as fixture
sysroots from the threads' own output, each with the verdict a correct tool gives. A broken
machine must get its confirmed cause; on a healthy one nothing may be flagged.
"""
import json
import re
import os
import shlex
from pathlib import Path

import pytest

import fixture_mirror
import fixture_sysroot  # noqa: E402  (conftest puts tests/support on sys.path)

FIELD = Path(__file__).resolve().parents[1] / "field"
CASES = sorted((FIELD / "cases").glob("*.json"))
PROBES = {"advisories", "gpu", "arch", "pcie", "thermal", "mig", "xid", "health", "grace", "driver", "libcuda", "fabric", "smoke",
          "driver-cuda", "compat", "toolkit", "cuda-link", "compiler", "loader", "cudnn", "environment",
          "container", "container-compat", "cdi", "wsl", "frameworks", "cudaenv"}
CLASSES = {1, 2, 3, 4, 5, 6}


def load(path):
    return json.loads(path.read_text())


@pytest.fixture(scope="session")
def libs(tmp_path_factory):
    return fixture_sysroot.Libs(tmp_path_factory.mktemp("field-libs"))


# -- the corpus itself ----------------------------------------------------------------------------

def test_the_corpus_is_what_the_issue_asks_and_every_case_says_where_it_is_from():
    cases = [load(p) for p in CASES]
    broken = [c for c in cases if c["kind"] == "broken"]
    healthy = [c for c in cases if c["kind"] == "healthy"]
    assert len(broken) >= 40 and len(healthy) >= 10, (len(broken), len(healthy))
    for path, c in zip(CASES, cases):
        assert c["id"] == path.stem, path
        assert c["kind"] in ("broken", "healthy"), path
        assert c["title"] and c["cause"] and c["evidence"], path
        assert c["sources"] and all(s["url"].startswith("https://") and s["what"] for s in c["sources"]), path
        assert set(c.get("classes", [])) <= CLASSES, path
        assert c["expect"] or c["kind"] == "healthy", path
        for e in c["expect"]:
            assert e["probe"] in PROBES and e.get("status", "ok") in ("ok", "warn", "fail", "skip"), (path, e)
    # every class of the issue is met on real output
    seen = {k for c in cases for k in c.get("classes", [])}
    assert seen == CLASSES, seen


# -- building a case's machine ---------------------------------------------------------------------

def _program(stdout, rc=0):
    return "#!/bin/sh\ncat <<'CUDAENV_EOF'\n" + stdout + ("" if stdout.endswith("\n") else "\n") + \
        f"CUDAENV_EOF\nexit {rc}\n"


def _systemctl(services):
    """A systemctl that answers `show UNIT... [-p|--property=...]` as systemd does: the asked
    properties, key=value, one unit after another separated by a blank line."""
    table = {unit: props for unit, props in services.items()}
    body = ["#!/bin/sh", "# systemctl show, as systemd prints it for the units the case knows",
            'props=""; units=""; cmd=""',
            'for a in "$@"; do case "$a" in',
            '  show|status|is-active) cmd="$a";;',
            '  --property=*) props="$props,${a#--property=}";;',
            '  -p) next=p;;',
            '  --*) ;;',
            '  *) if [ "$next" = p ]; then props="$props,$a"; next=""; else units="$units $a"; fi;;',
            'esac; done',
            '[ "$cmd" = show ] || exit 1',
            'first=1',
            'for u in $units; do',
            '  case "$u" in *.service) ;; *) u="$u.service";; esac',
            '  [ $first = 1 ] || echo; first=0',
            '  case "$u" in']
    for unit, props in table.items():
        unit = unit if unit.endswith(".service") else unit + ".service"
        lines = "\n".join(f"{k}={v}" for k, v in props.items())
        body.append(f"  {shlex.quote(unit)}) all={shlex.quote(lines)};;")
    body += ['  *) all="LoadState=not-found\nActiveState=inactive\nSubState=dead\nMainPID=0\nResult=success";;',
             '  esac',
             '  if [ -z "$props" ]; then printf "%s\\n" "$all"; continue; fi',
             '  printf "%s\\n" "$all" | while IFS= read -r line; do',
             '    case ",$props," in *",${line%%=*},"*) printf "%s\\n" "$line";; esac',
             '  done',
             'done']
    return "\n".join(body) + "\n"


def _kmsg(lines):
    out = []
    for i, line in enumerate(lines):
        if line.startswith("[") and "]" in line:
            line = line[line.index("]") + 1:].lstrip()
        # a printk of several lines is one record; /dev/kmsg writes its newlines as \x0a
        out.append(f"4,{600 + i},{5000000 + i * 1000},-;{line.rstrip(chr(10))}".replace("\n", "\\x0a") + "\n")
    return "".join(out)


def _cudnn_code(version):
    cmaj, cmin, cpatch = (int(x) for x in version.split(".")[:3])
    return cmaj * (10000 if cmaj >= 9 else 1000) + cmin * 100 + cpatch


WHEEL_LIBS = {
    # pip's nvidia-* wheels: where each puts its libraries (nvidia/<dir>/lib)
    "cudnn": lambda v: [(f"{n}.so.{v.split('.')[0]}", "cudnn") for n in fixture_mirror.CUDNN_LIBS[int(v.split('.')[0])]],
    "cublas": lambda v: [(f"libcublas.so.{v.split('.')[0]}", "plain"), (f"libcublasLt.so.{v.split('.')[0]}", "plain")],
    "cuda_runtime": lambda v: [(f"libcudart.so.{'11.0' if v.startswith('11.') else v.split('.')[0]}", "cudart")],
    "cuda_nvrtc": lambda v: [(f"libnvrtc.so.{'11.2' if v.startswith('11.') else v.split('.')[0]}", "plain")],
}


def build_machine(m, spec):
    m.base()
    m.remove("/usr/bin/gcc")  # the fixture's own gcc: a case's compiler is what its thread shows
    kernel = spec.get("kernel")
    if kernel:
        m.write("/proc/sys/kernel/osrelease", kernel + "\n")
    for d in spec.get("pci", []):
        a = d["address"]
        base = f"/sys/bus/pci/devices/{a}"
        m.write(f"{base}/vendor", d.get("vendor", "0x10de") + "\n")
        m.write(f"{base}/device", d["device"] + "\n")
        m.write(f"{base}/class", d.get("class", "0x030200") + "\n")
        if d.get("subsystem"):
            sv, sd = d["subsystem"].split(":")
            m.write(f"{base}/subsystem_vendor", f"0x{sv}\n")
            m.write(f"{base}/subsystem_device", f"0x{sd}\n")
        width, speed = d.get("link", [16, 16]), d.get("speed", ["16.0 GT/s PCIe", "16.0 GT/s PCIe"])
        m.write(f"{base}/current_link_width", f"{width[0]}\n")
        m.write(f"{base}/max_link_width", f"{width[1]}\n")
        m.write(f"{base}/current_link_speed", speed[0] + "\n")
        m.write(f"{base}/max_link_speed", speed[1] + "\n")
        if d.get("driver"):
            m.p(f"/sys/bus/pci/drivers/{d['driver']}").mkdir(parents=True, exist_ok=True)
            m.link(f"{base}/driver", f"../../../../bus/pci/drivers/{d['driver']}")
    mod = spec.get("module")
    if mod and mod.get("loaded", True):
        v = mod.get("version", "")
        text = mod.get("proc_version") or (
            (f"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {v}  Release Build  "
             "(dvs-builder@U16-I3-B03-4-3)  Thu Feb 22 01:25:25 UTC 2024\n") if mod.get("open") else
            f"NVRM version: NVIDIA UNIX x86_64 Kernel Module  {v}  Thu Feb 22 01:44:30 UTC 2024\n")
        if "GCC version" not in text:
            text += "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"
        if v or mod.get("proc_version"):
            m.write("/proc/driver/nvidia/version", text)
        m.p("/sys/module/nvidia").mkdir(parents=True, exist_ok=True)
        if v:
            m.write("/sys/module/nvidia/version", v + "\n")
        gpus = max(1, sum(1 for d in spec.get("pci", []) if d.get("class", "0x030200").startswith("0x03")))
        nodes = mod.get("nodes", ["/dev/nvidiactl", "/dev/nvidia-uvm"] + [f"/dev/nvidia{i}" for i in range(gpus)])
        for n in nodes:
            m.write(n, "")
    if "modules" in spec:
        m.write("/proc/modules", "".join(l + "\n" for l in spec["modules"]))
        for line in spec["modules"]:
            m.p(f"/sys/module/{line.split()[0]}").mkdir(parents=True, exist_ok=True)
    inst = spec.get("installed", {})
    for name, versions in inst.get("dkms", {}).items():
        for ver, kernels in versions.items():
            m.p(f"/var/lib/dkms/{name}/{ver}/source").mkdir(parents=True, exist_ok=True)
            for k in kernels:
                m.p(f"/var/lib/dkms/{name}/{ver}/{k}/x86_64/module").mkdir(parents=True, exist_ok=True)
    for f in inst.get("module_files", []):
        m.write(f, b"\x7fELF nvidia module")
    for d in inst.get("usr_src", []):
        m.p(f"/usr/src/{d}").mkdir(parents=True, exist_ok=True)
    nvml = spec.get("nvml")
    libs = spec.get("libs")
    if isinstance(libs, dict):
        libs = [libs]
    for i, lib in enumerate(libs or []):
        # each entry: a set of the driver's user-space libraries (`only`: "nvml" and/or "cuda"),
        # named by their version with .1 links, or plain copies (WSL's /usr/lib/wsl/lib)
        v, libdir = lib["version"], lib.get("dir", "/usr/lib/x86_64-linux-gnu")
        for which, name in (("nvml", "libnvidia-ml.so"), ("cuda", "libcuda.so")):
            if which not in lib.get("only", ["nvml", "cuda"]):
                continue
            if lib.get("copies"):
                m.copy(m.libs.fake_driver(which), f"{libdir}/{name}.1")
                m.copy(m.libs.fake_driver(which), f"{libdir}/{name}")
            else:
                m.copy(m.libs.fake_driver(which), f"{libdir}/{name}.{v}")
                m.link(f"{libdir}/{name}.1", f"{name}.{v}")
        nv = dict(nvml or {}) if i == 0 else {}
        nv.update(lib.get("answers", {}))
        m.driver_settings = dict(driver=nv.get("driver", v), cuda=nv.get("cuda", 12020),
                                 init=nv.get("cuinit", 0), nvml_init=nv.get("nvml_init", 0), libdir=libdir)
        m.gpus = []
        for g in nv.get("gpus", []):
            m.add_gpu(name=g["name"], bus=g["bus"], cc=tuple(g["cc"]) if g.get("cc") else None,
                      mig=tuple(g["mig"]) if g.get("mig") else None, temp=tuple(g.get("temp", (40, 90))),
                      persistence=g.get("persistence", 1), ecc=tuple(g.get("ecc", (0, 0))),
                      remap=tuple(g.get("remap", (0, 0))))
            if g.get("fabric"):
                m.gpus[-1]["fabric"] = (g["fabric"]["state"], g["fabric"].get("status", 0))
        m.gpu_conf()
    tk = spec.get("toolkit")
    if tk:
        prefix = tk.get("prefix", "/usr/local/cuda")
        version = tk.get("version_json") or tk.get("cuda")
        if not version and tk.get("version_txt"):
            version = tk["version_txt"].split("Version")[-1].strip().split()[0]
        major = int(version.split(".")[0])
        m.toolkit(prefix=prefix, cuda=version, cudart=tk.get("cudart", version),
                  nvcc=tk.get("nvcc", version), cudnn=tk.get("cudnn"), stub=tk.get("stub", True),
                  header=tk.get("header", True), soname=tk.get("cudart_soname"))
        if "version_json" not in tk:
            m.remove(f"{prefix}/version.json")
        if tk.get("version_txt"):
            m.write(f"{prefix}/version.txt", tk["version_txt"])
        if tk.get("link", True):
            m.link("/usr/local/cuda", prefix)
        if tk.get("conf", True):
            m.ld_conf(f"988_cuda-{major}.conf", f"{prefix}/lib64")
    if spec.get("kmsg") is not None:
        m.write("/dev/kmsg", _kmsg(spec["kmsg"]))
    for p in spec.get("processes", []):
        d = f"/proc/{p['pid']}"
        m.write(f"{d}/comm", p["comm"][:15] + "\n")
        m.write(f"{d}/cmdline", "".join(a + "\0" for a in p.get("cmdline", [])))
        if p.get("exe"):
            m.link(f"{d}/exe", p["exe"])
    if spec.get("services"):
        m.write("/usr/bin/systemctl", _systemctl(spec["services"]), 0o755)
    for path, prog in spec.get("programs", {}).items():
        m.write(path, _program(prog.get("stdout", ""), prog.get("rc", 0)), 0o755)
    for path, text in spec.get("files", {}).items():
        m.write(path, text)
    for path, target in spec.get("links", {}).items():
        m.link(path, target)
    env = {}
    py = spec.get("python")
    if py:
        prefix = py.get("venv", "/opt/venv")
        site = f"{prefix}/lib/{py.get('python', 'python3.11')}/site-packages"
        m.p(site).mkdir(parents=True, exist_ok=True)
        for rel, text in py.get("files", {}).items():
            m.write(f"{site}/{rel}", text)
        for name, version in py.get("wheels", {}).items():
            norm = name.replace("-", "_")
            m.write(f"{site}/{norm}-{version}.dist-info/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
            kind = norm.split("nvidia_", 1)[-1].rsplit("_cu", 1)[0]
            for lib, how in WHEEL_LIBS.get(kind, lambda v: [])(version):
                _lib(m, f"{site}/nvidia/{kind}/lib/{lib}", how, version)
        for rel, e in py.get("elf", {}).items():
            if "cudnn" in e:
                _lib(m, f"{site}/{rel}", "cudnn", e["cudnn"])
                continue
            flags = []
            if e.get("rpath"):
                flags += [f"-Wl,-rpath,{e['rpath']}", "-Wl,--disable-new-dtags"]
            if e.get("runpath"):
                flags += [f"-Wl,-rpath,{e['runpath']}", "-Wl,--enable-new-dtags"]
            needed = "".join(f"-Wl,--no-as-needed,-l:{n} " for n in e.get("needed", []))
            out = m.libs.build(Path(rel).name, Path(rel).name, "int cudaenv_field_object;",
                               [*flags, *needed.split(), "-L" + str(_needed_dir(m, e.get("needed", [])))])
            m.copy(out, f"{site}/{rel}")
        if py.get("conda"):
            env["CONDA_PREFIX"] = prefix
            for name, rec in py.get("conda_meta", {}).items():
                m.write(f"{prefix}/conda-meta/{name}", json.dumps(rec, indent=2))
        else:
            env["VIRTUAL_ENV"] = prefix
    env.update(spec.get("env", {}))
    m.ldconfig()
    return env


def _needed_dir(m, needed):
    """Link-time stand-ins for the libraries an object names (the linker wants to see them)."""
    d = m.libs.work / "needed"
    d.mkdir(exist_ok=True)
    for n in needed:
        if not (d / n).exists():
            built = m.libs.build(n, n, "int cudaenv_field_needed;")
            (d / n).write_bytes(built.read_bytes())
    return d


def _lib(m, path, how, version):
    name = Path(path).name
    soname = name
    if how == "cudnn":
        code = _cudnn_code(version)
        src = ("#include <stddef.h>\n"
               f"size_t cudnnGetVersion(void) {{ return {code}; }}\n"
               f"size_t cudnnGetCudartVersion(void) {{ return {12000 if int(version.split('.')[0]) >= 9 else 11000}; }}")
    elif how == "cudart":
        major, minor = (int(x) for x in version.split(".")[:2])
        src = f"int cudaRuntimeGetVersion(int *v) {{ *v = {major * 1000 + minor * 10}; return 0; }}"
    else:
        src = "int cudaenv_field_plain;"
    m.copy(m.libs.build(name, soname, src), path)


# -- running a case ------------------------------------------------------------------------------

def _text(p):
    return "\n".join([p["finding"] or "", *p["details"], *(f["finding"] or "" for f in p["findings"])])


def _fixes(p):
    return "\n".join([p["fix"] or "", *(f["fix"] or "" for f in p["findings"])])


def _params():
    """A case marked `pending` is a real machine the doctor does not get right yet: it is
    expected to fail, strictly (the day it passes, the mark must go), with its reason."""
    out = []
    for p in CASES:
        pending = load(p).get("pending")
        marks = [pytest.mark.xfail(strict=True, reason=pending)] if pending else []
        out.append(pytest.param(p, id=p.stem, marks=marks))
    return out


@pytest.mark.parametrize("path", _params())
def test_case(cudaenv, libs, tmp_path, path):
    if os.geteuid() != 0:
        pytest.skip("ldconfig -r needs root (chroot)")
    case = load(path)
    m = fixture_sysroot.Machine(tmp_path / "sys", libs)
    env = build_machine(m, case.get("machine", {}))
    cudaenv.env.pop("container", None)
    today = case.get("today") or case.get("machine", {}).get("today") or "2026-12-07"
    cudaenv.env.update(CUDAENV_SYSROOT=str(m.root), CUDAENV_TODAY=today,
                       PATH="/usr/local/cuda/bin:/usr/bin:/bin", **env)
    res = cudaenv("doctor", "--json", "-v")
    assert res.rc in (0, 1), res
    probes = {p["id"]: p for p in res.json()["probes"]}
    report = json.dumps({k: v for k, v in probes.items() if v["status"] != "skip" or k in
                         {e["probe"] for e in case["expect"]}}, indent=1)
    for e in case["expect"]:
        p = probes[e["probe"]]
        assert "status" not in e or p["status"] == e["status"], f"{case['id']}: {e['probe']} is {p['status']}, not {e['status']}\n{report}"
        text = _text(p)
        for w in e.get("says", []):
            assert w in text, f"{case['id']}: {e['probe']} does not say {w!r}\n{report}"
        for w in e.get("fix", []):
            assert w in _fixes(p), f"{case['id']}: {e['probe']}'s fix does not say {w!r}\n{report}"
        for w in e.get("not", []):
            assert w not in text + "\n" + _fixes(p), f"{case['id']}: {e['probe']} says {w!r}\n{report}"
    if case["kind"] == "healthy":
        # `allow`: {probe: words its warning must hold}: a warning that is true today of a
        # machine that was healthy when reported (a driver branch past its end of life since)
        for k, words in case.get("allow", {}).items():
            assert probes[k]["status"] in ("ok", "skip") or (
                probes[k]["status"] == "warn" and words in _text(probes[k])), (case["id"], probes[k])
        # advisories: what is known today against the versions a machine runs (a driver NVIDIA
        # has since fixed a bulletin in), not a fault it had when reported: it may warn on any
        # machine old enough, naming the bulletin, and never fails one of these
        adv = probes.get("advisories")
        if adv and adv["status"] != "skip":
            assert adv["status"] in ("ok", "warn"), (case["id"], adv)
            assert adv["status"] == "ok" or re.match(r"(NVIDIA|CUBLAS)-[0-9A-Z.]+ \(", adv["finding"]), (case["id"], adv)
        flagged = {k: (v["status"], v["finding"]) for k, v in probes.items()
                   if v["status"] in ("warn", "fail") and k not in case.get("allow", {}) and k != "advisories"}
        assert not flagged, f"{case['id']}: a healthy machine flagged {flagged}\n{report}"
