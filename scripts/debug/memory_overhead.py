#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Per-rank memory overhead of the distributed runtime: CUDA context, process group, NCCL communicators.

Purpose
    Before the model takes a byte, every rank already holds memory: the CUDA context (hundreds of MiB
    of GPU memory per process and device), the communicator of each process group (NCCL buffers,
    created with the group when init_process_group gets device_id, otherwise at the first
    collective), and host memory for all of it.  This script measures that overhead stage by stage on
    every rank, gathers it on rank 0 and prints it, so you know what to subtract from the GPU before
    sizing a model, and it flags a rank whose overhead differs from the others: the classic case is
    ranks that touch CUDA before torch.cuda.set_device and leave an extra context on GPU 0, which then
    shows up as more device memory used on the ranks of GPU 0.

    Stages, measured in this order (each one's increase over the previous is its cost):
      python+torch      the interpreter with torch imported (the baseline)
      cuda context      (CUDA only) set_device and a one-element tensor: context plus allocator
      process group     init_process_group (NCCL with device_id, so the communicator is created here)
      first collective  one all_reduce of one element, and a barrier
      second group      dist.new_group over all ranks and one all_reduce on it: one more communicator
    Host memory is the resident set size (VmRSS of /proc/self/status).  Device memory is the GPU's
    used memory (total - free from torch.cuda.mem_get_info), which covers every process on that GPU:
    with one rank per GPU it is this rank's context and buffers, and more on a GPU that other ranks
    touched by mistake.  allocator_reserved is what PyTorch's caching allocator holds of it.

Usage
    torchrun --standalone --nproc_per_node=8 memory_overhead.py                  # NCCL on 8 GPUs
    torchrun --standalone --nproc_per_node=2 memory_overhead.py --backend gloo   # CPU: host memory only
    torchrun --standalone --nproc_per_node=8 memory_overhead.py --json > overhead.json

Requirements
    Python 3.9+, PyTorch with torch.distributed; --backend nccl needs PyTorch 2.3 or newer
    (init_process_group(device_id=...)).  Launch with torchrun; without it, one process (world size 1).
    Linux for /proc/self/status.  --help works without PyTorch.

Exit codes
    0 success; 1 a rank's increase at some stage exceeds the median over ranks by more than
    --max-spread-mib, or a collective failed; 2 usage error (e.g. --backend nccl without CUDA).

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import socket
import statistics
import sys

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
MIB = 1024**2
STAGES = ("python+torch", "cuda context", "process group", "first collective", "second group")


def rss_bytes(status_path: str = "/proc/self/status") -> int:
    """Return this process's resident set size in bytes (VmRSS), or 0 where /proc is not available."""
    try:
        with open(status_path, encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024  # the value is in kB (KiB)
    except OSError:
        pass
    return 0


def snapshot(device) -> dict:
    """Return {"rss_mib", "device_used_mib", "allocator_reserved_mib"} now (device values None on CPU)."""
    import torch

    record = {"rss_mib": rss_bytes() / MIB, "device_used_mib": None, "allocator_reserved_mib": None}
    if device.type == "cuda":
        free, total = torch.cuda.mem_get_info(device)
        record["device_used_mib"] = (total - free) / MIB
        record["allocator_reserved_mib"] = torch.cuda.memory_reserved(device) / MIB
    return record


def increases(stages: dict) -> dict:
    """Return {stage: {"rss_mib": +x, "device_used_mib": +y}} over the previous measured stage (first: None)."""
    out, previous = {}, None
    for name, record in stages.items():
        delta = {}
        for key in ("rss_mib", "device_used_mib"):
            before = previous.get(key) if previous else None
            delta[key] = None if before is None or record[key] is None else record[key] - before
        out[name] = delta
        previous = record
    return out


def outliers(ranks: list[dict], max_spread_mib: float) -> list[str]:
    """Name every (rank, stage, quantity) whose increase exceeds the other ranks' median by more than max_spread_mib.

    ``ranks``: one dict per rank with "rank", "host" and "increase" ({stage: {quantity: MiB or None}}).
    Each rank is compared with the median of the others, so that with two ranks the outlier does not
    pull the reference towards itself.
    """
    found = []
    stages = ranks[0]["increase"].keys() if ranks else []
    for stage in stages:
        for key in ("rss_mib", "device_used_mib"):
            measured = [(r, r["increase"][stage][key]) for r in ranks if r["increase"][stage][key] is not None]
            for r, value in measured:
                others = [v for q, v in measured if q is not r]
                if not others:
                    continue
                excess = value - statistics.median(others)
                if excess > max_spread_mib:
                    what = "host memory (RSS)" if key == "rss_mib" else "device memory used"
                    found.append(
                        f"rank {r['rank']} on host {r['host']}: {what} grew {value:.0f} MiB at '{stage}', "
                        f"{excess:.0f} MiB more than the median of the other ranks"
                    )
    return found


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser (does not import torch)."""
    parser = argparse.ArgumentParser(
        description="Per-rank memory overhead of the CUDA context, the process group and NCCL communicators.",
        epilog="Launch with torchrun, e.g. torchrun --standalone --nproc_per_node=8 memory_overhead.py",
    )
    parser.add_argument(
        "--backend", choices=("nccl", "gloo"), default=None, help="default: nccl if CUDA is available, else gloo"
    )
    parser.add_argument("--timeout", type=float, default=300.0, help="process-group timeout in s (default 300)")
    parser.add_argument(
        "--max-spread-mib",
        type=float,
        default=512.0,
        help="flag a rank whose increase at a stage exceeds the median rank's by more than this (default 512)",
    )
    parser.add_argument("--json", action="store_true", help="rank 0 prints one JSON object instead of the table")
    parser.add_argument(
        "--simulate-extra-mib",
        type=int,
        default=0,
        metavar="MIB",
        help="testing aid: --simulate-rank holds MIB more host memory from the process-group stage on",
    )
    parser.add_argument("--simulate-rank", type=int, default=1, help="the rank of --simulate-extra-mib (default 1)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.timeout <= 0 or args.max_spread_mib < 0 or args.simulate_extra_mib < 0:
        parser.error("--timeout must be > 0, --max-spread-mib and --simulate-extra-mib >= 0")

    import torch
    import torch.distributed as dist

    backend = args.backend or ("nccl" if torch.cuda.is_available() else "gloo")
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    host = socket.gethostname()
    device = torch.device("cpu")
    stages = {"python+torch": snapshot(device)}
    if backend == "nccl":
        if not torch.cuda.is_available():
            print(f"error: host={host}: --backend nccl needs CUDA, but no CUDA device is available", file=sys.stderr)
            return EXIT_USAGE
        count = torch.cuda.device_count()
        # One GPU visible: a task bound to its GPU; otherwise the node's GPUs, and this rank's is LOCAL_RANK.
        index = 0 if count == 1 else local_rank
        if index >= count:
            print(f"error: host={host}: LOCAL_RANK={local_rank} but {count} CUDA device(s) visible", file=sys.stderr)
            return EXIT_USAGE
        device = torch.device("cuda", index)
        torch.cuda.set_device(device)
        torch.ones(1, device=device)
        stages["cuda context"] = snapshot(device)
    kwargs = {"backend": backend, "timeout": datetime.timedelta(seconds=args.timeout)}
    if backend == "nccl":
        kwargs["device_id"] = device
    if "WORLD_SIZE" not in os.environ:
        kwargs.update(store=dist.HashStore(), rank=0, world_size=1)
    ballast = None
    try:
        dist.init_process_group(**kwargs)
        rank, world_size = dist.get_rank(), dist.get_world_size()
        if args.simulate_extra_mib and rank == args.simulate_rank:
            ballast = bytearray(os.urandom(1024)) * (args.simulate_extra_mib * 1024)  # touched: counts in RSS
        stages["process group"] = snapshot(device)
        one = torch.ones(1, device=device)
        dist.all_reduce(one)
        dist.barrier()
        stages["first collective"] = snapshot(device)
        group = dist.new_group(backend=backend)
        dist.all_reduce(one, group=group)
        stages["second group"] = snapshot(device)
        record = {"rank": rank, "local_rank": local_rank, "host": host, "device": str(device), "stages": stages}
        record["increase"] = increases(stages)
        records = [None] * world_size if rank == 0 else None
        dist.gather_object(record, records, dst=0)
    except (RuntimeError, ValueError) as exc:  # ValueError: WORLD_SIZE set but not RANK or MASTER_ADDR
        print(f"error: host={host} local_rank={local_rank}: {exc}", file=sys.stderr)
        return EXIT_FAIL
    del ballast
    code = EXIT_OK
    if rank == 0:
        flagged = outliers(records, args.max_spread_mib)
        if args.json:
            summary = {"world_size": world_size, "backend": backend, "stages": list(stages), "ranks": records}
            print(json.dumps({**summary, "max_spread_mib": args.max_spread_mib, "outliers": flagged}))
        else:
            print(f"# memory_overhead: world_size={world_size} backend={backend} torch={torch.__version__}")
            print("# MiB = 2^20 bytes; +x = increase over the previous stage; device = GPU used memory (all processes)")
            print(f"{'rank':>5} {'host':<16} {'stage':<17} {'RSS':>9} {'+RSS':>8} {'device':>9} {'+device':>8}")
            for r in records:
                for stage, values in r["stages"].items():
                    inc = r["increase"][stage]

                    def fmt(value, width, sign=""):
                        return f"{'-':>{width}}" if value is None else f"{value:>{sign}{width}.0f}"

                    print(
                        f"{r['rank']:>5} {r['host'][:16]:<16} {stage:<17} {fmt(values['rss_mib'], 9)} "
                        f"{fmt(inc['rss_mib'], 8, '+')} {fmt(values['device_used_mib'], 9)} "
                        f"{fmt(inc['device_used_mib'], 8, '+')}"
                    )
        for line in flagged:
            print(f"FAIL: {line}", file=sys.stderr)
        if flagged:
            code = EXIT_FAIL
    verdict = torch.tensor([code], dtype=torch.int64, device=device)
    dist.broadcast(verdict, src=0)
    dist.destroy_process_group()
    return int(verdict.item())


if __name__ == "__main__":
    sys.exit(main())
