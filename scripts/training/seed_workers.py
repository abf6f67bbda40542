#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Seed DataLoader workers reproducibly: the same batches, with the same random draws, on every run.

Purpose
    Each DataLoader worker is a process with its own copies of the random number generators.
    PyTorch seeds ``random`` and ``torch`` in worker ``i`` with ``base_seed + i``, and NumPy's global
    generator from a state derived from both (torch/utils/data/_utils/worker.py); ``base_seed`` is
    drawn once per iterator from the loader's ``generator`` (torch/utils/data/dataloader.py).  So:
    pass every DataLoader an explicit ``generator`` (seeded with seed + rank), and seed any other
    library from ``torch.initial_seed()`` in ``worker_init_fn``.  The demo builds the same loader
    twice ("run A", "run B") over a dataset whose items draw from random, NumPy and torch, and
    prints each batch: both runs print the same batches.  The fourth random column comes from a
    generator of the script's own (``CUSTOM_RNG``), seeded in ``worker_init_fn``.

Usage
    python seed_workers.py                        # seed 42, rank 0, 2 workers
    python seed_workers.py --seed 7 --rank 3 --workers 4
    python seed_workers.py --no-init-fn           # without worker_init_fn: the last column repeats

Output: per run, one line per batch, as columns: the indices, then the draws from random, NumPy,
torch and CUSTOM_RNG; the batches arrive in sampler order.

Requirements: Python 3.9+, PyTorch, NumPy; --help works without them.
Exit codes: 0 both runs gave the same batches and CUSTOM_RNG drew different numbers for each batch;
1 otherwise (``--no-init-fn`` shows that case); 2 usage error.
License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import random
import sys

# A generator PyTorch knows nothing about (a stand-in for an augmentation library's own RNG): each worker
# process starts with a copy of the parent's state, so without worker_init_fn every worker draws the same
# numbers as the others (and a new process draws new ones, since the parent's state comes from os.urandom).
CUSTOM_RNG = random.Random()


def make_dataset():
    """A 4-item dataset: item i is (i, one draw each from random, NumPy, torch and CUSTOM_RNG), to 3 digits."""
    import numpy as np
    import torch
    from torch.utils.data import Dataset

    class NoisyDataset(Dataset):
        """Each item draws from three RNGs, like a real augmentation pipeline."""

        def __len__(self) -> int:
            return 4

        def __getitem__(self, i: int):
            return (
                i,
                round(random.random(), 3),
                round(float(np.random.rand()), 3),
                round(torch.rand(1).item(), 3),
                round(CUSTOM_RNG.random(), 3),
            )

    return NoisyDataset()


def worker_init_fn(worker_id: int) -> None:
    """Seed what PyTorch does not seed, from the worker's torch seed (already base_seed + worker_id)."""
    import torch

    worker_seed = torch.initial_seed() % 2**32  # NumPy and many libraries take 32-bit seeds
    CUSTOM_RNG.seed(worker_seed)  # e.g. some_augmentation_lib.seed(worker_seed)


def make_loader(seed: int, rank: int, workers: int, init_fn: bool = True):
    """A shuffling DataLoader whose order and worker seeds depend only on ``seed + rank``.

    ``init_fn=False`` leaves out ``worker_init_fn``, to show what goes wrong without it.
    """
    import torch
    from torch.utils.data import DataLoader

    g = torch.Generator()
    g.manual_seed(seed + rank)  # differs per rank, fixed per run
    return DataLoader(
        make_dataset(),
        batch_size=2,
        shuffle=True,
        num_workers=workers,
        worker_init_fn=worker_init_fn if init_fn else None,
        generator=g,
        persistent_workers=False,
    )


def main(argv: list[str] | None = None) -> int:
    """Run the loader twice and compare the batches."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=42, help="base seed of the run (default 42)")
    parser.add_argument("--rank", type=int, default=0, help="rank whose loader to build (default 0)")
    parser.add_argument("--workers", type=int, default=2, help="DataLoader worker processes (default 2)")
    parser.add_argument("--no-init-fn", action="store_true", help="leave out worker_init_fn (shows the bug)")
    args = parser.parse_args(argv)
    if args.workers < 0 or args.rank < 0:
        parser.error("--workers and --rank must be >= 0")
    runs = []
    for run in ("run A", "run B"):
        print(run, flush=True)
        batches = []
        for batch in make_loader(args.seed, args.rank, args.workers, init_fn=not args.no_init_fn):
            batches.append([tuple(round(float(v), 3) for v in col) for col in batch])
            print("  batch", batches[-1], flush=True)
        runs.append(batches)
    same = runs[0] == runs[1]
    custom = [batch[-1] for batch in runs[0]]  # the CUSTOM_RNG column of each batch (one batch per worker here)
    distinct = len(set(custom)) == len(custom)
    print("same batches in both runs:", same)
    print("CUSTOM_RNG draws differ between batches:", distinct)
    return 0 if same and distinct else 1


if __name__ == "__main__":
    sys.exit(main())
