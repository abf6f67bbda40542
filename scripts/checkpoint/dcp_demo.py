#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Save a sharded model and optimizer with PyTorch Distributed Checkpoint (DCP), reload with any rank count.

`save` builds a tiny model, shards it with FSDP2 (`fully_shard`: every parameter becomes a DTensor sharded
on dim 0) over the ranks it is started with (Gloo on CPU), trains three steps so that AdamW has moments,
and writes model, optimizer and step with `dcp.save`: each rank writes only the shards it owns, one rank
the `.metadata` that maps pieces of global tensors to files.  `load` builds the same model on however
many ranks it is started with (or one plain process, no process group), takes its state dict as the
target, and lets `dcp.load` fill it in place, resharding as needed; it prints checksums of the full
weight and of Adam's first moment, which agree whatever the layout.

Usage:
    python -m torch.distributed.run --standalone --nproc_per_node=2 dcp_demo.py save /tmp/ckpt/step_100
    python -m torch.distributed.run --standalone --nproc_per_node=3 dcp_demo.py load /tmp/ckpt/step_100
    python dcp_demo.py load /tmp/ckpt/step_100          # one process: DCP warns that it loads without a group

Requirements: PyTorch 2.6+ (FSDP2 `fully_shard`, `get_state_dict`), imported inside main() so --help works
without it.  Exit codes: 0 done, 1 the process group could not start, 2 usage error.
"""

from __future__ import annotations

import argparse
import os
import sys


def say(line: str) -> None:
    """Print one line in a single write, so lines of ranks sharing one pipe never run together.

    Under PYTHONUNBUFFERED, print() writes the text and the newline separately.
    """
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def build():
    """The tiny model, the same on every rank (seeded): Linear(16, 32) -> ReLU -> Linear(32, 4)."""
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))


def run(mode: str, path: str) -> None:
    """Save (three AdamW steps first) or load the checkpoint at ``path`` with this process's ranks."""
    import torch
    import torch.distributed as dist
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
    from torch.distributed.fsdp import fully_shard

    distributed = "WORLD_SIZE" in os.environ  # set by torchrun, as the other scripts check
    if distributed:
        try:
            dist.init_process_group("gloo")
        except (RuntimeError, ValueError) as exc:  # e.g. WORLD_SIZE set but not RANK or MASTER_ADDR
            print(f"error: init_process_group failed: {exc}", file=sys.stderr)
            raise SystemExit(1) from None
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world = 0, 1
    model = build()
    if distributed:
        fully_shard(model)  # FSDP2: every parameter becomes a DTensor sharded on dim 0
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    if mode == "save":
        for step in range(3):  # a few steps so Adam has moments to save
            torch.manual_seed(rank + step)
            loss = model(torch.randn(8, 16)).pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
        model_sd, optim_sd = get_state_dict(model, opt)
        state = {"model": model_sd, "optim": optim_sd, "step": 3}
        dcp.save(state, checkpoint_id=path)
        w = model_sd["0.weight"]
        local = w.to_local() if hasattr(w, "to_local") else w
        say(f"rank {rank}/{world} saved: 0.weight global {tuple(w.shape)}, local shard {tuple(local.shape)}")
    else:
        model_sd, optim_sd = get_state_dict(model, opt)  # targets with the right shapes and sharding
        state = {"model": model_sd, "optim": optim_sd, "step": 0}
        dcp.load(state, checkpoint_id=path)  # fills the tensors in place, resharding as needed
        set_state_dict(model, opt, model_state_dict=state["model"], optim_state_dict=state["optim"])
        w = model.state_dict()["0.weight"]
        local = w.to_local() if hasattr(w, "to_local") else w
        m = state["optim"]["state"]["0.weight"]["exp_avg"]  # Adam first moment, also resharded
        full_w, full_m = (t.full_tensor() if hasattr(t, "full_tensor") else t for t in (w, m))
        say(
            f"rank {rank}/{world} loaded step={state['step']}: local 0.weight {tuple(local.shape)}, "
            f"sum(weight)={full_w.double().sum().item():.6f} sum(exp_avg)={full_m.double().sum().item():.6f}"
        )
    if distributed:
        dist.barrier()
        dist.destroy_process_group()


def main(argv: list[str] | None = None) -> int:
    """Command line: MODE (save or load) and the checkpoint folder."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["save", "load"], help="save from these ranks, or load onto them")
    parser.add_argument("path", help="checkpoint folder (DCP writes .metadata and one .distcp file per rank)")
    args = parser.parse_args(argv)
    run(args.mode, args.path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
