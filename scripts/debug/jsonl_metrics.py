#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Per-rank metrics as JSON Lines: one file per rank, one object per line, a sortable UTC timestamp first.

JsonlMetrics appends {"ts": ..., "rank": ..., "host": ..., **fields} to <out-dir>/rank<RANK>.jsonl, line
buffered.  The timestamp is fixed-width ISO 8601 in UTC, so each file is in time order as plain text and
`LC_ALL=C sort -m metrics/rank*.jsonl` merges all ranks into one timeline without re-sorting; jq, pandas
(read_json(path, lines=True)) and DuckDB read the files directly.

Usage:
    from jsonl_metrics import JsonlMetrics
    metrics = JsonlMetrics("metrics")
    metrics.log(step=step, step_time_s=dt, loss=loss.item())

    torchrun --standalone --nproc_per_node=2 jsonl_metrics.py       # demo: 3 steps per rank
    python jsonl_metrics.py --out-dir /tmp/metrics --steps 10

Requirements: Python 3.11+ standard library only; RANK from the launcher (0 when unset).
Exit codes: 0 written, 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import sys
import time
from datetime import UTC, datetime


class JsonlMetrics:
    """Append one JSON object per line to <out_dir>/rank<RANK>.jsonl."""

    def __init__(self, out_dir: str = "metrics"):
        self.rank = int(os.environ.get("RANK", 0))
        os.makedirs(out_dir, exist_ok=True)
        path = os.path.join(out_dir, f"rank{self.rank:05d}.jsonl")
        self.f = open(path, "a", buffering=1)  # line-buffered: one write per record
        self.host = socket.gethostname().split(".")[0]

    def log(self, **fields) -> None:
        """Write one record: the timestamp, rank and host first, then ``fields`` (JSON-serialisable)."""
        # "ts" goes first, fixed width, UTC: the lines then sort as plain text.
        ts = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        record = {"ts": ts, "rank": self.rank, "host": self.host, **fields}
        self.f.write(json.dumps(record, separators=(",", ":")) + "\n")

    def close(self) -> None:
        """Close the file (records are already on disk: the file is line-buffered)."""
        self.f.close()


def main(argv: list[str] | None = None) -> int:
    """Demo: log a few fake training steps of random duration on this rank."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", default="metrics", help="folder for rank<RANK>.jsonl (default metrics)")
    parser.add_argument("--steps", type=int, default=3, help="steps to log (default 3)")
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error("--steps must be >= 1")
    m = JsonlMetrics(args.out_dir)
    random.seed(m.rank)
    for step in range(args.steps):
        t0 = time.perf_counter()
        time.sleep(random.uniform(0.01, 0.05))  # stands in for a training step
        m.log(step=step, step_time_s=round(time.perf_counter() - t0, 4), loss=round(2.0 / (step + 1), 3))
    m.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
