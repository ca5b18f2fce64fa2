"""Advisories (docs/advisories.md) on fixture machines: the doctor's advisories probe and `cudaenv
audit` name NVIDIA's bulletins that apply to a machine's driver (below and at each branch's fix, a
branch a bulletin does not list, one the later bulletins stopped listing), its NVIDIA Container
Toolkit (dpkg's status file in the sysroot; 1.17.7 is open to the critical NVIDIA-5659), and to
the installed versions' CUDA and cuBLAS (an unpatched and a patched one, installed from the
fixture's cuBLAS patch index); `acknowledge` in the machine's config silences one with its
reason; `resolve` names what applies to what it picks; an advisory a signed bundle delivers by
`cudaenv update` is matched without a new binary, and a bundle whose advisories.json does not
load is refused with the set in use kept.

Driver and container toolkit cases run against the committed manifests (the real bulletins); the
cuBLAS and update cases against the fixture's manifests with an advisories.json written here in
the manifest's format (the fixture's reference has no bulletins).
"""
import json
import os
import shutil
from pathlib import Path

import pytest

import fixture_mirror
import fixture_sysroot
from conftest import EXE, MANIFESTS, PLATFORM, assert_one_line_error
from fault_server import FaultServer

# every R535 bulletin with its first fixed driver (manifests/advisories.json, from NVIDIA's CSAF)
R535 = {"NVIDIA-5614": "535.230.02", "NVIDIA-5630": "535.247.01", "NVIDIA-5670": "535.261.03",
        "NVIDIA-5703": "535.274.02", "NVIDIA-5747": "535.288.01", "NVIDIA-5821": "535.309.01"}


@pytest.fixture(scope="session")
def libs(tmp_path_factory):
    return fixture_sysroot.Libs(tmp_path_factory.mktemp("advisories-libs"))


@pytest.fixture
def m(cudaenv, libs, tmp_path):
    """A healthy machine (an A100, driver 550.54.15, CUDA 12.4.1 selected at /usr/local/cuda)."""
    if os.geteuid() != 0:
        pytest.skip("ldconfig -r needs root (chroot)")
    machine = fixture_sysroot.Machine(tmp_path / "sys", libs).healthy()
    cudaenv.env.pop("container", None)
    cudaenv.env.update(CUDAENV_SYSROOT=str(machine.root), **machine.env())
    machine.run = cudaenv
    return machine


def driver(m, version):
    m.kernel_driver(version=version)
    m.gpu_conf(driver=version)


def audit(m, *args):
    res = m.run("audit", "--json", *args)
    assert res.rc in (0, 1), res
    doc = res.json()
    assert doc["command"] == "audit" and doc["ok"] is (res.rc == 0), res
    return res, doc


def on(doc, product):
    """advisory id -> fixed, for the hits on subjects of `product`."""
    return {a["id"]: a["fixed"] for a in doc["advisories"] if a["subject"]["product"] == product}


def advisories_probe(m):
    res = m.run("doctor", "--json")
    assert res.rc in (0, 1), res
    doc = res.json()
    return res, doc, next(p for p in doc["probes"] if p["id"] == "advisories")


# -- the driver ---------------------------------------------------------------------------------

def test_a_driver_below_every_fix_on_its_branch_is_named_with_each_fix(m):
    driver(m, "535.104.05")
    res, doc = audit(m)
    assert res.rc == 1, res
    assert on(doc, "driver") == R535
    d = next(s for s in doc["subjects"] if s["product"] == "driver")
    assert d == {"product": "driver", "version": "535.104.05", "where": "this machine", "datacenter": True}
    hit = next(a for a in doc["advisories"] if a["id"] == "NVIDIA-5821")
    assert hit["severity"] == "high" and hit["cvss"] == 8.8 and hit["kind"] == "security"
    assert hit["url"] == "https://nvidia.custhelp.com/app/answers/detail/a_id/5821"
    assert hit["fix"] == "update the driver to 535.309.01 or newer on R535 (or a newer branch's fixed driver)"
    assert hit["published"] == "2026-05-19" and all(c.startswith("CVE-") for c in hit["cves"])
    assert hit["acknowledged"] is None
    assert doc["applies"] == len(doc["advisories"]) and doc["critical"] == 0 and doc["acknowledged"] == 0
    # R535 is in every dated bulletin: only 5861, known in part, does not list it
    assert doc["notes"] == ["R535 is not listed by the later driver bulletins NVIDIA-5861: NVIDIA does not say "
                            "whether it is affected; a branch it stops listing may no longer get fixes"]
    # the doctor: warnings (versions, not faults), exit 0; its JSON lists them for `report`
    res, ddoc, probe = advisories_probe(m)
    assert res.rc == 0 and probe["status"] == "warn", probe
    assert sorted(a["id"] for a in ddoc["advisories"] if a["where"] == "this machine") == sorted(R535)
    assert {a["fixed"] for a in ddoc["advisories"] if a["subject"] == "driver 535.104.05"} == set(R535.values())
    # --strict fails on them
    assert m.run("doctor", "--strict", "--only", "advisories").rc == 1


