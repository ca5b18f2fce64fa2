#!/usr/bin/python3
"""Man pages from the help text the CLI prints: cudaenv(1) from `cudaenv --help`, and one page per
command, cudaenv-<command>(1), from `cudaenv <command> --help`. The pages are kept in the tree
(packaging/man/*.1) and a test (CTest `packaging.man_sync`) fails when they differ from what this
script makes from the built binary, so a changed option or example cannot ship with a stale page.

    packaging/man/make_man.py --cudaenv build/dev/src/cudaenv --out packaging/man
    packaging/man/make_man.py --cudaenv build/dev/src/cudaenv --check packaging/man
"""
import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

SECTION = re.compile(r"^([A-Z][A-Za-z ]*):$")

# What the help text cannot say: where things live and what the environment changes.
FILES = [
    ("/etc/cudaenv/config", "The machine's settings: root (the machine-wide root), mirror and "
     "manifests, one key = value per line."),
    ("/opt/cudaenv", "The machine-wide root: root's default, readable by every user, who see its "
     "versions read-only."),
    ("~/.cudaenv", "A user's own root: versions, store, downloads, shims, state.json."),
    ("/usr/local/cuda", "The machine's CUDA, a link cudaenv global repoints atomically."),
    ("/etc/ld.so.conf.d/000-cudaenv.conf", "The loader's path to /usr/local/cuda/lib64, owned by "
     "cudaenv global."),
    ("/usr/share/cudaenv/manifests", "The built-in manifests: releases, hashes, TensorFlow table."),
]
ENVIRONMENT = [
    ("CUDAENV_ROOT", "The root to install into and select from (default: /opt/cudaenv for root, "
     "else ~/.cudaenv)."),
    ("CUDAENV_MIRROR", "Download from this mirror instead of NVIDIA's host (also mirror in "
     "/etc/cudaenv/config)."),
    ("CUDAENV_RECOMPRESSED", "off: install NVIDIA's xz archives even where the mirror offers "
     "recompressed copies with a signed index (cudaenv mirror --recompress zstd)."),
    ("CUDAENV_MANIFESTS", "Use the manifests in this directory (also --manifests)."),
    ("CUDAENV_VERSION", "The selected version for this shell (set by cudaenv shell)."),
    ("CUDAENV_SYSROOT", "Act on the machine under this directory (an image, a container root) "
     "instead of /."),
    ("NO_COLOR", "No colour."),
]


