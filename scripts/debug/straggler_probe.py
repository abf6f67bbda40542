#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Find the straggler rank of a synchronous job from per-rank compute time and collective wait time.

Purpose
    In a synchronous job every rank waits in the gradient collective for the slowest one, so the
    straggler is the rank with the longest compute and the shortest wait, and every other rank's
    wait grows by the straggler's excess.  StragglerProbe times both phases of each step on every
    rank, and every --report-every steps gathers the per-rank medians, names the ranks whose compute
    exceeds the median by more than --threshold, and states what they cost the whole job.
    Use the class inside a training loop, or run this file for a self-contained demonstration that
    can make one rank slow on purpose (--slow-rank, --slow-factor).

In a training loop
    probe = StragglerProbe(threshold=0.05)
    for step in ...:
        probe.step_begin()
        loss = model(batch).backward()      # work that differs per rank
        probe.compute_end()                 # just before the step's first blocking collective
        optimizer.step()                    # gradient all-reduce / reduce-scatter happen here
        probe.step_end()
        if step % 100 == 0:
            report = probe.report()         # a collective: call it on every rank at the same step

Usage
    torchrun --standalone --nproc_per_node=8 straggler_probe.py --steps 200 --size 8192
    torchrun --standalone --nproc_per_node=3 straggler_probe.py --backend gloo --work sleep \
        --slow-rank 2 --slow-factor 0.3 --json      # CPU demonstration: rank 2 is 30% slower

Requirements
    Python 3.9+, PyTorch with torch.distributed; launch with torchrun.  With --backend nccl each rank
    uses CUDA device LOCAL_RANK (0 when it sees one GPU) and times are taken after torch.cuda.synchronize().

Exit codes
    0 no straggler (or --fail-on-straggler not given); 1 a straggler was found with
    --fail-on-straggler, or a collective failed; 2 usage error.

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


class StragglerProbe:
    """Per-rank timer of compute and collective-wait time, with a collective report of stragglers.

    threshold: a rank is a straggler when its median compute time exceeds the median over ranks by
    more than this fraction (0.05 = 5%).  window: number of recent steps kept per rank.
    """

    def __init__(self, threshold: float = 0.05, window: int = 100, group=None):
        """Create a probe; it uses torch.distributed's default group unless group is given."""
        import torch

        self.threshold, self.window, self.group = threshold, window, group
        self._sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
        self.compute: list[float] = []
        self.wait: list[float] = []
        self._t0 = self._t1 = 0.0

    def step_begin(self) -> None:
        """Mark the start of a step."""
        self._sync()
        self._t0 = time.perf_counter()

    def compute_end(self) -> None:
        """Mark the end of this rank's own work, just before the step's first blocking collective."""
        self._sync()
        self._t1 = time.perf_counter()

    def step_end(self) -> None:
        """Mark the end of the step (after the collectives); records compute and wait seconds."""
        self._sync()
        t2 = time.perf_counter()
        self.compute = (self.compute + [self._t1 - self._t0])[-self.window :]
        self.wait = (self.wait + [t2 - self._t1])[-self.window :]

    def report(self) -> dict:
        """Gather every rank's medians (a collective) and return the analysis, identical on every rank.

        Keys: ranks (list of {rank, host, compute_ms, wait_ms}), median_compute_ms, stragglers (ranks),
        job_slowdown (slowest compute / median compute - 1), wasted_gpu_fraction.
        ValueError if no step was recorded.
        """
        import torch.distributed as dist

        if not self.compute:
            raise ValueError("no step recorded: call step_begin/compute_end/step_end first")
        mine = {
            "rank": dist.get_rank(self.group),
            "host": socket.gethostname(),
            "compute_ms": statistics.median(self.compute) * 1e3,
            "wait_ms": statistics.median(self.wait) * 1e3,
        }
        ranks = [None] * dist.get_world_size(self.group)
        dist.all_gather_object(ranks, mine, group=self.group)
        return analyse(ranks, self.threshold)


