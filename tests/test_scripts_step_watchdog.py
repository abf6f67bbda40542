"""scripts/training/step_watchdog.py: the demo hangs at a step and the watchdog ends it with exit 17."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "training" / "step_watchdog.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def test_hung_step_exits_17_with_stacks():
    proc = run("--timeout", "1", "--first-timeout", "5", "--stuck-step", "3")
    assert proc.returncode == 17, proc.stdout + proc.stderr
    assert proc.stdout.split("\n")[:2] == ["step 1 done", "step 2 done"] and "step 3 done" not in proc.stdout
    assert "no step finished for" in proc.stderr and "(last: step 2); dumping stacks, exit 17" in proc.stderr
    assert "in train_step" in proc.stderr  # the stack of the stuck thread is in the dump


def test_steady_steps_never_fire():
    proc = run("--timeout", "10", "--stuck-step", "0", "--steps", "5")
    assert proc.returncode == 0 and proc.stdout.count("done") == 5 and "[watchdog]" not in proc.stderr


def test_usage_errors_exit_2():
    assert run("--timeout", "0").returncode == 2
    assert "--stuck-step" in run("--help").stdout
