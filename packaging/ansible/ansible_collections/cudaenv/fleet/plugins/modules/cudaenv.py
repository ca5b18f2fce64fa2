#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 The cudaenv authors. MIT License (see the project's LICENSE).
"""Ansible module: install, remove or switch to a CUDA (+ cuDNN) version with cudaenv.

Thin by design: every decision is cudaenv's (`--json`); this maps its fields to Ansible's."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: cudaenv
short_description: Install, remove or switch to a CUDA and cuDNN version with cudaenv
version_added: "1.0.0"
description:
  - Runs the C(cudaenv) binary with C(--json) and reports what it did.
  - C(state=present) installs what I(spec) resolves to (C(cudaenv install)); C(state=absent)
    removes the installed version I(spec) names (C(cudaenv uninstall)); C(state=global) makes it
    the machine's CUDA (C(cudaenv global)) - C(/usr/local/cuda), the loader's configuration and
    cache, atomically, with a journal C(cudaenv rollback) uses.
  - Check mode runs cudaenv with C(--dry-run), which predicts C(changed) exactly.
options:
  spec:
    description:
      - What to install or select, as cudaenv takes it - C(tf-2.13), C(torch-2.5+cu121),
        C(jax-0.4.30), C(11.8), C(12.4+cudnn-9.1),
        or an installed version's name.
    type: str
    required: true
  state:
    description: What the machine should have.
    type: str
    choices: [present, absent, global]
    default: present
  profile:
    description: The component set to install (C(state=present)).
    type: str
    choices: [runtime, devel, full]
    default: runtime
  mirror:
    description: Download from this mirror (a C(cudaenv mirror) tree served over http or https).
    type: str
  root:
    description:
      - The cudaenv root (C(CUDAENV_ROOT)). Default - the machine-wide root for root
        (C(/opt/cudaenv), or C(root) in C(/etc/cudaenv/config)).
    type: path
  force:
    description:
      - C(state=global) - replace a C(/usr/local/cuda) cudaenv does not own (it is recorded, and
        C(cudaenv rollback) restores it). C(state=absent) - remove the global version too.
    type: bool
    default: false
  binary:
    description:
      - The cudaenv executable, 0.1.0 or newer. A host without it, or with an older one, fails
        naming what is missing and the role variable that installs it (C(cudaenv_package)).
    type: path
    default: cudaenv
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details: C(state=global) shows the global version before and after.
author:
  - The cudaenv authors
"""

EXAMPLES = r"""
- name: Install what TensorFlow 2.13 needs (CUDA 11.8 + cuDNN 8.6)
  cudaenv.fleet.cudaenv:
    spec: tf-2.13

- name: Make it the machine's CUDA
  cudaenv.fleet.cudaenv:
    spec: tf-2.13
    state: global
  register: switch

- name: Install a devel toolkit from the site's mirror
  cudaenv.fleet.cudaenv:
    spec: 12.4+cudnn-9.1
    profile: devel
    mirror: http://mirror.internal/nvidia

- name: Install the CUDA and cuDNN of PyTorch 2.5's CUDA 12.1 wheels
  cudaenv.fleet.cudaenv:
    spec: torch-2.5+cu121

- name: Remove a version no one uses
  cudaenv.fleet.cudaenv:
    spec: 11.8.0+cudnn8.6.0.163
    state: absent
"""

RETURN = r"""
version:
  description: The version's name.
  returned: success
  type: str
  sample: 11.8.0+cudnn8.6.0.163
prefix:
  description: Where the version lives (C(state=present) and C(state=global)).
  returned: success and when the version is known
  type: str
  sample: /opt/cudaenv/versions/11.8.0+cudnn8.6.0.163
previous:
  description: The global version before the switch (C(system) when there was none).
  returned: state=global
  type: str
  sample: 12.4.1+cudnn9.1.1.17
cudaenv:
  description: The document cudaenv printed (C(--json)) for the main command.
  returned: always
  type: dict
msg:
  description: cudaenv's one-line error.
  returned: failure
  type: str
hint:
  description: cudaenv's help lines (what to run instead), joined by newlines.
  returned: failure
  type: str
rc:
  description: cudaenv's exit code (README, Exit codes).
  returned: failure
  type: int
"""

