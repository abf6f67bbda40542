#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
r"""Readable output from many ranks: rank prefixes, print on rank 0 only, and non-interleaved prints.

Purpose
    With 8 processes per node writing to one terminal or log, lines from different ranks get mixed
    up, even inside a single multi-line message.  This file gives:
      rank_prefix()      "[host:r3/l3]" from RANK, LOCAL_RANK and the hostname (no torch needed);
      print0(...)        print() on global rank 0 only;
      output_lock()      a context manager holding an exclusive fcntl.flock() on a lock file, so that
                         everything printed inside it by one process comes out as one block;
      locked_print(...)  print() under output_lock(), flushed before the lock is released;
      RankFormatter      a logging.Formatter that puts rank_prefix() in front of every record;
                         setup_logging() installs it on the root logger.
    The lock file is per machine: it keeps the ranks of one node apart (they share a terminal or a
    pipe); different nodes write to different streams anyway.  Its path is --lock, else the
    environment variable RANK_PRINT_LOCK, else <tmp dir>/rank_print.<uid>.lock (tmp dir: $TMPDIR or /tmp).

Library use
    from rank_print import locked_print, print0, rank_prefix, setup_logging
    print0("config:", cfg)
    locked_print(rank_prefix(), "step", step, table, sep="\n")  # multi-line, never interleaved
    setup_logging(); logging.getLogger(__name__).info("hello")   # "[host:r0/l0] INFO hello"

Demo (CLI)
    torchrun --standalone --nproc_per_node=8 rank_print.py --blocks 5 --lines 4
    torchrun --standalone --nproc_per_node=8 rank_print.py --no-lock      # see the interleaving

Requirements
    Python 3.9+ on Linux or macOS (fcntl), standard library only; torchrun only to launch the demo.

Exit codes
    0 success, 2 usage error.

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import logging
import os
import socket
import sys
import tempfile
import time

LOCK_ENV = "RANK_PRINT_LOCK"


def rank_prefix() -> str:
    """Return "[host:r<RANK>/l<LOCAL_RANK>]" from the environment (RANK/LOCAL_RANK default to 0)."""
    host = socket.gethostname().split(".")[0]
    return f"[{host}:r{os.environ.get('RANK', '0')}/l{os.environ.get('LOCAL_RANK', '0')}]"


def is_rank0() -> bool:
    """Return True on global rank 0 (RANK unset counts as rank 0)."""
    return os.environ.get("RANK", "0") == "0"


def print0(*args, **kwargs) -> None:
    """print() on global rank 0 only (same arguments as print)."""
    if is_rank0():
        print(*args, **kwargs)


def default_lock_path() -> str:
    """Return the lock file path: $RANK_PRINT_LOCK, else <tmp dir>/rank_print.<uid>.lock."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return os.environ.get(LOCK_ENV) or os.path.join(tempfile.gettempdir(), f"rank_print.{uid}.lock")


@contextlib.contextmanager
def output_lock(path: str | None = None):
    """Hold an exclusive flock on ``path`` (default: default_lock_path()) for the body; flush stdout/stderr.

    Raises OSError if the lock file cannot be created.  Blocks until the lock is free.
    """
    # Read-only is enough for flock, and works on a lock file another user created with mode 0644.
    fd = os.open(path or default_lock_path(), os.O_CREAT | os.O_RDONLY, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def locked_print(*args, lock: str | None = None, **kwargs) -> None:
    """print() while holding output_lock(lock), so a multi-line message is never split by other ranks."""
    kwargs.setdefault("flush", True)
    with output_lock(lock):
        print(*args, **kwargs)


class RankFormatter(logging.Formatter):
    """logging.Formatter that prefixes every formatted record with rank_prefix()."""

    def format(self, record: logging.LogRecord) -> str:
        """Format ``record`` and put the rank prefix in front of each of its lines."""
        prefix = rank_prefix()
        return "\n".join(f"{prefix} {line}" for line in super().format(record).splitlines())


def setup_logging(level: int = logging.INFO, fmt: str = "%(levelname)s %(message)s") -> None:
    """Send the root logger to stderr through a RankFormatter."""
    handler = logging.StreamHandler()
    handler.setFormatter(RankFormatter(fmt))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(
        description="Rank-prefixed, non-interleaved printing (fcntl.flock).  Demo: each rank prints "
        "--blocks blocks of --lines lines; run it under torchrun.",
    )
    parser.add_argument("--blocks", type=int, default=3, help="blocks per rank (default 3)")
    parser.add_argument("--lines", type=int, default=4, help="lines per block (default 4)")
    parser.add_argument("--delay", type=float, default=0.005, help="seconds to sleep between lines (default 0.005)")
    parser.add_argument("--lock", default=None, help=f"lock file (default: ${LOCK_ENV} or <tmp>/rank_print.<uid>.lock)")
    parser.add_argument("--no-lock", action="store_true", help="print without the lock, to see the interleaving")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point: the demo.  Returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.blocks < 1 or args.lines < 1 or args.delay < 0:
        parser.error("--blocks and --lines must be >= 1, --delay >= 0")
    setup_logging()

    def lock():
        return contextlib.nullcontext() if args.no_lock else output_lock(args.lock)

    prefix = rank_prefix()
    # Under the lock too: unlocked, rank 0's header can land inside another rank's block, even inside one
    # of its lines (unbuffered output, PYTHONUNBUFFERED=1, writes a line's text and its newline separately).
    with lock():
        print0(f"{prefix} world size {os.environ.get('WORLD_SIZE', '1')}, lock {args.lock or default_lock_path()}")
    for block in range(args.blocks):
        with lock():
            for line in range(args.lines):
                # Separate, flushed writes with a pause: only the lock keeps them together.
                print(f"{prefix} block {block} line {line}/{args.lines}", flush=True)
                time.sleep(args.delay)
    with lock():
        logging.getLogger("rank_print").info("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
