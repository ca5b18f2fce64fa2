"""Releases known by NVIDIA's index: index-pinned ones (manifests/indexes.json pins the index's
sha256; install fetches it, checks the pin, then trusts its archives) and unpinned ones
(--allow-unpinned: a new CUDA and its new cuDNN in one command or two, recorded in the root)."""
import hashlib
import json
import shutil

from conftest import PLATFORM, assert_one_line_error, snapshot

CUDA = "12.4.1"
CUDNN = "9.1.1.17"


def manifests_without(inst, tmp_path, cuda=False, cudnn=False, pin=False):
    man = tmp_path / "manifests"
    shutil.copytree(inst.fixture / "manifests", man)
    index = inst.fixture / "mirror" / "cuda" / "redist" / f"redistrib_{CUDA}.json"
    cudnn_index = inst.fixture / "mirror" / "cudnn" / "redist" / "redistrib_9.1.1.json"
    facts = None
    if cuda:
        # what the generator keeps of a release known by its index: the facts, no archives
        facts = json.loads((man / "cuda" / f"{CUDA}.json").read_text())
        for key in ("components", "nvcc_version"):
            facts.pop(key, None)
        facts["source"] = "index"
        facts["redistrib"] = {"path": f"cuda/redist/redistrib_{CUDA}.json",
                              "sha256": hashlib.sha256(index.read_bytes()).hexdigest()}
        (man / "cuda" / f"{CUDA}.json").unlink()
    if cudnn:
        (man / "cudnn" / f"{CUDNN}.json").unlink()
    if pin:
        (man / "indexes.json").write_text(json.dumps({
            "schema": "cudaenv.manifest/1", "kind": "indexes",
            "cuda": [{"version": CUDA, "path": f"cuda/redist/redistrib_{CUDA}.json",
                      "sha256": hashlib.sha256(index.read_bytes()).hexdigest(), "release": facts}] if cuda else [],
            "cudnn": [{"version": "9.1.1", "path": "cudnn/redist/redistrib_9.1.1.json",
                       "sha256": hashlib.sha256(cudnn_index.read_bytes()).hexdigest()}] if cudnn else []}))
    inst.env["CUDAENV_MANIFESTS"] = str(man)
    return man


def shape(doc):
    """The keys of a resolve --json document, nested one level: its schema."""
    return {k: sorted(v) if isinstance(v, dict) else type(v).__name__ for k, v in doc.items()}


def test_resolve_says_what_it_knows_of_an_index_pinned_release(inst, tmp_path):
    full = inst("resolve", "12.4+cudnn-9.1", "--json").json()
    manifests_without(inst, tmp_path, cuda=True, pin=True)
    res = inst("resolve", "12.4")
    assert res.rc == 0, res
    assert f"CUDA     {CUDA}  (known by NVIDIA's index only: cuda/redist/redistrib_{CUDA}.json" in res.out
    doc = inst("resolve", "12.4+cudnn-9.1", "--json").json()
    # one schema: the same keys as a release described in full, and a field saying what is known
    assert shape(doc) == shape(full), (shape(doc), shape(full))
    assert doc["known"] == "index" and full["known"] == "full"
    assert doc["cuda"]["version"] == CUDA and doc["cuda"]["known"] == "index"
    assert doc["cuda"]["source"] == "index"
    assert doc["cuda"]["index"]["path"] == f"cuda/redist/redistrib_{CUDA}.json"
    assert doc["cudnn"]["version"] == CUDNN and doc["cudnn"]["known"] == "full"  # the other half
    assert doc["installable"] is True
    assert [a["component"] for a in doc["archives"]] == ["cudnn"]  # CUDA's come with its index


