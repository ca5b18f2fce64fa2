"""Integration harness: drives the real cudaenv binary (CUDAENV_EXE) with a clean environment.

Each test gets its own HOME and CUDAENV_ROOT under pytest's tmp_path; CUDA_*, LD_LIBRARY_PATH and
CUDAENV_* from the caller's environment are dropped so the machine running the tests cannot leak in.
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

EXE = os.environ.get("CUDAENV_EXE")
MANIFESTS = Path(os.environ.get("CUDAENV_TEST_MANIFESTS", Path(__file__).parents[2] / "manifests"))
REFERENCE = Path(os.environ.get("CUDAENV_TEST_REFERENCE", Path(__file__).parents[3] / "shared" / "reference"))


class Result:
    def __init__(self, proc):
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def json(self):
        return json.loads(self.out)

    def __repr__(self):
        return f"rc={self.rc}\nstdout:\n{self.out}\nstderr:\n{self.err}"


class Cudaenv:
    def __init__(self, tmp_path):
        self.tmp = tmp_path
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CUDA", "CUDAENV_", "LD_LIBRARY_PATH", "NVIDIA_"))}
        env.update(HOME=str(tmp_path / "home"), CUDAENV_ROOT=str(tmp_path / "root"), NO_COLOR="1",
                   LC_ALL="C.UTF-8")
        (tmp_path / "home").mkdir()
        self.env = env

    def __call__(self, *args, env=None, cwd=None):
        e = dict(self.env)
        e.update(env or {})
        proc = subprocess.run([EXE, *args], env=e, cwd=cwd or self.tmp, capture_output=True,
                              text=True, timeout=60)
        return Result(proc)


@pytest.fixture
def cudaenv(tmp_path):
    if not EXE or not Path(EXE).exists():
        pytest.skip("CUDAENV_EXE is not set to a built cudaenv binary")
    return Cudaenv(tmp_path)


def assert_one_line_error(res, code):
    """The error contract: exit code, one 'cudaenv: error:' line, then only 'help:' lines."""
    assert res.rc == code, res
    lines = res.err.strip().splitlines()
    assert lines and lines[0].startswith("cudaenv: error: "), res
    assert all(l.startswith("help: ") for l in lines[1:]), res
