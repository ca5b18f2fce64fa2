import json
import shutil

import pytest

from conftest import MANIFESTS, REFERENCE, assert_one_line_error

TF_ROWS = json.loads((MANIFESTS / "frameworks" / "tensorflow.json").read_text())["releases"]


def test_tf_213_text_matches_golden(cudaenv):
    res = cudaenv("resolve", "tf-2.13", "--platform", "linux-x86_64")
    assert res.rc == 0, res
    golden = (MANIFESTS.parent / "tests" / "integration" / "golden" / "resolve_tf-2.13.txt").read_text()
    assert res.out == golden
    assert res.err == ""


def test_tf_213_json(cudaenv):
    res = cudaenv("resolve", "tf-2.13", "--json", "--platform", "linux-x86_64")
    assert res.rc == 0, res
    doc = res.json()
    assert doc["schema_version"] == 1
    assert doc["version"] == "11.8.0+cudnn8.6.0.163"
    assert doc["cuda"]["version"] == "11.8.0"
    assert doc["cudnn"] == {"version": "8.6.0.163", "major": 8, "cuda_build": "11", "known": "full",
                           "index": None}
    assert doc["known"] == "full" and doc["cuda"]["known"] == "full"
    assert doc["driver"] == {"min": "520.61.05", "min_source": "table3", "compat_min": "450.80.02"}
    assert doc["sm"]["min"] == 35 and doc["sm"]["max"] == 90
    assert doc["host_compilers"]["gcc_max"] == "11"
    assert doc["installable"] is True
    assert sum(a["size"] for a in doc["archives"]) == doc["total_size"]
    comps = [a["component"] for a in doc["archives"]]
    assert "cuda_cudart" in comps and "cuda_nvcc" in comps and "cudnn" in comps


@pytest.mark.parametrize("row", TF_ROWS, ids=lambda r: "tf-" + r["series"])
def test_every_tensorflow_row_resolves(cudaenv, row):
    res = cudaenv("resolve", "tf-" + row["series"], "--json")
    assert res.rc == 0, res
    doc = res.json()
    cuda = doc["cuda"]["version"]
    cudnn = doc["cudnn"]["version"]
    assert (cuda + ".").startswith(row["cuda"] + "."), (row, cuda)
    assert (cudnn + ".").startswith(row["cudnn"] + "."), (row, cudnn)
    # every row installs: from redistrib archives, or the runfile installer and the old .tgz
    assert doc["installable"] is True and doc["not_installable"] == [], doc


def test_incompatible_pair_is_refused_with_the_compatible_choice(cudaenv):
    res = cudaenv("resolve", "tf-2.13", "--cuda", "12.2")
    assert_one_line_error(res, 8)
    assert "CUDA 12.2 is incompatible" in res.err
    assert "help: use the tested pair: cudaenv resolve tensorflow-2.13 (CUDA 11.8 + cuDNN 8.6)" in res.err


def test_cudnn_for_another_cuda_major_is_refused(cudaenv):
    res = cudaenv("resolve", "12.2+cudnn-8.6")
    assert_one_line_error(res, 8)
    assert "built for CUDA 11 (11.0-11.8), 10 (10.2)" in res.err
    assert "8.9.7.29" in res.err


def test_incompatible_json_is_one_document(cudaenv):
    res = cudaenv("resolve", "tf-2.13", "--cuda", "12.2", "--json")
    assert res.rc == 8
    doc = res.json()
    assert doc["ok"] is False
    assert doc["error"]["code"] == "incompatible" and doc["error"]["exit_code"] == 8


@pytest.mark.parametrize("spec,hint", [
    ("tensorflw-2.13", "did you mean 'tensorflow-2.13'?"),
    ("cdnn-8.6", "did you mean 'cudnn-8.6'?"),
])
def test_misspelt_spec_gets_did_you_mean(cudaenv, spec, hint):
    res = cudaenv("resolve", spec)
    assert_one_line_error(res, 2)
    assert "help: " + hint in res.err


@pytest.mark.parametrize("spec", ["foo", "11.8.0.1", "tf-2", "11.8+9.1", ""])
def test_malformed_spec_is_usage(cudaenv, spec):
    assert_one_line_error(cudaenv("resolve", spec), 2)


@pytest.mark.parametrize("spec", ["11.9", "tf-2.99", "11.8+cudnn-6.5"])
def test_unknown_release_is_not_found(cudaenv, spec):
    assert_one_line_error(cudaenv("resolve", spec), 9)


def test_a_cudnn_known_only_by_hash_says_what_is_not_installable(cudaenv):
    res = cudaenv("resolve", "11.0+cudnn-8.0.2")
    assert res.rc == 0, res
    assert "not installable yet: no download URL is known for cuDNN 8.0.2.39 for CUDA 11.0" in res.out


@pytest.mark.parametrize("series", ["1.13", "1.14", "1.15", "2.0", "2.1", "2.2", "2.3", "2.4", "2.5",
                                    "2.6", "2.7", "2.8", "2.9", "2.10", "2.11"])
