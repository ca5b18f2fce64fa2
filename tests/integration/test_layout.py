"""A version is one platform (docs/store.md, Platforms): versions/<platform>/<name>, one root serving
x86_64 and Arm hosts side by side, and the migration of a root laid out before platforms
(versions/<name>/) without losing a version, under kills."""
import json
import os
import shutil
from pathlib import Path

from conftest import PLATFORM, assert_one_line_error

TF213 = "11.8.0+cudnn8.6.0.163"
# this host's platform (the binary's own) and another one
HOST = PLATFORM
OTHER = "linux-sbsa" if PLATFORM == "linux-x86_64" else "linux-x86_64"


def to_old_layout(root):
    """The root as the release before platforms laid it out: versions/<name>/ with the record
    naming the platform (moved there by the test, the bytes as installed)."""
    for platform_dir in [p for p in (root / "versions").iterdir() if p.name.startswith("linux-")]:
        for v in list(platform_dir.iterdir()):
            v.rename(root / "versions" / v.name)
        platform_dir.rmdir()


def link(s):
    return os.readlink(s / "usr" / "local" / "cuda")


def names(res):
    assert res.rc == 0, res
    return [v["version"] for v in res.json()["versions"]]


def assert_migrated(root, versions):
    """Every version in versions/<platform>/<name>, each old path a relative link to it, nothing
    else left in versions/."""
    top = {p.name for p in (root / "versions").iterdir()}
    assert top == set(versions) | {HOST}, top
    for v in versions:
        assert (root / "versions" / HOST / v / ".cudaenv-version.json").is_file()
        assert not (root / "versions" / HOST / v).is_symlink()
        assert os.readlink(root / "versions" / v) == f"{HOST}/{v}"
    assert sorted(p.name for p in (root / "versions" / HOST).iterdir()) == sorted(versions)


def test_install_lays_out_versions_by_platform(inst):
    res = inst("install", "11.8", "--json")
    assert res.rc == 0, res
    prefix = Path(res.json()["versions"][0]["prefix"])
    assert prefix == inst.root / "versions" / HOST / "11.8.0"
    assert json.loads((prefix / ".cudaenv-version.json").read_text())["platform"] == HOST
    assert [p.name for p in (inst.root / "versions").iterdir()] == [HOST]
    assert inst("prefix", "11.8").out.strip() == str(prefix)


def test_an_old_root_is_read_as_it_is_and_migrated_by_global(machine):
    s, root = machine.sysroot, machine.root
    TF216 = names(machine("list", "--json"))[1]
    assert machine("global", "tf-2.13").rc == 0
    to_old_layout(root)
    # what the release before platforms wrote: the link and the loader's file name versions/<name>
    os.remove(s / "usr" / "local" / "cuda")
    os.symlink(f"/opt/cudaenv/versions/{TF213}", s / "usr" / "local" / "cuda")
    old = root / "versions" / TF213
    # read-only commands read it as it is and change nothing
    assert names(machine("list", "--json")) == [TF213, TF216]
    assert machine("prefix", "tf-2.13").out.strip() == str(old)
    assert old.is_dir() and not old.is_symlink()
    # a write under the lock migrates, and global writes the new path
    res = machine("global", "tf-2.13")
    assert res.rc == 0, res
    assert_migrated(root, [TF213, TF216])
    assert link(s) == f"/opt/cudaenv/versions/{HOST}/{TF213}"
    assert (s / link(s).lstrip("/") / "lib64" / "libcudart.so.11.0").exists()
    # the old absolute paths (a user's shell, a modulefile, a pin) still reach the same version
    assert os.path.realpath(old) == str(root / "versions" / HOST / TF213)
    assert (old / "lib64" / "libcudart.so.11.0").exists()
    assert names(machine("list", "--json")) == [TF213, TF216]
    assert machine("prefix", "tf-2.16").out.strip() == str(root / "versions" / HOST / TF216)
    ran = machine("exec", "--", "nvcc", "--version", env={"CUDAENV_VERSION": "tf-2.16"})
    assert ran.rc == 0 and "release 12.4" in ran.out, ran
    # uninstall takes the version and its old path's link; the other stays
    assert machine("uninstall", TF216).rc == 0
    assert not os.path.lexists(root / "versions" / TF216)
    assert_migrated(root, [TF213])


def test_a_kill_during_migration_leaves_a_root_the_next_run_finishes(inst):
    assert inst("install", "tf-2.13", "11.8").rc == 0
    to_old_layout(inst.root)
    versions = ["11.8.0", TF213]
    for point in ("migrate-exchange", "migrate-after"):
        res = inst("install", "11.8", env={"CUDAENV_FAILPOINTS": f"{point}:kill"})
        assert res.rc == -9, res  # killed at the point
        # every version is listed and selectable, wherever it is now
        assert names(inst("list", "--json")) == versions
        for v in versions:
            prefix = Path(inst("prefix", v).out.strip())
            assert (prefix / ".cudaenv-version.json").is_file(), (point, v)
            assert (inst.root / "versions" / v / "lib64").is_dir(), (point, v)
        to_old = [p for p in (inst.root / "versions").iterdir() if not p.name.startswith("linux-")]
        assert sorted(p.name for p in to_old) == versions  # a folder or the migration's link
    res = inst("install", "11.8")
    assert res.rc == 0, res
    assert_migrated(inst.root, versions)
    assert names(inst("list", "--json")) == versions


