#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Preemption in a distributed loop: any rank that gets SIGTERM or SIGUSR1 makes all ranks save at the same step.

Purpose
    A preemption warning (SLURM's --signal, a Kubernetes SIGTERM, a spot notice turned into a signal)
    reaches one node, or reaches the nodes at different moments.  The signal handler here only records
    that a stop was requested; every ``--check-every`` steps all ranks take part in one MAX all-reduce
    of a per-rank flag, so if any rank was warned, every rank leaves the loop after the same step.
    Rank 0 then saves the state (temporary name + rename, so a kill mid-save leaves the old file), and
    a second run resumes from it.  ``done`` in the checkpoint tells "stopped early, requeue me" from
    "finished".  Each rank writes ``rank<N>.pid`` into the checkpoint folder so that a demo can signal
    one chosen rank.

    The flag travels on a Gloo group: with ``--backend nccl`` the training collectives use NCCL and a
    side group ``dist.new_group(backend="gloo")`` carries the flag, so the check needs no GPU sync.

Usage
    torchrun --standalone --nproc_per_node=2 preempt_demo.py /tmp/ckpt_demo 40 &
    kill -USR1 "$(cat /tmp/ckpt_demo/rank1.pid)"       # only rank 1 is warned; both ranks stop
    torchrun --standalone --nproc_per_node=2 preempt_demo.py /tmp/ckpt_demo 40   # resumes
    python preempt_demo.py /tmp/ckpt_demo 40 --step-s 0.05   # one process (world size 1)

Output: rank 0 prints the step it starts at; each rank prints the signals it saw and the step saved.

Requirements: Python 3.9+, PyTorch with torch.distributed; torchrun for more than one rank; CUDA for
--backend nccl.  --help works without PyTorch.
Exit codes: 0 saved (stopped early or finished); 2 usage error (e.g. --backend nccl without CUDA).
License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time

requested: list[str] = []  # the handler only records; all work happens at a step boundary


def say(line: str) -> None:
    """Print one line in a single write, so lines of ranks sharing one pipe never run together.

    Under PYTHONUNBUFFERED, print() writes the text and the newline separately.
    """
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def on_signal(signum: int, frame) -> None:
    """Record the signal's name; the loop acts on it at the next check."""
    requested.append(signal.Signals(signum).name)


def stop_agreed(group) -> bool:
    """True on every rank if any rank was signalled; a collective, so call it on all ranks at the same step."""
    import torch
    import torch.distributed as dist

    flag = torch.tensor([1 if requested else 0])
    dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=group)
    return bool(flag.item())


def run(ckpt_dir: str, total_steps: int, check_every: int, step_s: float, backend: str) -> int:
    """Train (sleep) from the saved step until ``total_steps`` or an agreed stop; save; return 0."""
    import torch
    import torch.distributed as dist

    if "WORLD_SIZE" not in os.environ:  # plain `python preempt_demo.py`: a world of one process
        os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29511")
    if backend == "nccl":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    try:
        dist.init_process_group(backend)
    except (RuntimeError, ValueError) as exc:  # e.g. WORLD_SIZE set but not RANK or MASTER_ADDR
        print(f"error: init_process_group failed: {exc}", file=sys.stderr)
        return 1
    # With NCCL, the flag goes over a Gloo side group (a CPU tensor, no GPU synchronisation).
    ctl = dist.new_group(backend="gloo") if backend == "nccl" else dist.group.WORLD
    rank = dist.get_rank()
    os.makedirs(ckpt_dir, exist_ok=True)
    with open(os.path.join(ckpt_dir, f"rank{rank}.pid"), "w") as f:
        f.write(str(os.getpid()))
    path = os.path.join(ckpt_dir, "state.pt")
    state = torch.load(path) if os.path.exists(path) else {"step": 0, "done": False}
    if rank == 0:
        print(f"rank 0: starting at step {state['step']}", flush=True)
    while state["step"] < total_steps:
        time.sleep(step_s)  # forward, backward, optimizer step
        state["step"] += 1
        if state["step"] % check_every == 0 and stop_agreed(ctl):
            break
    state["done"] = state["step"] >= total_steps
    if rank == 0:  # one writer; temp name + rename so a kill mid-save leaves the old file intact
        torch.save(state, path + ".tmp")
        os.replace(path + ".tmp", path)
    dist.barrier(group=ctl)
    say(f"rank {rank}: signals seen here {requested or 'none'}; saved at step {state['step']}, done={state['done']}")
    dist.destroy_process_group()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, install the handlers, run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ckpt_dir", help="checkpoint folder (state.pt and the rank<N>.pid files)")
    parser.add_argument("total_steps", type=int, help="steps of the whole training run")
    parser.add_argument("--check-every", type=int, default=2, help="steps between stop checks (default 2)")
    parser.add_argument("--step-s", type=float, default=0.5, help="seconds one step takes (default 0.5)")
    parser.add_argument("--backend", choices=("gloo", "nccl"), default="gloo", help="training backend (default gloo)")
    args = parser.parse_args(argv)
    if args.total_steps < 0 or args.check_every < 1 or args.step_s < 0:
        parser.error("need total_steps >= 0, --check-every >= 1 and --step-s >= 0")
    if args.backend == "nccl":
        import torch

        if not torch.cuda.is_available():
            print("error: --backend nccl needs CUDA, which is not available here (use --backend gloo)", file=sys.stderr)
            return 2
    for s in (signal.SIGTERM, signal.SIGUSR1):
        signal.signal(s, on_signal)
    return run(args.ckpt_dir, args.total_steps, args.check_every, args.step_s, args.backend)


if __name__ == "__main__":
    sys.exit(main())
