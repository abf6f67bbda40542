#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Find the slow node or link of an allocation: a two-node all-reduce on pairs of nodes, ranked by busbw.

Purpose
    One slow NIC, cable or node slows every collective of a job, and a whole-allocation benchmark
    only says that something is slow.  This script runs a two-node all-reduce on pairs of nodes and
    sorts the pairs by bus bandwidth (busbw, nccl-tests' definition; for two ranks it equals algbw
    times 2(n-1)/n).  Each node is paired with its two neighbours in a ring (node i with i+1, the
    last with the first), so every node is in two pairs; disjoint pairs run at the same time, in
    as few rounds as possible (2 for an even node count, 3 for an odd one).  Then:
      slow pair    busbw below --tolerance times the reference (the 90th percentile of the pairs'
                   busbw, so that with few nodes the pairs of one bad node cannot drag the
                   reference down), or below --min-busbw, or the pair failed
      suspect node every pair it is in is slow: the node (its NICs, PCIe, GPUs) is the likely culprit
      suspect link a slow pair whose two nodes are fast in their other pair: the path between them
    With two nodes there is one pair, and a slow result cannot say which node is at fault.

What runs in a pair
    nccl-tests' all_reduce_perf when it is on PATH (or given with --nccl-tests):
        srun --nodes=2 --nodelist=A,B --ntasks-per-node=G --mpi=pmix all_reduce_perf -b S -e S -g 1 ...
    with NCCL_ALGO=Ring (so the number reflects the links, not NCCL's algorithm choice), parsing the
    out-of-place busbw of the largest size.  Otherwise the book's collective_bench.py (the file next to
    this one, or --bench), one srun task per GPU, each exporting RANK, WORLD_SIZE, LOCAL_RANK and
    MASTER_ADDR from SLURM; --backend gloo runs it on CPUs (test mode).

Usage
    salloc --nodes=16 --gpus-per-node=8 --exclusive
    python3 node_pair_sweep.py --gpus-per-node 8 --size 1G                 # all nodes of the allocation
    python3 node_pair_sweep.py --nodes 'gpu[001-016]' --gpus-per-node 8 --json
    python3 node_pair_sweep.py --backend gloo --gpus-per-node 1 --size 1M  # CPU smoke test of the method

Requirements
    Python 3.9+, standard library only; SLURM (srun, scontrol); on the nodes either nccl-tests or
    PyTorch with collective_bench.py (same path on every node, e.g. a shared home).

Exit codes
    0 no slow pair; 1 a slow pair, suspect node or failed pair; 2 usage error (fewer than two nodes,
    no srun, no benchmark found).

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}


def parse_bytes(text: str) -> int:
    """Parse a size: "1G" -> 1073741824, "64K" -> 65536, "4096" -> 4096 (binary multiples); raises ValueError."""
    match = re.fullmatch(r"(\d+)([KMG]?)i?B?", text.strip(), re.I)
    if not match:
        raise ValueError(f"not a size: {text!r} (examples: 64M, 1G, 4096)")
    return int(match[1]) * UNITS[match[2].upper()]


def ring_pairs(nodes: list[str]) -> list[tuple[str, str]]:
    """Pair each node with the next one in a ring: [(n0, n1), (n1, n2), ..., (n_last, n0)]; one pair for 2 nodes."""
    if len(nodes) == 2:
        return [(nodes[0], nodes[1])]
    return [(nodes[i], nodes[(i + 1) % len(nodes)]) for i in range(len(nodes))]


