#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""MoE dispatch and combine with torch.distributed all_to_all_single: check the result, time both exchanges.

Purpose
    The plain PyTorch expert-parallel exchange, end to end: every rank routes its tokens to the
    top-k of E experts (spread evenly over the ranks), exchanges the per-destination counts,
    dispatches the tokens with an uneven all_to_all_single, applies each expert, combines the
    results back with a second all_to_all_single and sums them with the router weights.  The
    output is compared with a local computation that needs no communication, so a wrong split,
    a lost token or a corrupted transfer fails the run.  The same run times the count exchange,
    dispatch and combine on each rank and reports received tokens (load imbalance) and the
    bytes that left each rank, which is what to compare with scripts/calc/moe_traffic.py
    (mode pairs) and with an optimised library such as DeepEP.

How
    Routing is seeded: --skew 0 picks experts uniformly; --skew s > 0 makes expert e popular in
    proportion to (e+1)^-s (Gumbel top-k), to reproduce the imbalance of a poorly balanced router.
    Expert e multiplies its input by 1 + (e+1)/E, so every expert's output is known everywhere.

Usage
    torchrun --standalone --nproc_per_node=8 moe_alltoall.py --tokens 4096 --hidden 7168 --topk 8 --experts 256
    torchrun --standalone --nproc_per_node=8 moe_alltoall.py --skew 1.2 --json     # a hot-expert router
    torchrun --standalone --nproc_per_node=2 moe_alltoall.py --backend gloo        # CPU smoke test

Requirements
    Python 3.9+, PyTorch with torch.distributed.  Launch with torchrun; with --backend nccl each rank
    uses CUDA device LOCAL_RANK (0 when it sees one GPU).  --experts must be divisible by the world size.

Exit codes
    0 every rank's combined output matched the reference; 1 a mismatch or a failed collective;
    2 usage error (bad sizes, or --backend nccl without a usable CUDA device).

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
        description="Route tokens to top-k experts, dispatch and combine them with all_to_all_single, "
        "check the result and time both exchanges.",
        epilog="Launch with torchrun.  MB = 1e6 bytes; times are medians over --iters.",
    )
    p.add_argument("--tokens", type=int, default=256, help="tokens per rank (default 256)")
    p.add_argument("--hidden", type=int, default=128, help="hidden size (default 128)")
    p.add_argument("--topk", type=int, default=2, help="experts per token (default 2)")
    p.add_argument("--experts", type=int, default=8, help="experts in total, divisible by world size (default 8)")
    p.add_argument("--skew", type=float, default=0.0, help="router skew: 0 uniform, >0 hot experts (default 0)")
    p.add_argument("--dtype", choices=sorted(DTYPES), default=None, help="token dtype (default bf16 on CUDA, fp32)")
    p.add_argument("--iters", type=int, default=5, help="timed iterations (default 5)")
    p.add_argument("--warmup", type=int, default=2, help="untimed iterations first (default 2)")
    p.add_argument("--seed", type=int, default=0, help="routing and data seed (default 0)")
    p.add_argument("--backend", choices=("nccl", "gloo"), default=None, help="default: nccl with CUDA, else gloo")
    p.add_argument("--timeout", type=float, default=300.0, help="process-group timeout in seconds (default 300)")
    p.add_argument("--json", action="store_true", help="rank 0 prints one JSON object instead of the table")
    p.add_argument(
        "--corrupt-rank",
        type=int,
        default=None,
        metavar="RANK",
        help="testing aid: rank RANK alters one received token, which its sender must report",
    )
    return p


def route(tokens: int, experts: int, topk: int, skew: float, generator):
    """Return (expert_ids [tokens, topk] int64, weights [tokens, topk] float32) for a seeded router.

    Experts are distinct per token; weights are a softmax over the chosen experts' random logits.
    """
    import torch

    noise = -torch.log(-torch.log(torch.rand(tokens, experts, generator=generator).clamp_min(1e-20)))
    logits = noise - skew * torch.log(torch.arange(1, experts + 1, dtype=torch.float32))
    ids = logits.topk(topk, dim=1).indices
    weights = torch.softmax(torch.randn(tokens, topk, generator=generator), dim=1)
    return ids, weights


