#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Man pages and bash completion from the CLI's own --help text.

Every command prints its help in one format (docs/CLI.md, "Help"):
    usage: scope-profiler CMD [options] FILE...
    <blank>
    <what the command does>
    <blank>
    options:
      -x, --long-name ARG   meaning (default: VALUE)
    <blank>
    <free text>
Option lines start with two spaces and a dash; meanings start at column 24
(or on the next line, indented to it). This script runs the built binary
(no network, nothing but the standard library), and writes:
    --man DIR         scope-profiler.1 and scope-profiler-CMD.1 for each command
    --bash FILE       a bash completion script (complete -F _scope_profiler)
With --expect CMD,... it fails when the binary's commands differ from the
list meson installs (tools/cli/meson.build).
"""
import argparse
import os
import re
import subprocess
import sys

MEANING_COL = 24


def run(exe, *args):
    p = subprocess.run([exe, *args], capture_output=True, text=True, check=False)
    if p.returncode != 0:
        sys.exit(f"gen-docs: {exe} {' '.join(args)} exited {p.returncode}: {p.stderr}")
    return p.stdout


def parse_help(text):
    """-> dict(usage=[lines], description=[paragraph lines], options=[(spec, meaning)],
    sections={name: [lines]}, notes=[lines])"""
    lines = text.rstrip("\n").split("\n")
    doc = {"usage": [], "description": [], "options": [], "lists": {}, "notes": []}
    i = 0
    while i < len(lines) and lines[i].strip():
        doc["usage"].append(lines[i])
        i += 1
    state = "description"
    current = None
    for line in lines[i:]:
        m = re.match(r"^([a-z][a-z ]*):$", line)
        if m:
            state = "options" if m.group(1) == "options" else "list"
            current = m.group(1)
            doc["lists"].setdefault(current, [])
            continue
        if state in ("options", "list"):
            if line.startswith("  -") or (state == "list" and re.match(r"^  \S", line)):
                spec = line[2:MEANING_COL].rstrip() if len(line) > MEANING_COL and \
                    line[MEANING_COL - 2:MEANING_COL] == "  " else line[2:].rstrip()
                meaning = line[MEANING_COL:].strip() if spec != line[2:].rstrip() else ""
                target = doc["options"] if state == "options" else doc["lists"][current]
                target.append([spec.strip(), meaning])
                continue
            if line.startswith(" " * MEANING_COL) and line.strip():
                target = doc["options"] if state == "options" else doc["lists"][current]
                if target:
                    target[-1][1] = (target[-1][1] + " " + line.strip()).strip()
                    continue
            if not line.strip():
                continue
            state = "notes"
        doc["notes" if state == "notes" else "description"].append(line)
    return doc


def option_names(doc):
    """[(name, takes_argument)] of the option lines: -x and --long."""
    out = []
    for spec, _ in doc["options"]:
        for part in spec.split(","):
            words = part.split()
            if words and words[0].startswith("-"):
                out.append((words[0], len(words) > 1))
    # And the options of the synopsis ("[--sort KEY]"), for a help text
    # without option lines.
    seen = {n for n, _ in out}
    for line in doc["usage"]:
        for m in re.finditer(r"\[(--?[a-zA-Z][a-zA-Z0-9-]*)( [^]\[|]+)?", line):
            if m.group(1) not in seen:
                seen.add(m.group(1))
                out.append((m.group(1), m.group(2) is not None))
    return out


def roff(s):
    s = s.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + s if s[:1] in (".", "'") else s


def paragraphs(lines):
    """roff for free text: blank lines separate paragraphs, indented blocks stay."""
    out = []
    block = []

    def flush():
        if block:
            if any(l.startswith("  ") for l in block):
                out.extend([".PP", ".nf"] + [roff(l) for l in block] + [".fi"])
            else:
                out.extend([".PP"] + [roff(l) for l in block])
            block.clear()
    for line in lines:
        if line.strip():
            block.append(line)
        else:
            flush()
    flush()
    return out


def man_page(name, summary, doc, version, see_also):
    out = [f'.TH {name.upper()} 1 "" "scope-profiler {version}" "scope-profiler manual"',
           ".SH NAME", f"{roff(name)} \\- {roff(summary)}", ".SH SYNOPSIS", ".nf"]
    for line in doc["usage"]:
        out.append(roff(re.sub(r"^(usage|   or):\s*", "", line)))
    out.append(".fi")
    if doc["description"]:
        out.append(".SH DESCRIPTION")
        out += paragraphs(doc["description"])
    if doc["options"]:
        out.append(".SH OPTIONS")
        for spec, meaning in doc["options"]:
            out += [".TP", "\\fB" + roff(spec) + "\\fR", roff(meaning)]
    for title, items in doc["lists"].items():
        if title == "options":
            continue
        out.append(".SH " + title.upper())
        for spec, meaning in items:
            out += [".TP", "\\fB" + roff(spec) + "\\fR", roff(meaning)]
    if doc["notes"]:
        out.append(".SH NOTES")
        out += paragraphs(doc["notes"])
    out += [".SH SEE ALSO", ", ".join(f"\\fB{roff(s)}\\fR(1)" for s in see_also)]
    return "\n".join(out) + "\n"


BASH = r'''# bash completion for scope-profiler, generated from its --help text
# (tools/cli/gen-docs.py). Self-contained: needs no bash-completion helpers.
_scope_profiler_opts() {
    case "$1" in
%(opts)s
    esac
}
_scope_profiler_argopts() {
    case "$1" in
%(argopts)s
    esac
}
_scope_profiler() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="" cmd="${COMP_WORDS[1]}"
    [ "$COMP_CWORD" -gt 0 ] && prev="${COMP_WORDS[COMP_CWORD-1]}"
    COMPREPLY=()
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "%(commands)s help --help --version" -- "$cur"))
        return 0
    fi
    if [ "$cmd" = help ]; then
        [ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "%(commands)s" -- "$cur"))
        return 0
    fi
    if [ "$cmd" = run ]; then
        local i
        for ((i = 2; i < COMP_CWORD; i++)); do
            if [ "${COMP_WORDS[i]}" = -- ]; then
                COMPREPLY=($(compgen -c -- "$cur"))
                return 0
            fi
        done
    fi
    case " $(_scope_profiler_argopts "$cmd") " in
    *" $prev "*)
        COMPREPLY=($(compgen -f -- "$cur"))
        return 0 ;;
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$(_scope_profiler_opts "$cmd")" -- "$cur"))
        return 0
    fi
    local words=""
    if [ "$COMP_CWORD" -eq 2 ]; then
        case "$cmd" in
        plot) words="%(kinds)s" ;;
        export) words="%(formats)s" ;;
        esac
    fi
    COMPREPLY=($(compgen -W "$words" -- "$cur") $(compgen -f -- "$cur"))
    return 0
}
complete -o filenames -F _scope_profiler scope-profiler
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("exe")
    ap.add_argument("--man", metavar="DIR")
    ap.add_argument("--bash", metavar="FILE")
    ap.add_argument("--expect", metavar="CMD,...")
    ap.add_argument("--version", default="")
    a = ap.parse_args()

    top = parse_help(run(a.exe, "--help"))
    commands = [(spec, meaning) for spec, meaning in top["lists"].get("commands", [])]
    names = [c for c, _ in commands]
    if a.expect is not None and sorted(a.expect.split(",")) != sorted(names):
        sys.exit(f"gen-docs: the binary's commands {sorted(names)} differ from the list "
                 f"in tools/cli/meson.build {sorted(a.expect.split(','))}: update it")
    docs = {c: parse_help(run(a.exe, c, "--help")) for c in names}
    version = a.version or run(a.exe, "--version").split()[-1]

    if a.man:
        os.makedirs(a.man, exist_ok=True)
        pages = ["scope-profiler-" + c for c in names]
        with open(os.path.join(a.man, "scope-profiler.1"), "w") as f:
            f.write(man_page("scope-profiler", "run programs under the profiler and analyse "
                             "their profiles", top, version, pages))
        for c, summary in commands:
            with open(os.path.join(a.man, f"scope-profiler-{c}.1"), "w") as f:
                f.write(man_page("scope-profiler-" + c, summary, docs[c], version,
                                 ["scope-profiler"]))
    if a.bash:
        opts, argopts = [], []
        for c in names:
            o = option_names(docs[c])
            opts.append(f'    {c}) echo "{" ".join(n for n, _ in o)}" ;;')
            argopts.append(f'    {c}) echo "{" ".join(n for n, arg in o if arg)}" ;;')
        kinds = re.findall(r"^(\S+)", run(a.exe, "plot", "list"), re.M)
        formats = ["chrome-trace", "speedscope", "folded", "json", "plot-data",
                   "region-statistics"]
        with open(a.bash, "w") as f:
            f.write(BASH % {"opts": "\n".join(opts), "argopts": "\n".join(argopts),
                            "commands": " ".join(names), "kinds": " ".join(kinds),
                            "formats": " ".join(formats)})


if __name__ == "__main__":
    main()
