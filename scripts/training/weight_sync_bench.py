#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Trainer-to-inference weight sync for RL: broadcast per tensor or in packed buckets, verify, time it.

Purpose
    In RL post-training the trainer must push its new weights to the inference (rollout) engines
    after every update.  This script reproduces the common NCCL pattern on any cluster: rank 0
    plays the trainer, every other rank an inference worker, and each round the trainer changes
    its weights and broadcasts them.  --mode per-tensor issues one broadcast per parameter (the
    simple pattern several RL frameworks started with); --mode bucketed packs parameters into
    byte buffers of --bucket-mb and broadcasts those (the packed pattern, with far fewer calls).
    Every receiver checks a fingerprint of what it got against the trainer's, so a lost or
    reordered tensor fails the run.  The report gives bytes, broadcast calls, seconds and GB/s per
    round, which is the number to put into the sync-time arithmetic of the RL infrastructure chapter.

Model shapes
    A Llama-like tensor list: an embedding and an output head of --vocab x h, and per layer the q,
    k, v, o projections (k and v of --kv-dim rows, for grouped-query attention), three h x F MLP
    matrices and two norms.  --layers 80 --hidden 8192 --ffn 28672 --vocab 128256 --kv-dim 1024
    gives 70.55 billion parameters in 723 tensors (Llama 3 70B's shapes); on a real GPU use a few
    layers of those widths and scale the time by the bytes (it is linear once buckets are large).

Usage
    torchrun --standalone --nproc_per_node=8 weight_sync_bench.py --layers 4 --hidden 8192 --ffn 28672 \
        --kv-dim 1024 --vocab 128256 --dtype bf16 --mode bucketed --bucket-mb 1024
    torchrun --standalone --nproc_per_node=2 weight_sync_bench.py --backend gloo --mode per-tensor  # CPU test

Requirements
    Python 3.9+, PyTorch with torch.distributed; launch with torchrun and at least 2 processes.
    With --backend nccl each rank uses CUDA device LOCAL_RANK (0 when it sees one GPU).

Exit codes
    0 every receiver matched the trainer in every round; 1 a mismatch or failed collective;
    2 usage error (bad sizes, one process only, or --backend nccl without a usable CUDA device).

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
import time

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser (does not import torch)."""
    p = argparse.ArgumentParser(
        description="Rank 0 broadcasts model weights to all other ranks per tensor or in buckets; "
        "receivers verify a fingerprint; rank 0 reports seconds and GB/s per sync round.",
        epilog="GB = 1e9 bytes; MB for --bucket-mb = 2**20 bytes.  Launch with torchrun, 2 or more processes.",
    )
    p.add_argument("--layers", type=int, default=2, help="transformer layers (default 2)")
    p.add_argument("--hidden", type=int, default=256, help="hidden size h (default 256)")
    p.add_argument("--ffn", type=int, default=688, help="MLP intermediate size F (default 688)")
    p.add_argument("--vocab", type=int, default=1000, help="embedding rows (default 1000)")
    p.add_argument("--kv-dim", type=int, default=None, help="k and v projection rows (default: --hidden)")
    p.add_argument("--dtype", choices=sorted(DTYPES), default=None, help="weights dtype (default bf16 on CUDA, fp32)")
    p.add_argument("--mode", choices=("per-tensor", "bucketed"), default="bucketed", help="default bucketed")
    p.add_argument("--bucket-mb", type=float, default=64.0, help="bucket size in MiB for --mode bucketed")
    p.add_argument("--rounds", type=int, default=3, help="sync rounds, each after a weight change (default 3)")
    p.add_argument("--backend", choices=("nccl", "gloo"), default=None, help="default: nccl with CUDA, else gloo")
    p.add_argument("--timeout", type=float, default=600.0, help="process-group timeout in seconds (default 600)")
    p.add_argument("--json", action="store_true", help="rank 0 prints one JSON object instead of the table")
    p.add_argument(
        "--corrupt-rank",
        type=int,
        default=None,
        metavar="RANK",
        help="testing aid: receiver RANK changes one byte after the last round, which must be reported",
    )
    return p


def model_shapes(layers: int, hidden: int, ffn: int, vocab: int, kv_dim: int | None = None) -> list[tuple[int, ...]]:
    """Shapes of a Llama-like parameter list (embedding, per-layer tensors, final norm, untied output head).

    Per layer: q and o (h x h), k and v (kv_dim x h; kv_dim defaults to h), gate and up (F x h),
    down (h x F) and two norms (h).
    """
    kv = kv_dim or hidden
    shapes: list[tuple[int, ...]] = [(vocab, hidden)]
    for _ in range(layers):
        shapes += [(hidden, hidden), (kv, hidden), (kv, hidden), (hidden, hidden)]
        shapes += [(ffn, hidden), (ffn, hidden), (hidden, ffn), (hidden,), (hidden,)]
    return shapes + [(hidden,), (vocab, hidden)]


def plan_buckets(nbytes: list[int], bucket_bytes: int) -> list[list[int]]:
    """Greedy packing of tensor indices, in order, into buckets of at most bucket_bytes.

    A tensor larger than a bucket gets a bucket of its own.  Returns a list of index lists.
    """
    buckets: list[list[int]] = []
    size = 0
    for i, n in enumerate(nbytes):
        if not buckets or size + n > bucket_bytes:
            buckets.append([])
            size = 0
        buckets[-1].append(i)
        size += n
    return buckets


def fingerprint(tensors) -> list[int]:
    """Order-sensitive integer fingerprint of tensors' raw bytes: [sum of the bytes, tensor-position-weighted sum].

    Computed on the tensors' device in int64; any single changed byte changes the first entry.
    """
    import torch

    total, weighted = 0, 0
    for i, t in enumerate(tensors):
        words = t.detach().reshape(-1).view(torch.uint8)
        s = sum(int(chunk.to(torch.int64).sum()) for chunk in words.split(2**24))  # chunks bound the int64 copy
        total += s
        weighted = (weighted + s * (i + 1)) % (2**61 - 1)
    return [total, weighted]


def sync_weights(tensors, mode: str, buckets, device) -> int:
    """Broadcast tensors from rank 0 to every rank in place; return the number of broadcast calls.

    per-tensor: one broadcast per tensor (of its byte view).  bucketed: pack each bucket into a uint8
    buffer on the sender, broadcast it, unpack on the receivers.
    """
    import torch
    import torch.distributed as dist

    if mode == "per-tensor":
        for t in tensors:
            dist.broadcast(t.view(-1).view(torch.uint8), src=0)
        return len(tensors)
    sender = dist.get_rank() == 0
    for group in buckets:
        views = [tensors[i].view(-1).view(torch.uint8) for i in group]
        if sender:
            buf = torch.cat(views)
        else:
            buf = torch.empty(sum(v.numel() for v in views), dtype=torch.uint8, device=device)
        dist.broadcast(buf, src=0)
        if not sender:
            offset = 0
            for v in views:
                v.copy_(buf[offset : offset + v.numel()])
                offset += v.numel()
    return len(buckets)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    for name in ("layers", "hidden", "ffn", "vocab", "rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be >= 1")
    if args.bucket_mb <= 0 or args.timeout <= 0 or (args.kv_dim is not None and args.kv_dim < 1):
        parser.error("--bucket-mb and --timeout must be > 0, --kv-dim >= 1")
    if int(os.environ.get("WORLD_SIZE", "1")) < 2:
        print("error: run under torchrun with at least 2 processes (1 trainer + receivers)", file=sys.stderr)
        return EXIT_USAGE

    import torch
    import torch.distributed as dist

    backend = args.backend or ("nccl" if torch.cuda.is_available() else "gloo")
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    host = socket.gethostname()
    if backend == "nccl":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        # One GPU visible: a task bound to its GPU (srun --gpus-per-task=1), device 0 whatever its LOCAL_RANK;
        # otherwise the node's GPUs, and this rank's is LOCAL_RANK.
        index = 0 if count == 1 else local_rank
        if index >= count:
            print(
                f"error: host={host}: --backend nccl needs CUDA device {index} (LOCAL_RANK={local_rank}), "
                f"{count} visible",
                file=sys.stderr,
            )
            return EXIT_USAGE
        device = torch.device("cuda", index)
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    dtype = getattr(torch, DTYPES[args.dtype or ("bf16" if device.type == "cuda" else "fp32")])
    kwargs = {"backend": backend, "timeout": datetime.timedelta(seconds=args.timeout)}
    if backend == "nccl":
        kwargs["device_id"] = device
    try:
        dist.init_process_group(**kwargs)
    except (RuntimeError, ValueError) as exc:
        print(f"error: host={host}: init_process_group failed: {exc}", file=sys.stderr)
        return EXIT_FAIL
    rank, world = dist.get_rank(), dist.get_world_size()
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)

    shapes = model_shapes(args.layers, args.hidden, args.ffn, args.vocab, args.kv_dim)
    gen = torch.Generator().manual_seed(1234)
    if rank == 0:
        tensors = [(torch.randn(s, generator=gen) * 0.02).to(dtype).to(device) for s in shapes]
    else:
        tensors = [torch.zeros(s, dtype=dtype, device=device) for s in shapes]
    nbytes = [t.numel() * t.element_size() for t in tensors]
    buckets = plan_buckets(nbytes, int(args.bucket_mb * 2**20))

    try:
        times, ok_rounds = [], []  # ok_rounds: per round, the ranks that mismatched
        for r in range(args.rounds):
            if rank == 0:
                for t in tensors:  # "an optimizer step": every weight changes
                    t.add_(0.001 * (r + 1))
            sync()
            dist.barrier()
            t0 = time.perf_counter()
            calls = sync_weights(tensors, args.mode, buckets, device)
            if rank == args.corrupt_rank and rank != 0 and r == args.rounds - 1:
                tensors[-1].view(-1).view(torch.uint8)[0] ^= 1
            sync()
            dist.barrier()  # the round ends when the slowest receiver has its weights
            times.append(time.perf_counter() - t0)
            fp = torch.tensor(fingerprint(tensors), dtype=torch.int64, device=device)
            want = fp.clone()
            dist.broadcast(want, src=0)
            mine = torch.tensor([int(torch.equal(fp, want))], dtype=torch.int64, device=device)
            flags = [torch.zeros_like(mine) for _ in range(world)]
            dist.all_gather(flags, mine)
            ok_rounds.append([i for i, f in enumerate(flags) if not f.item()])
        total = sum(nbytes)
        report = {
            "world_size": world,
            "receivers": world - 1,
            "backend": backend,
            "dtype": str(dtype).removeprefix("torch."),
            "mode": args.mode,
            "tensors": len(tensors),
            "parameters": sum(t.numel() for t in tensors),
            "bytes": total,
            "broadcast_calls": calls,
            "bucket_mib": args.bucket_mb if args.mode == "bucketed" else None,
            "seconds_per_round": times,
            "median_s": statistics.median(times),
            "algbw_gbps": total / statistics.median(times) / 1e9,
            "mismatched_ranks": sorted({i for bad in ok_rounds for i in bad}),
            "ok": not any(ok_rounds),
        }
        if rank == 0:
            if args.json:
                print(json.dumps(report))
            else:
                print(
                    f"# {world - 1} receiver(s), {backend}, {report['dtype']}, {report['parameters']:,} parameters "
                    f"in {len(tensors)} tensors = {total / 1e9:.3f} GB"
                )
                print(f"mode {args.mode}: {calls} broadcast calls per round")
                print("round seconds: " + ", ".join(f"{t:.4f}" for t in times))
                print(f"median {report['median_s']:.4f} s = {report['algbw_gbps']:.3f} GB/s (bytes / time)")
                if report["ok"]:
                    print("OK: every receiver matched the trainer in every round")
                else:
                    print(f"FAIL: receiver rank(s) {report['mismatched_ranks']} got different weights")
        code = EXIT_OK if report["ok"] else EXIT_FAIL
    except RuntimeError as exc:
        print(f"error: rank {rank} on host {host}: collective failed: {exc}", file=sys.stderr, flush=True)
        return EXIT_FAIL
    dist.destroy_process_group()
    return code


if __name__ == "__main__":
    sys.exit(main())
