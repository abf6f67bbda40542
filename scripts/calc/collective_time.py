#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Estimate the time of a collective from its size, the number of ranks, a bandwidth and an algorithm.

Purpose
    How long should an all-reduce of the gradients take at the bus bandwidth the fabric delivers?
    Compare the estimate with a measurement (scripts/network/collective_bench.py) or with the
    compute time of a step.  The book's website runs the same arithmetic as a live calculator.

Formula (nccl-tests semantics, https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md)
    algbw = S / t and busbw = algbw * factor, hence  t = S * factor / busbw  (+ latency term), with
      ring (default)
        all_reduce:                              factor = 2 (n - 1) / n,  steps = 2 (n - 1)
        all_gather, reduce_scatter, all_to_all:  factor = (n - 1) / n,    steps = n - 1
      tree (all_reduce only; the other ops stay ring)
        all_reduce:                              factor = 2,              steps = 2 floor(log2 n)
    S is the full buffer size as nccl-tests counts it: the buffer each rank reduces (all_reduce), the
    gathered output of one rank (all_gather), the input of one rank (reduce_scatter), the send buffer
    of one rank (all_to_all).  The optional latency term is steps * --latency-us.
    Tree: NCCL's tuning model (src/graph/tuning.cc, ncclTopoTuneModel) turns a tree's bus bandwidth
    into algorithm bandwidth with a ratio of 0.5 (a ring's ratio is n / (2 (n - 1))), so a tree moves
    each byte at S * 2 / busbw whatever n; its latency counts 2 log2 steps (up the tree and down again).
    Here busbw is the bandwidth of each rank's link, the figure nccl-tests' busbw is compared with.

Links
    --link NAME takes busbw from a row of the book's interconnect table (book/data/interconnects.yaml,
    copied below; --list-links prints it): the row's peak per-direction figure, counted as the row
    says (per GPU, per port, per instance...).  A measured busbw is lower than the peak (protocol and
    packet overheads); measure yours with nccl-tests or scripts/network/collective_bench.py and give it
    with --busbw.

Input
    Numbers are plain decimals (7, 0.5, 1e9), checked to lie in the stated range, so a typo is refused
    with one sentence instead of turning into inf or NaN.

Usage
    # 1 GB all-reduce over 8 ranks at 100 GB/s busbw -> 17.5 ms
    python collective_time.py --bytes 1e9 --ranks 8 --busbw 100 --op all_reduce
    # every op, 4 GiB over 64 ranks at 40 GB/s, with 10 us per ring step
    python collective_time.py --bytes 4G --ranks 64 --busbw 40 --latency-us 10 --json
    # the tree algorithm at NVLink 4's peak
    python collective_time.py --bytes 1G --ranks 8 --link "NVLink 4 (H100)" --algorithm tree --op all_reduce

Requirements
    Python 3.9+, standard library only.

Exit codes
    0 success, 2 usage error.

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import re
import sys

OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
ALGORITHMS = ("ring", "tree")
# Inputs are plain ASCII decimals (the web calculator parses them with the same patterns).
DECIMAL = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
NUMBER = re.compile(rf"[ \t]*[+-]?{DECIMAL}[ \t]*")
WHOLE = re.compile(r"[ \t]*[+-]?[0-9]{1,20}[ \t]*")
BYTES = re.compile(rf"[ \t]*({DECIMAL})[ \t]*([kKmMgGtT]?)(?:[iI]?[bB])?[ \t]*")

