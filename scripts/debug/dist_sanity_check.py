#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Distributed sanity check: every rank joins the process group and gets a correct all-reduce.

Purpose
    The first thing to run on a new allocation.  Every rank initialises the default process group,
    prints one identification line (host, rank, local rank, world size, device, torch / CUDA / NCCL
    versions), all-reduces a one-element tensor holding rank+1, checks that the sum equals
    n(n+1)/2, and passes a barrier.  The per-rank results are gathered on rank 0, which names every
    failing rank by rank number and hostname.

Usage
    torchrun --standalone --nproc_per_node=8 dist_sanity_check.py
    torchrun --nnodes=4 --nproc_per_node=8 --rdzv_backend=c10d --rdzv_endpoint=HOST:29500 dist_sanity_check.py
    torchrun --standalone --nproc_per_node=2 dist_sanity_check.py --backend gloo   # CPU smoke test

Requirements
    Python 3.9+, PyTorch with torch.distributed; --backend nccl needs PyTorch 2.3 or newer
    (init_process_group(device_id=...), added by pytorch/pytorch#114916 and first released in 2.3.0),
    checked at start.  Launch with torchrun (reads RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
    MASTER_PORT); without torchrun it checks a single process (n = 1).
    With --backend nccl each rank uses CUDA device LOCAL_RANK.

Exit codes
    0  every rank got the right sum;
    1  some rank got a wrong sum, or a collective failed / timed out (all ranks exit 1 on a mismatch);
    2  usage error, e.g. --backend nccl on a machine without a usable CUDA device.

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import datetime
import os
import socket
import sys

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2

# init_process_group(device_id=...) binds the process group to this rank's GPU (the NCCL communicator is
# then created at once, and barrier() knows its device).  The argument was added by pytorch/pytorch#114916
# and first shipped in PyTorch 2.3.0; on older releases the call is a TypeError, so the NCCL path checks
# the signature first.  The Gloo path does not pass it.
MIN_TORCH_NCCL = "2.3"
TORCH_NOTE = (
    f"--backend nccl needs PyTorch {MIN_TORCH_NCCL} or newer: it passes device_id to init_process_group, "
    "which first shipped in PyTorch 2.3.0 (pytorch/pytorch#114916)"
)


def accepts_device_id(init_process_group) -> bool:
    """Return True when ``init_process_group`` takes a ``device_id`` argument (PyTorch 2.3 and newer)."""
    import inspect

    try:
        return "device_id" in inspect.signature(init_process_group).parameters
    except (TypeError, ValueError):  # no introspectable signature: treat it as the old API
        return False


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser (does not import torch)."""
    parser = argparse.ArgumentParser(
        description="Check that all ranks join the process group and that all_reduce gives n(n+1)/2.",
        epilog="Launch with torchrun, e.g. torchrun --standalone --nproc_per_node=8 dist_sanity_check.py.  "
        + TORCH_NOTE
        + "; the gloo path does not use it.",
    )
    parser.add_argument(
        "--backend",
        choices=("nccl", "gloo"),
        default=None,
        help="process-group backend (default: nccl if CUDA is available, else gloo)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        help="process-group timeout in seconds (default 300)",
    )
    parser.add_argument(
        "--simulate-bad-rank",
        type=int,
        default=None,
        metavar="RANK",
        help="testing aid: rank RANK corrupts its all_reduce result, to check that the failure is reported",
    )
    return parser


def expected_sum(world_size: int) -> int:
    """Return 1 + 2 + ... + world_size = n(n+1)/2, the all-reduce result of tensors holding rank+1."""
    return world_size * (world_size + 1) // 2


def describe(rank: int, local_rank: int, world_size: int, device) -> str:
    """Return the one-line identification of this rank (host, ranks, device, library versions)."""
    import torch

    parts = [
        f"host={socket.gethostname()}",
        f"rank={rank}",
        f"local_rank={local_rank}",
        f"world_size={world_size}",
    ]
    if device.type == "cuda":
        parts.append(f"device={device} ({torch.cuda.get_device_name(device)})")
    else:
        parts.append("device=cpu")
    parts.append(f"torch={torch.__version__}")
    if torch.version.cuda:
        parts.append(f"cuda={torch.version.cuda}")
    if torch.cuda.is_available() and hasattr(torch.cuda, "nccl"):
        try:
            nccl = torch.cuda.nccl.version()
            parts.append("nccl=" + (".".join(map(str, nccl)) if isinstance(nccl, tuple) else str(nccl)))
        except (RuntimeError, AttributeError):
            pass
    return " ".join(parts)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    args = build_parser().parse_args(argv)
    if args.timeout <= 0:
        build_parser().error("--timeout must be > 0")

    import torch
    import torch.distributed as dist

    backend = args.backend or ("nccl" if torch.cuda.is_available() else "gloo")
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    host = socket.gethostname()
    if backend == "nccl":
        if not torch.cuda.is_available():
            print(
                f"error: host={host} local_rank={local_rank}: --backend nccl needs CUDA, but no CUDA "
                "device is available (check the driver and CUDA_VISIBLE_DEVICES; "
                "use --backend gloo only for CPU tests)",
                file=sys.stderr,
            )
            return EXIT_USAGE
        if local_rank >= torch.cuda.device_count():
            print(
                f"error: host={host}: LOCAL_RANK={local_rank} but only {torch.cuda.device_count()} CUDA "
                "device(s) are visible (is --nproc_per_node larger than the number of GPUs?)",
                file=sys.stderr,
            )
            return EXIT_USAGE
        if not accepts_device_id(dist.init_process_group):
            print(f"error: host={host}: {TORCH_NOTE}; this is torch {torch.__version__} (upgrade it)", file=sys.stderr)
            return EXIT_USAGE
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")

    kwargs = {"backend": backend, "timeout": datetime.timedelta(seconds=args.timeout)}
    if backend == "nccl":
        kwargs["device_id"] = device
    try:
        if "WORLD_SIZE" in os.environ:
            dist.init_process_group(**kwargs)
        else:
            dist.init_process_group(store=dist.HashStore(), rank=0, world_size=1, **kwargs)
    except (RuntimeError, ValueError) as exc:
        where = f"host={host} local_rank={local_rank}"
        print(f"error: {where}: init_process_group failed: {exc}", file=sys.stderr)
        return EXIT_FAIL

    rank, world_size = dist.get_rank(), dist.get_world_size()
    print(describe(rank, local_rank, world_size, device), flush=True)

    try:
        value = torch.tensor([rank + 1], dtype=torch.int64, device=device)
        dist.all_reduce(value, op=dist.ReduceOp.SUM)
        got = int(value.item())
        if rank == args.simulate_bad_rank:
            got += 1
        want = expected_sum(world_size)
        dist.barrier()

        record = {"rank": rank, "host": host, "got": got, "ok": got == want}
        records = [None] * world_size if rank == 0 else None
        dist.gather_object(record, records, dst=0)

        verdict = torch.tensor([EXIT_OK], dtype=torch.int64, device=device)
        if rank == 0:
            bad = [r for r in records if not r["ok"]]
            for r in bad:
                where = f"rank {r['rank']} on host {r['host']}"
                print(f"FAIL: {where}: all_reduce gave {r['got']}, expected {want}")
            if bad:
                print(f"FAIL: {len(bad)} of {world_size} ranks got a wrong all_reduce result", flush=True)
                verdict.fill_(EXIT_FAIL)
            else:
                hosts = sorted({r["host"] for r in records})
                print(
                    f"OK: all {world_size} ranks ok (all_reduce sum {want}, barrier passed) "
                    f"on {len(hosts)} host(s), backend={backend}",
                    flush=True,
                )
        dist.broadcast(verdict, src=0)
        exit_code = int(verdict.item())
    except RuntimeError as exc:  # a failed or timed-out collective
        print(f"error: rank {rank} on host {host}: collective failed: {exc}", file=sys.stderr, flush=True)
        return EXIT_FAIL

    dist.destroy_process_group()
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