def test_a_driver_at_each_fix_is_clear_of_that_bulletin_and_the_older_ones(m):
    ordered = list(R535.items())
    for i, (_, fixed) in enumerate(ordered):
        driver(m, fixed)
        _, doc = audit(m)
        assert on(doc, "driver") == dict(ordered[i + 1:]), fixed


def test_a_driver_at_the_newest_fix_leaves_only_the_bulletin_known_in_part(m):
    # R580 at 5821's fix: 5703 (580.95.05), 5747 (580.126.09), 5821 (580.159.03) are fixed; 5861
    # names 580.178.04 from one CVE file's opening alone
    driver(m, "580.159.03")
    res, doc = audit(m)
    assert on(doc, "driver") == {"NVIDIA-5861": "580.178.04"}
    hit = next(a for a in doc["advisories"] if a["id"] == "NVIDIA-5861")
    assert hit["partial"].startswith("PARTIAL: only two CVE files were readable")
    assert hit["published"] == "" and hit["cvss"] is None
    assert hit["notes"] == ["from CVE-2026-47501 alone (GeForce and RTX/Quadro/NVS (rows read); the excerpt "
                            "ends before any Tesla/R535 rows)"]
    assert doc["notes"] == []
    text = m.run("audit")
    assert text.rc == 1
    assert "NVIDIA-5861  high  driver 580.159.03  this machine  fixed in 580.178.04" in text.out
    assert "  known in part: PARTIAL: only two CVE files were readable" in text.out
    driver(m, "580.178.04")
    _, doc = audit(m)
    assert on(doc, "driver") == {}


def test_a_branch_a_bulletin_does_not_list_and_one_the_later_ones_stopped_listing(m):
    # the fixture's R550 driver: 5614 and 5630 list R550; nothing after April 2025 does
    _, doc = audit(m)
    assert on(doc, "driver") == {"NVIDIA-5614": "550.144.03", "NVIDIA-5630": "550.163.01"}
    note = ("R550 is not listed by the later driver bulletins NVIDIA-5670, NVIDIA-5703, NVIDIA-5747, NVIDIA-5821, "
            "NVIDIA-5861: NVIDIA does not say whether it is affected; a branch it stops listing may no longer get fixes")
    assert doc["notes"] == [note]
    text = m.run("audit")
    assert "\nnote: " + note + "\n" in text.out
    # at R550's last fix: no bulletin applies, and the note stays (it is about what is not known)
    driver(m, "550.163.01")
    _, doc = audit(m)
    assert on(doc, "driver") == {} and doc["notes"] == [note]
    # R590 came after 5614: only 5747 lists it, fixed in 590.48.01
    driver(m, "590.44.01")
    _, doc = audit(m)
    assert on(doc, "driver") == {"NVIDIA-5747": "590.48.01"}
    driver(m, "590.48.01")
    _, doc = audit(m)
    assert on(doc, "driver") == {}


def test_a_data_center_gpu_takes_the_tesla_fix(m):
    # 5614 on R570: GeForce/RTX fixed in 570.86.16, Tesla (the fixture's A100) in 570.86.15
    driver(m, "570.86.15")
    _, doc = audit(m)
    assert "NVIDIA-5614" not in on(doc, "driver")
    driver(m, "570.86.10")
    _, doc = audit(m)
    assert on(doc, "driver")["NVIDIA-5614"] == "570.86.15"
    # a GeForce card (a GTX 680, no data-center product) at 570.86.15 still needs 570.86.16
    m.pci_gpu(device="0x1180")
    driver(m, "570.86.15")
    _, doc = audit(m)
    assert next(s for s in doc["subjects"] if s["product"] == "driver")["datacenter"] is False
    assert on(doc, "driver")["NVIDIA-5614"] == "570.86.16"