# BEGIN LINKS: generated from book/data/interconnects.yaml by `python -m mlbook.tools.calclinks`; tested equal.
# name: (peak per-direction bandwidth in GB/s = 10^9 bytes/s, what the figure counts, source)
LINKS = {
    "PCIe 3.0 x16": (
        15.75,
        "x16 link",
        "https://hpc-notes.pages.dev/reference/pcie",
    ),
    "PCIe 4.0 x16": (
        31.5,
        "x16 link",
        "https://hpc-notes.pages.dev/reference/pcie",
    ),
    "PCIe 5.0 x16": (
        63.0,
        "x16 link",
        "https://hpc-notes.pages.dev/reference/pcie",
    ),
    "PCIe 6.0 x16": (
        121.0,
        "x16 link",
        "https://yduf.github.io/pcie",
    ),
    "PCIe 7.0 x16": (
        242.0,
        "x16 link",
        "https://hi-tech.ua/en/pci-express-7-0-specs-already-published/",
    ),
    "NVLink 2 (V100)": (
        150.0,
        "per GPU (all links)",
        "https://www.nvidia.com/en-us/data-center/nvlink/",
    ),
    "NVLink 3 (A100)": (
        300.0,
        "per GPU (all links)",
        "https://www.nvidia.com/en-us/data-center/nvlink/",
    ),
    "NVLink 4 (H100)": (
        450.0,
        "per GPU (all links)",
        "https://www.nvidia.com/en-us/data-center/nvlink/",
    ),
    "NVLink 5 (B200)": (
        900.0,
        "per GPU (all links)",
        "https://www.nvidia.com/en-us/data-center/nvlink/",
    ),
    "NVLink-C2C (GH200 Grace Hopper)": (
        450.0,
        "per superchip (Grace CPU to Hopper GPU)",
        "https://developer.nvidia.com/blog/nvidia-grace-hopper-superchip-architecture-in-depth/",
    ),
    "AMD Infinity Fabric xGMI link (MI300X)": (
        64.0,
        "per link (one GPU to one peer GPU)",
        "https://rocm.blogs.amd.com/software-tools-optimization/mi300x-rccl-xgmi/README.html",
    ),
    "AMD Infinity Fabric xGMI, all links (MI300X)": (
        448.0,
        "per GPU (all 7 peer links)",
        "https://rocm.blogs.amd.com/software-tools-optimization/mi300x-rccl-xgmi/README.html",
    ),
    "Intel Gaudi 3 scale-up RoCE, all 21 ports": (
        525.0,
        "per accelerator (21 x 200 GbE scale-up ports, HLS-3 box)",
        "https://docs.habana.ai/en/latest/Management_and_Monitoring/Network_Configuration/index.html",
    ),
    "Intel Gaudi 3 scale-up RoCE, one peer (3 ports)": (
        75.0,
        "per accelerator pair (3 x 200 GbE ports, HLS-3 box)",
        "https://docs.habana.ai/en/latest/Management_and_Monitoring/Network_Configuration/index.html",
    ),
    "Google TPU v5p ICI": (
        600.0,
        "per chip (all ICI links)",
        "https://docs.cloud.google.com/tpu/docs/v5p",
    ),
    "Google TPU v6e (Trillium) ICI": (
        400.0,
        "per chip (all ICI links)",
        "https://docs.cloud.google.com/tpu/docs/v6e",
    ),
    "InfiniBand EDR": (
        12.5,
        "per port (4x)",
        "https://docs.nvidia.com/networking/display/cs7510edr",
    ),
    "InfiniBand HDR": (
        25.0,
        "per port (4x)",
        "https://docs.nvidia.com/networking/display/QM87XX/Document+Revision+History",
    ),
    "InfiniBand NDR": (
        50.0,
        "per port (4x)",
        "https://docs.nvidia.com/networking/display/QM97X0PUB/Interfaces",
    ),
    "InfiniBand XDR": (
        100.0,
        "per port (4x)",
        "https://docs.nvidia.com/networking/display/XDRSwitchesHWUM/Document-Revision-History",
    ),
    "100 Gigabit Ethernet": (
        12.5,
        "per port",
        "https://www.eeworldonline.com/40g-100g-ethernet-standards-ratified/",
    ),
    "200 Gigabit Ethernet": (
        25.0,
        "per port",
        "https://www.ieee802.org/3/400GSG/email/msg01519.html",
    ),
    "400 Gigabit Ethernet": (
        50.0,
        "per port",
        "https://www.ieee802.org/3/400GSG/email/msg01519.html",
    ),
    "800 Gigabit Ethernet": (
        100.0,
        "per port",
        "https://www.ieee802.org/3/B400G/email/msg01072.html",
    ),
    "AWS EFA on p5.48xlarge": (
        400.0,
        "per instance (all EFA interfaces)",
        "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/p5-efa.html",
    ),
    "AWS EFA on p4d.24xlarge": (
        50.0,
        "per instance (all EFA interfaces)",
        "https://aws.amazon.com/blogs/compute/amazon-ec2-p4d-instances-deep-dive/",
    ),
}
# END LINKS


