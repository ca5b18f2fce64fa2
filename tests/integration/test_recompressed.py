"""A fleet mirror's recompressed archives (`cudaenv mirror --recompress zstd --sign-key`): a zstd
copy of each of NVIDIA's archives and an index, signed by the site's key, binding NVIDIA's sha256
to the copy's. A host that trusts the key installs the copies (the same version, byte for byte);
a changed copy, a changed index or an index by a key the host does not trust is refused (exit 4)
with nothing installed; a mirror without an index is an ordinary one."""
import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import PLATFORM, AS_USER, assert_one_line_error, leftovers
from fault_server import FaultServer

TF213 = "11.8.0+cudnn8.6.0.163"


def version_files(prefix):
    """Every path of an installed version (cudaenv's own records left out): type and content."""
    out = {}
    for p in sorted(Path(prefix).rglob("*")):
        rel = str(p.relative_to(prefix))
        if p.name.startswith(".cudaenv"):
            continue
        if p.is_symlink():
            out[rel] = ("link", os.readlink(p))
        elif p.is_file():
            out[rel] = ("file", hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mode & 0o777)
        else:
            out[rel] = ("dir",)
    return out


@pytest.fixture
def site(inst, tmp_path):
    """The site's key pair, and a host sysroot that trusts it."""
    keys = tmp_path / "keys"
    keys.mkdir()
    assert inst("__bundle", "keygen", "--out", str(keys / "site")).rc == 0
    assert inst("__bundle", "keygen", "--out", str(keys / "other")).rc == 0
    sysroot = tmp_path / "sysroot"
    (sysroot / "etc/cudaenv/keys").mkdir(parents=True)
    shutil.copy(keys / "site.pub", sysroot / "etc/cudaenv/keys/site.pub")
    inst.keys = keys
    inst.sysroot = sysroot
    # the hosts trust the site's key through their sysroot: ordinary users (a root cudaenv takes
    # its keys from the machine itself, docs/channel.md)
    inst.run_as = AS_USER
    return inst


@pytest.fixture
def zmirror(site, tmp_path):
    dest = tmp_path / "mirror"
    res = site("mirror", "tf-2.13", "--to", str(dest), "--recompress", "zstd", "--sign-key",
               str(site.keys / "site.secret"), "--level", "3", "--json")
    assert res.rc == 0, res
    srv = FaultServer(dest)
    site.zdir = dest
    site.zdoc = res.json()
    site.zsrv = srv
    yield site
    srv.close()


def host(inst, tmp_path, name, trusted=True, **env):
    """Environment of a host installing from the recompressed mirror."""
    e = {"CUDAENV_MIRROR": inst.zsrv.url, "CUDAENV_ROOT": str(tmp_path / name),
         "CUDAENV_RECOMPRESSED": "on"}
    if trusted:
        e["CUDAENV_SYSROOT"] = str(inst.sysroot)
    e.update(env)
    return e


def test_mirror_makes_a_zstd_copy_of_every_archive_and_a_signed_index(zmirror):
    doc = zmirror.zdoc["recompressed"]
    archives = {f["path"]: f for f in zmirror.zdoc["files"] if f["path"].endswith(".tar.xz")}
    assert archives and {a["original"]["path"] for a in doc["archives"]} == set(archives)
    assert doc["made"] == len(archives) and doc["index"] == "cudaenv-recompressed/index"
    for a in doc["archives"]:
        assert a["original"]["sha256"] == archives[a["original"]["path"]]["sha256"]
        copy = zmirror.zdir / a["path"]
        assert a["path"].startswith("cudaenv-recompressed/") and a["path"].endswith(".tar.zst")
        assert hashlib.sha256(copy.read_bytes()).hexdigest() == a["sha256"]
        assert copy.stat().st_size == a["size"] and copy.stat().st_mode & 0o777 == 0o644
        assert copy.read_bytes()[:4] == b"\x28\xb5\x2f\xfd"  # zstd's magic
        assert (zmirror.zdir / a["original"]["path"]).is_file()  # NVIDIA's stays
    index = (zmirror.zdir / "cudaenv-recompressed/index").read_text()
    assert index.startswith("cudaenv-recompressed/1\nsignature ")
    # the record lists the copies and the index, so --verify checks them
    assert zmirror("mirror", "--verify", str(zmirror.zdir)).rc == 0
    copy = zmirror.zdir / doc["archives"][0]["path"]
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 1
    copy.write_bytes(bytes(data))
    bad = zmirror("mirror", "--verify", str(zmirror.zdir), "--json")
    assert bad.rc == 4 and [p["path"] for p in bad.json()["problems"]] == [doc["archives"][0]["path"]]
    # a second run remakes exactly the damaged copy
    again = zmirror("mirror", "tf-2.13", "--to", str(zmirror.zdir), "--recompress", "zstd",
                    "--sign-key", str(zmirror.keys / "site.secret"), "--level", "3", "--json")
    assert again.rc == 0, again
    assert again.json()["recompressed"]["made"] == 1
    assert zmirror("mirror", "--verify", str(zmirror.zdir)).rc == 0


