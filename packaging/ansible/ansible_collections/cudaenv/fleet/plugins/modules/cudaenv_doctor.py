#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 The cudaenv authors. MIT License (see the project's LICENSE).
"""Ansible module: cudaenv doctor as a task result, and as a gate."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: cudaenv_doctor
short_description: Diagnose a machine's GPU stack with cudaenv doctor, as a result and a gate
version_added: "1.0.0"
description:
  - Runs C(cudaenv doctor --json) and returns its document as I(doctor), with a summary.
  - Fails the task when a probe fails (C(fail_on=failure), the default), when one fails or warns
    (C(fail_on=warning)), or never (C(fail_on=never)). Never reports C(changed); it reads only.
options:
  fail_on:
    description: What fails the task.
    type: str
    choices: [failure, warning, never]
    default: failure
  only:
    description: Run only these probes (and what they stand on), e.g. C(cuda-link), C(loader).
    type: list
    elements: str
    default: []
  root:
    description: The cudaenv root (C(CUDAENV_ROOT)).
    type: path
  binary:
    description:
      - The cudaenv executable, 0.1.0 or newer. A host without it, or with an older one, fails
        naming what is missing and the role variable that installs it (C(cudaenv_package)).
    type: path
    default: cudaenv
attributes:
  check_mode:
    support: full
    details: The doctor only reads; it runs in check mode too.
  diff_mode:
    support: none
author:
  - The cudaenv authors
"""

EXAMPLES = r"""
- name: Gate the rollout on the doctor
  cudaenv.fleet.cudaenv_doctor:
  register: gate

- name: Report warnings without failing
  cudaenv.fleet.cudaenv_doctor:
    fail_on: never
  register: doctor

- name: Only the layers a CUDA switch touches
  cudaenv.fleet.cudaenv_doctor:
    only: [cuda-link, loader, cudnn]
"""

RETURN = r"""
doctor:
  description: The document C(cudaenv doctor --json) printed (probes, layers, counts, facts).
  returned: always
  type: dict
summary:
  description: How many probes failed and warned.
  returned: always
  type: dict
  contains:
    failures:
      description: Probes that failed.
      type: int
    warnings:
      description: Probes that warned.
      type: int
  sample: {failures: 0, warnings: 1}
msg:
  description: The worst finding, when the task fails.
  returned: failure
  type: str
"""

import json

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cudaenv.fleet.plugins.module_utils.binary import find_cudaenv


def main():
    module = AnsibleModule(
        argument_spec=dict(
            fail_on=dict(type="str", default="failure", choices=["failure", "warning", "never"]),
            only=dict(type="list", elements="str", default=[]),
            root=dict(type="path"),
            binary=dict(type="path", default="cudaenv"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    binary = find_cudaenv(module, p["binary"])
    args = [binary, "--json", "doctor"]
    for probe in p["only"]:
        args += ["--only", probe]
    env = {"CUDAENV_ROOT": p["root"]} if p["root"] else {}
    rc, out, err = module.run_command(args, environ_update=env)
    try:
        doc = json.loads(out)
    except ValueError:
        doc = None
    if rc not in (0, 1) or not isinstance(doc, dict) or doc.get("command") != "doctor" or "probes" not in doc:
        error = (doc or {}).get("error") or {}
        module.fail_json(msg=error.get("message") or err.strip() or "cudaenv doctor failed", rc=rc,
                         hint="\n".join(error.get("hints") or []), changed=False)
    probes = doc.get("probes", [])
    failures = [x for x in probes if x.get("status") == "fail"]
    warnings = [x for x in probes if x.get("status") == "warn"]
    summary = dict(failures=len(failures), warnings=len(warnings))
    bad = failures if p["fail_on"] in ("failure", "warning") else []
    if p["fail_on"] == "warning":
        bad = failures + warnings
    if bad:
        worst = bad[0]
        module.fail_json(msg="cudaenv doctor: %s: %s" % (worst.get("id"), worst.get("finding")),
                         hint=worst.get("fix") or "", doctor=doc, summary=summary, changed=False)
    module.exit_json(changed=False, doctor=doc, summary=summary)


if __name__ == "__main__":
    main()