# -- the container toolkit ---------------------------------------------------------------------

def test_a_vulnerable_container_toolkit_is_critical_and_fails_the_doctor(m):
    m.container_toolkit(version="1.17.7-1")
    res, ddoc, probe = advisories_probe(m)
    assert res.rc == 1, res
    assert probe["status"] == "fail", probe
    assert probe["finding"].startswith("NVIDIA-5659 (critical, CVSS 9.0): NVIDIA Container Toolkit 1.17.7 in this "
                                       "machine is affected; fixed in 1.17.8"), probe
    assert probe["fix"] == "upgrade the NVIDIA Container Toolkit to 1.17.8 or newer (apt-get install nvidia-container-toolkit)"
    assert "  CDI mode only for versions prior to 1.17.5" in probe["details"]
    res, doc = audit(m, "--fail-on", "critical")
    assert res.rc == 1 and doc["critical"] == 1
    assert on(doc, "container-toolkit") == {"NVIDIA-5659": "1.17.8", "NVIDIA-5850": "1.19.1"}
    text = m.run("audit", "--fail-on", "critical")
    assert text.rc == 1 and "(1 critical)" in text.out.splitlines()[-1], text
    # upgraded: 5850 (high) still applies; a critical-only gate passes, a high one does not
    m.container_toolkit(version="1.17.8-1")
    res, doc = audit(m, "--fail-on", "critical")
    assert res.rc == 0 and on(doc, "container-toolkit") == {"NVIDIA-5850": "1.19.1"}
    assert doc["ok"] is True and doc["applies"] > 0
    assert audit(m, "--fail-on", "high")[0].rc == 1
    res, _, probe = advisories_probe(m)
    assert res.rc == 0 and probe["status"] == "warn"
    # removed, its configuration kept (dpkg's "deinstall ok config-files"): not checked
    m.write("/var/lib/dpkg/status", "Package: nvidia-container-toolkit-base\nStatus: deinstall ok config-files\n"
            "Architecture: amd64\nVersion: 1.17.7-1\n\n")
    _, doc = audit(m)
    assert on(doc, "container-toolkit") == {}
    assert not any(s["product"] == "container-toolkit" for s in doc["subjects"])


def test_fail_on_takes_a_severity_only(m):
    res = m.run("audit", "--fail-on", "none")
    assert_one_line_error(res, 2)
    assert "--fail-on takes low, medium, high or critical, got 'none'" in res.err
    assert_one_line_error(m.run("audit", "--fail-on", "severe"), 2)


# -- acknowledging ------------------------------------------------------------------------------

def test_an_acknowledged_advisory_is_listed_with_its_reason_and_does_not_count(m):
    m.container_toolkit(version="1.17.7-1")
    m.write("/etc/cudaenv/config", "acknowledge = NVIDIA-5659 CDI mode is off on this host; upgrade booked\n")
    res, ddoc, probe = advisories_probe(m)
    assert res.rc == 0 and probe["status"] == "warn", probe
    assert ("acknowledged: NVIDIA-5659 for NVIDIA Container Toolkit 1.17.7 (this machine): CDI mode is off on this "
            "host; upgrade booked") in probe["details"]
    assert next(a for a in ddoc["advisories"] if a["id"] == "NVIDIA-5659")["acknowledged"] == \
        "CDI mode is off on this host; upgrade booked"
    res, doc = audit(m, "--fail-on", "critical")
    assert res.rc == 0 and doc["critical"] == 0 and doc["acknowledged"] == 1
    hit = next(a for a in doc["advisories"] if a["id"] == "NVIDIA-5659")
    assert hit["acknowledged"] == "CDI mode is off on this host; upgrade booked"
    # every one that applies acknowledged: the audit passes and says so
    _, doc = audit(m)
    ids = sorted({a["id"] for a in doc["advisories"]})
    m.write("/etc/cudaenv/config", "".join(f"acknowledge = {i} reviewed by ops\n" for i in ids))
    res = m.run("audit")
    assert res.rc == 0, res
    assert res.out.rstrip().endswith(f"no advisory applies but the {len(doc['advisories'])} acknowledged"), res.out
    assert "acknowledged: NVIDIA-5659 for NVIDIA Container Toolkit 1.17.7 (this machine): reviewed by ops" in res.out
    assert m.run("doctor", "--only", "advisories").rc == 0
    # a line without its reason: a usage error naming the file and line, nothing checked
    m.write("/etc/cudaenv/config", "root = /opt/cudaenv\nacknowledge = NVIDIA-5659\n")
    res = m.run("audit")
    assert_one_line_error(res, 2)
    assert "config:2: 'acknowledge = NVIDIA-5659' needs the reason after the id" in res.err


