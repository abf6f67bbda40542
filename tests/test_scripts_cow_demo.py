"""scripts/debug/cow_demo.py: forked workers copy a list of str page by page, a NumPy array they share."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import ROOT, require_torch, script_env

SCRIPT = ROOT / "scripts" / "debug" / "cow_demo.py"
WORKER = re.compile(r"^ +worker: PSS +(\d+) MiB, private dirty +(\d+) MiB$")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300, env=script_env()
    )


def worker_dirty(kind: str) -> list[int]:
    proc = run(kind, "--names", "400000", "--workers", "2", "--epochs", "1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert re.match(rf"^{kind} +main: +PSS +\d+ MiB$", lines[0]), lines
    matches = [WORKER.match(line) for line in lines[1:]]
    assert len(matches) == 2 and all(matches), lines
    return [int(m[2]) for m in matches]


def test_list_workers_copy_what_numpy_workers_share():
    require_torch()
    as_list, as_array = worker_dirty("list"), worker_dirty("numpy")
    # 400,000 str objects of about 70 bytes: each list worker writes about 27 MiB of pages it only read.
    assert min(as_list) > max(as_array) + 10, (as_list, as_array)


def test_usage_errors_exit_2():
    assert run("tuple").returncode == 2
    assert run("list", "--workers", "0").returncode == 2
