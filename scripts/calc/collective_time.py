#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Estimate the time of a collective from its size, the number of ranks and a bus bandwidth.

Purpose
    How long should an all-reduce of the gradients take at the bus bandwidth the fabric delivers?
    Compare the estimate with a measurement (scripts/network/collective_bench.py) or with the
    compute time of a step.

Formula (nccl-tests semantics, https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md)
    algbw = S / t and busbw = algbw * factor, hence  t = S * factor / busbw  (+ latency term), with
      all_reduce:                              factor = 2 (n - 1) / n,  ring steps = 2 (n - 1)
      all_gather, reduce_scatter, all_to_all:  factor = (n - 1) / n,    ring steps = n - 1
    S is the full buffer size as nccl-tests counts it: the buffer each rank reduces (all_reduce), the
    gathered output of one rank (all_gather), the input of one rank (reduce_scatter), the send buffer
    of one rank (all_to_all).  The optional latency term is steps * --latency-us, a ring model.

Usage
    # 1 GB all-reduce over 8 ranks at 100 GB/s busbw -> 17.5 ms
    python collective_time.py --bytes 1e9 --ranks 8 --busbw 100 --op all_reduce
    # every op, 4 GiB over 64 ranks at 40 GB/s, with 10 us per ring step
    python collective_time.py --bytes 4G --ranks 64 --busbw 40 --latency-us 10 --json

Requirements
    Python 3.9+, standard library only.

Exit codes
    0 success, 2 usage error.

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import re
import sys

OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")


def bus_factor(op: str, ranks: int) -> float:
    """Return the busbw factor: 2(n-1)/n for all_reduce, (n-1)/n for the others.  ValueError if unknown op."""
    if op == "all_reduce":
        return 2.0 * (ranks - 1) / ranks
    if op in OPS:
        return (ranks - 1) / ranks
    raise ValueError(f"unknown op {op!r}, expected one of {OPS}")


def ring_steps(op: str, ranks: int) -> int:
    """Return the number of communication steps of the ring algorithm: 2(n-1) for all_reduce, else n-1."""
    return 2 * (ranks - 1) if op == "all_reduce" else ranks - 1


def collective_time_s(op: str, nbytes: float, ranks: int, busbw_gbps: float, latency_us: float = 0.0) -> float:
    """Return the estimated time in seconds: nbytes * factor / (busbw_gbps * 1e9) + steps * latency_us * 1e-6."""
    return nbytes * bus_factor(op, ranks) / (busbw_gbps * 1e9) + ring_steps(op, ranks) * latency_us * 1e-6


def parse_bytes(text: str) -> float:
    """Parse a byte count: 1000000, 1e9, 64K/1M/2G/1T (powers of 1024, optional 'iB'/'B').  Must be > 0."""
    match = re.fullmatch(r"\s*([0-9.]+(?:[eE][0-9]+)?)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
    if not match:
        raise argparse.ArgumentTypeError(f"not a byte count: {text!r} (examples: 4096, 1e9, 64K, 2G)")
    try:
        value = float(match.group(1)) * 1024 ** " KMGT".index(match.group(2) or " ")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a byte count: {text!r}") from exc
    if not value > 0:
        raise argparse.ArgumentTypeError("byte count must be > 0")
    return value


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(
        description="Collective time t = S * factor / busbw (+ ring steps * latency), nccl-tests busbw factors.",
        epilog="factor: all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n.  GB/s = 1e9 B/s.",
    )
    parser.add_argument("--bytes", type=parse_bytes, required=True, help="buffer size S: 1e9, 512M, 4G (K=1024)")
    parser.add_argument("--ranks", type=int, required=True, help="number of ranks n (>= 2)")
    parser.add_argument("--busbw", type=float, required=True, help="bus bandwidth in GB/s (10^9 bytes/s)")
    parser.add_argument(
        "--op", choices=(*OPS, "all"), default="all", help="collective to estimate (default: all of them)"
    )
    parser.add_argument("--latency-us", type=float, default=0.0, help="latency per ring step in us (default 0)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.ranks < 2:
        parser.error("--ranks must be >= 2")
    if not args.busbw > 0:
        parser.error("--busbw must be > 0")
    if args.latency_us < 0:
        parser.error("--latency-us must be >= 0")
    ops = OPS if args.op == "all" else (args.op,)
    rows = []
    for op in ops:
        t = collective_time_s(op, args.bytes, args.ranks, args.busbw, args.latency_us)
        rows.append(
            {
                "op": op,
                "bytes": args.bytes,
                "ranks": args.ranks,
                "busbw_gbps": args.busbw,
                "factor": bus_factor(op, args.ranks),
                "steps": ring_steps(op, args.ranks),
                "time_us": t * 1e6,
                "algbw_gbps": args.bytes / t / 1e9,
            }
        )
    if args.json:
        print(json.dumps({"inputs": vars(args), "results": rows}))
        return 0
    print(f"# S={args.bytes:.6g} bytes, n={args.ranks}, busbw={args.busbw:g} GB/s, latency={args.latency_us:g} us/step")
    print(f"{'op':<16}{'factor':>10}{'steps':>8}{'time(us)':>16}{'algbw(GB/s)':>14}")
    for r in rows:
        print(f"{r['op']:<16}{r['factor']:>10.4f}{r['steps']:>8}{r['time_us']:>16.2f}{r['algbw_gbps']:>14.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