# -- resolve --------------------------------------------------------------------------------------

def test_resolve_names_what_applies_to_the_release_it_picks(cudaenv):
    res = cudaenv("resolve", "12.4")
    assert res.rc == 0, res
    for line in ("advisory: NVIDIA-5594 (low, CVSS 3.3): CUDA 12.4.1 is affected; fixed in 12.8",
                 "advisory: NVIDIA-5643 (medium, CVSS 4.4): CUDA 12.4.1 is affected; fixed in 12.9",
                 "advisory: NVIDIA-5661 (medium, CVSS 5.7): CUDA 12.4.1 is affected; fixed in 13.0",
                 "advisory: NVIDIA-5755 (high, CVSS 7.3): CUDA 12.4.1 is affected; fixed in 13.1",
                 "  fix: use CUDA 13.1 or newer (cudaenv install 13.1)"):
        assert line in res.out.splitlines(), res.out
    # a release past every toolkit bulletin: none named
    res = cudaenv("resolve", "13.1")
    assert res.rc == 0 and "advisory: NVIDIA-" not in res.out, res.out


# -- cuBLAS: an installed version with the release's own and one with a patch -------------------

# A correctness advisory in the manifest's format against the fixture's CUDA 12.4.1 cuBLAS
# (12.4.5.8), fixed by the fixture's patch 12.4.6 (12.4.6.3); the fixture's own data, no NVIDIA
# bulletin.
FIXTURE_CUBLAS_ADVISORY = {
    "id": "FIXTURE-CUBLAS-1", "kind": "correctness",
    "title": "cublasLtMatmul() gave wrong results in the fixture",
    "url": "https://docs.nvidia.com/cuda/cublas-patch-release-notes/", "published": "2026-03-16",
    "severity": "none",
    "affects": [{"product": "cublas", "introduced": "12.4.0", "fixed": "12.4.6.3",
                 "note": "fixed by the fixture's cuBLAS patch 12.4.6"}],
    "source": "test_advisories.py"}


def advisories_doc(*advisories, as_of="2026-12-07"):
    return {"schema": "cudaenv.manifest/1", "kind": "advisories", "as_of": as_of,
            "sources": ["test_advisories.py"], "advisories": list(advisories)}


@pytest.fixture(scope="session")
def cublas_fixture_dir(tmp_path_factory):
    if not EXE or not Path(EXE).exists():
        pytest.skip("CUDAENV_EXE is not set to a built cudaenv binary")
    out = tmp_path_factory.mktemp("fixture-cublas-adv")
    return fixture_mirror.build(out, EXE, MANIFESTS, platforms=(PLATFORM,), cublas=True)


@pytest.fixture
def pinst(cudaenv, cublas_fixture_dir, tmp_path):
    man = tmp_path / "manifests"
    shutil.copytree(cublas_fixture_dir / "manifests", man)
    assert not (man / "advisories.json").exists()  # the fixture's reference has no bulletins
    (man / "advisories.json").write_text(json.dumps(advisories_doc(FIXTURE_CUBLAS_ADVISORY), indent=1))
    (tmp_path / "extra").mkdir()
    srv = FaultServer(tmp_path / "extra", cublas_fixture_dir / "mirror")
    sysroot = tmp_path / "bare"  # a machine with no driver, toolkit or container toolkit
    sysroot.mkdir()
    cudaenv.env.update(CUDAENV_MANIFESTS=str(man), CUDAENV_MIRROR=srv.url, CUDAENV_RETRIES="0",
                       CUDAENV_STALL_TIMEOUT="2", CUDAENV_CONNECT_TIMEOUT="3", CUDAENV_LOCK_TIMEOUT="30",
                       CUDAENV_RECOMPRESSED="off")
    cudaenv.root = cudaenv.tmp / "root"
    cudaenv.sysroot = sysroot
    cudaenv.manifests = man
    yield cudaenv
    srv.close()


