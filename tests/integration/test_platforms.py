"""Which of NVIDIA's platforms a resolution takes and says (README "Platforms"): --platform,
CUDAENV_PLATFORM and the config's `platform` for cross-provisioning, Jetson's linux-aarch64
releases from the manifests, and the refusals (exit 8) that name the platform, what exists and
JetPack. The host's own choice per release (a Jetson Orin, Thor) is unit-tested with real
machines' files (tests/unit/core/sys/platform_test.cpp, resolve_test.cpp)."""
import json

import pytest

from conftest import MANIFESTS, assert_one_line_error


def archive_platforms(doc):
    # cuda/redist/<component>/<platform>/..., cudnn/redist/cudnn/<platform>/...
    return {a["path"].split("/")[3] for a in doc["archives"]}


def jetson_lines():
    """The CUDA major.minor lines the manifests have linux-aarch64 archives for."""
    lines = set()
    for f in (MANIFESTS / "cuda").glob("*.json"):
        doc = json.loads(f.read_text())
        comps = doc.get("components") or {}
        if any("linux-aarch64" in c.get("platforms", {}) for c in comps.values()):
            lines.add(".".join(doc["version"].split(".")[:2]))
    return lines


def test_the_manifests_have_jetson_archives_where_nvidia_published_them():
    lines = jetson_lines()
    assert {"11.8", "12.0", "12.1", "12.2", "12.4", "12.5", "12.6", "12.8", "12.9"} <= lines
    assert "12.3" not in lines and not any(l.startswith("13.") for l in lines)


@pytest.mark.parametrize("how", ["option", "env", "config"])
def test_sbsa_by_option_environment_or_config(cudaenv, tmp_path, how):
    args, env = ["resolve", "tf-2.15", "--json"], {}
    if how == "option":
        args += ["--platform", "linux-sbsa"]
    elif how == "env":
        env["CUDAENV_PLATFORM"] = "linux-sbsa"
    else:
        conf = tmp_path / "sysroot" / "etc" / "cudaenv"
        conf.mkdir(parents=True)
        (conf / "config").write_text("platform = linux-sbsa\n")
        env["CUDAENV_SYSROOT"] = str(tmp_path / "sysroot")
    res = cudaenv(*args, env=env)
    assert res.rc == 0, res
    doc = res.json()
    assert doc["platform"] == "linux-sbsa" and doc["platform_compat"] is None
    assert archive_platforms(doc) == {"linux-sbsa"}


def test_the_option_wins_over_the_environment(cudaenv):
    res = cudaenv("resolve", "12.6", "--json", "--platform", "linux-x86_64",
                  env={"CUDAENV_PLATFORM": "linux-aarch64"})
    assert res.rc == 0, res
    assert res.json()["platform"] == "linux-x86_64"


def test_jetson_archives_for_a_release_that_has_them(cudaenv):
    res = cudaenv("resolve", "tf-2.15", env={"CUDAENV_PLATFORM": "linux-aarch64"})
    assert res.rc == 0, res
    assert "archives runtime profile, linux-aarch64:" in res.out
    doc = cudaenv("resolve", "tf-2.15", "--json", env={"CUDAENV_PLATFORM": "linux-aarch64"}).json()
    assert archive_platforms(doc) == {"linux-aarch64"}
    # Jetson's cuDNN 8.9 is 8.9.5 (8.9.6 and 8.9.7 have no linux-aarch64 build)
    assert doc["cudnn"]["version"] == "8.9.5.30"
    assert doc["installable"] is True


def test_tf_216_on_jetson_is_refused_naming_what_exists(cudaenv):
    res = cudaenv("resolve", "tf-2.16", env={"CUDAENV_PLATFORM": "linux-aarch64"})
    assert_one_line_error(res, 8)
    error = res.err.splitlines()[0]
    assert "CUDA 12.3.2 has no linux-aarch64" in error and "JetPack" in error
    assert "11.8, 12.0-12.2, 12.4-12.9" in error
    assert "help: try a CUDA 12.4 the framework's rules allow: cudaenv resolve tf-2.16 --cuda 12.4" in res.err
    # and that suggestion resolves
    ok = cudaenv("resolve", "tf-2.16", "--cuda", "12.4", "--json", env={"CUDAENV_PLATFORM": "linux-aarch64"})
    assert ok.rc == 0, ok
    assert ok.json()["platform"] == "linux-aarch64"


def test_cuda_13_is_no_jetson_linux_aarch64_release(cudaenv):
    res = cudaenv("resolve", "13.0", "--platform", "linux-aarch64")
    assert_one_line_error(res, 8)
    assert "Thor from 13.0 (JetPack 7), Orin from 13.2 with cuda_compat_orin (JetPack 7.2)" in res.err


def test_a_cudnn_without_a_jetson_build_is_refused(cudaenv):
    res = cudaenv("resolve", "12.2+cudnn-8.9.7", "--json", env={"CUDAENV_PLATFORM": "linux-aarch64"})
    assert res.rc == 8, res
    doc = res.json()
    assert doc["ok"] is False
    assert "no linux-aarch64" in doc["error"]["message"] and "8.9.5.30" in doc["error"]["message"]
    assert "cudaenv resolve 12.2.2+cudnn-8.9.5.30" in doc["error"]["hints"]


def test_a_mirror_for_jetson_refuses_what_jetson_does_not_have(cudaenv, tmp_path):
    res = cudaenv("mirror", "tf-2.16", "--to", str(tmp_path / "m"), "--platform", "linux-aarch64",
                  "--dry-run")
    assert_one_line_error(res, 8)
    assert "linux-aarch64" in res.err
    assert not (tmp_path / "m").exists() or not any((tmp_path / "m").rglob("*.tar.xz"))


@pytest.mark.parametrize("bad", [["--platform", "linux-arm64"]])
def test_an_unknown_platform_is_a_usage_error(cudaenv, bad):
    res = cudaenv("resolve", "12.6", *bad)
    assert_one_line_error(res, 2)
    assert "linux-aarch64" in res.err
    res = cudaenv("resolve", "12.6", env={"CUDAENV_PLATFORM": "aarch64"})
    assert_one_line_error(res, 2)
    assert "CUDAENV_PLATFORM" in res.err