def schedule(pairs: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    """Group pairs into rounds of disjoint pairs (greedy: a pair joins the first round where both nodes are free)."""
    rounds: list[list[tuple[str, str]]] = []
    busy: list[set[str]] = []
    for pair in pairs:
        for members, used in zip(rounds, busy, strict=True):
            if not used & set(pair):
                members.append(pair)
                used.update(pair)
                break
        else:
            rounds.append([pair])
            busy.append(set(pair))
    return rounds


def parse_nccl_tests(text: str) -> float | None:
    """Return the busbw (GB/s) of the largest size in all_reduce_perf output (out-of-place column), or None.

    nccl-tests prints one row per size: size count type redop root time algbw busbw #wrong (out of
    place), then the same for in place; comment lines start with '#'.
    """
    best = None
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 9 and fields[0].isdigit() and not line.lstrip().startswith("#"):
            try:
                best = (int(fields[0]), float(fields[7]))
            except ValueError:
                continue
    if best:
        return best[1]
    avg = re.search(r"# Avg bus bandwidth\s*:\s*([\d.]+)", text)
    return float(avg[1]) if avg else None


def parse_bench(text: str) -> float | None:
    """Return the busbw (GB/s, max over ranks as nccl-tests reports) from collective_bench.py --json output, or None."""
    value = None
    for line in text.splitlines():
        if line.startswith("{"):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if record.get("op") == "all_reduce":
                value = record.get("busbw_gbps")
    return value


def pair_command(args, pair: tuple[str, str], port: int) -> list[str]:
    """The srun command that runs one pair's two-node all-reduce."""
    srun = ["srun", "--nodes=2", f"--nodelist={','.join(pair)}", f"--ntasks-per-node={args.gpus_per_node}"]
    srun += ["--kill-on-bad-exit=1", *shlex.split(args.srun_args or "")]
    if args.nccl_tests:
        srun += [f"--mpi={args.mpi}"] if args.mpi else []
        size = str(args.size)
        return srun + [args.nccl_tests, "-b", size, "-e", size, "-f", "2", "-g", "1", "-w", "5", "-n", str(args.iters)]
    bench = [
        args.python,
        args.bench,
        "--ops",
        "all_reduce",
        "--min-bytes",
        str(args.size),
        "--max-bytes",
        str(args.size),
    ]
    bench += ["--iters", str(args.iters), "--warmup", "5", "--json"] + (
        ["--backend", args.backend] if args.backend else []
    )
    export = (
        f"export RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NTASKS LOCAL_RANK=$SLURM_LOCALID "
        f"MASTER_ADDR={shlex.quote(pair[0])} MASTER_PORT={port}; exec {shlex.join(bench)}"
    )
    return srun + ["bash", "-c", export]


def run_round(args, pairs: list[tuple[str, str]], port_base: int) -> dict[tuple[str, str], dict]:
    """Run the pairs of one round at the same time; return {pair: {"busbw_gbps", "error", "seconds"}}."""
    env = dict(os.environ, NCCL_ALGO="Ring") if args.nccl_tests else dict(os.environ)
    started = {}
    for i, pair in enumerate(pairs):
        proc = subprocess.Popen(
            pair_command(args, pair, port_base + i), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        started[pair] = (proc, time.monotonic())
    results = {}
    for pair, (proc, start) in started.items():
        try:
            out, err = proc.communicate(timeout=max(1.0, args.timeout - (time.monotonic() - start)))
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            results[pair] = {"busbw_gbps": None, "error": f"timed out after {args.timeout:g} s"}
            continue
        busbw = parse_nccl_tests(out) if args.nccl_tests else parse_bench(out)
        error = None
        if proc.returncode != 0 or busbw is None:
            error = (err.strip().splitlines() or [f"exit {proc.returncode}, no result"])[-1]
        results[pair] = {"busbw_gbps": busbw, "error": error, "seconds": round(time.monotonic() - start, 1)}
    return results


def analyse(results: dict[tuple[str, str], dict], tolerance: float, min_busbw: float) -> dict:
    """Mark slow pairs and name suspect nodes and links.

    A pair is slow when it failed, or its busbw is below ``tolerance`` times the reference (the 90th
    percentile, nearest rank rounded up, of the pairs that ran), or below ``min_busbw``.  A node is
    suspect when it is in two or more pairs and all are slow; a slow pair of two non-suspect nodes
    is a suspect link.
    """
    values = sorted(r["busbw_gbps"] for r in results.values() if r["busbw_gbps"] is not None and not r["error"])
    reference = values[math.ceil(0.9 * (len(values) - 1))] if values else 0.0
    threshold = max(tolerance * reference, min_busbw)
    for r in results.values():
        r["slow"] = bool(r["error"]) or r["busbw_gbps"] is None or r["busbw_gbps"] < threshold
    pairs_of: dict[str, list[tuple[str, str]]] = {}
    for pair in results:
        for node in pair:
            pairs_of.setdefault(node, []).append(pair)
    suspects = sorted(n for n, ps in pairs_of.items() if len(ps) >= 2 and all(results[p]["slow"] for p in ps))
    links = [p for p, r in results.items() if r["slow"] and not set(p) & set(suspects) and len(pairs_of) > 2]
    return {"reference_gbps": reference, "threshold_gbps": threshold, "suspect_nodes": suspects, "suspect_links": links}


def expand_nodes(spec: str | None) -> list[str]:
    """The node names of ``spec`` (a SLURM node list) or of the current allocation, via scontrol."""
    spec = spec or os.environ.get("SLURM_JOB_NODELIST") or os.environ.get("SLURM_NODELIST")
    if not spec:
        raise OSError("no nodes: run inside an allocation (salloc/sbatch) or give --nodes")
    if shutil.which("scontrol") is None:
        raise OSError("scontrol is not installed: this script needs SLURM")
    proc = subprocess.run(["scontrol", "show", "hostnames", spec], capture_output=True, text=True)
    if proc.returncode != 0:
        raise OSError(f"scontrol cannot expand {spec!r}: {proc.stderr.strip()}")
    return proc.stdout.split()


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, run the pairs round by round, rank them; return the exit code."""
    parser = argparse.ArgumentParser(
        description="Two-node all-reduce over pairs of nodes (nccl-tests or collective_bench.py), "
        "ranked by busbw; names the node or link that is slow in all its pairs."
    )
    parser.add_argument("--nodes", help="SLURM node list (default: the allocation's SLURM_JOB_NODELIST)")
    parser.add_argument("--gpus-per-node", type=int, default=8, help="ranks per node, one per GPU (default 8)")
    parser.add_argument("--size", default="1G", help="message size, e.g. 1G (default) or 64M")
    parser.add_argument("--iters", type=int, default=20, help="timed iterations per pair (default 20)")
    parser.add_argument(
        "--tolerance", type=float, default=0.8, help="slow = busbw below this x reference (default 0.8)"
    )
    parser.add_argument("--min-busbw", type=float, default=0.0, help="slow = busbw below this many GB/s too")
    parser.add_argument("--nccl-tests", help="path of all_reduce_perf (default: on PATH; else collective_bench.py)")
    parser.add_argument(
        "--no-nccl-tests", action="store_true", help="use collective_bench.py even if all_reduce_perf exists"
    )
    parser.add_argument(
        "--mpi", default="pmix", help="srun --mpi for nccl-tests built with MPI (default pmix; '' for none)"
    )
    parser.add_argument(
        "--bench", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "collective_bench.py")
    )
    parser.add_argument("--backend", choices=("nccl", "gloo"), help="collective_bench.py backend (default: its own)")
    parser.add_argument("--python", default=sys.executable, help="Python on the nodes for collective_bench.py")
    parser.add_argument("--srun-args", help="extra srun options for every pair, e.g. '--gpus-per-node=8 --exclusive'")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per pair before it counts as failed")
    parser.add_argument("--port", type=int, default=29600, help="first MASTER_PORT (one per concurrent pair)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = parser.parse_args(argv)
    try:
        args.size = parse_bytes(args.size)
    except ValueError as exc:
        parser.error(str(exc))
    if args.gpus_per_node < 1 or args.iters < 1 or not 0 < args.tolerance <= 1:
        parser.error("--gpus-per-node and --iters must be >= 1, --tolerance in (0, 1]")

    try:
        if shutil.which("srun") is None:
            raise OSError("srun is not installed: this script needs SLURM")
        nodes = expand_nodes(args.nodes)
        if len(nodes) < 2:
            raise OSError(f"need at least two nodes, got {len(nodes)} ({' '.join(nodes)})")
        if args.nccl_tests is None and not args.no_nccl_tests:
            args.nccl_tests = shutil.which("all_reduce_perf")
        if args.nccl_tests and args.no_nccl_tests:
            raise OSError("--nccl-tests and --no-nccl-tests contradict each other")
        if not args.nccl_tests and not os.path.isfile(args.bench):
            raise OSError(f"no all_reduce_perf on PATH and no benchmark at {args.bench} (give --nccl-tests or --bench)")
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE

    tool = f"nccl-tests {args.nccl_tests}" if args.nccl_tests else f"collective_bench.py {args.bench}"
    rounds = schedule(ring_pairs(nodes))
    if not args.json:
        print(
            f"# node_pair_sweep: {len(nodes)} nodes, {sum(map(len, rounds))} pairs in {len(rounds)} rounds, "
            f"all_reduce {args.size} B, {args.gpus_per_node} ranks per node, {tool}",
            flush=True,
        )
    results = {}
    for number, pairs in enumerate(rounds):
        results.update(run_round(args, pairs, args.port + 10 * (number % 10)))
    verdict = analyse(results, args.tolerance, args.min_busbw)
    ranked = sorted(results.items(), key=lambda item: item[1]["busbw_gbps"] or 0.0)
    if args.json:
        print(
            json.dumps(
                {
                    "nodes": nodes,
                    "tool": tool,
                    "bytes": args.size,
                    **verdict,
                    "suspect_links": [list(p) for p in verdict["suspect_links"]],
                    "pairs": [{"nodes": list(p), **r} for p, r in ranked],
                }
            )
        )
    else:
        print(
            f"# busbw in GB/s (1e9 bytes/s), slowest first; slow = below {verdict['threshold_gbps']:.3g} "
            f"({args.tolerance:g} x reference {verdict['reference_gbps']:.3g}, the 90th percentile of the pairs)"
        )
        width = max(len(",".join(p)) for p in results)
        for pair, r in ranked:
            value = "failed" if r["busbw_gbps"] is None else f"{r['busbw_gbps']:.3g}"
            note = f"  {r['error']}" if r["error"] else ""
            print(f"{','.join(pair):<{width}}  {value:>8}  {'SLOW' if r['slow'] else 'ok'}{note}")
        for node in verdict["suspect_nodes"]:
            print(f"SUSPECT node {node}: slow in all its pairs")
        for pair in verdict["suspect_links"]:
            print(f"SUSPECT link {pair[0]} <-> {pair[1]}: slow, while both nodes are fast in another pair")
        if not any(r["slow"] for r in results.values()):
            print("OK: no slow pair")
    return EXIT_FAIL if any(r["slow"] for r in results.values()) else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
