#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Gradient noise scale from two batch sizes (McCandlish et al. 2018, App. A), checked on synthetic gradients.

Data parallelism gives gradients at two batch sizes for free: each rank's local gradient before the
all-reduce (B_small = the per-rank batch) and the averaged gradient after it (B_big = the global batch).
noise_scale_parts() turns their squared norms into unbiased estimates of |G|^2 and tr(Sigma); the simple
noise scale B_simple = tr(Sigma) / |G|^2.  Average the two parts over many steps and divide once at the end:
the ratio of two noisy values is biased.  The demo draws per-example gradients G + sigma * noise with a
known G and prints the true and the estimated B_simple.

Source: S. McCandlish, J. Kaplan, D. Amodei et al., "An Empirical Model of Large-Batch Training",
arXiv:1812.06162 (2018), Appendix A.

Usage:
    python noise_scale.py                          # dim 10000, 8 ranks x 16 examples, 200 steps
    python noise_scale.py --dim 2000 --steps 50

Requirements: Python 3.9+, PyTorch (imported inside main, so --help works without it).
Exit codes: 0 printed, 2 usage error.
"""

from __future__ import annotations

import argparse
import sys


def noise_scale_parts(g_small_sq: float, g_big_sq: float, b_small: int, b_big: int) -> tuple[float, float]:
    """Unbiased estimates of |G|^2 and tr(Sigma) from squared gradient norms at two batch sizes.

    In DDP: b_small = per-rank batch, g_small_sq = squared norm of the local gradient before all-reduce
    (averaged over ranks); b_big = global batch, g_big_sq = squared norm after the all-reduce.
    """
    g2 = (b_big * g_big_sq - b_small * g_small_sq) / (b_big - b_small)
    tr_sigma = (g_small_sq - g_big_sq) / (1 / b_small - 1 / b_big)
    return g2, tr_sigma


def main(argv: list[str] | None = None) -> int:
    """Estimate B_simple on synthetic gradients whose true value is known, and print both."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dim", type=int, default=10_000, help="gradient size (default 10000)")
    parser.add_argument("--ranks", type=int, default=8, help="data-parallel ranks (default 8)")
    parser.add_argument("--b-small", type=int, default=16, help="examples per rank (default 16)")
    parser.add_argument("--steps", type=int, default=200, help="steps averaged (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if min(args.dim, args.b_small, args.steps) < 1 or args.ranks < 2:
        parser.error("--dim, --b-small and --steps must be >= 1, --ranks >= 2")
    import torch

    torch.manual_seed(args.seed)
    dim, sigma, ranks, b_small = args.dim, 1.0, args.ranks, args.b_small
    G = torch.randn(dim) * 0.02  # the "true" gradient
    true_b = dim * sigma**2 / G.pow(2).sum().item()  # tr(Sigma) / |G|^2
    g2_sum = tr_sum = 0.0
    for _ in range(args.steps):
        per_example = G + sigma * torch.randn(ranks * b_small, dim)
        local = per_example.view(ranks, b_small, dim).mean(1)  # one gradient per rank
        g_small_sq = local.pow(2).sum(1).mean().item()
        g_big_sq = local.mean(0).pow(2).sum().item()  # after all-reduce (mean)
        g2, tr = noise_scale_parts(g_small_sq, g_big_sq, b_small, ranks * b_small)
        g2_sum += g2
        tr_sum += tr
    print(f"true B_simple      = {true_b:8.1f} examples")
    print(f"estimated B_simple = {tr_sum / g2_sum:8.1f} examples  (from {args.steps} steps, {ranks} ranks x {b_small})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