def test_an_unpatched_cublas_is_named_and_a_patched_one_is_not(pinst):
    # resolve says it of the release's own cuBLAS, not of the patch --patch takes
    res = pinst("resolve", "12.4")
    assert res.rc == 0, res
    assert ("advisory: FIXTURE-CUBLAS-1 (wrong results): cuBLAS 12.4.5.8 (CUDA 12.4.1) is affected; fixed in "
            "12.4.6.3") in res.out, res.out
    res = pinst("resolve", "12.4", "--patch", "cublas")
    assert res.rc == 0 and "FIXTURE-CUBLAS-1" not in res.out, res.out
    # two versions: 12.4.1 with the release's cuBLAS, 12.4.1+cudnn... with the newest patch
    res = pinst("install", "12.4")
    assert res.rc == 0, res
    assert "FIXTURE-CUBLAS-1" in res.out + res.err
    res = pinst("install", "12.4+cudnn-9.1", "--patch", "cublas", "--json")
    assert res.rc == 0, res
    patched_name = res.json()["versions"][0]["version"]
    assert patched_name.startswith("12.4.1+cudnn9.1"), patched_name
    env = {"CUDAENV_SYSROOT": str(pinst.sysroot)}
    res = pinst("audit", "--json", env=env)
    assert res.rc == 1, res
    doc = res.json()
    cublas = {s["installed_version"]: s for s in doc["subjects"] if s["product"] == "cublas"}
    assert cublas["12.4.1"] == {"product": "cublas", "version": "12.4.5.8", "where": "version 12.4.1",
                                "installed_version": "12.4.1", "cuda": "12.4.1", "patched": False}
    assert cublas[patched_name]["version"] == "12.4.7.1" and cublas[patched_name]["patched"] is True
    assert [(a["id"], a["subject"]["installed_version"]) for a in doc["advisories"]] == [("FIXTURE-CUBLAS-1", "12.4.1")]
    hit = doc["advisories"][0]
    assert hit["kind"] == "correctness" and hit["severity"] == "none" and hit["fixed"] == "12.4.6.3"
    assert hit["fix"] == "take cuBLAS 12.4.6.3 or newer: cudaenv install 12.4.1 --patch cublas"
    assert hit["notes"] == ["fixed by the fixture's cuBLAS patch 12.4.6"]
    # a correctness bug counts at every threshold
    assert pinst("audit", "--fail-on", "critical", env=env).rc == 1
    text = pinst("audit", env=env)
    assert "FIXTURE-CUBLAS-1  wrong results  cuBLAS 12.4.5.8 (CUDA 12.4.1)  version 12.4.1  fixed in 12.4.6.3" in text.out
    assert "  fix: take cuBLAS 12.4.6.3 or newer: cudaenv install 12.4.1 --patch cublas" in text.out
    assert text.out.rstrip().endswith("1 advisory applies"), text.out
    # taking the fix it names clears it
    res = pinst("install", "12.4.1", "--patch", "cublas")
    assert res.rc == 0, res
    res = pinst("audit", "--json", env=env)
    assert res.rc == 0 and res.json()["advisories"] == [], res
    assert pinst("audit", env=env).out.rstrip().endswith("no advisory applies")


def test_an_advisories_file_that_does_not_load_is_an_integrity_error(pinst):
    bad = dict(FIXTURE_CUBLAS_ADVISORY, affects=[{"product": "cublas", "introduced": "12.4.0"}])
    (pinst.manifests / "advisories.json").write_text(json.dumps(advisories_doc(bad)))
    res = pinst("audit", env={"CUDAENV_SYSROOT": str(pinst.sysroot)})
    assert_one_line_error(res, 4)
    assert "advisories.json" in res.err and "needs 'fixed' or 'last_affected'" in res.err, res.err
    # resolving never fails for them
    assert pinst("resolve", "12.4").rc == 0


