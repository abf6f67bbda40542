#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A sampler whose order is a pure function of (seed, epoch) and that resumes mid-epoch from three integers.

Purpose
    Resuming a run exactly needs the data position, not the data loader's internals.  ``ResumableSampler``
    shuffles each epoch with a generator seeded from ``seed + epoch`` and counts the indices it has handed
    out; ``state_dict()`` is ``{"seed", "epoch", "consumed"}`` and ``load_state_dict()`` restores it, so a
    restarted process yields exactly the indices the uninterrupted run would have.  The demo stops a run
    after 5 samples of epoch 1, restores the state into a sampler built with the wrong seed on purpose,
    and checks that the rest of the epoch matches the uninterrupted run.

    With DataLoader workers the sampler runs ahead of training (prefetching), so in a real loop save the
    position that training consumed (steps x per-rank batch x accumulation steps) as ``consumed``, not the
    sampler's own counter; ``--prefetch-demo`` shows the difference.

Library use
    from resume_sampler import ResumableSampler
    sampler = ResumableSampler(len(dataset), seed=7)
    sampler.load_state_dict(checkpoint["sampler"])          # on restart
    loader = DataLoader(dataset, batch_size=..., sampler=sampler)

Usage
    python resume_sampler.py                    # the resume demo: prints "matches: True"
    python resume_sampler.py --prefetch-demo    # how far ahead the sampler runs with 2 workers

Requirements: Python 3.9+, PyTorch; --help works without it.
Exit codes: 0 success (the resumed order matches); 1 it does not; 2 usage error.
License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator


class ResumableSampler:
    """Shuffles per epoch from (seed, epoch); can skip what was already consumed.

    ``n``: dataset length (indices 0..n-1).  A torch ``Sampler`` in all but name: the DataLoader only
    needs ``__iter__`` and ``__len__``, and not subclassing keeps torch out of the import.
    """

    def __init__(self, n: int, seed: int):
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        self.n, self.seed = n, seed
        self.epoch, self.consumed = 0, 0

    def _order(self) -> list[int]:
        import torch

        g = torch.Generator()
        g.manual_seed(self.seed + self.epoch)
        return torch.randperm(self.n, generator=g).tolist()

    def __iter__(self) -> Iterator[int]:
        order = self._order()
        while self.consumed < self.n:
            idx = order[self.consumed]
            self.consumed += 1
            yield idx
        self.epoch, self.consumed = self.epoch + 1, 0

    def __len__(self) -> int:
        return self.n - self.consumed

    def state_dict(self) -> dict[str, int]:
        """The position: seed, epoch and indices consumed in this epoch."""
        return {"seed": self.seed, "epoch": self.epoch, "consumed": self.consumed}

    def load_state_dict(self, sd: dict[str, int]) -> None:
        """Restore a position saved by :meth:`state_dict`."""
        self.seed, self.epoch, self.consumed = sd["seed"], sd["epoch"], sd["consumed"]


def resume_demo() -> bool:
    """Interrupt epoch 1 after 5 samples, resume from the state, compare with the uninterrupted run."""
    ref = ResumableSampler(8, seed=7)
    full = [list(ref), list(ref)]  # uninterrupted reference: two epochs of 8 samples
    print("uninterrupted:", full)

    s = ResumableSampler(8, seed=7)
    list(s)  # epoch 0 done
    it = iter(s)
    seen = [next(it) for _ in range(5)]
    ckpt = s.state_dict()
    print("checkpoint:", ckpt, "seen so far in epoch 1:", seen)

    s2 = ResumableSampler(8, seed=0)  # fresh process, wrong seed on purpose
    s2.load_state_dict(ckpt)
    rest = list(s2)
    print("resumed rest of epoch 1:", rest)
    matches = seen + rest == full[1]
    print("matches:", matches)
    return matches


def prefetch_demo(workers: int) -> bool:
    """One batch taken from a DataLoader with workers: how many indices the sampler has handed out."""
    from torch.utils.data import DataLoader

    sampler = ResumableSampler(64, seed=7)
    loader = DataLoader(list(range(64)), batch_size=4, sampler=sampler, num_workers=workers)
    it = iter(loader)
    next(it)
    print("batches trained on: 1 (4 samples)")
    print("sampler thinks consumed:", sampler.state_dict()["consumed"])
    del it  # stops the workers
    return True


def main(argv: list[str] | None = None) -> int:
    """Run the resume demo (default) or the prefetch demo."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefetch-demo", action="store_true", help="show how far the sampler runs ahead")
    parser.add_argument("--workers", type=int, default=2, help="DataLoader workers for --prefetch-demo (default 2)")
    args = parser.parse_args(argv)
    if args.workers < 0:
        parser.error("--workers must be >= 0")
    ok = prefetch_demo(args.workers) if args.prefetch_demo else resume_demo()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
