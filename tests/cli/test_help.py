# SPDX-License-Identifier: MIT
"""The CLI's conventions (docs/CLI.md): every option of every command's
getopt table is listed in its --help, in the one help format; `help CMD`
is `CMD --help`; a bad option is named; a mistyped command gets "did you
mean". The option tables are read from the sources, so a new option
without help text fails here."""

import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import run  # noqa: E402

SRC = os.environ["SP_SOURCE_DIR"]
TOOLS = os.path.join(SRC, "tools")

# Command -> the files holding its getopt tables.
SOURCES = {
    "summary": ["views/cmd-summary.c"],
    "tree": ["views/cmd-tree.c"],
    "events": ["views/cmd-events.c"],
    "inspect": ["views/cmd-inspect.c"],
    "diff": ["compare/cmd-diff.c"],
    "check": ["compare/cmd-check.c"],
    "scaling": ["compare/cmd-scaling.c"],
    "export": ["export/export-formats.c", "export/export-region-stats.c"],
    "tui": ["tui/cmd-tui.c"],
    "run": ["cli/cmd-run.c"],
    "plot": ["plot/cmd-plot.c"],
    "report": ["report/cmd-report.c"],
    "comm": ["views/cmd-comm.c"],
    "merge": ["files/rank-inputs.c"],
    "recover": ["files/rank-inputs.c"],
    "line-profile": ["views/cmd-line-profile.c"],
}
COMMON = ["json", "include", "exclude", "ranks", "help"]
MEANING_COL = 24


def table_options(command):
    names = set()
    for rel in SOURCES[command]:
        text = open(os.path.join(TOOLS, rel)).read()
        names.update(re.findall(r'\{\s*"([a-z][a-z0-9-]*)",\s*(?:no|required|optional)_argument',
                                text))
        if "CLI_COMMON_OPTIONS" in text:
            names.update(COMMON)
        if command == "run":  # the table that maps options to variables
            names.update(re.findall(r'\{\s*"([a-z][a-z0-9-]*)",\s*(?:\'.\'|0),\s*V_', text))
        # getopt_long's own list of short options.
        for short in re.findall(r'getopt_long\([^");]*"([^"]*)"', text):
            names.update("-" + c for c in short.replace(":", "").replace("+", ""))
    return names


def commands():
    _, out, _ = run("--help")
    block = out.split("\ncommands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines()]


class Help(unittest.TestCase):
    def test_command_list_matches_sources(self):
        self.assertEqual(sorted(commands()), sorted(SOURCES))

    def test_every_option_is_in_help(self):
        for cmd in SOURCES:
            with self.subTest(cmd=cmd):
                _, out, _ = run(cmd, "--help")
                for name in sorted(table_options(cmd)):
                    flag = name if name.startswith("-") else "--" + name
                    self.assertRegex(out, r"(^|[\s\[,])" + re.escape(flag) + r"([\s=,\]]|$)",
                                     f"{cmd} --help does not list {flag}")

    def test_help_format(self):
        for cmd in SOURCES:
            with self.subTest(cmd=cmd):
                _, out, _ = run(cmd, "--help")
                lines = out.split("\n")
                self.assertTrue(lines[0].startswith(f"usage: scope-profiler {cmd} "), lines[0])
                self.assertIn("\noptions:\n", out)
                opts = out.split("\noptions:\n", 1)[1].split("\n\n", 1)[0].rstrip("\n").split("\n")
                self.assertTrue(opts[0].startswith("  -"), opts[0])
                for i, line in enumerate(opts):
                    self.assertLessEqual(len(line), 80, line)
                    if line.startswith("  -"):
                        # The meaning at column 24, or alone on the next line.
                        if len(line) > MEANING_COL and line[MEANING_COL - 2:MEANING_COL] == "  ":
                            self.assertNotEqual(line[MEANING_COL], " ", line)
                        else:
                            self.assertTrue(opts[i + 1].startswith(" " * MEANING_COL), line)
                    else:
                        self.assertTrue(line.startswith(" " * MEANING_COL) and
                                        line[MEANING_COL] != " ", repr(line))
                self.assertRegex(out, r"\n  -h, --help +print this help and exit\n")

    def test_help_command_is_dash_dash_help(self):
        for cmd in SOURCES:
            with self.subTest(cmd=cmd):
                self.assertEqual(run("help", cmd)[1], run(cmd, "--help")[1])
        self.assertEqual(run("help")[1], run("--help")[1])
        rc, out, err = run("help", "sumary", check=False)
        self.assertEqual(rc, 2)
        self.assertIn("did you mean 'summary'?", err)

    def test_bad_option_is_named(self):
        for cmd in SOURCES:
            with self.subTest(cmd=cmd):
                args = [cmd, "--bogus"] + (["--", "/bin/true"] if cmd == "run" else ["x.h5"])
                if cmd == "export":
                    args = [cmd, "json", "--bogus", "x.h5"]
                rc, out, err = run(*args, check=False)
                self.assertEqual(rc, 2, err)
                self.assertIn("unrecognized option '--bogus'", err)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
        rc, _, err = run("summary", "--sort", check=False)
        self.assertEqual(rc, 2)
        self.assertIn("option '--sort' requires an argument", err)
        rc, _, err = run("summary", "--json=yes", "x.h5", check=False)
        self.assertIn("option '--json' takes no argument", err)
        rc, _, err = run("run", "--bogus", "--", "/bin/true", check=False)
        self.assertEqual(rc, 2)
        self.assertEqual(err, "scope-profiler run: unrecognized option '--bogus' "
                              "(see 'scope-profiler run --help')\n")

    def test_did_you_mean(self):
        for typo, want in (("sumary", "summary"), ("inspcet", "inspect"), ("plto", "plot"),
                           ("line-profil", "line-profile"), ("su", "summary")):
            with self.subTest(typo=typo):
                rc, out, err = run(typo, check=False)
                self.assertEqual(rc, 2)
                self.assertEqual(err, f"scope-profiler: invalid command '{typo}'; "
                                      f"did you mean '{want}'?\n")
        rc, out, err = run("frobnicate", check=False)
        self.assertEqual(rc, 2)
        self.assertIn("(choose from summary, tree,", err)


if __name__ == "__main__":
    unittest.main()
