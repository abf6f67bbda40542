"""scripts/debug/rank_logging.py: console level by rank, everything in each rank's file, UTC and rank fields."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "debug" / "rank_logging.py"
LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (\S+) r(\d)/l(\d) pid(\d+) (\w+) train: (.*)$")


def run(rank: str, log_dir) -> subprocess.CompletedProcess:
    env = {**os.environ, "RANK": rank, "LOCAL_RANK": rank, "TZ": "America/New_York"}
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--log-dir", str(log_dir)], capture_output=True, text=True, env=env, timeout=60
    )


def test_console_by_rank_and_a_full_file_per_rank(tmp_path):
    zero, one = run("0", tmp_path), run("1", tmp_path)
    assert zero.returncode == one.returncode == 0, zero.stderr + one.stderr
    assert [LINE.match(x).group(5) for x in zero.stderr.splitlines()] == ["INFO"]
    assert [LINE.match(x).group(5) for x in one.stderr.splitlines()] == ["WARNING"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rank00000.log", "rank00001.log"]
    records = [LINE.match(x) for x in (tmp_path / "rank00001.log").read_text().splitlines()]
    assert [r.group(5) for r in records] == ["DEBUG", "INFO", "WARNING"]
    host = socket.gethostname().split(".")[0]
    assert all(r.group(1) == host and r.group(2) == r.group(3) == "1" for r in records)


def test_timestamps_are_utc(tmp_path):
    import datetime

    proc = run("0", tmp_path)
    stamp = proc.stderr.split()[0]
    logged = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.UTC)
    assert abs((datetime.datetime.now(datetime.UTC) - logged).total_seconds()) < 120  # UTC, not New York time
