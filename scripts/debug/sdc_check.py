#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Silent-data-corruption checks across ranks: a known-answer matmul test and replica parameter fingerprints.

Purpose
    A GPU with silent data corruption computes wrong numbers and reports nothing.  Two cheap checks
    catch it by comparing results that must be identical:
      matmul  every rank runs the same seeded chain of matmuls and hashes the output bits.  Identical
              GPU models with the same software give bit-identical results, so a rank that disagrees
              with the majority of its GPU model is suspect; --reference also compares each rank
              with a float64 CPU result, which catches a fault that every rank shares.
      params  data-parallel replicas must hold identical parameters after every optimizer step.
              replica_fingerprints() computes an integer fingerprint of every parameter's bits on the
              device and compares it across the replicas of a group: a flipped bit on one replica
              shows up at once, long before the loss curve notices.  The demo builds the same seeded
              model on every rank; --flip-rank R flips one bit on rank R to show the detection.
    The verdict names every suspect rank with its host and device; exit code 1 if there is one.

Usage
    torchrun --standalone --nproc_per_node=8 sdc_check.py --check matmul --size 8192 --iters 20
    torchrun --standalone --nproc_per_node=8 sdc_check.py --check matmul --reference --size 2048
    torchrun --standalone --nproc_per_node=3 sdc_check.py --backend gloo --check params --flip-rank 1

In a training loop (every replica of a data-parallel group holds the same parameters)
    from sdc_check import replica_fingerprints
    bad = replica_fingerprints(model.parameters(), group=dp_group)   # a collective on that group
    if bad: ...  # drain the hosts of those ranks, roll back to the last good checkpoint

Requirements
    Python 3.9+, PyTorch with torch.distributed; launch with torchrun (3 or more ranks let a
    majority name the odd one out; with 2 ranks a mismatch is reported for both).

Exit codes
    0 no suspect rank; 1 a suspect rank or a failed collective; 2 usage error.

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import collections
import datetime
import hashlib
import json
import os
import socket
import sys

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}
PRIME = 2**61 - 1


def fingerprint(tensor) -> tuple[int, int]:
    """Integer fingerprint of a tensor's raw bytes: (sum of bytes, position-weighted sum mod 2**61-1).

    Computed on the tensor's device in chunks (no full int64 copy).  Changing any single byte changes
    the first value; swapping two bytes changes the second.
    """
    import torch

    data = tensor.detach().reshape(-1).view(torch.uint8)
    total, weighted, offset = 0, 0, 0
    for chunk in data.split(2**24):
        words = chunk.to(torch.int64)
        pos = torch.arange(offset + 1, offset + 1 + words.numel(), device=words.device, dtype=torch.int64) % 65521
        total += int(words.sum())
        weighted = (weighted + int((words * pos).sum())) % PRIME
        offset += words.numel()
    return total, weighted


def odd_ones_out(values: list, labels: list | None = None) -> list[int]:
    """Indices whose value differs from the most common value within its label (all labels equal if None).

    With a tie for the most common value (e.g. two ranks that disagree) every member of the group is
    returned, because the data cannot tell which one is right.
    """
    labels = labels or [None] * len(values)
    suspects: list[int] = []
    for label in dict.fromkeys(labels):
        idx = [i for i, lab in enumerate(labels) if lab == label]
        counts = collections.Counter(values[i] for i in idx).most_common()
        if len(counts) == 1:
            continue
        if counts[0][1] == counts[1][1]:
            suspects += idx
        else:
            suspects += [i for i in idx if values[i] != counts[0][0]]
    return sorted(suspects)


def replica_fingerprints(tensors, group=None) -> list[int]:
    """Compare fingerprints of ``tensors`` across all ranks of ``group``; return the suspect ranks (a collective).

    Every rank of the group must hold the same tensors (data-parallel replicas, or the same shard in
    each replica of a sharded layout).  Returns group ranks whose fingerprint is not the majority one.
    """
    import torch.distributed as dist

    digest = hashlib.sha256()
    for t in tensors:
        digest.update(repr(fingerprint(t)).encode())
    mine = digest.hexdigest()
    everyone = [None] * dist.get_world_size(group)
    dist.all_gather_object(everyone, mine, group=group)
    return odd_ones_out(everyone)