def test_tensorflow_1_13_to_2_11_resolve_to_an_installable_runfile_pair(cudaenv, series):
    j = cudaenv("resolve", f"tf-{series}", "--json").json()
    assert j["not_installable"] == [], j
    assert j["cuda"]["source"] == "runfile" and j["cuda"]["version"].split(".")[0] in ("10", "11")
    assert [a["component"] for a in j["archives"]] == ["cuda", "cudnn"]


def test_cudnn_with_cuda_option(cudaenv):
    res = cudaenv("resolve", "cudnn-8.9", "--cuda", "12.2", "--json")
    assert res.rc == 0, res
    assert res.json()["version"] == "12.2.2+cudnn8.9.7.29"
    assert_one_line_error(cudaenv("resolve", "cudnn-8.9"), 2)


def test_bad_manifests_are_refused_as_integrity(cudaenv, tmp_path):
    bad = tmp_path / "m"
    (bad / "cuda").mkdir(parents=True)
    (bad / "cuda" / "11.8.0.json").write_text('{"schema": "cudaenv.manifest/9", "kind": "cuda"}')
    res = cudaenv("resolve", "11.8", env={"CUDAENV_MANIFESTS": str(bad)})
    assert_one_line_error(res, 4)
    assert "unknown schema 'cudaenv.manifest/9'" in res.err
    res = cudaenv("--manifests", str(tmp_path / "missing"), "resolve", "11.8")
    assert_one_line_error(res, 4)


def test_unknown_command_gets_did_you_mean(cudaenv):
    res = cudaenv("resolv", "tf-2.13")
    assert_one_line_error(res, 2)
    assert "help: did you mean 'resolve'?" in res.err


def test_help_leads_with_examples_and_exits_zero(cudaenv):
    res = cudaenv("--help")
    assert res.rc == 0
    assert "Examples:" in res.out and "cudaenv resolve tf-2.13" in res.out
    sub = cudaenv("resolve", "--help")
    assert sub.rc == 0 and "Examples:" in sub.out
    assert "__generate-manifests" not in res.out


def test_bad_option_is_usage(cudaenv):
    assert_one_line_error(cudaenv("resolve", "tf-2.13", "--bogus"), 2)
    assert_one_line_error(cudaenv("resolve", "tf-2.13", "--cuda", "x.y"), 2)
    assert_one_line_error(cudaenv("resolve", "11.8", "--platform", "windows-x86_64"), 2)


def test_version_names_the_commit_and_the_manifests_date(cudaenv, tmp_path):
    res = cudaenv("--version")
    assert res.rc == 0, res
    lines = res.out.splitlines()
    assert lines[0].startswith("cudaenv ") and lines[0].split()[1][0].isdigit()
    assert lines[1].startswith("commit: ") and len(lines[1].split()[1]) >= 12
    assert lines[2] == f"manifests: {MANIFESTS}" or lines[2].startswith("manifests: ")
    release = json.loads((MANIFESTS / "release.json").read_text())
    assert lines[3] == f"manifests serial: {release['serial']} (shipped, made {release['created'][:10]})"
    assert lines[4].startswith("manifests date: 20")
    # the date is the data's: manifests holding only CUDA 11.8 say 11.8's release date
    mine = tmp_path / "m"
    shutil.copytree(MANIFESTS, mine)
    for kind in ("cuda", "cudnn"):
        for f in (mine / kind).glob("*.json"):
            if kind == "cudnn" or f.name != "11.8.0.json":
                f.unlink()
    # the manifest's own date (NVIDIA's redistrib_11.8.0.json's, which the generator copied; the
    # reference data is not beside every clone)
    date = json.loads((mine / "cuda" / "11.8.0.json").read_text())["release_date"]
    assert date.startswith("2022-")
    res = cudaenv("--manifests", str(mine), "--version")
    assert res.rc == 0, res
    assert res.out.splitlines()[4] == f"manifests date: {date} (the newest release they know: CUDA 11.8.0)"


def test_cuda_13_5_resolves_to_what_is_known_and_install_refuses_it(cudaenv):
    res = cudaenv("resolve", "13.5", "--json")
    assert res.rc == 0, res
    doc = res.json()
    assert (doc["known"], doc["installable"], doc["cuda"]["source"]) == ("announced", False, "announced")
    assert doc["driver"]["min"] == "620" and doc["driver"]["min_inferred"] is True
    assert doc["announced"]["cuda_compat"]["driver"] == "620.70.10"
    assert {"name": "CUDA Runtime (cudart)", "version": "13.5.37"} in doc["announced"]["components"]
    text = cudaenv("resolve", "13.5").out
    assert "R620 or newer for full support (inferred:" in text
    assert "not installable yet: CUDA 13.5 is released, but NVIDIA's index for it is not known" in text
    res = cudaenv("install", "13.5")
    assert_one_line_error(res, 9)
    assert "cudaenv install 13.4.2" in res.err
    res = cudaenv("install", "13.4.0")
    assert_one_line_error(res, 9)
    assert "CUDA 13.4.0 was a developer preview, superseded by 13.4.1" in res.err
    assert "--allow-unpinned" not in res.err  # NVIDIA published no index to trust
    # a plain major takes the newest installable and says 13.5 was passed over
    doc = cudaenv("resolve", "13", "--json").json()
    assert doc["cuda"]["version"] == "13.4.2"
    assert any("CUDA 13.5 is released" in n for n in doc["notes"]), doc["notes"]
