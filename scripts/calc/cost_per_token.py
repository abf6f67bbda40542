#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
r"""Training cost per token on several accelerators from price, dense peak and a measured MFU.

Purpose
    Compare accelerators on what a training run buys, tokens, instead of on datasheet ratios.  For each
    candidate give its price per GPU-hour, the dense peak TFLOPS of the data type you train in, and the MFU
    you measured on it (or the one you are willing to assume until you can measure).  The script prints
    tokens/s per GPU, GPU-hours and dollars per billion training tokens, the cost relative to the first
    candidate, and the break-even MFU: the MFU at which a candidate would cost exactly as much per token
    as the first one.

Formulas (F = training FLOPs per token, e.g. from flops_mfu.py: 6*N plus the attention term)
    tokens/s per GPU          = MFU * peak_TFLOPS * 1e12 / F
    GPU-hours per 1e9 tokens  = 1e9 / (tokens/s per GPU) / 3600
    cost per 1e9 tokens       = GPU-hours per 1e9 tokens * price per GPU-hour
    break-even MFU of GPU i   = MFU_0 * (peak_0 / peak_i) * (price_i / price_0)
    MFU as defined by PaLM (Chowdhery et al. 2022, appendix B): model FLOPs only, against the dense peak.

Usage
    python cost_per_token.py --flops-per-token 5.4622e10 \
        --gpu "H100 SXM5" 2.50 989.4 0.40 --gpu "B200" 4.25 2250 0.35
    python cost_per_token.py --flops-per-token 5.4622e10 --tokens 200e9 --gpus 64 --gpu A 2.5 989.4 0.4 --json

Requirements
    Python 3.9+, standard library only.

Exit codes
    0 success, 2 usage error (for example an MFU given in percent instead of as a fraction, or a price,
    peak or FLOPs count that is zero, negative, inf or nan).

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import math
import sys

EXIT_OK, EXIT_USAGE = 0, 2


def candidate_errors(name: str, price: float, peak: float, mfu: float) -> list[str]:
    """Reasons why one --gpu entry cannot be used (empty when it can)."""
    errors = []
    if not (math.isfinite(price) and price > 0):
        errors.append(f"{name}: price per GPU-hour must be a finite number > 0, got {price:g}")
    if not (math.isfinite(peak) and peak > 0):
        errors.append(f"{name}: peak TFLOPS must be a finite number > 0, got {peak:g}")
    if 1 < mfu <= 100:
        errors.append(f"{name}: MFU is a fraction of peak in (0, 1], got {mfu:g}; did you mean {mfu / 100:g}?")
    elif not 0 < mfu <= 1:
        errors.append(f"{name}: MFU must be in (0, 1], got {mfu:g}")
    return errors


def cost_rows(flops_per_token: float, candidates: list[tuple[str, float, float, float]], tokens: float) -> list[dict]:
    """One dict per candidate (name, price, peak TFLOPS, MFU): throughput, GPU-hours and cost per 1e9 and per budget.

    ``flops_per_token`` in FLOPs, prices in currency units per GPU-hour, ``tokens`` the run's token budget.
    The first candidate is the reference for ``relative_cost`` and ``break_even_mfu``.
    """
    _, price0, peak0, mfu0 = candidates[0]
    rows = []
    for name, price, peak, mfu in candidates:
        tokens_per_sec = mfu * peak * 1e12 / flops_per_token
        gpu_hours_per_b = 1e9 / tokens_per_sec / 3600
        rows.append(
            {
                "name": name,
                "price_per_gpu_hour": price,
                "peak_tflops": peak,
                "mfu": mfu,
                "tokens_per_sec_per_gpu": tokens_per_sec,
                "gpu_hours_per_1e9_tokens": gpu_hours_per_b,
                "cost_per_1e9_tokens": gpu_hours_per_b * price,
                "gpu_hours_budget": gpu_hours_per_b * tokens / 1e9,
                "cost_budget": gpu_hours_per_b * price * tokens / 1e9,
                "break_even_mfu": mfu0 * (peak0 / peak) * (price / price0),
            }
        )
    for row in rows:
        row["relative_cost"] = row["cost_per_1e9_tokens"] / rows[0]["cost_per_1e9_tokens"]
    return rows


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser (standard library only, so --help works anywhere)."""
    parser = argparse.ArgumentParser(
        description="Cost per training token on several accelerators from price, dense peak TFLOPS and MFU.",
        epilog="Formulas and sources: see the docstring at the top of this file. Exit codes: 0 ok, 2 usage error.",
    )
    parser.add_argument(
        "--flops-per-token",
        type=float,
        required=True,
        help="training FLOPs per token (flops_mfu.py prints it as 'total FLOPs/token')",
    )
    parser.add_argument(
        "--gpu",
        nargs=4,
        action="append",
        required=True,
        metavar=("NAME", "PRICE", "PEAK_TFLOPS", "MFU"),
        help="a candidate: name, price per GPU-hour, dense peak TFLOPS, MFU as a fraction; repeat per candidate",
    )
    parser.add_argument("--tokens", type=float, default=1e9, help="token budget for the totals (default 1e9)")
    parser.add_argument("--gpus", type=int, default=0, help="GPUs in the job, to print wall-clock days (optional)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    return parser


def parse(argv: list[str] | None) -> tuple[argparse.Namespace, list[tuple[str, float, float, float]], list[str]]:
    """Parse arguments; return (args, candidates, errors)."""
    args = build_parser().parse_args(argv)
    errors, candidates = [], []
    if not (math.isfinite(args.flops_per_token) and args.flops_per_token > 0):
        errors.append(f"--flops-per-token must be a finite number > 0, got {args.flops_per_token:g}")
    if not (math.isfinite(args.tokens) and args.tokens > 0) or args.gpus < 0:
        errors.append(f"--tokens must be a finite number > 0 and --gpus >= 0, got {args.tokens:g} and {args.gpus}")
    for name, *numbers in args.gpu:
        try:
            price, peak, mfu = (float(x) for x in numbers)
        except ValueError:
            errors.append(f"{name}: PRICE, PEAK_TFLOPS and MFU must be numbers, got {' '.join(numbers)}")
            continue
        errors += candidate_errors(name, price, peak, mfu)
        candidates.append((name, price, peak, mfu))
    return args, candidates, errors


def print_table(rows: list[dict], args: argparse.Namespace) -> None:
    """The human-readable table."""
    print(f"# {args.flops_per_token:.4e} training FLOPs per token; budget {args.tokens:.3g} tokens")
    head = f"{'GPU':<14}{'$/GPU-h':>8}{'peak TF':>9}{'MFU':>6}{'tok/s/GPU':>11}{'GPU-h/1B':>10}{'$/1B tok':>10}"
    head += f"{'vs first':>9}{'break-even MFU':>16}"
    print(head)
    for r in rows:
        print(
            f"{r['name']:<14}{r['price_per_gpu_hour']:>8.2f}{r['peak_tflops']:>9.1f}{r['mfu']:>6.2f}"
            f"{r['tokens_per_sec_per_gpu']:>11,.0f}{r['gpu_hours_per_1e9_tokens']:>10.2f}"
            f"{r['cost_per_1e9_tokens']:>10.2f}{r['relative_cost']:>9.3f}{r['break_even_mfu']:>16.3f}"
        )
    for r in rows:
        line = f"{r['name']}: {r['gpu_hours_budget']:,.0f} GPU-hours, ${r['cost_budget']:,.0f} for the budget"
        if args.gpus:
            line += f", {r['gpu_hours_budget'] / args.gpus / 24:.1f} days on {args.gpus} GPUs"
        print(line)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    args, candidates, errors = parse(argv)
    if errors:
        for error in errors:
            print(f"cost_per_token.py: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    rows = cost_rows(args.flops_per_token, candidates, args.tokens)
    if args.json:
        print(json.dumps({"flops_per_token": args.flops_per_token, "tokens": args.tokens, "rows": rows}))
    else:
        print_table(rows, args)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
