"""scripts/debug/mem_watch.py: real samples of a process tree and of a command-line match, on this machine."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "debug" / "mem_watch.py"
TOTALS = re.compile(r"^\d\d:\d\d:\d\d (\d+) procs: PSS [\d.]+ GiB, RSS [\d.]+ GiB \| node: available [\d.]+ GiB")


def watch(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def test_pid_and_descendants_are_sampled():
    # A parent shell with two sleeping children: three processes in the tree.
    with subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30 & wait"]) as tree:
        try:
            proc = watch("--pid", str(tree.pid), "--interval", "0.5", "--count", "2", "--top", "3")
        finally:
            tree.kill()
    assert proc.returncode == 0, proc.stderr
    totals = [TOTALS.match(line) for line in proc.stdout.splitlines() if not line.startswith("  ")]
    assert len(totals) == 2 and all(totals), proc.stdout
    assert int(totals[-1].group(1)) == 3, proc.stdout
    rows = [line for line in proc.stdout.splitlines() if line.startswith("  ")]
    assert any(" sleep " in row for row in rows) and all("peak RSS" in row for row in rows), proc.stdout


def test_match_finds_the_users_process():
    with subprocess.Popen(["sleep", "31.5"]) as target:
        try:
            proc = watch("--match", r"sleep 31\.5", "--count", "1")
        finally:
            target.kill()
    assert proc.returncode == 0 and TOTALS.match(proc.stdout).group(1) == "1", proc.stdout
    assert f"{target.pid:>7} sleep" in proc.stdout


def test_usage_errors_exit_2():
    assert watch().returncode == 2  # neither --pid nor --match
    assert watch("--pid", "1", "--interval", "0").returncode == 2
    assert "--match" in watch("--help").stdout
