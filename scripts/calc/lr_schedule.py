#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Learning-rate schedules (cosine, WSD) as a function of tokens seen, not of steps; prints a table.

A schedule in tokens survives a batch-size ramp, a change of data-parallel size at restart or a skipped
step unchanged: set the learning rate on every step from lr_at(tokens_seen, ...).
cosine: linear warmup, then a cosine from the peak down to final_frac x peak at the end of training.
wsd (warmup-stable-decay): linear warmup, constant at the peak, then a linear decay to final_frac x peak
over the last decay_frac of training.

Usage:
    python lr_schedule.py                                   # the 7B plan: 2T tokens, 8.4B warmup
    python lr_schedule.py --peak 1e-3 --total 1e11 --warmup 1e9 --decay-frac 0.2

Requirements: Python 3.9+ standard library only.  Exit codes: 0 printed, 2 usage error.
"""

from __future__ import annotations

import argparse
import math
import sys


def lr_at(tokens, *, peak, total, warmup, kind="cosine", final_frac=0.1, decay_frac=0.1):
    """Learning rate after ``tokens`` training tokens (all counts in tokens; ValueError for an unknown kind)."""
    if tokens < warmup:
        return peak * tokens / warmup
    floor = final_frac * peak
    if kind == "cosine":
        p = min(1.0, (tokens - warmup) / (total - warmup))
        return floor + 0.5 * (peak - floor) * (1 + math.cos(math.pi * p))
    if kind == "wsd":
        start = total * (1 - decay_frac)
        if tokens < start:
            return peak
        p = min(1.0, (tokens - start) / (total - start))
        return peak - (peak - floor) * p
    raise ValueError(kind)


def main(argv: list[str] | None = None) -> int:
    """Print cosine and WSD learning rates at ten points of the run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peak", type=float, default=3e-4, help="peak learning rate (default 3e-4)")
    parser.add_argument("--total", type=float, default=2e12, help="training tokens (default 2e12)")
    parser.add_argument("--warmup", type=float, default=2000 * 4_194_304, help="warmup tokens (default 8.4e9)")
    parser.add_argument("--decay-frac", type=float, default=0.1, help="WSD decay share of the run (default 0.1)")
    args = parser.parse_args(argv)
    if not 0 < args.warmup < args.total or args.peak <= 0 or not 0 < args.decay_frac < 1:
        parser.error("need 0 < --warmup < --total, --peak > 0 and 0 < --decay-frac < 1")
    points = [f * args.total for f in (0, 0.0021, 0.0042, 0.05, 0.25, 0.5, 0.75, 0.9, 0.95, 1.0)]
    print(f"{'tokens':>8} {'cosine':>9} {'wsd':>9}")
    for t in points:
        c = lr_at(t, peak=args.peak, total=args.total, warmup=args.warmup)
        w = lr_at(t, peak=args.peak, total=args.total, warmup=args.warmup, kind="wsd", decay_frac=args.decay_frac)
        print(f"{t / 1e9:7.1f}B {c:9.2e} {w:9.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
