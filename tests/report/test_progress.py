"""Progress on stderr (tools/cli/cli-progress.c) for report, plot, export,
tree and events: with stderr on a pseudo-terminal and the delay forced to
0 ms (SCOPE_PROFILER_PROGRESS_DELAY_MS, test-only) each command prints
"scope-profiler: WHAT…" and erases it before it ends; with stderr a pipe it
never prints it, whatever the delay; tree and events (they stream to stdout)
stay silent when stdout is the same terminal.

usage: test_progress.py CLI SOURCE_DIR
"""
import os
import pty
import select
import subprocess
import sys
import tempfile

CLI = os.path.abspath(sys.argv[1])
HERE = os.path.join(sys.argv[2], "tests", "report")
ELLIPSIS = "\u2026"
ERASE = "\r\x1b[K"
FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL:", msg)


def run_pty(args, cwd, env, stdout_on_pty=False):
    """Run with stderr (and optionally stdout) on a new pseudo-terminal;
    return (exit status, what the terminal received)."""
    master, slave = pty.openpty()
    out = slave if stdout_on_pty else open(os.path.join(cwd, "stdout.txt"), "wb")
    p = subprocess.Popen([CLI] + args, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                         stdout=out, stderr=slave)
    os.close(slave)
    if not stdout_on_pty:
        out.close()
    data = b""
    while True:
        r, _, _ = select.select([master], [], [], 120)
        if not r:
            p.kill()
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not chunk:
            break
        data += chunk
    os.close(master)
    return p.wait(), data.decode("utf-8", "replace")


def visible(text):
    """The terminal line after carriage returns and erase-line sequences."""
    line = ""
    for part in text.split("\r"):
        line = "" if part.startswith("\x1b[K") else part
    return line


def main():
    work = tempfile.mkdtemp(prefix="sp-progress-")
    subprocess.run([sys.executable, os.path.join(HERE, "make_profiles.py"), work,
                    "--big", "40000"], check=True, stdout=subprocess.DEVNULL)
    big = os.path.join(work, "big.h5")
    commands = {
        "report": ["report", big, "-o", os.path.join(work, "r.html")],
        "plot": ["plot", "gantt", big, "-o", os.path.join(work, "plots")],
        "export": ["export", "chrome-trace", big, "-o", os.path.join(work, "t.json")],
        "tree": ["tree", big],
        "events": ["events", big, "--format", "csv"],
    }
    forced = dict(os.environ, SCOPE_PROFILER_PROGRESS_DELAY_MS="0")
    for name, args in commands.items():
        rc, tty = run_pty(args, work, forced)
        check(rc == 0, f"{name}: exit status {rc}: {tty!r}")
        check(f"scope-profiler: {name}" in tty and ELLIPSIS in tty,
              f"{name}: no progress on the terminal with a 0 ms delay: {tty[:200]!r}")
        check(tty.endswith(ERASE) and visible(tty) == "",
              f"{name}: the progress line is not erased at the end: {tty[-120:]!r}")
        print(f"{name}: progress shown and erased ({len(tty)} bytes on the terminal)")
        p = subprocess.run([CLI] + args, cwd=work, env=forced, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        err = p.stderr.decode("utf-8", "replace")
        check(p.returncode == 0 and ELLIPSIS not in err and "\x1b[K" not in err,
              f"{name}: progress written to a stderr that is not a terminal: {err[:200]!r}")
    for name in ("tree", "events"):
        rc, tty = run_pty(commands[name], work, forced, stdout_on_pty=True)
        check(rc == 0 and f"scope-profiler: {name}{ELLIPSIS}" not in tty,
              f"{name}: progress mixed into output on the same terminal")
    print("not a terminal: no progress; streaming commands on one terminal: none")
    subprocess.run(["rm", "-rf", work])
    if FAILS:
        print(f"{len(FAILS)} failure(s)")
        sys.exit(1)
    print("progress test: OK")


main()