def test_a_trusting_host_installs_the_copies_and_gets_the_same_version(zmirror, tmp_path):
    res = zmirror("--json", "install", "tf-2.13", env=host(zmirror, tmp_path, "a"))
    assert res.rc == 0, res
    archives = res.json()["versions"][0]["archives"]
    assert archives and all(a["recompressed"] for a in archives)
    fetched = [p for p, _ in zmirror.zsrv.requests]
    assert any(p.endswith("/cudaenv-recompressed/index") for p in fetched)
    assert not any(p.endswith(".tar.xz") for p in fetched), fetched
    assert sum(p.endswith(".tar.zst") for p in fetched) == len(archives)

    # the same version from NVIDIA's xz archives (the host opts out)
    zmirror.zsrv.clear()
    xz = zmirror("--json", "install", "tf-2.13",
                 env=host(zmirror, tmp_path, "b", CUDAENV_RECOMPRESSED="off"))
    assert xz.rc == 0, xz
    fetched = [p for p, _ in zmirror.zsrv.requests]
    assert not any("cudaenv-recompressed" in p for p in fetched)
    assert version_files(tmp_path / "a/versions" / TF213) == version_files(tmp_path / "b/versions" / TF213)
    assert sorted(os.listdir(tmp_path / "a/store")) == sorted(os.listdir(tmp_path / "b/store"))


def test_a_changed_copy_is_refused_and_nothing_is_installed(zmirror, tmp_path):
    a = zmirror.zdoc["recompressed"]["archives"][0]
    copy = zmirror.zdir / a["path"]
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0x10
    copy.write_bytes(bytes(data))
    env = host(zmirror, tmp_path, "a")
    res = zmirror("install", "tf-2.13", env=env)
    assert_one_line_error(res, 4)
    assert "sha256" in res.err or "checksum" in res.err
    root = tmp_path / "a"
    assert not (root / "versions" / PLATFORM / TF213).exists()
    assert leftovers(root) == []


def test_a_changed_index_is_refused(zmirror, tmp_path):
    index = zmirror.zdir / "cudaenv-recompressed/index"
    text = index.read_text()
    a = zmirror.zdoc["recompressed"]["archives"][0]
    index.write_text(text.replace(a["sha256"], hashlib.sha256(b"evil").hexdigest()))
    res = zmirror("install", "tf-2.13", env=host(zmirror, tmp_path, "a"))
    assert_one_line_error(res, 4)
    assert "recompressed index" in res.err and "does not verify" in res.err
    assert not (tmp_path / "a/versions" / TF213).exists()
    # cut short
    index.write_text(text.split("\n\n", 1)[0])
    res = zmirror("install", "tf-2.13", env=host(zmirror, tmp_path, "a"))
    assert_one_line_error(res, 4)
    assert "truncated" in res.err


def test_an_index_signed_by_a_key_the_host_does_not_trust(zmirror, tmp_path):
    res = zmirror("install", "tf-2.13", env=host(zmirror, tmp_path, "a", trusted=False))
    assert_one_line_error(res, 4)
    assert "signed by no key this machine trusts" in res.err
    assert "CUDAENV_RECOMPRESSED=off" in res.err and "/etc/cudaenv/keys" in res.err
    assert not (tmp_path / "a/versions" / TF213).exists()
    ok = zmirror("install", "tf-2.13",
                 env=host(zmirror, tmp_path, "a", trusted=False, CUDAENV_RECOMPRESSED="off"))
    assert ok.rc == 0, ok


