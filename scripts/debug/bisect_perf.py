#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""git bisect run helper for a speed regression: exit 0 if the function is fast, 1 if slow, 125 if untestable.

Imports a function from the checked-out code (the current directory, which `git bisect` has checked out),
times it on a fixed 256 x 256 input after three warm-up calls, and compares the best of --runs calls
with LIMIT_MS.  The minimum, not the mean, is the most stable estimate: other load on the machine almost
always makes a run slower, never faster.  A commit whose code cannot be imported exits 125, which
`git bisect run` treats as "skip".  Copy this file outside the repository first (for example to /tmp):
checking out old commits can change or delete it.

Usage:
    cp scripts/debug/bisect_perf.py /tmp/
    git bisect start BAD GOOD
    git bisect run python /tmp/bisect_perf.py 16                   # step() from step.py, limit 16 ms
    git bisect run python /tmp/bisect_perf.py 16 --module model.ops --function fused_step

The function is called as fn(x, w) with two float32 tensors of shape (256, 256).  Pick LIMIT_MS about
halfway between a known-good and a known-bad timing, and check that the gap is several times the spread.

Requirements: Python 3.9+, PyTorch (imported inside main, so --help works without it).
Exit codes: 0 fast (good), 1 slow (bad), 125 cannot import (skip), 2 usage error.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time


def main(argv: list[str] | None = None) -> int:
    """Time the function of the checked-out commit and return the bisect verdict."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("limit_ms", type=float, help="best time in ms at or under which a commit is good")
    parser.add_argument("--module", default="step", help="module to import from the checkout (default step)")
    parser.add_argument("--function", default="step", help="function to time (default step)")
    parser.add_argument("--runs", type=int, default=20, help="timed calls (default 20)")
    args = parser.parse_args(argv)
    if args.limit_ms <= 0 or args.runs < 1:
        parser.error("LIMIT_MS must be > 0 and --runs >= 1")
    sys.path.insert(0, os.getcwd())  # import the checked-out code, not a copy
    try:
        import torch

        fn = getattr(importlib.import_module(args.module), args.function)
    except Exception as exc:  # this commit does not even import: let bisect skip it
        print(f"skip: {exc!r}")
        return 125
    torch.manual_seed(0)
    torch.set_num_threads(1)  # fewer threads, less noise
    x, w = torch.randn(256, 256), torch.randn(256, 256) / 16
    for _ in range(3):  # warm-up
        fn(x, w)
    times = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        fn(x, w)
        times.append((time.perf_counter() - t0) * 1e3)
    best = min(times)
    print(f"best of {len(times)}: {best:.2f} ms (limit {args.limit_ms} ms)")
    return 0 if best <= args.limit_ms else 1


if __name__ == "__main__":
    sys.exit(main())
