"""Figures of communication cost: collective time and bandwidth against message size, links, scaling."""

from __future__ import annotations

from pathlib import Path

from .figure import Figure, validated_rows
from .style import COLORS, HATCHES, INK


def _ring_allreduce(ax, data_dir: Path) -> None:
    alpha, bandwidth = 10e-6, 50e9  # seconds per step, bytes/s per direction
    sizes = [2**k for k in range(10, 35)]
    for n in (8, 64, 512):
        times = [2 * (n - 1) * alpha + 2 * (n - 1) / n * s / bandwidth for s in sizes]
        ax.loglog(sizes, times, label=f"n = {n} ranks")
    ax.set_xlabel("Message size S (bytes)")
    ax.set_ylabel("Ring all-reduce time (s)")
    ax.legend(fontsize=7)


def _effective_bandwidth(ax, data_dir: Path) -> None:
    sizes = [2**k for k in range(10, 31)]  # 1 KiB .. 1 GiB
    links = {"50 GB/s, 4 us (one NDR NIC)": (4e-6, 50e9), "450 GB/s, 2 us (NVLink 4, per GPU)": (2e-6, 450e9)}
    for label, (alpha, beta) in links.items():
        ax.semilogx(sizes, [n / (alpha + n / beta) / 1e9 for n in sizes], label=label, base=2)
        half = alpha * beta  # n_half: the size at which half the bandwidth is reached
        ax.plot([half], [beta / 2e9], "o", color="black", ms=3)
        ax.annotate(
            f"half at {half / 1e3:.0f} KB",
            (half, beta / 2e9),
            fontsize=6.5,
            xytext=(5, -10),
            textcoords="offset points",
        )
    ax.set_xlabel("Message size (bytes)")
    ax.set_ylabel("Effective bandwidth (GB/s)")
    ax.legend(fontsize=7)


def _busbw_vs_size(ax, data_dir: Path) -> None:
    alpha, bandwidth = 5e-6, 50e9  # seconds per ring step, bytes/s per direction
    sizes = [2**k for k in range(16, 34)]  # 64 KiB .. 8 GiB
    for n in (16, 64, 128):
        # Ring all-reduce: busbw = B x S / (S + n alpha B) once the 2(n-1)/n factors cancel.
        ax.semilogx(
            sizes, [bandwidth * s / (s + n * alpha * bandwidth) / 1e9 for s in sizes], label=f"n = {n} ranks", base=2
        )
        ax.plot([n * alpha * bandwidth], [bandwidth / 2e9], "o", color="black", ms=3)
    ax.axhline(bandwidth / 1e9, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("Message size S (bytes)")
    ax.set_ylabel("Ring all-reduce busbw (GB/s)")
    ax.legend(fontsize=7)


def _link_bandwidths(ax, data_dir: Path) -> None:
    rows = sorted(validated_rows(data_dir, "interconnects"), key=lambda r: (r.kind, r.per_direction_gbps))
    shade = {"intra-node": 0, "inter-node": 1}
    bars = ax.barh([r.name for r in rows], [r.per_direction_gbps for r in rows], edgecolor=INK, linewidth=0.5)
    for bar, row in zip(bars, rows, strict=True):
        bar.set_facecolor(COLORS[shade[row.kind]])
        bar.set_hatch(HATCHES[shade[row.kind] + 1])
    ax.set_xscale("log")
    for y, row in enumerate(rows):
        ax.text(row.per_direction_gbps * 1.08, y, f"{row.per_direction_gbps:g}", va="center", fontsize=6)
    ax.set_xlabel("GB/s per direction, log scale (plain blue: in a node, hatched orange: between nodes)")
    ax.tick_params(axis="y", labelsize=6.5)


def _exposed_communication(ax, data_dir: Path) -> None:
    tokens, flops = 4 * 2**20, 400e12  # global batch (tokens per step), achieved FLOP/s per GPU
    gpus = [2**k for k in range(6, 15)]  # 64 .. 16,384
    networks = {
        "8 x 400 Gb/s per node (busbw 360 GB/s)": 360e9,
        "4 x 200 Gb/s (96 GB/s)": 96e9,
        "1 x 100 GbE (11 GB/s)": 11e9,
    }
    for label, busbw in networks.items():
        # Communication over backward compute for DDP or ZeRO-3: (F / busbw) / (tokens per GPU) = n F / (T busbw).
        ax.plot(gpus, [n * flops / (tokens * busbw) for n in gpus], marker="o", ms=3, label=label)
        ax.plot([tokens * busbw / flops], [1], "o", color="black", ms=3)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.axhline(1, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("GPUs in data parallel (global batch fixed at 4M tokens)")
    ax.set_ylabel("Communication time / backward compute time")
    ax.legend(fontsize=7)


FIGURES = (
    Figure(
        "ring-allreduce-time",
        _ring_allreduce,
        "Log-log plot of ring all-reduce time against message size for 8, 64 and 512 ranks",
        "Ring all-reduce cost model t = 2(n-1)a + 2(n-1)/n x S/B with a = 10 us per step and "
        "B = 50 GB/s per direction: latency dominates small messages, bandwidth large ones.",
    ),
    Figure(
        "effective-bandwidth",
        _effective_bandwidth,
        "Plot of effective bandwidth against message size for a 50 GB/s link and a 450 GB/s link",
        "Effective bandwidth n / (a + n/B) of one transfer of n bytes, with illustrative start-up costs a. "
        "The faster link reaches half its bandwidth only at a larger message (the dot, n = a x B).",
    ),
    Figure(
        "busbw-vs-size",
        _busbw_vs_size,
        "Plot of ring all-reduce bus bandwidth against message size for 16, 64 and 128 ranks",
        "Ring all-reduce busbw = B x S / (S + n x a x B) with a = 5 us per step and B = 50 GB/s per "
        "direction (dotted line): the more ranks, the larger the message needed to approach B (dots: half).",
    ),
    Figure(
        "exposed-communication",
        _exposed_communication,
        "Log-log plot of communication time over backward compute time against GPU count for three networks",
        "Gradient or parameter traffic per step over backward compute, n x F / (T x busbw), for a fixed "
        "global batch T = 4M tokens and F = 400 TFLOPS achieved per GPU: above 1 (dotted) the network "
        "cannot hide behind compute; dots mark n* = T x busbw / F.",
    ),
    Figure(
        "link-bandwidths",
        _link_bandwidths,
        "Horizontal bar chart of per-direction bandwidth of each interconnect in the data, log scale",
        "Per-direction bandwidth of each link generation, in the unit of count of its row (per link, per "
        "GPU, per port). Data: book/data/interconnects.yaml.",
        ("interconnects.yaml",),
        kind="tall",
    ),
)
