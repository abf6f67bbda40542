#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Python logging for a multi-process job: rank-aware console levels, one DEBUG file per rank, UTC stamps.

setup_logging() installs, on the root logger, a console handler at INFO on rank 0 and WARNING on the other
ranks, and a file handler per rank (<log-dir>/rank<RANK>.log, zero-padded so globs list files in rank
order) that keeps everything at DEBUG.  Every line carries a fixed-width UTC timestamp, the short host
name, the global and local rank and the pid.  The rank fields are attached by a filter on the handlers,
not on a logger, so records that propagate from libraries (torch.distributed, transformers) get them too.

Usage:
    from rank_logging import setup_logging
    setup_logging(f"logs/{os.environ.get('SLURM_JOB_ID', 'local')}")   # once, before libraries log
    logging.getLogger("train").info("starting")

    torchrun --standalone --nproc_per_node=2 rank_logging.py       # demo: rank 0's INFO, rank 1's WARNING
    python rank_logging.py --log-dir /tmp/logs

Requirements: Python 3.10+ standard library only; RANK and LOCAL_RANK from the launcher (0 when unset).
Exit codes: 0 logged, 2 usage error.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import sys
import time

FMT = "%(asctime)s.%(msecs)03dZ %(host)s r%(rank)d/l%(local_rank)d pid%(process)d %(levelname)s %(name)s: %(message)s"


class RankFilter(logging.Filter):
    """Attach rank, local rank and short host name to every record."""

    def __init__(self):
        super().__init__()
        self.rank = int(os.environ.get("RANK", 0))
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0))
        self.host = socket.gethostname().split(".")[0]

    def filter(self, record: logging.LogRecord) -> bool:
        """Add the fields; never drop a record."""
        record.rank = self.rank
        record.local_rank = self.local_rank
        record.host = self.host
        return True


def setup_logging(log_dir: str = "logs", console_level_other_ranks: int = logging.WARNING) -> None:
    """Replace the root logger's handlers: console (INFO on rank 0, else the given level), DEBUG file per rank."""
    rank = int(os.environ.get("RANK", 0))
    os.makedirs(log_dir, exist_ok=True)
    formatter = logging.Formatter(FMT, datefmt="%Y-%m-%dT%H:%M:%S")
    formatter.converter = time.gmtime  # UTC, so nodes in different time zones agree
    rank_filter = RankFilter()

    # Console: everything from rank 0, only warnings and errors from the others.
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(logging.INFO if rank == 0 else console_level_other_ranks)
    # File: one per rank, everything at DEBUG.
    per_rank = logging.FileHandler(os.path.join(log_dir, f"rank{rank:05d}.log"))
    per_rank.setLevel(logging.DEBUG)

    root = logging.getLogger()
    root.handlers.clear()  # handlers a library installed with basicConfig; makes the call idempotent
    root.setLevel(logging.DEBUG)
    for handler in (console, per_rank):
        handler.setFormatter(formatter)
        handler.addFilter(rank_filter)
        root.addHandler(handler)


def main(argv: list[str] | None = None) -> int:
    """Demo: a DEBUG line (file only), an INFO line (rank 0's console) and, on rank 1, a WARNING."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log-dir", default="logs", help="folder for rank<RANK>.log (default logs)")
    args = parser.parse_args(argv)
    setup_logging(args.log_dir)
    log = logging.getLogger("train")
    log.debug("per-rank detail, file only")
    log.info("starting; console shows this on rank 0 only")
    if os.environ.get("RANK") == "1":
        log.warning("loss scale dropped to 1.0")
    logging.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
