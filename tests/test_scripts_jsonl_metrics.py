"""scripts/debug/jsonl_metrics.py: one file per rank, fields in order, and `sort -m` gives one timeline."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "debug" / "jsonl_metrics.py"
TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def test_two_ranks_write_sortable_files(tmp_path):
    out = tmp_path / "metrics"
    for rank in ("0", "1"):
        proc = subprocess.run(
            [sys.executable, str(SCRIPT), "--out-dir", str(out), "--steps", "4"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "RANK": rank},
        )
        assert proc.returncode == 0, proc.stderr
    files = sorted(p.name for p in out.iterdir())
    assert files == ["rank00000.jsonl", "rank00001.jsonl"]
    records = [json.loads(line) for line in (out / "rank00001.jsonl").read_text().splitlines()]
    assert [list(r)[:3] for r in records] == [["ts", "rank", "host"]] * 4
    assert [r["step"] for r in records] == [0, 1, 2, 3] and all(TS.match(r["ts"]) for r in records)
    assert [r["loss"] for r in records] == [2.0, 1.0, 0.667, 0.5]
    merged = subprocess.run(
        ["sort", "-m", *sorted(str(p) for p in out.iterdir())],
        capture_output=True,
        text=True,
        env={**os.environ, "LC_ALL": "C"},
        check=True,
    ).stdout.splitlines()
    stamps = [json.loads(line)["ts"] for line in merged]
    assert len(stamps) == 8 and stamps == sorted(stamps)


def test_usage_error_exits_2():
    assert subprocess.run([sys.executable, str(SCRIPT), "--steps", "0"], capture_output=True).returncode == 2
