#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Train a tiny next-token model under a few settings and record the loss curves that each pathology draws.

The model is an embedding, four residual MLP blocks without normalisation and an output head (37,504
parameters); the data are tokens of a Markov chain whose transition table is drawn once from the seed, so the
lowest reachable loss is known. Every run sees the same batches (one torch.Generator per run, reseeded) and
starts from the same initial weights, and only the setting named in the run changes:

    healthy       AdamW at 3e-3, 20 warm-up steps, gradient clipping at 1.0
    bad-batch     as healthy, but the batch of step 150 has every label set to token 0 (a broken shard)
    lr-too-high   AdamW at 1e-1 with no warm-up and no clipping
    lr-decayed    as healthy, but the schedule has decayed the rate to 1e-6 by step 30 (a restored scheduler)
    data-switch   as healthy, but from step 200 on the batches come from a lower-entropy chain (a mixture change)
    shard-cycle   as healthy, but every 60th step starts 10 steps of a higher-entropy chain (unmixed shards)

The output is JSON: the command, Python and PyTorch versions, the seed, and per run its settings, the loss of
each step (measured on the step's batch before the update) and the gradient norm before clipping.

Usage:
    python loss_curves.py --out loss-curves.json            # six runs of 300 steps, a few seconds on one CPU core
    python loss_curves.py --steps 20 --runs healthy,bad-batch --out /tmp/t.json

Requirements: Python 3.10+, PyTorch (CPU is enough; imported inside main, so --help works without it).
Exit codes: 0 written, 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys

VOCAB, DIM, DEPTH, BATCH = 64, 32, 4, 256
RUNS = {
    "healthy": {"lr": 3e-3, "warmup": 20, "clip": 1.0},
    "bad-batch": {"lr": 3e-3, "warmup": 20, "clip": 1.0, "bad_step": 150},
    "lr-too-high": {"lr": 1e-1, "warmup": 0, "clip": None},
    "lr-decayed": {"lr": 3e-3, "warmup": 20, "clip": 1.0, "decay_by": 30},
    "data-switch": {"lr": 3e-3, "warmup": 20, "clip": 1.0, "switch_step": 200},
    "shard-cycle": {"lr": 3e-3, "warmup": 20, "clip": 1.0, "cycle": 60, "hard_steps": 10},
}


def chain(seed: int, sharpness: float):
    """A (VOCAB, VOCAB) transition matrix: softmax of sharpness x standard normals (larger = lower entropy)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    return torch.softmax(sharpness * torch.randn(VOCAB, VOCAB, generator=g), dim=-1)


def entropy(transitions) -> float:
    """Mean entropy in nats of the next token under the chain, weighting every current token equally."""
    p = transitions.clamp_min(1e-30)
    return float(-(p * p.log()).sum(-1).mean())


def build_model():
    """The tiny residual MLP language model (no normalisation layers), initialised from the current torch seed."""
    import torch.nn as nn

    class TinyLM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(VOCAB, DIM)
            self.mlps = nn.ModuleList(
                nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM)) for _ in range(DEPTH)
            )
            self.unembed = nn.Linear(DIM, VOCAB, bias=False)

        def forward(self, tokens):
            hidden = self.embed(tokens)
            for mlp in self.mlps:
                hidden = hidden + mlp(hidden)  # residual, no normalisation: what lets a large step blow up
            return self.unembed(hidden)

    return TinyLM()


def lr_at(step: int, cfg: dict) -> float:
    """The learning rate of a step: linear warm-up to cfg["lr"], then constant, or down to 1e-6 by "decay_by"."""
    lr = cfg["lr"] * (min(1.0, (step + 1) / cfg["warmup"]) if cfg["warmup"] else 1.0)
    if "decay_by" in cfg and step >= cfg["warmup"]:
        frac = min(1.0, (step - cfg["warmup"]) / (cfg["decay_by"] - cfg["warmup"]))
        lr = cfg["lr"] * (1e-6 / cfg["lr"]) ** frac
    return lr


def source_at(step: int, cfg: dict) -> str:
    """Which chain a step's batch comes from: "base", "easy" (after a data switch) or "hard" (a shard cycle)."""
    if "switch_step" in cfg and step >= cfg["switch_step"]:
        return "easy"
    if "cycle" in cfg and step >= cfg["cycle"] and step % cfg["cycle"] < cfg["hard_steps"]:
        return "hard"
    return "base"


def train(cfg: dict, steps: int, seed: int) -> dict:
    """One run: returns {"loss": [...], "grad_norm": [...]} per step, rounded to 4 decimals (nats, L2 norm)."""
    import torch
    import torch.nn.functional as F

    chains = {"base": chain(seed, 2.0), "easy": chain(seed + 1, 4.0), "hard": chain(seed + 2, 0.5)}
    torch.manual_seed(seed + 10)
    model = build_model()
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], betas=(0.9, 0.95), weight_decay=0.0)
    data = torch.Generator().manual_seed(seed + 20)  # the same batches in every run
    losses, norms = [], []
    for step in range(steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, cfg)
        x = torch.randint(0, VOCAB, (BATCH,), generator=data)
        y = torch.multinomial(chains[source_at(step, cfg)][x], 1, generator=data).squeeze(1)
        if step == cfg.get("bad_step"):
            y = torch.zeros_like(y)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        clip = cfg["clip"] if cfg["clip"] is not None else math.inf
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip).item()
        opt.step()
        value = loss.item()
        losses.append(round(value, 4) if math.isfinite(value) else None)
        norms.append(round(norm, 4) if math.isfinite(norm) else None)
    return {"loss": losses, "grad_norm": norms}


def build_parser() -> argparse.ArgumentParser:
    """The command line: --out, --steps, --seed, --runs."""
    parser = argparse.ArgumentParser(
        description="Train a tiny model under several settings and write the loss curves as JSON.",
        epilog="Runs: " + ", ".join(RUNS) + ". Deterministic for a given seed, PyTorch version and CPU.",
    )
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--steps", type=int, default=300, help="training steps per run (default 300)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the data chains, weights and batches")
    parser.add_argument("--runs", default=",".join(RUNS), help="comma-separated runs (default: all)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, train each run, write the JSON; 2 for a usage error."""
    parser = build_parser()
    args = parser.parse_args(argv)
    names = [n for n in args.runs.split(",") if n]
    unknown = [n for n in names if n not in RUNS]
    if unknown or not names:
        parser.error(f"unknown run(s) {', '.join(unknown) or '(none given)'}; known: {', '.join(RUNS)}")
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    import torch

    torch.set_num_threads(1)
    shown = ["python", "scripts/training/loss_curves.py", *(argv if argv is not None else sys.argv[1:])]
    result = {
        "command": " ".join(shown),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "seed": args.seed,
        "steps": args.steps,
        "vocab": VOCAB,
        "entropy_nats": {
            k: round(entropy(chain(args.seed + i, s)), 4)
            for i, (k, s) in enumerate((("base", 2.0), ("easy", 4.0), ("hard", 0.5)))
        },
        "runs": [{"name": n, "settings": RUNS[n], **train(RUNS[n], args.steps, args.seed)} for n in names],
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    for run in result["runs"]:
        finite = [v for v in run["loss"] if v is not None]
        print(f"{run['name']:<12} first {finite[0]:.3f}  max {max(finite):.3f}  last {finite[-1]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