def test_the_index_is_held_to_the_channels_rules(zmirror, tmp_path):
    """The same keys (a key the host revokes signs nothing), the same strict reading (a field the
    schema lacks, a key twice), the same deadline as the update channel's bundles."""
    index = zmirror.zdir / "cudaenv-recompressed/index"
    good = index.read_bytes()
    keys = zmirror.sysroot / "etc/cudaenv/keys"
    shutil.copy(keys / "site.pub", keys / "site.revoked")
    try:
        res = zmirror("install", "tf-2.13", env=host(zmirror, tmp_path, "a"))
        assert_one_line_error(res, 4)
        assert "no longer trusts (revoked)" in res.err
    finally:
        (keys / "site.revoked").unlink()
    # signed payloads the strict reader refuses: re-signed by the site's own key with openssl
    from test_update import key_id, openssl_sign
    work = tmp_path / "forge"
    work.mkdir()
    head, payload = good.split(b"\n\n", 1)
    doc = json.loads(payload)
    for bad, want in ((json.dumps(dict(doc, mirrors=[])), "its payload has the field 'mirrors'"),
                      (json.dumps(doc).replace('"archives": [', '"created": "2026-12-07T00:00:00Z", "archives": [', 1),
                       "the key 'created' is given twice")):
        body = bad.encode()
        sig = openssl_sign(zmirror.keys / "site.secret", b"cudaenv-recompressed/1\n" + body, work)
        index.write_bytes(f"cudaenv-recompressed/1\nsignature {key_id(zmirror.keys / 'site.pub')} {sig}\n\n".encode()
                          + body)
        res = zmirror("install", "tf-2.13", env=host(zmirror, tmp_path, "a"))
        assert_one_line_error(res, 4)
        assert want in res.err, res.err
    index.write_bytes(good)
    # an index that drips: given up at the deadline, nothing installed
    zmirror.zsrv.fault("/cudaenv-recompressed/index", {"kind": "drip", "rate": 2048, "secs": 30})
    res = zmirror("install", "tf-2.13", env=host(zmirror, tmp_path, "a", CUDAENV_CHANNEL_TIMEOUT="2"))
    assert_one_line_error(res, 3)
    assert "did not finish in time (2 s, CUDAENV_CHANNEL_TIMEOUT)" in res.err
    assert not (tmp_path / "a/versions" / TF213).exists()


def test_an_installed_version_asks_for_no_index(zmirror, tmp_path):
    env = host(zmirror, tmp_path, "a")
    assert zmirror("install", "tf-2.13", env=env).rc == 0
    zmirror.zsrv.clear()
    again = zmirror("install", "tf-2.13", env=env)
    assert again.rc == 0, again
    assert zmirror.zsrv.requests == []


def test_a_mirror_without_an_index_serves_nvidias_archives(inst, tmp_path):
    res = inst("--json", "install", "tf-2.13",
               env={"CUDAENV_RECOMPRESSED": "on", "CUDAENV_ROOT": str(tmp_path / "a")})
    assert res.rc == 0, res
    assert not any(a["recompressed"] for a in res.json()["versions"][0]["archives"])
    fetched = [p for p, _ in inst.server.requests]
    assert fetched.count("/cudaenv-recompressed/index") == 1  # asked once, answered 404
    assert any(p.endswith(".tar.xz") for p in fetched)


def test_recompress_is_refused_before_anything_is_downloaded(site, tmp_path):
    dest = tmp_path / "m"
    site.server.clear()
    for args, words in (
            (["--recompress", "zstd"], "--recompress needs --sign-key"),
            (["--recompress", "gzip", "--sign-key", str(site.keys / "site.secret")], "zstd only"),
            (["--recompress", "zstd", "--sign-key", str(site.keys / "site.pub")], "site.pub"),
            (["--recompress", "zstd", "--sign-key", str(site.keys / "site.secret"), "--level", "22"],
             "1 to 19"),
            (["--sign-key", str(site.keys / "site.secret")], "give --recompress zstd")):
        res = site("mirror", "tf-2.13", "--to", str(dest), *args)
        assert_one_line_error(res, 2)
        assert words in res.err, (args, res.err)
    assert site.server.requests == []
    assert not dest.exists()
