#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How much private memory do forked DataLoader workers build up?  Copy-on-write against reference counts.

Holds N file names either as a Python list of str (one object per sample) or as one NumPy byte array,
runs shuffled epochs with forked workers that read every sample, and prints each process's PSS and
private dirty memory (from /proc/PID/smaps_rollup).  Reading a Python object writes its reference
count, so with the list each worker ends up with a private copy of every page it touched; with the
array it does not.

Usage:
    python cow_demo.py list            # 4,000,000 names, 4 workers, 2 epochs (about 1.6 GiB in all)
    python cow_demo.py numpy
    python cow_demo.py list --names 200000 --workers 2     # a small run for a laptop or CI

Requirements: Linux (smaps_rollup: kernel 4.14+), torch, numpy.
Exit codes: 0 done, 2 usage error.
"""

from __future__ import annotations

import argparse
import os


def smaps(pid: int) -> tuple[float, float]:
    """(PSS, Private_Dirty) of process ``pid`` in MiB, from /proc/PID/smaps_rollup."""
    with open(f"/proc/{pid}/smaps_rollup") as f:
        fields = dict(line.split()[:2] for line in f if ":" in line)
    return int(fields["Pss:"]) / 1024, int(fields["Private_Dirty:"]) / 1024


def make_dataset(kind: str, count: int):
    """A map-style dataset of ``count`` names held as a list of str (``list``) or one byte array (``numpy``)."""
    import numpy as np
    from torch.utils.data import Dataset

    class Names(Dataset):
        def __init__(self):
            names = [f"shard-{i:07d}.tar" for i in range(count)]  # one Python str per sample
            self.data = names if kind == "list" else np.array(names, dtype="S17")  # one buffer

        def __len__(self):
            return count

        def __getitem__(self, i):
            return len(self.data[i])  # read the sample, as a real dataset would

    return Names()


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; prints one line for the main process and one per worker."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=["list", "numpy"], help="how the dataset holds its names")
    parser.add_argument("--names", type=int, default=4_000_000, help="number of samples (default 4,000,000)")
    parser.add_argument("--workers", type=int, default=4, help="forked DataLoader workers (default 4)")
    parser.add_argument("--epochs", type=int, default=2, help="shuffled passes over the data (default 2)")
    args = parser.parse_args(argv)
    if args.names < 1 or args.workers < 1 or args.epochs < 1:
        parser.error("--names, --workers and --epochs must be at least 1")

    from torch.utils.data import DataLoader

    loader = DataLoader(
        make_dataset(args.kind, args.names),
        batch_size=4096,
        shuffle=True,
        num_workers=args.workers,
        multiprocessing_context="fork",
        persistent_workers=True,
    )
    for _epoch in range(args.epochs):
        for _batch in loader:
            pass
    me = os.getpid()
    with open(f"/proc/{me}/task/{me}/children") as f:
        workers = [int(p) for p in f.read().split()]
    print(f"{args.kind:<6} main:  PSS {smaps(me)[0]:5.0f} MiB")
    for pid in workers:
        pss, dirty = smaps(pid)
        print(f"       worker: PSS {pss:5.0f} MiB, private dirty {dirty:5.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
