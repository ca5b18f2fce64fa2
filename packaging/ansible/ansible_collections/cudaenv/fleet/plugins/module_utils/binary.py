# -*- coding: utf-8 -*-
# Copyright (c) 2026 The cudaenv authors. MIT License (see the project's LICENSE).
"""The cudaenv binary a module runs: found, and new enough for the --json documents it reads.

A host without cudaenv, or with one older than this collection, fails with what is missing and
the role variable that installs it -- not Ansible's generic "Failed to find required executable"
or cudaenv's own "unknown option '--json'"."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

# The oldest cudaenv whose --json documents (install, uninstall, global, prefix, resolve, doctor)
# carry every field these modules read.
MIN_VERSION = (0, 1, 0)
INSTALL_HINT = ("set the role variable cudaenv_package to the cudaenv .deb (a URL, or a path on "
                "the controller) and the role installs it; or point the module's binary option "
                "at the executable")


def _text(v):
    return ".".join(str(x) for x in v)


def parse_version(text):
    """(major, minor, patch) from `cudaenv --version`'s first line ("cudaenv 0.1.0"), or None."""
    m = re.match(r"cudaenv (\d+)\.(\d+)\.(\d+)\b", (text or "").strip())
    return tuple(int(x) for x in m.groups()) if m else None


def find_cudaenv(module, name):
    """The path of a cudaenv at least MIN_VERSION, or fail_json (rc 127: absent, 2: too old)."""
    if "/" in name:
        path = name if os.path.isfile(name) and os.access(name, os.X_OK) else None
    else:
        path = module.get_bin_path(name, required=False)
    if not path:
        where = name if "/" in name else "'%s' on PATH (%s)" % (name, os.environ.get("PATH", ""))
        module.fail_json(msg="cudaenv is not installed on this host: no %s" % where,
                         hint=INSTALL_HINT, rc=127, changed=False)
    rc, out, err = module.run_command([path, "--version"])
    version = parse_version(out) if rc == 0 else None
    if version is None:
        said = (out or err).strip().splitlines()
        module.fail_json(msg="cannot tell the version of the cudaenv at %s (`cudaenv --version`: %s); "
                             "this collection needs %s or newer"
                             % (path, said[0] if said else "exit %d" % rc, _text(MIN_VERSION)),
                         hint=INSTALL_HINT, rc=2, changed=False)
    if version < MIN_VERSION:
        module.fail_json(msg="the cudaenv at %s is %s, older than this collection needs (%s: the "
                             "--json documents its modules read)"
                             % (path, _text(version), _text(MIN_VERSION)),
                         hint=INSTALL_HINT.replace("installs it", "upgrades it"), rc=2,
                         changed=False, version=_text(version))
    return path