def expert_scale(experts: int):
    """Per-expert multiplier 1 + (e+1)/E (float32 [experts]): expert e's output is scale[e] * input."""
    import torch

    return 1.0 + torch.arange(1, experts + 1, dtype=torch.float32) / experts


def moe_layer(x, ids, weights, scale, world: int, rank: int, timings: dict | None = None, corrupt: bool = False):
    """Dispatch x [T, h] to the ranks owning its experts, apply them, combine; return the output [T, h].

    ids/weights: [T, k] on x's device; scale: [E] on x's device.  Experts are owned in contiguous
    blocks of E / world.  timings, if given, receives seconds for 'layout', 'dispatch', 'combine' and
    the counts 'sent_tokens', 'remote_sent_tokens', 'recv_tokens'.  corrupt=True alters the first
    received token (a testing aid).
    """
    import torch
    import torch.distributed as dist

    sync = torch.cuda.synchronize if x.is_cuda else (lambda: None)
    t, k = ids.shape
    per_rank = scale.numel() // world
    flat_ids = ids.reshape(-1)
    dest = flat_ids // per_rank
    order = torch.argsort(dest, stable=True)
    token_of_pair = torch.arange(t, device=x.device).repeat_interleave(k)
    send_x = x[token_of_pair[order]].contiguous()
    send_ids = flat_ids[order].contiguous()
    send_counts = torch.bincount(dest, minlength=world)

    sync()
    t0 = time.perf_counter()
    recv_counts = torch.empty_like(send_counts)
    dist.all_to_all_single(recv_counts, send_counts)
    s_list, r_list = send_counts.tolist(), recv_counts.tolist()  # the host needs the sizes: a sync point
    t1 = time.perf_counter()
    recv_x = x.new_empty((sum(r_list), x.shape[1]))
    dist.all_to_all_single(recv_x, send_x, output_split_sizes=r_list, input_split_sizes=s_list)
    sync()
    t2 = time.perf_counter()
    recv_ids = send_ids.new_empty(sum(r_list))
    dist.all_to_all_single(recv_ids, send_ids, output_split_sizes=r_list, input_split_sizes=s_list)
    if corrupt and recv_x.shape[0]:
        recv_x[0] += 1.0
    y = recv_x * scale[recv_ids].to(x.dtype).unsqueeze(1)  # the "experts"
    sync()
    t3 = time.perf_counter()
    back = torch.empty_like(send_x)
    dist.all_to_all_single(back, y, output_split_sizes=s_list, input_split_sizes=r_list)
    sync()
    t4 = time.perf_counter()
    pairs = torch.empty_like(back)
    pairs[order] = back
    out = (pairs.view(t, k, -1).float() * weights.unsqueeze(-1)).sum(dim=1)
    if timings is not None:
        timings.update(
            layout=t1 - t0,
            dispatch=t2 - t1,
            combine=t4 - t3,
            sent_tokens=sum(s_list),
            remote_sent_tokens=sum(s_list) - s_list[rank],
            recv_tokens=sum(r_list),
        )
    return out


