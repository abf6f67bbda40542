"""scripts/debug/dl_workers.py: forked workers log per sample, --quiet silences them, spawn loses their INFO."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import ROOT, require_torch

SCRIPT = ROOT / "scripts" / "debug" / "dl_workers.py"


def run(*args: str) -> list[str]:
    require_torch()
    proc = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stderr.splitlines()


def test_forked_workers_log_every_sample_with_their_pids():
    lines = run()
    loads = [ln for ln in lines if ": loading sample" in ln]
    assert sorted(ln.rsplit(" ", 1)[1] for ln in loads) == ["0", "1", "2", "3"]
    assert {ln.split()[1] for ln in loads} == {"ForkProcess-1", "ForkProcess-2"}
    main_pid = next(ln.split()[0] for ln in lines if "MainProcess" in ln)
    assert main_pid not in {ln.split()[0] for ln in loads}  # each worker is its own process
    assert [ln.split(": ", 1)[1] for ln in lines if "MainProcess" in ln] == ["got batch [0, 1]", "got batch [4, 9]"]


@pytest.mark.parametrize("args", [["--quiet"], ["--context", "spawn"]])
def test_only_the_main_process_speaks(args):
    # Only the script's log lines ("pid<N> <process> ..."): under load, spawn's resource tracker may add a
    # "leaked semaphore" warning of its own to stderr, which is Python's line, not the script's.
    lines = [ln for ln in run(*args) if re.match(r"pid\d+ ", ln)]
    assert [ln.split(" ", 1)[1] for ln in lines] == [
        "MainProcess data: got batch [0, 1]",
        "MainProcess data: got batch [4, 9]",
    ]