# -- an advisory delivered by `cudaenv update` -------------------------------------------------

def test_an_advisory_the_channel_delivers_applies_without_a_new_binary(fixture_dir, tmp_path):
    from nginx import NGINX, Nginx
    import test_update as tu
    if not NGINX:
        pytest.skip("nginx is not installed")
    if not shutil.which("openssl"):
        pytest.skip("the openssl command is not installed")
    assert tu.run("__bundle", "keygen", "--out", str(tmp_path / "site")).returncode == 0
    # the floor: the fixture's manifests with the committed advisories
    base = tmp_path / "base"
    shutil.copytree(fixture_dir / "manifests", base)
    shutil.copy(MANIFESTS / "advisories.json", base / "advisories.json")
    floor = tu.with_release(base, tmp_path / "floor", 100)
    # serial 101: the same with one advisory more, against the container toolkit 1.19.1
    committed = json.loads((MANIFESTS / "advisories.json").read_text())
    extra = {"id": "FIXTURE-CTK-1", "kind": "security", "title": "a fixture advisory against the container toolkit",
             "url": "https://nvidia.custhelp.com/app/answers/detail/a_id/0000", "published": "2026-12-01",
             "severity": "high", "cvss": 7.5,
             "affects": [{"product": "container-toolkit", "fixed": "1.19.2", "last_affected": "1.19.1"}],
             "source": "test_advisories.py"}
    newer = tu.with_release(base, tmp_path / "newer", 101)
    (newer / "advisories.json").write_text(json.dumps(dict(committed, advisories=committed["advisories"] + [extra])))
    served = tmp_path / "channel"
    served.mkdir()
    tu.make_bundle(newer, tmp_path / "site.secret", served / "manifests.bundle")
    srv = Nginx(tmp_path / "nginx", {"/channel/": served})
    host = tu.Machine(tmp_path, "host", floor, f"channel = {srv.url('/channel')}\n", [tmp_path / "site.pub"])
    try:
        (host.sysroot / "var/lib/dpkg").mkdir(parents=True)
        (host.sysroot / "var/lib/dpkg/status").write_text(
            "Package: nvidia-container-toolkit\nStatus: install ok installed\nArchitecture: amd64\n"
            "Version: 1.19.1-1\n\n")
        before = host("audit", "--json")
        assert before.returncode == 0, before.stderr
        doc = json.loads(before.stdout)
        assert doc["advisories"] == [] and doc["known"] == len(committed["advisories"])
        assert {"product": "container-toolkit", "version": "1.19.1", "where": "this machine"} in doc["subjects"]
        check = host("update", "--check")
        assert check.returncode == 0, check.stderr
        assert "advisory FIXTURE-CTK-1" in check.stdout, check.stdout
        res = host("update")
        assert res.returncode == 0, res.stderr
        after = host("audit", "--json")
        assert after.returncode == 1, after.stderr
        doc = json.loads(after.stdout)
        assert doc["known"] == len(committed["advisories"]) + 1
        assert [(a["id"], a["fixed"]) for a in doc["advisories"]] == [("FIXTURE-CTK-1", "1.19.2")]
        # a bundle whose advisories.json does not load: refused, the set in use kept
        broken = tu.with_release(newer, tmp_path / "broken", 102)
        bad = dict(extra, affects=[{"product": "container-toolkit", "introduced": "1.19.0"}])
        (broken / "advisories.json").write_text(json.dumps(dict(committed, advisories=committed["advisories"] + [bad])))
        tu.make_bundle(broken, tmp_path / "site.secret", served / "manifests.bundle")
        state = host.state()
        for args in (("update", "--check"), ("update",)):
            res = host(*args)
            assert res.returncode == 4, res.stderr
            assert "the manifests in the bundle do not load" in res.stderr and "advisories.json" in res.stderr, res.stderr
            assert "needs 'fixed' or 'last_affected'" in res.stderr, res.stderr
        assert host.state() == state and host.serial() == 101
        again = host("audit", "--json")
        assert again.returncode == 1 and [a["id"] for a in json.loads(again.stdout)["advisories"]] == ["FIXTURE-CTK-1"]
    finally:
        host.close()
        srv.stop()
