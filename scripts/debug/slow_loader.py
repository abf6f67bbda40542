#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Toy training loop with a deliberately slow collate_fn, to practise finding a data-loading bottleneck.

Purpose
    Trains a toy attention layer on variable-length token sequences.  ``slow_collate`` pads each batch
    and builds a (batch, L, L) attention mask with nested Python list comprehensions; ``fast_collate``
    builds the same tensors with tensor operations (``--check`` verifies they are equal).  Each step's
    phases are labelled ``data`` and ``compute`` with ``record_function``; ``--profile`` records steps
    3-6 (after one wait and two warm-up steps) and prints a torch.profiler table.  The step time it
    reports is the median over the steps after the first 5 (warm-up).  CPU only: the point is the data
    path, and PyTorch is pinned to one thread so that numbers on a small shared machine are steadier.

Usage
    python slow_loader.py --collate slow            # or --collate fast
    python slow_loader.py --collate slow --profile  # profiler table of steps 3-6
    python slow_loader.py --check                   # slow and fast collate give equal tensors

Output: ``collate=<name> median step <ms> ms (min <ms>, max <ms>, <n> steps)``, or one JSON object
with --json.

Requirements: Python 3.9+, PyTorch; --help works without it.
Exit codes: 0 success; 1 --check found a difference; 2 usage error (e.g. more steps than batches).
License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time

VOCAB, MAX_LEN, BATCH, SAMPLES = 1000, 128, 32, 4096
WARMUP_STEPS = 5  # left out of the reported step times
PROFILE_STEPS = 7  # the profiler's schedule: 1 wait + 2 warm-up + 4 active steps


def token_samples(n: int = SAMPLES, seed: int = 0) -> list[list[int]]:
    """``n`` seeded token sequences of 32 to MAX_LEN tokens, each token in [0, VOCAB)."""
    rng = random.Random(seed)
    return [[rng.randrange(VOCAB) for _ in range(rng.randint(32, MAX_LEN))] for _ in range(n)]


def slow_collate(batch):
    """(ids (B, L) int64, mask (B, L, L) float32): padded in Python, mask built element by element."""
    import torch

    longest = max(len(s) for s in batch)
    ids, mask = [], []
    for s in batch:
        n = len(s)
        ids.append(s + [0] * (longest - n))
        mask.append([[1.0 if (i < n and j < n) else 0.0 for j in range(longest)] for i in range(longest)])
    return torch.tensor(ids), torch.tensor(mask)


def fast_collate(batch):
    """The same output as :func:`slow_collate`, built with tensor ops instead of Python loops."""
    import torch
    from torch.nn.utils.rnn import pad_sequence

    ids = pad_sequence([torch.tensor(s) for s in batch], batch_first=True)
    valid = torch.arange(ids.shape[1]) < torch.tensor([len(s) for s in batch])[:, None]
    mask = (valid[:, :, None] & valid[:, None, :]).float()
    return ids, mask


def same_output(batch) -> bool:
    """True when both collate functions give equal tensors (values and dtypes) for ``batch``."""
    import torch

    (a_ids, a_mask), (b_ids, b_mask) = slow_collate(batch), fast_collate(batch)
    return torch.equal(a_ids, b_ids) and torch.equal(a_mask, b_mask)


def train(samples: list[list[int]], collate_name: str, steps: int, profile_steps: bool) -> dict:
    """Run ``steps`` training steps; the step times in ms (median, min, max over the steps after warm-up)."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function, schedule
    from torch.utils.data import DataLoader

    torch.manual_seed(0)
    torch.set_num_threads(1)  # steadier numbers on a small shared VM
    collate = slow_collate if collate_name == "slow" else fast_collate
    loader = DataLoader(samples, batch_size=BATCH, shuffle=True, collate_fn=collate, num_workers=0)
    emb = torch.nn.Embedding(VOCAB, 128)
    head = torch.nn.Linear(128, VOCAB)
    opt = torch.optim.SGD(list(emb.parameters()) + list(head.parameters()), lr=0.1)

    prof = None
    if profile_steps:
        prof = profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=2, active=4, repeat=1))
        prof.start()

    step_ms = []
    it = iter(loader)
    for _ in range(steps):
        t0 = time.perf_counter()
        with record_function("data"):
            ids, mask = next(it)
        with record_function("compute"):
            h = emb(ids)  # (B, L, 128)
            scores = (h @ h.transpose(1, 2)) / 128**0.5  # (B, L, L)
            scores = scores.masked_fill(mask == 0, -1e4)
            h = torch.softmax(scores, dim=-1) @ h
            logits = head(h.mean(dim=1))
            loss = torch.nn.functional.cross_entropy(logits, ids[:, 0])
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        step_ms.append((time.perf_counter() - t0) * 1e3)
        if prof is not None:
            prof.step()

    if prof is not None:
        prof.stop()
        print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=6, max_name_column_width=28))
    warm = step_ms[WARMUP_STEPS:]
    return {
        "collate": collate_name,
        "median_ms": statistics.median(warm),
        "min_ms": min(warm),
        "max_ms": max(warm),
        "steps": len(warm),
    }


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run the loop (or the equality check)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collate", choices=["slow", "fast"], default="slow", help="collate function (default slow)")
    parser.add_argument("--steps", type=int, default=40, help="training steps (default 40)")
    parser.add_argument("--profile", action="store_true", help="print a torch.profiler table of steps 3-6")
    parser.add_argument("--check", action="store_true", help="only check that both collates give equal tensors")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the summary line")
    args = parser.parse_args(argv)
    batches = -(-SAMPLES // BATCH)  # the last batch may be short
    least = PROFILE_STEPS if args.profile else WARMUP_STEPS + 1
    if not least <= args.steps <= batches:
        parser.error(f"--steps must be between {least} and {batches} (the data set holds {batches} batches)")
    if args.check:
        batch = token_samples(BATCH)  # the first batch's sequences (the same seeded stream)
        same = same_output(batch)
        print(f"slow and fast collate give {'equal' if same else 'DIFFERENT'} tensors for a batch of {BATCH}")
        return 0 if same else 1
    result = train(token_samples(), args.collate, args.steps, args.profile)
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"collate={result['collate']} median step {result['median_ms']:.1f} ms "
            f"(min {result['min_ms']:.1f}, max {result['max_ms']:.1f}, {result['steps']} steps)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