def matmul_chain(size: int, iters: int, dtype, device, seed: int = 0):
    """The known-answer workload: x = tanh(x @ w / sqrt(size)) repeated iters times from seeded inputs."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(size, size, generator=gen).to(dtype).to(device)
    w = torch.randn(size, size, generator=gen).to(dtype).to(device)
    for _ in range(iters):
        x = torch.tanh(x @ w / size**0.5)
    return x


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser (does not import torch)."""
    p = argparse.ArgumentParser(
        description="Cross-rank silent-data-corruption checks: known-answer matmul, replica parameter fingerprints.",
        epilog="Launch with torchrun; 3 or more ranks let the majority name the odd one out.",
    )
    p.add_argument("--check", choices=("matmul", "params"), default="matmul", help="which check (default matmul)")
    p.add_argument("--size", type=int, default=256, help="matmul size n (n x n, default 256)")
    p.add_argument("--iters", type=int, default=8, help="matmuls in the chain (default 8)")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="fp32", help="matmul dtype (default fp32)")
    p.add_argument("--reference", action="store_true", help="matmul: also compare with a float64 CPU result")
    p.add_argument("--rtol", type=float, default=None, help="tolerance for --reference (default by dtype)")
    p.add_argument("--layers", type=int, default=4, help="params: layers of the demo model (default 4)")
    p.add_argument("--hidden", type=int, default=256, help="params: width of the demo model (default 256)")
    p.add_argument("--flip-rank", type=int, default=None, help="testing aid: this rank flips one bit")
    p.add_argument("--backend", choices=("nccl", "gloo"), default=None, help="default: nccl with CUDA, else gloo")
    p.add_argument("--timeout", type=float, default=300.0, help="process-group timeout in seconds (default 300)")
    p.add_argument("--json", action="store_true", help="rank 0 prints one JSON object instead of lines")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if min(args.size, args.iters, args.layers, args.hidden) < 1 or args.timeout <= 0:
        parser.error("--size, --iters, --layers, --hidden must be >= 1 and --timeout > 0")

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
        device_name = torch.cuda.get_device_name(device)
    else:
        device, device_name = torch.device("cpu"), "cpu"
    kwargs = {"backend": backend, "timeout": datetime.timedelta(seconds=args.timeout)}
    if backend == "nccl":
        kwargs["device_id"] = device
    try:
        if "WORLD_SIZE" in os.environ:
            dist.init_process_group(**kwargs)
        else:
            dist.init_process_group(store=dist.HashStore(), rank=0, world_size=1, **kwargs)
    except (RuntimeError, ValueError) as exc:
        print(f"error: host={host}: init_process_group failed: {exc}", file=sys.stderr)
        return EXIT_FAIL
    rank, world = dist.get_rank(), dist.get_world_size()
    dtype = getattr(torch, DTYPES[args.dtype])
    try:
        if args.check == "matmul":
            torch.backends.cuda.matmul.allow_tf32 = False  # the same math on every GPU generation
            out = matmul_chain(args.size, args.iters, dtype, device)
            if rank == args.flip_rank:
                out.reshape(-1).view(torch.uint8)[0] ^= 1  # the last bit of element 0: one ulp off
            value = hashlib.sha256(repr(fingerprint(out)).encode()).hexdigest()[:16]
            rel_err = None
            if args.reference:
                ref = matmul_chain(args.size, args.iters, torch.float64, torch.device("cpu"))
                rel_err = float((out.double().cpu() - ref).abs().max() / ref.abs().max())
            mine = {"rank": rank, "host": host, "device": device_name, "value": value, "rel_err": rel_err}
            records = [None] * world
            dist.all_gather_object(records, mine)
            suspects = odd_ones_out([r["value"] for r in records], [r["device"] for r in records])
            rtol = args.rtol if args.rtol is not None else {"fp32": 1e-3, "bf16": 5e-2, "fp16": 1e-2}[args.dtype]
            if args.reference:
                suspects = sorted(set(suspects) | {r["rank"] for r in records if r["rel_err"] > rtol})
        else:
            gen = torch.Generator().manual_seed(0)  # the same "replica" on every rank
            params = [torch.randn(args.hidden, args.hidden, generator=gen).to(device) for _ in range(args.layers)]
            if rank == args.flip_rank:
                params[-1].view(-1).view(torch.int32)[7] ^= 1 << 3  # a single flipped bit
            suspects = replica_fingerprints(params)
            records = [None] * world
            dist.all_gather_object(records, {"rank": rank, "host": host, "device": device_name})
        if rank == 0:
            bad = [r for r in records if r["rank"] in suspects]
            if args.json:
                verdict = {"check": args.check, "world_size": world, "suspects": bad, "ok": not bad}
                print(json.dumps(verdict), flush=True)
            else:
                for r in bad:
                    print(f"SUSPECT: rank {r['rank']} on host {r['host']} ({r['device']}) disagrees", flush=True)
                if not bad:
                    print(f"OK: {args.check} check agrees on all {world} ranks", flush=True)
        dist.barrier()  # no rank exits (and makes torchrun stop the others) before rank 0 has printed
    except RuntimeError as exc:
        print(f"error: rank {rank} on host {host}: collective failed: {exc}", file=sys.stderr, flush=True)
        return EXIT_FAIL
    dist.destroy_process_group()
    return EXIT_FAIL if suspects else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
