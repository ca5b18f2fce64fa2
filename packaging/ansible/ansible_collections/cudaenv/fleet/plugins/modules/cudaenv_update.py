#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 The cudaenv authors. MIT License (see the project's LICENSE).
"""Ansible module: bring cudaenv's manifests up to date from its update channel.

Thin by design: cudaenv fetches, verifies (signature, serial, expiry) and switches; this maps its
--json document to Ansible's fields."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: cudaenv_update
short_description: Update cudaenv's manifests from its signed update channel
version_added: "1.1.0"
description:
  - Runs C(cudaenv update) with C(--json) - the newest manifests bundle from the channel,
    accepted only when signed by a key cudaenv ships or one in C(/etc/cudaenv/keys/), not older
    than the manifests in use and not expired; the switch is atomic.
  - With no I(channel), cudaenv uses C(channel) in C(/etc/cudaenv/config), else the mirror's copy
    (C(<mirror>/cudaenv-channel)) when a mirror is configured, else its default channel.
  - Check mode runs C(cudaenv update --check), which fetches and verifies but writes nothing, and
    predicts C(changed) exactly.
  - A refused bundle fails the task with cudaenv's message; the manifests in use stay as they are.
options:
  channel:
    description: The channel's URL (a folder holding C(manifests.bundle)).
    type: str
  root:
    description:
      - The cudaenv root (C(CUDAENV_ROOT)). Default - the machine-wide root for root, whose
        manifests every user of the machine then uses.
    type: path
  binary:
    description: The cudaenv executable.
    type: path
    default: cudaenv
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
author:
  - The cudaenv authors
"""

EXAMPLES = r"""
- name: Update the manifests from the fleet's mirror
  cudaenv.fleet.cudaenv_update:
  register: manifests

- name: Say what changed
  ansible.builtin.debug:
    msg: "{{ manifests.changes | map(attribute='subject') | list }}"
"""

RETURN = r"""
serial:
  description: The serial of the manifests in use after the task (in check mode, the one a real run would use).
  returned: success
  type: int
  sample: 2026123001
previous_serial:
  description: The serial in use before.
  returned: success
  type: int
changes:
  description: Releases and verdicts the new manifests add, drop or change (each kind, subject, detail).
  returned: success
  type: list
  elements: dict
update:
  description: The document C(cudaenv update --json) printed.
  returned: always
  type: dict
"""

import json

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cudaenv.fleet.plugins.module_utils.binary import find_cudaenv


def main():
    module = AnsibleModule(
        argument_spec=dict(
            channel=dict(type="str"),
            root=dict(type="path"),
            binary=dict(type="path", default="cudaenv"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    binary = find_cudaenv(module, p["binary"])
    args = [binary, "--json", "update"]
    if module.check_mode:
        args.append("--check")
    if p["channel"]:
        args += ["--channel", p["channel"]]
    env = {"CUDAENV_ROOT": p["root"]} if p["root"] else {}
    rc, out, err = module.run_command(args, environ_update=env)
    try:
        doc = json.loads(out)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        module.fail_json(msg=err.strip() or "cudaenv update failed (exit %d)" % rc, rc=rc, changed=False,
                         hint="cudaenv older than the update channel has no `update` command: "
                              "upgrade it (the role's cudaenv_package)" if "update" in err else "")
    if rc != 0 or not doc.get("ok"):
        error = doc.get("error") or {}
        module.fail_json(msg=error.get("message") or err.strip(), rc=rc, update=doc, changed=False,
                         hint="\n".join(error.get("hints") or []))
    state = doc["state"]
    changed = state in ("updated", "available")
    serial = doc["offered"]["serial"] if changed else doc["before"]["serial"]
    module.exit_json(changed=changed, serial=serial, previous_serial=doc["before"]["serial"],
                     changes=doc.get("changes", []), update=doc)


if __name__ == "__main__":
    main()
