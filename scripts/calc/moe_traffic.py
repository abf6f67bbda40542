#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
r"""Per-GPU MoE dispatch/combine traffic and time for expert parallelism, split into NVLink and network parts.

Purpose
    How many bytes does each GPU send per MoE layer when tokens are routed to their top-k experts
    across an expert-parallel (EP) group, how much of it leaves the node, and how long does that
    take at a given NIC and NVLink bandwidth?  Compare the answer with the expert compute time to
    see whether the all-to-all can hide behind compute, and with a measurement
    (scripts/network/moe_alltoall.py, or DeepEP's tests) to see how far the fabric is from ideal.

Model (uniform routing, experts spread evenly over ranks and nodes)
    T tokens per GPU, hidden size h, top-k of E experts, EP ranks, G GPUs per node, N = EP / G nodes.
    A given group of g experts is hit by a token with probability 1 - C(E-g, k) / C(E, k).
    With node-limited routing (--max-nodes M, as in DeepSeek-V3) a token first picks M of the N
    nodes, then its k experts among the M * E/N experts there.  Three ways to send a token:
      pairs  one copy per (token, expert) pair, as a plain all_to_all_single after permutation
             (Megatron-Core's alltoall dispatcher): k (EP-G)/EP copies leave the node, k (G-1)/EP stay
      ranks  one copy per distinct destination GPU (DeepEP intranode kernels)
      nodes  one copy per distinct destination node over the network, then NVLink forwarding inside
             the node (DeepEP internode normal kernels); the NVLink figure is an upper bound
    Time of one exchange = imbalance * max(network bytes / NIC GB/s, NVLink bytes / NVLink GB/s);
    a training step runs dispatch + combine forward and their two gradient exchanges backward.
    Expert FLOPs (SwiGLU, three h x F matrices) = 6 h F per (token, expert) forward, twice that backward.
    The all-to-all busbw ceiling is what nccl-tests would report for a perfect all_to_all of the
    pairs send buffer: algbw * (EP-1)/EP (https://github.com/NVIDIA/nccl-tests/blob/master/src/alltoall.cu).

Usage
    # DeepSeek-V3-like layer (DeepSeek-V3 report, arXiv:2412.19437) on DeepEP's test hardware
    python moe_traffic.py --tokens 4096 --hidden 7168 --topk 8 --experts 256 --ep 64 \
        --dispatch-bytes 1 --dispatch-scale-bytes 224 --combine-bytes 2 --mode nodes --max-nodes 4
    # the same with compute time at an assumed achieved TFLOPS, as JSON
    python moe_traffic.py --tokens 4096 --hidden 7168 --topk 8 --experts 256 --ep 64 \
        --expert-ffn 2048 --tflops 400 --json

Requirements
    Python 3.9+, standard library only.

Exit codes
    0 success, 2 usage error.

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import math
import sys

MODES = ("pairs", "ranks", "nodes")


def p_hit(pool: int, group: int, topk: int) -> float:
    """Probability that a group of ``group`` experts gets at least one of ``topk`` distinct picks from ``pool``.

    Equals 1 - C(pool - group, topk) / C(pool, topk); 1.0 when the picks cannot all avoid the group.
    ValueError if topk > pool or group > pool.
    """
    if topk > pool or group > pool:
        raise ValueError(f"need topk <= pool and group <= pool, got topk={topk}, group={group}, pool={pool}")
    if topk > pool - group:
        return 1.0
    return 1.0 - math.comb(pool - group, topk) / math.comb(pool, topk)


def copies_per_token(mode: str, topk: int, experts: int, ep: int, gpus_per_node: int, max_nodes: int | None):
    """Expected copies of one token that cross the network and NVLink in one exchange.

    Returns (network_copies, nvlink_copies).  gpus_per_node is capped at ep (an EP group inside one
    node sends nothing over the network).  ValueError on inconsistent sizes.
    """
    g = min(gpus_per_node, ep)
    if ep % g or experts % ep:
        raise ValueError(f"need ep divisible by GPUs per node and experts divisible by ep (ep={ep}, E={experts})")
    nodes = ep // g
    m = nodes if max_nodes is None else max_nodes
    if not 1 <= m <= nodes:
        raise ValueError(f"--max-nodes must be between 1 and the {nodes} node(s) of the EP group")
    per_rank, per_node = experts // ep, experts // nodes
    pool = m * per_node  # experts a token can pick from once its nodes are chosen
    if topk > pool:
        raise ValueError(f"topk={topk} exceeds the {pool} experts reachable on {m} node(s)")
    share = m / nodes  # probability that a given node is among the chosen ones
    rank_hit = share * p_hit(pool, per_rank, topk)
    node_hit = share * p_hit(pool, per_node, topk)
    if mode == "pairs":
        return topk * (ep - g) / ep, topk * (g - 1) / ep
    if mode == "ranks":
        return (ep - g) * rank_hit, (g - 1) * rank_hit
    if mode == "nodes":
        return (nodes - 1) * node_hit, (ep - 1) * rank_hit
    raise ValueError(f"unknown mode {mode!r}, expected one of {MODES}")


def exchange_time_s(net_bytes: float, nvl_bytes: float, nic_gbps: float, nvlink_gbps: float, imbalance: float):
    """Time of one exchange: imbalance * max(net_bytes / NIC, nvl_bytes / NVLink); bandwidths in GB/s (1e9 B/s)."""
    return imbalance * max(net_bytes / (nic_gbps * 1e9), nvl_bytes / (nvlink_gbps * 1e9))


def alltoall_busbw_ceiling(ep: int, gpus_per_node: int, nic_gbps: float, nvlink_gbps: float) -> float:
    """Return the busbw in GB/s that a perfect all_to_all over ep ranks reports: algbw * (ep-1)/ep.

    algbw comes from the slower of the network part, (ep-g)/ep of the buffer, and the NVLink part, (g-1)/ep.
    """
    g = min(gpus_per_node, ep)
    t_net = (ep - g) / ep / nic_gbps if ep > g else 0.0
    t_nvl = (g - 1) / ep / nvlink_gbps
    return (1.0 / max(t_net, t_nvl)) * (ep - 1) / ep


def estimate(args: argparse.Namespace) -> dict:
    """All the numbers for one configuration, per GPU and per MoE layer, as a dict (bytes, seconds, GB/s)."""
    net, nvl = copies_per_token(args.mode, args.topk, args.experts, args.ep, args.gpus_per_node, args.max_nodes)
    d_tok = args.hidden * args.dispatch_bytes + args.dispatch_scale_bytes
    c_tok = args.hidden * args.combine_bytes
    b_tok = args.hidden * args.backward_bytes
    t = args.tokens
    ex = {
        "dispatch": (t * net * d_tok, t * nvl * d_tok),
        "combine": (t * net * c_tok, t * nvl * c_tok),
        "dispatch_grad": (t * net * b_tok, t * nvl * b_tok),
        "combine_grad": (t * net * b_tok, t * nvl * b_tok),
    }
    times = {k: exchange_time_s(a, b, args.nic_gbps, args.nvlink_gbps, args.imbalance) for k, (a, b) in ex.items()}
    fwd = times["dispatch"] + times["combine"]
    bwd = 0.0 if args.inference else times["dispatch_grad"] + times["combine_grad"]
    out = {
        "network_copies_per_token": net,
        "nvlink_copies_per_token": nvl,
        "bytes_per_layer": {k: {"network": a, "nvlink": b} for k, (a, b) in ex.items()},
        "time_s_per_layer": {**times, "forward": fwd, "backward": bwd, "step": fwd + bwd},
        "time_s_all_layers": (fwd + bwd) * args.layers,
        "alltoall_busbw_ceiling_gbps": alltoall_busbw_ceiling(
            args.ep, args.gpus_per_node, args.nic_gbps, args.nvlink_gbps
        ),
    }
    if args.expert_ffn and args.tflops:
        flops_fwd = t * args.topk * 6 * args.hidden * args.expert_ffn * args.imbalance
        c_fwd = flops_fwd / (args.tflops * 1e12)
        c_bwd = 0.0 if args.inference else 2 * c_fwd
        out["expert_compute_s_per_layer"] = {"forward": c_fwd, "backward": c_bwd, "step": c_fwd + c_bwd}
        out["comm_to_compute"] = (fwd + bwd) / (c_fwd + c_bwd)
    return out


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    p = argparse.ArgumentParser(
        description="Per-GPU MoE all-to-all (dispatch/combine) bytes and time, network vs NVLink, per MoE layer.",
        epilog="Bandwidths are per GPU, per direction, in GB/s (1e9 B/s); defaults are DeepEP's H800 test setup.",
    )
    p.add_argument("--tokens", type=int, required=True, help="tokens per GPU per micro-batch (T)")
    p.add_argument("--hidden", type=int, required=True, help="hidden size h")
    p.add_argument("--topk", type=int, required=True, help="experts per token k")
    p.add_argument("--experts", type=int, required=True, help="routed experts E in the layer")
    p.add_argument("--ep", type=int, required=True, help="expert-parallel group size (GPUs)")
    p.add_argument("--gpus-per-node", type=int, default=8, help="GPUs per NVLink domain (default 8)")
    p.add_argument("--mode", choices=MODES, default="pairs", help="how tokens are sent (default pairs)")
    p.add_argument("--max-nodes", type=int, default=None, help="node-limited routing: nodes per token (M)")
    p.add_argument("--dispatch-bytes", type=float, default=2, help="bytes per element dispatched (2 bf16, 1 fp8)")
    p.add_argument("--dispatch-scale-bytes", type=float, default=0, help="extra bytes per token (fp8 scales)")
    p.add_argument("--combine-bytes", type=float, default=2, help="bytes per element combined (default 2, bf16)")
    p.add_argument("--backward-bytes", type=float, default=2, help="bytes per gradient element (default 2)")
    p.add_argument("--nic-gbps", type=float, default=50.0, help="network GB/s per GPU per direction (default 50)")
    p.add_argument("--nvlink-gbps", type=float, default=160.0, help="NVLink GB/s per GPU per direction (default 160)")
    p.add_argument("--imbalance", type=float, default=1.0, help="busiest GPU's load / mean load (default 1.0)")
    p.add_argument("--layers", type=int, default=1, help="MoE layers, for the all-layer total (default 1)")
    p.add_argument("--expert-ffn", type=int, default=0, help="expert intermediate size F, for compute time")
    p.add_argument("--tflops", type=float, default=0, help="achieved TFLOPS of the expert GEMMs (an assumption)")
    p.add_argument("--inference", action="store_true", help="forward only (no gradient exchanges)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    positive = ("tokens", "hidden", "topk", "experts", "ep", "gpus_per_node", "layers")
    for name in positive:
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    if min(args.nic_gbps, args.nvlink_gbps) <= 0 or args.imbalance < 1:
        parser.error("bandwidths must be > 0 and --imbalance >= 1")
    if args.topk > args.experts:
        parser.error("--topk cannot exceed --experts")
    try:
        result = estimate(args)
    except ValueError as exc:
        parser.error(str(exc))
    if args.json:
        print(json.dumps({"inputs": vars(args), "results": result}))
        return 0
    print(
        f"# T={args.tokens} h={args.hidden} top-{args.topk} of {args.experts} experts, EP={args.ep}, "
        f"{args.gpus_per_node} GPUs/node, mode={args.mode}, max_nodes={args.max_nodes}"
    )
    print(
        f"copies per token: network {result['network_copies_per_token']:.3f}, "
        f"NVLink {result['nvlink_copies_per_token']:.3f}"
    )
    print(f"{'exchange':<15}{'network MB':>12}{'NVLink MB':>12}{'time ms':>10}")
    for name, b in result["bytes_per_layer"].items():
        if args.inference and name.endswith("_grad"):
            continue
        ms = result["time_s_per_layer"][name] * 1e3
        print(f"{name:<15}{b['network'] / 1e6:>12.1f}{b['nvlink'] / 1e6:>12.1f}{ms:>10.2f}")
    ts = result["time_s_per_layer"]
    print(
        f"per MoE layer: forward {ts['forward'] * 1e3:.2f} ms, backward {ts['backward'] * 1e3:.2f} ms; "
        f"x{args.layers} layers = {result['time_s_all_layers'] * 1e3:.1f} ms"
    )
    if "expert_compute_s_per_layer" in result:
        c = result["expert_compute_s_per_layer"]
        print(
            f"expert compute per layer at {args.tflops:g} TFLOPS: forward {c['forward'] * 1e3:.2f} ms, "
            f"backward {c['backward'] * 1e3:.2f} ms; communication / compute = {result['comm_to_compute']:.2f}"
        )
    print(f"all_to_all busbw ceiling on this topology: {result['alltoall_busbw_ceiling_gbps']:.1f} GB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