def esc(text):
    """Roff-safe text: backslashes, and a leading dot or quote that roff would read as a request."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


def run_help(exe, args):
    env = dict(os.environ, NO_COLOR="1", COLUMNS="80")
    env.pop("CUDAENV_MANIFESTS", None)
    out = subprocess.run([exe, *args, "--help"], capture_output=True, text=True, env=env, check=True)
    return out.stdout


def parse(text):
    """(description, usage, [(section, [lines])], [footer lines])"""
    lines = text.rstrip("\n").splitlines()
    description = lines[0].strip()
    usage = ""
    sections = []
    current = None
    for line in lines[1:]:
        if line.startswith("Usage: "):
            usage = line[len("Usage: "):]
            current = None
            continue
        m = SECTION.match(line)
        if m:
            current = (m.group(1), [])
            sections.append(current)
            continue
        if not line.strip():
            current = None if current is None or current[0] != "Examples" else current
            continue
        if line.startswith(" ") and current is not None:
            current[1].append(line)
        else:  # free text under the sections (exit codes, notes)
            current = ("Notes", [line])
            sections.append(current)
    return description, usage, sections


def entries(lines):
    """'  -j,--jobs UINT=4      parallel downloads' -> [(term, text)], continuation lines joined."""
    out = []
    for line in lines:
        body = line.strip()
        parts = re.split(r"\s{2,}", body, maxsplit=1)
        if line.startswith("   ") and out and len(line) - len(line.lstrip()) > 4:
            out[-1] = (out[-1][0], (out[-1][1] + " " + body).strip())
        elif len(parts) == 2:
            out.append((parts[0], parts[1]))
        else:
            out.append((parts[0], ""))
    return out


def term(t):
    """'-j,--jobs UINT=4' -> bold flags, italic metavariable."""
    words = t.split(" ", 1)
    flags = ", ".join("\\fB" + esc(f) + "\\fR" for f in words[0].split(","))
    return flags + (" \\fI" + esc(words[1]) + "\\fR" if len(words) > 1 else "")


def page(name, version, help_text, see_also, extra_sections=()):
    description, usage, sections = parse(help_text)
    if description.startswith(name + ": "):
        description = description[len(name) + 2:]
    title = name.upper()
    out = [f'.TH {esc(title)} 1 "" "cudaenv {esc(version)}" "User Commands"',
           ".SH NAME", f"{esc(name)} \\- {esc(description)}",
           ".SH SYNOPSIS", f"\\fB{esc(usage.split(' ', 1)[0])}\\fR {esc(usage.split(' ', 1)[1])}"
           if " " in usage else f"\\fB{esc(usage)}\\fR",
           ".SH DESCRIPTION", esc(description) + "."]
    names = {"Positionals": "ARGUMENTS", "Options": "OPTIONS", "Subcommands": "COMMANDS",
             "Examples": "EXAMPLES", "Notes": "NOTES"}
    seen = set()
    for section, lines in sections:
        header = names.get(section, section.upper())
        if header not in seen:
            out.append(f".SH {header}")
            seen.add(header)
        if section == "Examples":
            out += [".PP", ".nf", ".RS 4"] + [esc(l.strip()) for l in lines] + [".RE", ".fi"]
        elif section == "Notes":
            out += [".PP", ".nf"] + [esc(l) for l in lines] + [".fi"]
        else:
            for t, text in entries(lines):
                if section == "Subcommands":
                    first = t.split(",")[0].strip()
                    out += [".TP", f"\\fB{esc(t)}\\fR", esc(text) + f" (\\fBcudaenv\\-{esc(first)}\\fR(1))"]
                else:
                    out += [".TP", term(t), esc(text)]
    for header, items in extra_sections:
        out.append(f".SH {header}")
        for t, text in items:
            out += [".TP", f"\\fB{esc(t)}\\fR", esc(text)]
    out += [".SH SEE ALSO", ", ".join(f"\\fB{esc(s)}\\fR(1)" for s in see_also)]
    return "\n".join(out) + "\n"


def commands(top_help):
    _, _, sections = parse(top_help)
    for section, lines in sections:
        if section == "Subcommands":
            return [t.split(",")[0].strip() for t, _ in entries(lines)]
    raise SystemExit("cudaenv --help lists no commands")


def generate(exe, out_dir):
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    version = subprocess.run([exe, "--version"], capture_output=True, text=True,
                             check=True).stdout.split()[1]
    top = run_help(exe, [])
    cmds = commands(top)
    written = {}
    written["cudaenv.1"] = page("cudaenv", version, top, [f"cudaenv-{c}" for c in cmds],
                                [("ENVIRONMENT", ENVIRONMENT), ("FILES", FILES)])
    for c in cmds:
        written[f"cudaenv-{c}.1"] = page(f"cudaenv-{c}", version, run_help(exe, [c]), ["cudaenv"])
    for name, text in written.items():
        (out_dir / name).write_text(text)
    return sorted(written)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cudaenv", required=True)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--out")
    g.add_argument("--check", help="compare with the pages in this directory; exit 1 on any difference")
    a = ap.parse_args()
    if a.out:
        for name in generate(a.cudaenv, a.out):
            print(Path(a.out) / name)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        names = generate(a.cudaenv, tmp)
        have = sorted(p.name for p in Path(a.check).glob("*.1"))
        bad = False
        for extra in sorted(set(have) - set(names)):
            print(f"{a.check}/{extra}: no such command any more", file=sys.stderr)
            bad = True
        for name in names:
            new = (Path(tmp) / name).read_text().splitlines(keepends=True)
            path = Path(a.check) / name
            old = path.read_text().splitlines(keepends=True) if path.exists() else []
            if new != old:
                sys.stderr.writelines(difflib.unified_diff(old, new, str(path), "from the binary's --help"))
                bad = True
        if bad:
            print("the man pages are out of date: packaging/man/make_man.py --cudaenv <built cudaenv> "
                  "--out packaging/man", file=sys.stderr)
            return 1
        print(f"{len(names)} man pages match the binary's --help")
        return 0


if __name__ == "__main__":
    sys.exit(main())
