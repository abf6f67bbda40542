#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""N "ranks" on one node load the same checkpoint in four ways; rank 0's RSS, peak and anonymous memory, all ranks' PSS.

`make` builds a model of LAYERS x DIM x DIM fp32 weights (1 GiB by default) and saves it as ckpt.pt and
ckpt.safetensors.  A mode then starts N spawned processes that each load it:

    naive        real model on the CPU, then torch.load copied into it (two copies at the peak)
    full         model on the meta device, torch.load, load_state_dict(assign=True)
    mmap         as full, with torch.load(mmap=True): the weights stay file pages, shared by all ranks
    safetensors  as full, with safetensors.torch.load_file

Every rank reads all its weights, as a forward pass would; the parent prints one line with rank 0's
VmRSS, VmHWM and RssAnon and the summed PSS of all ranks (/proc/PID/status, /proc/PID/smaps_rollup), in GiB.
Drop the page cache between runs (as root: sync; echo 3 > /proc/sys/vm/drop_caches) to start cold.

Usage:
    python load_demo.py make                     # 1 GiB checkpoint in the current folder
    python load_demo.py mmap 4                   # four ranks
    python load_demo.py make --layers 4 --dim 1024 --dir /tmp/ld && python load_demo.py full 2 --dir /tmp/ld

Requirements: Linux, torch, safetensors (mode safetensors and make).
Exit codes: 0 done, 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

MODES = ("naive", "full", "mmap", "safetensors")


def build(layers: int, dim: int):
    """The model: ``layers`` bias-free Linear(dim, dim), fp32 (layers * dim * dim * 4 bytes of weights)."""
    import torch

    return torch.nn.Sequential(*[torch.nn.Linear(dim, dim, bias=False) for _ in range(layers)])


def gib(path: str, key: str) -> float:
    """One ``Key:  N kB`` field of a /proc file, in GiB."""
    with open(path) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 2**20
    raise KeyError(f"{key} not in {path}")


def rank_main(mode: str, folder: str, barrier) -> None:
    """One rank: load in ``mode``, touch every weight, then wait twice on ``barrier`` while measured."""
    import torch

    with open(os.path.join(folder, "shape.json")) as f:
        shape = json.load(f)
    path = os.path.join(folder, "ckpt.pt")
    if mode == "naive":  # real model on the CPU, then a full load copied into it
        model = build(**shape)
        model.load_state_dict(torch.load(path, map_location="cpu"))
    else:
        with torch.device("meta"):
            model = build(**shape)  # no storage allocated
        if mode == "full":
            sd = torch.load(path, map_location="cpu")
        elif mode == "mmap":
            sd = torch.load(path, map_location="cpu", mmap=True)
        else:
            from safetensors.torch import load_file

            sd = load_file(os.path.join(folder, "ckpt.safetensors"), device="cpu")
        model.load_state_dict(sd, assign=True)  # adopt the tensors, no copy
    with torch.no_grad():
        for p in model.parameters():
            p.sum()  # touch every page, as a forward pass would
    barrier.wait()  # stay alive while the parent measures
    barrier.wait()


def make(folder: str, layers: int, dim: int) -> None:
    """Save the model's state dict as ckpt.pt and ckpt.safetensors in ``folder``."""
    import torch
    from safetensors.torch import save_file

    os.makedirs(folder, exist_ok=True)
    sd = build(layers, dim).state_dict()
    torch.save(sd, os.path.join(folder, "ckpt.pt"))
    save_file(sd, os.path.join(folder, "ckpt.safetensors"))
    with open(os.path.join(folder, "shape.json"), "w") as f:
        json.dump({"layers": layers, "dim": dim}, f)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("make", *MODES), help="make the checkpoint, or load it this way")
    parser.add_argument("ranks", nargs="?", type=int, default=4, help="processes that load it (default 4)")
    parser.add_argument("--dir", default=".", help="folder of the checkpoint (default: the current one)")
    parser.add_argument("--layers", type=int, default=16, help="make: Linear layers (default 16)")
    parser.add_argument("--dim", type=int, default=4096, help="make: width (default 4096: 16 x 64 MiB = 1 GiB)")
    args = parser.parse_args(argv)
    if args.ranks < 1 or args.layers < 1 or args.dim < 1:
        parser.error("ranks, --layers and --dim must be at least 1")
    if args.mode == "make":
        make(args.dir, args.layers, args.dim)
        return 0
    if not os.path.exists(os.path.join(args.dir, "shape.json")):
        print(f"error: no checkpoint in {args.dir}: run `load_demo.py make` first", file=sys.stderr)
        return 2

    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(args.ranks + 1)
    procs = [ctx.Process(target=rank_main, args=(args.mode, args.dir, barrier)) for _ in range(args.ranks)]
    for p in procs:
        p.start()
    barrier.wait()
    pid = procs[0].pid
    rss, hwm, anon = (gib(f"/proc/{pid}/status", k) for k in ("VmRSS", "VmHWM", "RssAnon"))
    pss = sum(gib(f"/proc/{p.pid}/smaps_rollup", "Pss") for p in procs)
    print(
        f"{args.mode:<11} rank 0: RSS {rss:.2f} peak {hwm:.2f} anon {anon:.2f} GiB | "
        f"PSS of all {args.ranks} ranks {pss:.2f} GiB"
    )
    barrier.wait()
    for p in procs:
        p.join()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