def test_resolve_keeps_the_index_pinned_cudnn_half_of_a_pair(inst, tmp_path):
    manifests_without(inst, tmp_path, cudnn=True, pin=True)
    doc = inst("resolve", "12.4+cudnn-9.1.1", "--json").json()
    assert doc["cuda"]["version"] == CUDA and doc["cuda"]["known"] == "full"
    assert doc["cudnn"]["version"] == "9.1.1" and doc["cudnn"]["known"] == "index"
    assert doc["cudnn"]["index"]["path"] == "cudnn/redist/redistrib_9.1.1.json"
    assert doc["known"] == "index" and doc["installable"] is True
    text = inst("resolve", "12.4+cudnn-9.1.1").out
    assert "cuDNN    9.1.1  (known by NVIDIA's index only: cudnn/redist/redistrib_9.1.1.json" in text
    # install fetches that index and installs the pair
    res = inst("install", "12.4+cudnn-9.1.1", "--json")
    assert res.rc == 0, res
    assert res.json()["versions"][0]["version"] == f"{CUDA}+cudnn{CUDNN}"


def test_install_fetches_the_pinned_index_checks_it_and_installs(inst, tmp_path):
    manifests_without(inst, tmp_path, cuda=True, pin=True)
    res = inst("install", "12.4+cudnn-9.1", "--json")
    assert res.rc == 0, res
    assert res.json()["versions"][0]["version"] == f"{CUDA}+cudnn{CUDNN}"
    assert "without a pinned hash" not in res.err  # pinned: no warning
    assert (inst.root / "versions" / PLATFORM / f"{CUDA}+cudnn{CUDNN}" / "bin" / "nvcc").exists()
    assert not (inst.root / "indexes").exists()  # nothing to remember: the manifests pin it


def test_a_pinned_index_that_changed_is_refused_and_nothing_is_installed(inst, tmp_path):
    manifests_without(inst, tmp_path, cuda=True, pin=True)
    served = tmp_path / "extra" / "cuda" / "redist" / f"redistrib_{CUDA}.json"
    served.parent.mkdir(parents=True, exist_ok=True)
    original = (inst.fixture / "mirror" / "cuda" / "redist" / f"redistrib_{CUDA}.json").read_text()
    served.write_text(original + " ")  # one byte more: another hash
    before = snapshot(inst.root)
    res = inst("install", "12.4")
    assert_one_line_error(res, 4)
    assert "but the manifests pin" in res.err
    assert snapshot(inst.root) == before


def test_unpinned_cuda_and_cudnn_in_one_command(inst, tmp_path):
    manifests_without(inst, tmp_path, cuda=True, cudnn=True)
    res = inst("install", f"{CUDA}+cudnn-{CUDNN}")
    assert_one_line_error(res, 9)
    assert "--allow-unpinned" in res.err
    res = inst("install", f"{CUDA}+cudnn-{CUDNN}", "--allow-unpinned")
    assert res.rc == 0, res
    assert res.err.count("without a pinned hash") == 2, res.err
    assert (inst.root / "versions" / PLATFORM / f"{CUDA}+cudnn{CUDNN}").is_dir()
    trusted = json.loads((inst.root / "indexes" / "trusted.json").read_text())
    assert trusted["schema"] == "cudaenv.trusted/1"
    assert set(trusted["indexes"]) == {f"cuda/{CUDA}", f"cudnn/{CUDNN.rsplit('.', 1)[0]}"}


def test_an_unpinned_index_trusted_is_told_even_when_a_later_step_fails(inst, tmp_path):
    """The root trusts an unpinned index from the moment it is recorded: the warning comes then,
    before a later failure (here the cuDNN's index, broken on the mirror) can swallow it."""
    manifests_without(inst, tmp_path, cuda=True, cudnn=True)
    broken = tmp_path / "extra" / "cudnn" / "redist" / "redistrib_9.1.1.json"
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_text("{ not an index")
    res = inst("install", f"{CUDA}+cudnn-{CUDNN}", "--allow-unpinned")
    assert res.rc != 0, res
    warning = [l for l in res.err.splitlines() if "without a pinned hash" in l]
    assert len(warning) == 1 and warning[0].startswith(f"cudaenv: warning: CUDA {CUDA}"), res.err
    errors = [l for l in res.err.splitlines() if l.startswith("cudaenv: error:")]
    assert len(errors) == 1 and res.err.index(warning[0]) < res.err.index(errors[0]), res.err
    assert json.loads((inst.root / "indexes" / "trusted.json").read_text())["indexes"].keys() == {f"cuda/{CUDA}"}
    assert not (inst.root / "versions").exists() or not any((inst.root / "versions").iterdir())