def analyse(ranks: list[dict], threshold: float) -> dict:
    """Flag ranks whose compute_ms exceeds the median by more than threshold; estimate the job's loss.

    ranks: list of {rank, host, compute_ms, wait_ms}.  Every rank runs at the pace of the slowest, so
    job_slowdown = max compute / median compute - 1, and the share of the compute phase that the
    ranks spend idle waiting for the slowest one is wasted_gpu_fraction = mean(max - compute_i) / max.
    """
    comp = [r["compute_ms"] for r in ranks]
    med, slowest = statistics.median(comp), max(comp)
    flagged = [r["rank"] for r in ranks if r["compute_ms"] > med * (1 + threshold)]
    return {
        "ranks": ranks,
        "median_compute_ms": med,
        "stragglers": flagged,
        "job_slowdown": slowest / med - 1 if med > 0 else 0.0,
        "wasted_gpu_fraction": sum(slowest - c for c in comp) / len(comp) / slowest if slowest > 0 else 0.0,
    }


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser (does not import torch)."""
    p = argparse.ArgumentParser(
        description="Demonstrate StragglerProbe: time compute and all-reduce wait per rank, name the stragglers.",
        epilog="Times are medians over the last --window steps, in ms.  Launch with torchrun.",
    )
    p.add_argument("--steps", type=int, default=30, help="steps to run (default 30)")
    p.add_argument("--report-every", type=int, default=0, help="report every N steps (default: at the end only)")
    p.add_argument("--work", choices=("matmul", "sleep"), default="matmul", help="simulated compute (default matmul)")
    p.add_argument("--size", type=int, default=1024, help="matmul size n (n x n, default 1024)")
    p.add_argument("--sleep-ms", type=float, default=20.0, help="compute time per step with --work sleep")
    p.add_argument("--grad-mb", type=float, default=4.0, help="all-reduce payload per step in MB (default 4)")
    p.add_argument("--threshold", type=float, default=0.05, help="straggler threshold over the median (0.05)")
    p.add_argument("--window", type=int, default=100, help="steps kept per rank (default 100)")
    p.add_argument("--slow-rank", type=int, default=None, help="demo: this rank does extra work")
    p.add_argument("--slow-factor", type=float, default=0.2, help="demo: extra work of the slow rank (0.2 = 20%%)")
    p.add_argument("--fail-on-straggler", action="store_true", help="exit 1 when a straggler is found")
    p.add_argument("--backend", choices=("nccl", "gloo"), default=None, help="default: nccl with CUDA, else gloo")
    p.add_argument("--timeout", type=float, default=300.0, help="process-group timeout in seconds (default 300)")
    p.add_argument("--json", action="store_true", help="rank 0 prints one JSON object per report")
    return p


def print_report(rep: dict, step: int, as_json: bool) -> None:
    """Print one report on rank 0: a table, or one JSON line."""
    if as_json:
        print(json.dumps({"step": step, **rep}), flush=True)
        return
    print(f"# step {step}: median compute {rep['median_compute_ms']:.2f} ms")
    print(f"{'rank':>4}  {'host':<16}{'compute ms':>11}{'wait ms':>9}{'x median':>9}")
    for r in rep["ranks"]:
        ratio = r["compute_ms"] / rep["median_compute_ms"]
        mark = "  <- straggler" if r["rank"] in rep["stragglers"] else ""
        print(f"{r['rank']:>4}  {r['host'][:15]:<16}{r['compute_ms']:>11.2f}{r['wait_ms']:>9.2f}{ratio:>9.2f}{mark}")
    print(
        f"job runs {rep['job_slowdown'] * 100:.1f}% slower than its median rank; "
        f"{rep['wasted_gpu_fraction'] * 100:.1f}% of the ranks' compute capacity idles waiting for it",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.steps < 1 or args.size < 1 or args.window < 1 or args.report_every < 0:
        parser.error("--steps, --size and --window must be >= 1, --report-every >= 0")
    if min(args.sleep_ms, args.grad_mb, args.threshold, args.slow_factor) < 0 or args.timeout <= 0:
        parser.error("--sleep-ms, --grad-mb, --threshold, --slow-factor must be >= 0, --timeout > 0")

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
    rank = dist.get_rank()

    extra = 1.0 + (args.slow_factor if rank == args.slow_rank else 0.0)
    a = torch.randn(args.size, args.size, device=device)
    grads = torch.ones(max(1, int(args.grad_mb * 1e6 / 4)), device=device)
    probe = StragglerProbe(threshold=args.threshold, window=args.window)
    found = False
    try:
        for step in range(1, args.steps + 1):
            probe.step_begin()
            if args.work == "sleep":
                time.sleep(args.sleep_ms * extra / 1e3)
            else:
                for _ in range(max(1, round(4 * extra))):
                    a = torch.tanh(a @ a / args.size)
            probe.compute_end()
            dist.all_reduce(grads)  # the gradient all-reduce: everybody waits for the slowest rank here
            grads.fill_(1.0)
            probe.step_end()
            last = step == args.steps
            if (args.report_every and step % args.report_every == 0) or last:
                rep = probe.report()
                found = found or bool(rep["stragglers"])
                if rank == 0:
                    print_report(rep, step, args.json)
    except RuntimeError as exc:
        print(f"error: rank {rank} on host {host}: collective failed: {exc}", file=sys.stderr, flush=True)
        return EXIT_FAIL
    dist.destroy_process_group()
    return EXIT_FAIL if (found and args.fail_on_straggler) else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
