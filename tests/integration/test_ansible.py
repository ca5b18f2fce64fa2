"""The Ansible collection cudaenv.fleet (packaging/ansible), run by the real ansible-playbook on this
machine (connection local) against a fixture machine (CUDAENV_SYSROOT: a GPU, a driver, the real
ldconfig) and the fixture mirror. The multi-host rollout over ssh is the fleet issue's next part."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import fixture_sysroot  # noqa: E402  (conftest puts tests/support on sys.path)
from conftest import EXE, MANIFESTS, PLATFORM

COLLECTIONS = Path(__file__).resolve().parents[2] / "packaging" / "ansible"
PLAYBOOK = shutil.which("ansible-playbook")
TF213 = "11.8.0+cudnn8.6.0.163"


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    return fixture_sysroot.Libs(tmp_path_factory.mktemp("ansible-libs"))


@pytest.fixture
def fleet(inst, libs, tmp_path):
    """One host: a machine whose driver (520.61.05) runs CUDA 11.8 but not 12.x, cudaenv on
    PATH, its root inside the machine, downloads from the fixture mirror."""
    if not PLAYBOOK:
        pytest.skip("ansible is not installed (.ci/deps installs it)")
    if os.geteuid() != 0:
        pytest.skip("ldconfig -r needs root")
    m = fixture_sysroot.Machine(tmp_path / "sys", libs)
    m.base()
    m.pci_gpu()
    m.kernel_driver(version="520.61.05")
    m.add_gpu()
    m.driver_libs(driver="520.61.05", cuda=11080)
    m.ldconfig()
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "cudaenv").symlink_to(EXE)
    env = {k: v for k, v in inst.env.items() if k.startswith(("CUDAENV_", "HOME", "LC_", "NO_COLOR"))}
    env.update(CUDAENV_SYSROOT=str(m.root), CUDAENV_ROOT=str(m.p("/opt/cudaenv")),
               PATH=f"{bindir}:/usr/bin:/bin")
    (tmp_path / "vars.json").write_text(json.dumps({"cudaenv_env": env}))
    (tmp_path / "hosts").write_text("gpu1 ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n")
    m.run = inst
    m.tmp = tmp_path
    m.env_vars = env
    return m


def play(fleet, name, text, *args):
    """Runs a playbook with the json callback; returns (rc, {task name: gpu1's result}, stats)."""
    book = fleet.tmp / f"{name}.yml"
    book.write_text(text)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS), ANSIBLE_STDOUT_CALLBACK="json",
               ANSIBLE_NOCOLOR="1", ANSIBLE_LOCAL_TEMP=str(fleet.tmp / "ansible-tmp"),
               ANSIBLE_REMOTE_TEMP=str(fleet.tmp / "ansible-tmp"), ANSIBLE_RETRY_FILES_ENABLED="0",
               ANSIBLE_CONFIG=str(fleet.tmp / "ansible.cfg"))
    (fleet.tmp / "ansible.cfg").write_text("[defaults]\n")
    proc = subprocess.run([PLAYBOOK, "-i", str(fleet.tmp / "hosts"), "-e", f"@{fleet.tmp / 'vars.json'}",
                           *args, str(book)], env=env, capture_output=True, text=True, timeout=600)
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(f"ansible-playbook printed no JSON (rc {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    results = {}
    for p in doc["plays"]:
        for t in p["tasks"]:
            if "gpu1" in t["hosts"]:
                # a role's tasks are named "<role> : <name>"
                results[t["task"]["name"].split(" : ", 1)[-1]] = t["hosts"]["gpu1"]
    return proc.returncode, results, doc["stats"]["gpu1"]


MODULES = """
- hosts: all
  gather_facts: false
  environment: "{{ cudaenv_env }}"
  tasks:
    - name: install
      cudaenv.fleet.cudaenv:
        spec: tf-2.13
    - name: global
      cudaenv.fleet.cudaenv:
        spec: tf-2.13
        state: global
        force: true
    - name: gate
      cudaenv.fleet.cudaenv_doctor:
        only: [driver-cuda, cuda-link]
"""


def test_check_mode_predicts_the_real_run_and_a_second_run_changes_nothing(fleet):
    rc, check, stats = play(fleet, "modules", MODULES, "--check", "--diff")
    assert rc == 0, check
    assert check["install"]["changed"] is True and check["global"]["changed"] is True
    assert check["global"]["version"] == TF213 and check["global"]["previous"] == "system"
    assert check["global"]["diff"] == {"before": "global: system\n", "after": f"global: {TF213}\n"}
    assert not (Path(fleet.p("/opt/cudaenv")) / "versions" / PLATFORM / TF213).exists(), "check mode wrote"
    assert not os.path.lexists(fleet.p("/usr/local/cuda"))

    rc, real, stats = play(fleet, "modules", MODULES)
    assert rc == 0, real
    assert {k: v["changed"] for k, v in real.items() if k != "Gathering Facts"} == \
        {"install": True, "global": True, "gate": False}
    assert real["install"]["prefix"] == str(fleet.p(f"/opt/cudaenv/versions/{PLATFORM}/{TF213}"))
    assert os.readlink(fleet.p("/usr/local/cuda")) == f"/opt/cudaenv/versions/{PLATFORM}/{TF213}"
    assert real["gate"]["summary"] == {"failures": 0, "warnings": 0}
    assert real["gate"]["doctor"]["facts"]["driver"] == "520.61.05"

    rc, again, stats = play(fleet, "modules", MODULES)
    assert rc == 0 and stats["changed"] == 0, again
    rc, check2, stats = play(fleet, "modules", MODULES, "--check")
    assert rc == 0 and stats["changed"] == 0, check2


def test_failures_carry_cudaenvs_error_hint_and_exit_code(fleet):
    rc, res, stats = play(fleet, "bad", """
- hosts: all
  gather_facts: false
  environment: "{{ cudaenv_env }}"
  tasks:
    - name: unknown
      cudaenv.fleet.cudaenv:
        spec: tf-9.99
""")
    assert rc != 0 and stats["failures"] == 1
    r = res["unknown"]
    assert r["failed"] and r["rc"] == 9
    assert "tensorflow release '9.99'" in r["msg"] and r["hint"]


def test_absent_removes_and_predicts(fleet):
    assert fleet.run("install", "tf-2.16", env=fleet.env_vars).rc == 0
    absent = """
- hosts: all
  gather_facts: false
  environment: "{{ cudaenv_env }}"
  tasks:
    - name: remove
      cudaenv.fleet.cudaenv:
        spec: tf-2.16
        state: absent
"""
    rc, check, _ = play(fleet, "absent", absent, "--check")
    assert rc == 0 and check["remove"]["changed"] is True
    assert any((Path(fleet.p("/opt/cudaenv")) / "versions").iterdir())
    rc, real, _ = play(fleet, "absent", absent)
    assert rc == 0 and real["remove"]["changed"] is True
    assert not any((Path(fleet.p("/opt/cudaenv")) / "versions").iterdir())
    rc, again, stats = play(fleet, "absent", absent)
    assert rc == 0 and stats["changed"] == 0


ROLE = """
- hosts: all
  gather_facts: false
  environment: "{{ cudaenv_env }}"
  roles:
    - role: cudaenv.fleet.cudaenv
      vars:
        cudaenv_versions: [tf-2.13, tf-2.16]
        cudaenv_global: "{{ target }}"
        cudaenv_gate_only: [driver-cuda, cuda-link]
        cudaenv_report_dir: "{{ report_dir }}"
"""


def test_the_role_rolls_a_switch_back_when_the_gate_fails(fleet, tmp_path):
    reports = tmp_path / "reports"
    reports.mkdir()
    fleet.link("/usr/local/cuda", "/opt/cudaenv/versions/none-yet")  # a dangling link of no one's
    fleet.remove("/usr/local/cuda")
    extra = ["-e", f"report_dir={reports}"]
    # A: CUDA 11.8, which driver 520.61.05 runs
    rc, a, stats = play(fleet, "role", ROLE, "-e", "target=tf-2.13", *extra)
    assert rc == 0, a
    assert os.readlink(fleet.p("/usr/local/cuda")) == f"/opt/cudaenv/versions/{PLATFORM}/{TF213}"
    assert json.loads((reports / "gpu1.json").read_text())["ok"] is True
    # B: tf-2.16 (CUDA 12.3) needs a 525+ driver: the gate fails, the switch is rolled back
    rc, b, stats = play(fleet, "role", ROLE, "-e", "target=tf-2.16", *extra)
    assert rc != 0 and stats["failures"] == 1, b
    switched = b["Switch the machine's CUDA"]
    assert switched["changed"] is True and switched["previous"] == TF213
    assert b["Run the doctor gate"]["failed"] is True
    assert "driver-cuda" in b["Run the doctor gate"]["msg"]
    assert b["Roll the switch back"]["changed"] is True
    assert "rolled back" in b["Fail the host"]["msg"]
    assert os.readlink(fleet.p("/usr/local/cuda")) == f"/opt/cudaenv/versions/{PLATFORM}/{TF213}"
    state = json.loads(Path(fleet.p("/opt/cudaenv/state.json")).read_text())
    assert state["global"] == TF213
    report = json.loads((reports / "gpu1.json").read_text())
    assert report["ok"] is False
    table = fleet.run("report", str(reports), "--json")
    assert table.rc == 1 and table.json()["hosts"][0]["worst"]["id"] == "driver-cuda"
    # and A again changes nothing
    rc, again, stats = play(fleet, "role", ROLE, "-e", "target=tf-2.13", *extra)
    assert rc == 0 and stats["changed"] == 1, again  # only the report copy on the controller


def changed(results):
    return sorted(k for k, r in results.items() if r.get("changed"))


def test_check_mode_predicts_every_change_of_the_role_the_doctor_report_included(fleet, tmp_path):
    reports = tmp_path / "reports"
    reports.mkdir()
    extra = ["-e", f"report_dir={reports}"]
    rc, check, _ = play(fleet, "role", ROLE, "-e", "target=tf-2.13", "--check", *extra)
    assert rc == 0, check
    assert not (reports / "gpu1.json").exists(), "check mode wrote the report"
    rc, real, _ = play(fleet, "role", ROLE, "-e", "target=tf-2.13", *extra)
    assert rc == 0, real
    assert "Save the host's doctor report on the controller" in changed(real)
    assert changed(check) == changed(real)
    # and when nothing would change, check mode says so, report included
    rc, check2, stats = play(fleet, "role", ROLE, "-e", "target=tf-2.13", "--check", *extra)
    assert rc == 0 and changed(check2) == [], changed(check2)


BOTH_MODULES = """
- hosts: all
  gather_facts: false
  environment: "{{ cudaenv_env }}"
  tasks:
    - name: install
      cudaenv.fleet.cudaenv:
        spec: tf-2.13
      ignore_errors: true
    - name: doctor
      cudaenv.fleet.cudaenv_doctor:
      ignore_errors: true
"""


def test_a_host_without_cudaenv_is_told_which_role_variable_installs_it(fleet):
    fleet.env_vars["PATH"] = "/usr/bin:/bin"
    (fleet.tmp / "vars.json").write_text(json.dumps({"cudaenv_env": fleet.env_vars}))
    rc, res, _ = play(fleet, "none", BOTH_MODULES)
    for task in ("install", "doctor"):
        r = res[task]
        assert r["failed"] and r["rc"] == 127, r
        assert r["msg"].startswith("cudaenv is not installed on this host: no 'cudaenv' on PATH"), r["msg"]
        assert "cudaenv_package" in r["hint"], r


def test_an_older_cudaenv_is_named_with_the_version_the_collection_needs(fleet):
    old = fleet.tmp / "old-bin"
    old.mkdir()
    (old / "cudaenv").write_text("#!/bin/sh\n"
                                 "if [ \"$1\" = --version ]; then echo 'cudaenv 0.0.9'; exit 0; fi\n"
                                 "echo \"cudaenv: error: unknown option '$1'\" >&2; exit 2\n")
    (old / "cudaenv").chmod(0o755)
    fleet.env_vars["PATH"] = f"{old}:/usr/bin:/bin"
    (fleet.tmp / "vars.json").write_text(json.dumps({"cudaenv_env": fleet.env_vars}))
    rc, res, _ = play(fleet, "old", BOTH_MODULES)
    for task in ("install", "doctor"):
        r = res[task]
        assert r["failed"] and r["rc"] == 2, r
        assert "is 0.0.9, older than this collection needs (0.1.0" in r["msg"], r["msg"]
        assert "unknown option" not in r["msg"]
        assert "cudaenv_package" in r["hint"] and "upgrades it" in r["hint"], r


def test_a_malformed_spec_for_global_is_a_usage_error(fleet):
    rc, res, _ = play(fleet, "malformed", """
- hosts: all
  gather_facts: false
  environment: "{{ cudaenv_env }}"
  tasks:
    - name: global
      cudaenv.fleet.cudaenv:
        spec: "tf-@@"
        state: global
""")
    r = res["global"]
    assert r["failed"] and r["rc"] == 2, r
    assert "invalid SPEC 'tf-@@'" in r["msg"], r


GATE = """
- hosts: all
  gather_facts: false
  environment: "{{ cudaenv_env }}"
  roles:
    - role: cudaenv.fleet.cudaenv
      vars:
        cudaenv_advisory_gate: "{{ gate }}"
"""


def test_the_advisory_gate_fails_a_host_naming_what_applies_and_passes_it_when_acknowledged(fleet):
    # the container toolkit 1.17.7 (dpkg's status in the machine): NVIDIA-5659 (critical) and
    # NVIDIA-5850 (high); driver 520.61.05 is on a branch no bulletin lists
    fleet.container_toolkit(version="1.17.7-1")
    # the fixture's manifests carry no advisories: a gate that cannot check fails the host
    rc, res, stats = play(fleet, "gate", GATE, "-e", "gate=critical")
    assert rc != 0 and stats["failures"] == 1, res
    assert "Fail the host on the advisories that apply" not in res
    assert res["Fail the host when no advisory is known"]["msg"] == (
        "the manifests in use carry no advisories (made before cudaenv knew them), so the advisory "
        "gate cannot check this host: update them (cudaenv_update: true)")
    # with the committed advisories.json (the real bulletins)
    man = fleet.tmp / "manifests"
    shutil.copytree(fleet.env_vars["CUDAENV_MANIFESTS"], man)
    shutil.copy(MANIFESTS / "advisories.json", man / "advisories.json")
    fleet.env_vars["CUDAENV_MANIFESTS"] = str(man)
    (fleet.tmp / "vars.json").write_text(json.dumps({"cudaenv_env": fleet.env_vars}))
    rc, res, stats = play(fleet, "gate", GATE, "-e", "gate=critical")
    assert rc != 0 and stats["failures"] == 1, res
    assert res["Run cudaenv audit"]["rc"] == 1 and res["Run cudaenv audit"]["changed"] is False
    msg = res["Fail the host on the advisories that apply"]["msg"]
    assert msg.startswith("1 advisory applies at or above critical (advisories as of 2026-12-07): NVIDIA-5659 "
                          "(critical) on container-toolkit 1.17.7 in this machine: upgrade the NVIDIA Container "
                          "Toolkit to 1.17.8 or newer"), msg
    assert "NVIDIA-5850" not in msg and msg.endswith("acknowledge them with a reason in cudaenv_acknowledged"), msg
    # at high, both; in check mode the audit runs and gates nothing
    rc, res, _ = play(fleet, "gate", GATE, "-e", "gate=high")
    assert rc != 0 and "2 advisories apply at or above high" in res["Fail the host on the advisories that apply"]["msg"]
    assert "NVIDIA-5850 (high)" in res["Fail the host on the advisories that apply"]["msg"]
    rc, res, stats = play(fleet, "gate", GATE, "-e", "gate=high", "--check")
    assert rc == 0 and stats["failures"] == 0 and res["Run cudaenv audit"]["rc"] == 1, res
    # acknowledged in the machine's config: listed by audit, not counted
    fleet.write("/etc/cudaenv/config", "acknowledge = NVIDIA-5659 CDI mode is off on this fleet\n")
    rc, res, stats = play(fleet, "gate", GATE, "-e", "gate=critical")
    assert rc == 0 and stats["failures"] == 0, res
    assert res["Fail the host on the advisories that apply"].get("skipped") is True
    # upgraded: only 5850 (high) applies
    fleet.container_toolkit(version="1.17.8-1")
    rc, res, _ = play(fleet, "gate", GATE, "-e", "gate=high")
    assert rc != 0 and res["Fail the host on the advisories that apply"]["msg"].startswith(
        "1 advisory applies at or above high"), res
    # the default runs no audit; a level cudaenv does not know stops the host before it
    rc, res, stats = play(fleet, "gate", GATE.replace('cudaenv_advisory_gate: "{{ gate }}"', "cudaenv_versions: []"))
    assert rc == 0 and res["Run cudaenv audit"].get("skipped") is True, res
    rc, res, _ = play(fleet, "gate", GATE, "-e", "gate=severe")
    assert rc != 0 and "cudaenv_advisory_gate is 'severe'" in res["Check the advisory gate's level"]["msg"], res
    assert "Run cudaenv audit" not in res


def test_the_role_writes_acknowledged_advisories_into_the_config(fleet):
    # check mode with --diff: what the role would write, without writing this machine's /etc
    rc, res, _ = play(fleet, "ack", """
- hosts: all
  gather_facts: false
  environment: "{{ cudaenv_env }}"
  roles:
    - role: cudaenv.fleet.cudaenv
      vars:
        cudaenv_acknowledged:
          NVIDIA-5659: CDI mode is off on this fleet
          CUBLAS-ALGO66: no Blackwell GPU here
""", "--check", "--diff")
    assert rc == 0, res
    task = res["Write cudaenv's configuration (mirror, channel, manifests, acknowledged advisories)"]
    assert task["changed"] is True
    after = task["diff"][0]["after"] if isinstance(task["diff"], list) else task["diff"]["after"]
    assert after == ("# written by the cudaenv.fleet.cudaenv role\n"
                     "acknowledge = CUBLAS-ALGO66 no Blackwell GPU here\n"
                     "acknowledge = NVIDIA-5659 CDI mode is off on this fleet\n"), after