def test_a_read_only_upstream_in_the_old_layout_is_read_never_migrated(inst, tmp_path):
    sysroot = tmp_path / "sys"
    machine_wide = sysroot / "opt" / "cudaenv"  # the default machine-wide root, in a sysroot
    inst.root = machine_wide
    inst.env["CUDAENV_ROOT"] = str(machine_wide)
    assert inst("install", "11.8").rc == 0
    to_old_layout(machine_wide)
    env = dict(CUDAENV_ROOT=str(tmp_path / "user"), CUDAENV_SYSROOT=str(sysroot))
    listed = inst("list", "--json", env=env)
    assert listed.rc == 0, listed
    assert [(v["version"], v["upstream"]) for v in listed.json()["versions"]] == [("11.8.0", True)]
    assert inst("prefix", "11.8", env=env).out.strip() == str(machine_wide / "versions" / "11.8.0")
    # a write in the user's root sweeps the user's root only
    assert inst("gc", env=env).rc == 0
    assert (machine_wide / "versions" / "11.8.0").is_dir()
    assert not (machine_wide / "versions" / "11.8.0").is_symlink()
    assert not (machine_wide / "versions" / HOST).exists()


def sbsa_manifests(inst, tmp_path):
    """The fixture's manifests with CUDA 11.8.0 published for the other platform as well (the same
    archives: what matters here is where each platform's copy lives)."""
    man = tmp_path / "manifests"
    shutil.copytree(inst.fixture / "manifests", man)
    doc_path = man / "cuda" / "11.8.0.json"
    doc = json.loads(doc_path.read_text())
    for comp in doc["components"].values():
        if HOST in comp["platforms"]:
            comp["platforms"][OTHER] = comp["platforms"][HOST]
    doc_path.write_text(json.dumps(doc, indent=2))
    inst.env["CUDAENV_MANIFESTS"] = str(man)


def test_one_root_serves_both_platforms(inst, tmp_path):
    sbsa_manifests(inst, tmp_path)
    arm = {"CUDAENV_PLATFORM": OTHER}
    assert inst("install", "11.8").rc == 0
    # --platform: resolve takes it (CUDAENV_PLATFORM there is the platforms branch's); the root too
    res = inst("install", "11.8", "--platform", OTHER, "--json")
    assert res.rc == 0, res
    assert res.json()["changed"] is True  # not "already installed": the other platform's copy
    x86_dir = inst.root / "versions" / HOST / "11.8.0"
    arm_dir = inst.root / "versions" / OTHER / "11.8.0"
    assert json.loads((arm_dir / ".cudaenv-version.json").read_text())["platform"] == OTHER
    assert json.loads((x86_dir / ".cudaenv-version.json").read_text())["platform"] == HOST
    # each host sees and selects its own
    for env, mine, other in ((None, HOST, OTHER), (arm, OTHER, HOST)):
        doc = inst("list", "--json", env=env).json()
        assert [(v["version"], v["platform"]) for v in doc["versions"]] == [("11.8.0", mine)]
        assert doc["platform"] == mine and doc["other_platforms"] == {other: 1}
        assert f"also 1 version of other platforms here: 1 for {other}" in inst("list", env=env).out
        want = str(inst.root / "versions" / mine / "11.8.0")
        assert inst("prefix", "11.8", env=env).out.strip() == want
        got = inst("exec", "--", "sh", "-c", "echo $CUDA_HOME", env=dict(env or {}, CUDAENV_VERSION="11.8"))
        assert got.rc == 0 and got.out.strip() == want, got
    # both survive uninstall of the other; the store entries they share stay
    res = inst("uninstall", "11.8.0", "--json")
    assert res.rc == 0, res
    assert res.json()["store_entries_removed"] == []
    assert not x86_dir.exists() and (arm_dir / "lib64" / "libcudart.so.11.8.89").is_file()
    # on the x86 host, the name is now another platform's only: one line naming both
    for cmd, env in ((("prefix", "11.8"), None), (("exec", "--", "true"), {"CUDAENV_VERSION": "11.8.0"}),
                     (("uninstall", "11.8.0"), None), (("verify", "11.8.0"), None)):
        res = inst(*cmd, env=env)
        assert_one_line_error(res, 9)
        assert f"installed for {OTHER} only; this host takes {HOST}" in res.err, res
    assert inst("install", "11.8").rc == 0
    assert inst("uninstall", "11.8.0", "--json", env=arm).rc == 0
    assert (x86_dir / "lib64" / "libcudart.so.11.8.89").is_file() and not arm_dir.exists()
    assert names(inst("list", "--json", env=arm)) == []
    assert not (inst.root / "versions" / OTHER).exists()  # an empty platform folder goes too
