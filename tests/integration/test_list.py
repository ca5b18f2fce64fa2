from conftest import assert_one_line_error


def test_available_json_lists_every_release(cudaenv):
    res = cudaenv("list", "--available", "--json")
    assert res.rc == 0, res
    doc = res.json()
    redist = [c for c in doc["cuda"] if c["source"] == "redist"]
    assert len(redist) == 49  # 11.4.2 to 13.4.2
    assert {"13.4.2", "13.2.2", "12.9.2"} <= {c["version"] for c in redist}
    assert all(c["installable"] for c in redist)
    runfile = [c for c in doc["cuda"] if c["source"] == "runfile"]
    assert {c["version"] for c in runfile} >= {"10.0.130", "11.2.2", "11.4.1"}
    assert all(c["installable"] for c in runfile)  # read from NVIDIA's runfile installers
    versions = [c["version"] for c in doc["cudnn"]]
    assert "8.6.0.163" in versions and "7.6.5.32" in versions and "9.27.0.42" in versions
    fws = {f["name"]: f for f in doc["frameworks"]}
    assert len(fws["tensorflow"]["releases"]) == 25
    assert len(fws["pytorch"]["releases"]) == 15 and len(fws["jax"]["releases"]) == 61
    torch25 = next(r for r in fws["pytorch"]["releases"] if r["series"] == "2.5")
    assert (torch25["builds"], torch25["default_build"]) == (["cu118", "cu121", "cu124"], "cu124")


def test_available_text_has_sections(cudaenv):
    res = cudaenv("list", "--available")
    assert res.rc == 0, res
    for heading in ("CUDA (redistributable archives):", "cuDNN (release, builds for CUDA):",
                    "tensorflow (release: CUDA, cuDNN, Python):"):
        assert heading in res.out


def test_available_filters_by_kind(cudaenv):
    doc = cudaenv("list", "--available", "cudnn", "--json").json()
    assert "cudnn" in doc and "cuda" not in doc and "frameworks" not in doc
    doc = cudaenv("list", "--available", "tf", "--json").json()
    assert list(doc.keys()) == ["command", "frameworks", "ok", "schema_version"]
    doc = cudaenv("list", "--available", "torch", "--json").json()
    assert [f["name"] for f in doc["frameworks"]] == ["pytorch"]
    assert_one_line_error(cudaenv("list", "--available", "mxnet"), 2)


def test_available_lists_the_index_pinned_releases(cudaenv):
    doc = cudaenv("list", "--available", "--json").json()
    pinned = {c["version"] for c in doc["cuda"] if c["source"] == "index"}
    assert pinned == {"13.1.0"}  # the other nine are described in full from their indexes
    assert {c["version"] for c in doc["cudnn"] if c.get("source") == "index"} == \
        {"9.7.0", "9.18.0", "9.19.0", "9.21.1"}
    assert all(len(c["index_sha256"]) == 64 for c in doc["cuda"] if c["source"] == "index")
    text = cudaenv("list", "--available").out
    assert "CUDA (known by NVIDIA's index, its sha256 pinned; install fetches it):" in text


def test_available_lists_cuda_13_5_as_released_but_not_installable(cudaenv):
    # NVIDIA released 13.5, its index is not known (data/reference/cuda-2026-12-supplement.json)
    doc = cudaenv("list", "--available", "cuda", "13", "--json").json()
    announced = {c["version"]: c for c in doc["cuda"] if c["source"] == "announced"}
    assert set(announced) == {"13.5", "13.4.0"}
    r = announced["13.5"]
    assert (r["status"], r["installable"], r["release_date"]) == ("released", False, None)
    assert (r["driver_branch"], r["driver_branch_basis"]) == (620, "inferred")
    assert "SM support" in r["not_known"] and "host compilers" in r["not_known"]
    p = announced["13.4.0"]
    assert (p["status"], p["superseded_by"], p["installable"]) == ("preview", "13.4.1", False)
    text = cudaenv("list", "--available", "cuda").out
    assert "CUDA (published by NVIDIA, not installable: its index is not known):" in text
    assert "13.5     released (date not known); driver R620 (inferred); its index is not known" in text