def reference(x, ids, weights, scale):
    """The layer computed locally: sum_j weights[t, j] * scale[ids[t, j]] * x[t], in float32, [T, h]."""
    return (x.float().unsqueeze(1) * (scale[ids] * weights).unsqueeze(-1)).sum(dim=1)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    for name in ("tokens", "hidden", "topk", "experts", "iters"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be >= 1")
    if args.warmup < 0 or args.skew < 0 or args.timeout <= 0:
        parser.error("--warmup and --skew must be >= 0, --timeout > 0")
    if args.topk > args.experts:
        parser.error("--topk cannot exceed --experts")

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
    world_env = int(os.environ.get("WORLD_SIZE", "1"))
    if args.experts % world_env:
        print(f"error: --experts {args.experts} is not divisible by the world size {world_env}", file=sys.stderr)
        return EXIT_USAGE
    dtype = getattr(torch, DTYPES[args.dtype or ("bf16" if device.type == "cuda" else "fp32")])

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

    gen = torch.Generator().manual_seed(args.seed * 100003 + rank)
    x = torch.randn(args.tokens, args.hidden, generator=gen).to(dtype)
    ids, weights = route(args.tokens, args.experts, args.topk, args.skew, gen)
    scale = expert_scale(args.experts)
    want = reference(x, ids, weights, scale)
    x, ids, weights, scale = (v.to(device) for v in (x, ids, weights, scale))

    try:
        runs = []
        for i in range(args.warmup + args.iters):
            dist.barrier()
            timing: dict = {}
            got = moe_layer(x, ids, weights, scale, world, rank, timing, corrupt=rank == args.corrupt_rank)
            if i >= args.warmup:
                runs.append(timing)
        tol = 1e-5 if dtype == torch.float32 else 2e-2
        err = float((got.cpu() - want).abs().max() / want.abs().max().clamp_min(1e-12))
        elem = torch.empty((), dtype=dtype).element_size()
        mine = {
            "rank": rank,
            "host": host,
            "recv_tokens": runs[-1]["recv_tokens"],
            "remote_sent_mb": runs[-1]["remote_sent_tokens"] * args.hidden * elem / 1e6,
            "layout_ms": statistics.median(r["layout"] for r in runs) * 1e3,
            "dispatch_ms": statistics.median(r["dispatch"] for r in runs) * 1e3,
            "combine_ms": statistics.median(r["combine"] for r in runs) * 1e3,
            "max_rel_error": err,
            "ok": err <= tol,
        }
        records = [None] * world if rank == 0 else None
        dist.gather_object(mine, records, dst=0)
        verdict = torch.tensor([EXIT_OK], dtype=torch.int64, device=device)
        if rank == 0:
            recv = [r["recv_tokens"] for r in records]
            imbalance = max(recv) / (sum(recv) / world)
            summary = {
                "world_size": world,
                "backend": backend,
                "dtype": str(dtype).removeprefix("torch."),
                "tokens_per_rank": args.tokens,
                "hidden": args.hidden,
                "topk": args.topk,
                "experts": args.experts,
                "skew": args.skew,
                "imbalance": imbalance,
                "ok": all(r["ok"] for r in records),
                "ranks": records,
            }
            if not summary["ok"]:
                verdict.fill_(EXIT_FAIL)
            if args.json:
                print(json.dumps(summary))
            else:
                print(
                    f"# {world} ranks ({backend}, {summary['dtype']}), {args.tokens} tokens/rank, h={args.hidden}, "
                    f"top-{args.topk} of {args.experts} experts, skew={args.skew:g}"
                )
                print(f"{'rank':>4} {'recv tokens':>11} {'remote MB':>10} {'dispatch ms':>12} {'combine ms':>11}")
                for r in records:
                    print(
                        f"{r['rank']:>4} {r['recv_tokens']:>11} {r['remote_sent_mb']:>10.2f} "
                        f"{r['dispatch_ms']:>12.3f} {r['combine_ms']:>11.3f}"
                    )
                print(f"load imbalance (max / mean received tokens): {imbalance:.2f}")
                bad = [r for r in records if not r["ok"]]
                for r in bad:
                    print(f"FAIL: rank {r['rank']} on {r['host']}: relative error {r['max_rel_error']:.2e}")
                if not bad:
                    print("OK: combined output matches the local reference on every rank")
        dist.broadcast(verdict, src=0)
        code = int(verdict.item())
    except RuntimeError as exc:
        print(f"error: rank {rank} on host {host}: collective failed: {exc}", file=sys.stderr, flush=True)
        return EXIT_FAIL
    dist.destroy_process_group()
    return code


if __name__ == "__main__":
    sys.exit(main())