def test_an_unpinned_cuda_installed_earlier_is_known_to_a_later_cudnn_install(inst, tmp_path):
    manifests_without(inst, tmp_path, cuda=True)
    assert inst("install", CUDA, "--allow-unpinned").rc == 0
    # later, without the flag: the root remembers the index it trusted (and checks its hash)
    res = inst("install", f"{CUDA}+cudnn-9.1")
    assert res.rc == 0, res
    assert "without a pinned hash" not in res.err
    assert (inst.root / "versions" / PLATFORM / f"{CUDA}+cudnn{CUDNN}").is_dir()
    assert inst("resolve", CUDA).rc == 0
    # a recorded index that changed on disk is refused, not silently trusted
    f = inst.root / "indexes" / "cuda" / f"redistrib_{CUDA}.json"
    f.write_text(f.read_text() + " ")
    res = inst("install", f"{CUDA}+cudnn-9.1")
    assert_one_line_error(res, 4)
    assert "no longer matches its recorded sha256" in res.err


def test_a_trusted_record_an_earlier_cudaenv_wrote_is_read_and_a_climbing_entry_refused(inst, tmp_path):
    """indexes/trusted.json before its schema was the entries alone: still read as the same
    record. An entry whose version would name a file outside indexes/ is refused (exit 4)."""
    manifests_without(inst, tmp_path, cuda=True)
    assert inst("install", CUDA, "--allow-unpinned").rc == 0
    record = inst.root / "indexes" / "trusted.json"
    entries = json.loads(record.read_text())["indexes"]
    record.write_text(json.dumps(entries))  # the first format
    res = inst("install", f"{CUDA}+cudnn-9.1")
    assert res.rc == 0, res
    assert "without a pinned hash" not in res.err
    record.write_text(json.dumps({"schema": "cudaenv.trusted/1",
                                  "indexes": {"cuda/../../../etc/x": entries[f"cuda/{CUDA}"]}}))
    res = inst("resolve", CUDA)
    assert_one_line_error(res, 4)
    assert "not <cuda|cudnn>/<version>" in res.err and str(record) in res.err, res.err


def test_an_index_with_encoded_traversal_is_refused_before_any_archive_is_requested(inst, tmp_path):
    """A hostile mirror's index names paths a server may decode into a climb out of the redist
    tree: refused (exit 4) before a URL is built; the server sees the index request only."""
    manifests_without(inst, tmp_path, cuda=True)
    index = json.loads((inst.fixture / "mirror" / "cuda" / "redist" / f"redistrib_{CUDA}.json").read_text())
    for i, bad in enumerate(["%2e%2e/%2e%2e/secret/a.tar.xz", "cuda_cudart/..%2f..%2fsecret.tar.xz",
                             "cuda_cudart/%252e%252e/secret.tar.xz"]):
        index["cuda_cudart"]["linux-x86_64"]["relative_path"] = bad
        served = tmp_path / "extra" / "cuda" / "redist" / f"redistrib_{CUDA}.json"
        served.parent.mkdir(parents=True, exist_ok=True)
        served.write_text(json.dumps(index))
        inst.server.clear()
        before = snapshot(inst.root)
        res = inst("install", CUDA, "--allow-unpinned")
        assert_one_line_error(res, 4)
        assert "unsafe relative_path" in res.err, res.err
        paths = [p for p, _ in inst.server.requests]
        assert paths and all(p.endswith(f"redistrib_{CUDA}.json") for p in paths), paths
        assert snapshot(inst.root) == before