import json

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cudaenv.fleet.plugins.module_utils.binary import find_cudaenv


class CudaenvError(Exception):
    def __init__(self, rc, message, hints, doc):
        super(CudaenvError, self).__init__(message)
        self.rc = rc
        self.message = message
        self.hints = hints
        self.doc = doc


def run(module, binary, args, env, ok_codes=(0,)):
    """cudaenv --json ARGS: its document, or CudaenvError with its error line and hints."""
    rc, out, err = module.run_command([binary, "--json"] + args, environ_update=env)
    try:
        doc = json.loads(out) if out.strip() else {}
    except ValueError:
        doc = {}
    if rc in ok_codes:
        return rc, doc
    error = doc.get("error") or {}
    message = error.get("message")
    if not message:
        lines = [l for l in err.splitlines() if l.startswith("cudaenv: error: ")]
        message = lines[0][len("cudaenv: error: "):] if lines else (err.strip() or "cudaenv failed")
    raise CudaenvError(rc, message, error.get("hints") or [], doc)


def installed_version(module, binary, spec, env):
    """The installed version SPEC names, or None (cudaenv prefix)."""
    rc, doc = run(module, binary, ["prefix", spec], env, ok_codes=(0, 9))
    if rc == 9:
        return None, None
    prefix = doc.get("prefix")
    return (prefix.rstrip("/").rsplit("/", 1)[-1] if prefix else None), prefix


def main():
    module = AnsibleModule(
        argument_spec=dict(
            spec=dict(type="str", required=True),
            state=dict(type="str", default="present", choices=["present", "absent", "global"]),
            profile=dict(type="str", default="runtime", choices=["runtime", "devel", "full"]),
            mirror=dict(type="str"),
            root=dict(type="path"),
            force=dict(type="bool", default=False),
            binary=dict(type="path", default="cudaenv"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    binary = find_cudaenv(module, p["binary"])
    env = {}
    if p["mirror"]:
        env["CUDAENV_MIRROR"] = p["mirror"]
    if p["root"]:
        env["CUDAENV_ROOT"] = p["root"]
    dry = ["--dry-run"] if module.check_mode else []
    result = dict(changed=False)
    try:
        if p["state"] == "present":
            _, doc = run(module, binary, ["install", p["spec"], "--profile", p["profile"]] + dry, env)
            v = doc["versions"][0]
            result.update(changed=bool(doc["changed"]), version=v["version"], prefix=v["prefix"],
                          cudaenv=doc)
        elif p["state"] == "absent":
            name, prefix = installed_version(module, binary, p["spec"], env)
            if name is None:
                result.update(changed=False, cudaenv={})
            elif module.check_mode:
                result.update(changed=True, version=name, prefix=prefix, cudaenv={})
            else:
                _, doc = run(module, binary, ["uninstall", name] + (["--force"] if p["force"] else []), env)
                result.update(changed=bool(doc.get("changed", True)), version=name, cudaenv=doc)
        else:
            args = ["global", p["spec"]] + (["--force"] if p["force"] else [])
            try:
                _, doc = run(module, binary, args + dry, env)
            except CudaenvError as e:
                # In check mode an earlier task may be about to install it: predict the switch.
                name = None
                if module.check_mode and "is not installed" in e.message:
                    _, res = run(module, binary, ["resolve", p["spec"]], env)
                    name = res.get("version")
                if not name:
                    raise
                _, now = run(module, binary, ["global"], env)
                doc = dict(changed=True, version=name, previous=now.get("version", "system"),
                           note="not installed yet: an earlier task would install it")
            result.update(changed=bool(doc["changed"]), version=doc["version"],
                          previous=doc.get("previous", "system"), cudaenv=doc)
            if not module.check_mode or doc.get("note") is None:
                _, pre = run(module, binary, ["prefix", doc["version"]], env, ok_codes=(0, 9))
                if pre.get("prefix"):
                    result["prefix"] = pre["prefix"]
            if module._diff:
                result["diff"] = dict(before="global: %s\n" % result["previous"],
                                      after="global: %s\n" % (result["version"] if result["changed"]
                                                              else result["previous"]))
    except CudaenvError as e:
        module.fail_json(msg=e.message, hint="\n".join(e.hints), rc=e.rc, cudaenv=e.doc, **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
