#!/usr/bin/env python3
"""Activation benchmark (not a test): shim overhead, `version`/`which`, the prompt hook, `global`.

    /usr/bin/python3 bench/activate_bench.py --cudaenv build/release/src/cudaenv [--runs 300]

Builds the fixture mirror (tests/support), installs tf-2.13 and tf-2.16 into a temporary root
inside a temporary sysroot, adds a tiny compiled tool to both versions' bin/, and times, side by
side in one run: the tool run directly and through its cudaenv shim (and /bin/true for scale);
pyenv's python shim against the python it runs, where pyenv is installed; `cudaenv version` and
`cudaenv which`; `cudaenv __hook bash` at a prompt where nothing changes; `cudaenv global`
switching between the two versions, and ldconfig alone on the same sysroot.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "support"))
import fixture_mirror  # noqa: E402
from fault_server import FaultServer  # noqa: E402


def median_ms(cmd, runs, env=None, cwd=None):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cudaenv", required=True)
    ap.add_argument("--runs", type=int, default=300)
    args = ap.parse_args()
    exe = str(Path(args.cudaenv).resolve())
    n = args.runs
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        # mkdtemp's 0700 would make the machine-wide root below it unreadable to others, which
        # `global` refuses (exit 7): a machine-wide root is world-readable
        tmp.chmod(0o755)
        data = fixture_mirror.build(tmp / "fixture", exe, platforms=(fixture_mirror.binary_platform(exe),))
        srv = FaultServer(data / "mirror")
        sysroot = tmp / "sysroot"
        (sysroot / "etc" / "ld.so.conf.d").mkdir(parents=True)
        (sysroot / "usr" / "local").mkdir(parents=True)
        (sysroot / "etc" / "ld.so.conf").write_text("include /etc/ld.so.conf.d/*.conf\n")
        root = sysroot / "opt" / "cudaenv"
        env = dict(os.environ, CUDAENV_ROOT=str(root), CUDAENV_MANIFESTS=str(data / "manifests"),
                   CUDAENV_MIRROR=srv.url, CUDAENV_SYSROOT=str(sysroot), NO_COLOR="1")
        env.pop("CUDAENV_VERSION", None)
        subprocess.run([exe, "install", "tf-2.13", "tf-2.16"], env=env, check=True, capture_output=True)
        srv.close()
        tool = tmp / "tool.c"
        tool.write_text("int main(void){return 0;}\n")
        versions = sorted((root / "versions").glob("linux-*/*"))  # versions/<platform>/<name>
        versions = versions or sorted((root / "versions").iterdir())  # a cudaenv before platforms
        for v in versions:
            subprocess.run(["gcc", "-O2", "-o", str(v / "bin" / "benchtool"), str(tool)], check=True)
        subprocess.run([exe, "rehash"], env=env, check=True, capture_output=True)
        proj = tmp / "proj" / "a" / "b"
        proj.mkdir(parents=True)
        (tmp / "proj" / ".cuda-version").write_text(versions[0].name + "\n")
        rows = []

        direct = median_ms([str(versions[0] / "bin" / "benchtool")], n, env, proj)
        shim = median_ms([str(root / "shims" / "benchtool")], n, env, proj)
        true = median_ms(["/bin/true"], n, env, proj)
        rows.append(("tool run directly", direct))
        rows.append(("tool through the cudaenv shim", shim))
        rows.append(("  added by the shim", shim - direct))
        rows.append(("/bin/true (for scale)", true))
        pyenv_shim = Path.home() / ".pyenv" / "shims" / "python3"
        if pyenv_shim.exists():
            real = subprocess.run([str(pyenv_shim), "-c", "import sys; print(sys.executable)"],
                                  capture_output=True, text=True).stdout.strip()
            pn = max(20, n // 10)
            p_direct = median_ms([real, "-S", "-c", "pass"], pn)
            p_shim = median_ms([str(pyenv_shim), "-S", "-c", "pass"], pn)
            rows.append(("python run directly", p_direct))
            rows.append(("python through pyenv's shim", p_shim))
            rows.append(("  added by pyenv's shim", p_shim - p_direct))
        rows.append(("cudaenv version", median_ms([exe, "version"], n, env, proj)))
        rows.append(("cudaenv which nvcc", median_ms([exe, "which", "nvcc"], n, env, proj)))
        hook_env = dict(env, CUDAENV_HOOK_PREFIX=str(versions[0]))
        shim_exe = str(Path(exe).parent / "cudaenv-shim")
        rows.append(("prompt hook (cudaenv-shim __hook, as init sets it up), nothing to change",
                     median_ms([shim_exe, "__hook", "bash"], n, hook_env, proj)))
        rows.append(("prompt hook through the full cudaenv binary", median_ms([exe, "__hook", "bash"], n, hook_env, proj)))
        gn = max(10, n // 10)
        times = []
        for i in range(gn):
            target = versions[i % 2].name
            t = time.perf_counter()
            subprocess.run([exe, "global", target], env=env, check=True, capture_output=True)
            times.append((time.perf_counter() - t) * 1000)
        g = statistics.median(times)
        ld = median_ms([shutil.which("ldconfig") or "/sbin/ldconfig", "-r", str(sysroot)], gn)
        rows.append(("cudaenv global (switch, with ldconfig)", g))
        rows.append(("ldconfig -r alone", ld))
        rows.append(("  global without the ldconfig run", g - ld))
        for name, ms in rows:
            print(f"{name:72s} {ms:8.2f} ms")


if __name__ == "__main__":
    main()