def bus_factor(op: str, ranks: int, algorithm: str = "ring") -> float:
    """Return the busbw factor: ring 2(n-1)/n for all_reduce, (n-1)/n for the others; tree all_reduce 2.

    Raises ValueError for an unknown op or algorithm, or a tree for an op other than all_reduce.
    """
    _check(op, algorithm)
    if algorithm == "tree":
        return 2.0
    if op == "all_reduce":
        return 2.0 * (ranks - 1) / ranks
    return (ranks - 1) / ranks


def ring_steps(op: str, ranks: int) -> int:
    """Return the number of communication steps of the ring algorithm: 2(n-1) for all_reduce, else n-1."""
    return 2 * (ranks - 1) if op == "all_reduce" else ranks - 1


def steps(op: str, ranks: int, algorithm: str = "ring") -> int:
    """Return the latency steps: ring_steps() for a ring, 2 floor(log2 n) for a tree (all_reduce only)."""
    _check(op, algorithm)
    return 2 * (int(ranks).bit_length() - 1) if algorithm == "tree" else ring_steps(op, ranks)


def collective_time_s(
    op: str, nbytes: float, ranks: int, busbw_gbps: float, latency_us: float = 0.0, algorithm: str = "ring"
) -> float:
    """Return the estimated time in seconds: nbytes * factor / (busbw_gbps * 1e9) + steps * latency_us * 1e-6."""
    factor = bus_factor(op, ranks, algorithm)
    return nbytes * factor / (busbw_gbps * 1e9) + steps(op, ranks, algorithm) * latency_us * 1e-6


def _check(op: str, algorithm: str) -> None:
    if op not in OPS:
        raise ValueError(f"unknown op {op!r}, expected one of {OPS}")
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}, expected one of {ALGORITHMS}")
    if algorithm == "tree" and op != "all_reduce":
        raise ValueError(f"the tree algorithm runs all_reduce only, not {op}")


def parse_bytes(text: str) -> float:
    """Parse a byte count from 1 to 1e24: 4096, 1e9, 64K/1M/2G/1T (powers of 1024, optional 'iB'/'B')."""
    match = BYTES.fullmatch(text)
    value = float(match.group(1)) * 1024 ** " KMGT".index(match.group(2).upper() or " ") if match else 0.0
    if not 1 <= value <= 1e24:
        raise argparse.ArgumentTypeError(
            f"must be a byte count from 1 to 1e24 (examples: 4096, 1e9, 64K, 2G), got '{text}'"
        )
    return value


def ranks_type(text: str) -> int:
    """Parse a rank count, a whole number from 2 to 10^15 (argparse type)."""
    value = int(text) if WHOLE.fullmatch(text) else 0
    if not 2 <= value <= 10**15:
        raise argparse.ArgumentTypeError(f"must be a whole number from 2 to 10^15, got '{text}'")
    return value


def bandwidth(text: str) -> float:
    """Parse a bandwidth in GB/s, a number from 1e-6 to 1e15 (argparse type)."""
    value = float(text) if NUMBER.fullmatch(text) else 0.0
    if not 1e-6 <= value <= 1e15:
        raise argparse.ArgumentTypeError(f"must be a number from 1e-6 to 1e15, got '{text}'")
    return value


