#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Deterministic token streams with learnable structure, for tiny-model tests: a sparse Markov chain.

Each token of the vocabulary has `branching` fixed successors, drawn once from `seed`; a sample starts at
a random token and then picks one of the current token's successors uniformly at every position.  A model
that learns the table reaches a cross-entropy of ln(branching) nats and no lower (the entropy of a uniform
choice), so a test gets both a direction (the loss falls from about ln(vocab)) and a floor.  The table
depends on `seed` only; `shard` (pass the rank) changes which samples are drawn, so every rank sees a
different, reproducible slice of the same distribution.  Each stream has its own torch.Generator, so
random numbers consumed elsewhere (initialisation, dropout) never change the data.

Usage:
    from synth_data import markov_batches, loss_floor
    data = markov_batches(vocab=128, branching=4, batch=16, seq=64, shard=rank)
    inputs, labels = next(data)                 # (batch, seq) int64 each; labels = inputs shifted by one

    python synth_data.py                        # demo: the same seed gives the same data; start loss and floor
    python synth_data.py --vocab 256 --branching 8

Requirements: Python 3.10+, PyTorch (imported inside the functions, so --help works without it).
Exit codes: 0 the demo's two streams agree, 1 they differ, 2 usage error.
"""

from __future__ import annotations

import argparse
import math
import sys


def markov_table(vocab: int, branching: int, seed: int):
    """The successor table, (vocab, branching) int64: row t lists the tokens allowed after token t."""
    import torch

    g = torch.Generator().manual_seed(seed)
    return torch.stack([torch.randperm(vocab, generator=g)[:branching] for _ in range(vocab)])


def markov_batches(
    vocab: int = 128, branching: int = 4, batch: int = 8, seq: int = 64, seed: int = 1234, shard: int = 0
):
    """Yield (inputs, labels) forever, each (batch, seq) int64; labels[:, i] is the token after inputs[:, i]."""
    import torch

    table = markov_table(vocab, branching, seed)  # the same chain for every shard
    g = torch.Generator().manual_seed(seed + 1 + shard)  # the shard picks the samples
    while True:
        ids = torch.empty(batch, seq + 1, dtype=torch.long)
        ids[:, 0] = torch.randint(vocab, (batch,), generator=g)
        choice = torch.randint(branching, (batch, seq), generator=g)
        for t in range(seq):
            ids[:, t + 1] = table[ids[:, t], choice[:, t]]
        yield ids[:, :-1], ids[:, 1:]


def loss_floor(branching: int) -> float:
    """The lowest reachable cross-entropy in nats: the entropy of a uniform choice among `branching`."""
    return math.log(branching)


def main(argv: list[str] | None = None) -> int:
    """Demo: two streams with the same seed agree; print the first row, the start loss and the floor."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocab", type=int, default=128, help="vocabulary size (default 128)")
    parser.add_argument("--branching", type=int, default=4, help="successors per token (default 4)")
    args = parser.parse_args(argv)
    if not 1 <= args.branching <= args.vocab:
        parser.error("--branching must be between 1 and --vocab")
    import torch

    a = next(markov_batches(args.vocab, args.branching))[0]
    b = next(markov_batches(args.vocab, args.branching))[0]
    same = torch.equal(a, b)
    print("same seed, same data:", same)
    print("first row:", a[0, :12].tolist())
    print(
        f"start loss ~ ln({args.vocab}) = {math.log(args.vocab):.3f}, "
        f"floor = ln({args.branching}) = {loss_floor(args.branching):.3f}"
    )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