def latency(text: str) -> float:
    """Parse a latency in us, a number from 0 to 1e15 (argparse type)."""
    value = float(text) if NUMBER.fullmatch(text) else -1.0
    if not 0 <= value <= 1e15:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 1e15, got '{text}'")
    return value


def link(text: str) -> str:
    """Parse a link name of LINKS (argparse type)."""
    if text not in LINKS:
        raise argparse.ArgumentTypeError(f"unknown link '{text}' (--list-links prints the names)")
    return text


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(
        description="Collective time t = S * factor / busbw (+ steps * latency), nccl-tests busbw factors.",
        epilog=(
            "factor: ring all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n; "
            "tree all_reduce 2.  GB/s = 1e9 B/s."
        ),
    )
    parser.add_argument("--bytes", type=parse_bytes, help="buffer size S: 1e9, 512M, 4G (K=1024)")
    parser.add_argument("--ranks", type=ranks_type, help="number of ranks n (>= 2)")
    bw = parser.add_mutually_exclusive_group()
    bw.add_argument("--busbw", type=bandwidth, help="bus bandwidth in GB/s (10^9 bytes/s)")
    bw.add_argument("--link", type=link, help="take busbw from a link's peak per-direction figure (--list-links)")
    parser.add_argument(
        "--op", choices=(*OPS, "all"), default="all", help="collective to estimate (default: all of them)"
    )
    parser.add_argument(
        "--algorithm",
        choices=ALGORITHMS,
        default="ring",
        help="ring (default) or tree; tree applies to all_reduce, the other ops stay ring",
    )
    parser.add_argument("--latency-us", type=latency, default=0.0, help="latency per step in us (default 0)")
    parser.add_argument("--list-links", action="store_true", help="print the link table and exit")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list_links:
        for name, (gbps, counted, source) in LINKS.items():
            print(f"{name:<48}{gbps:>10g} GB/s per direction, {counted}  ({source})")
        return 0
    for flag, value in (("--bytes", args.bytes), ("--ranks", args.ranks)):
        if value is None:
            parser.error(f"the following argument is required: {flag}")
    if args.busbw is None and args.link is None:
        parser.error("give --busbw (GB/s) or --link NAME")
    if args.algorithm == "tree" and args.op not in ("all", "all_reduce"):
        parser.error(f"--algorithm tree runs all_reduce only, not {args.op}; use --algorithm ring")
    busbw = args.busbw if args.link is None else LINKS[args.link][0]
    ops = OPS if args.op == "all" else (args.op,)
    rows = []
    for op in ops:
        algorithm = args.algorithm if op == "all_reduce" else "ring"
        t = collective_time_s(op, args.bytes, args.ranks, busbw, args.latency_us, algorithm)
        rows.append(
            {
                "op": op,
                "algorithm": algorithm,
                "bytes": args.bytes,
                "ranks": args.ranks,
                "busbw_gbps": busbw,
                "factor": bus_factor(op, args.ranks, algorithm),
                "steps": steps(op, args.ranks, algorithm),
                "time_us": t * 1e6,
                "algbw_gbps": args.bytes / t / 1e9,
            }
        )
    if args.json:
        print(json.dumps({"inputs": vars(args), "results": rows}))
        return 0
    print(f"# S={args.bytes:.6g} bytes, n={args.ranks}, busbw={busbw:g} GB/s, latency={args.latency_us:g} us/step")
    if args.link is not None:
        print(f"# link: {args.link}, peak per direction, {LINKS[args.link][1]}; a measured busbw is lower")
    if args.algorithm == "tree":
        print("# algorithm: tree for all_reduce (factor 2, 2 floor(log2 n) steps); the other ops ring")
    print(f"{'op':<16}{'factor':>10}{'steps':>8}{'time(us)':>16}{'algbw(GB/s)':>14}")
    for r in rows:
        print(f"{r['op']:<16}{r['factor']:>10.4f}{r['steps']:>8}{r['time_us']:>16.2f}{r['algbw_gbps']:>14.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
