"""Figures of scale-up against scale-out: one GPU's bandwidth tiers from the data, and fat-tree size against radix.

The tiers are rows of book/data/accelerators.yaml and book/data/interconnects.yaml; the fat-tree limits are the
formulas of book/hardware/network-fundamentals.md (k^2/2 endpoints in two tiers, the k-ary fat tree's k^3/4 in
three; Al-Fares, Loukissas and Vahdat, 2008).
"""

from __future__ import annotations

from pathlib import Path

from .figure import Figure, validated_rows
from .style import COLORS, HATCHES, INK

# One GPU of an HGX H100 node with one 400 Gb/s NIC per GPU: (label, table, row name, what the figure reaches).
TIERS = (
    ("HBM3 (H100 SXM5)", "accelerators", "NVIDIA H100 SXM5", "its own memory"),
    ("NVLink 4, all 18 links", "interconnects", "NVLink 4 (H100)", "the 7 other GPUs of the node"),
    ("PCIe 5.0 x16", "interconnects", "PCIe 5.0 x16", "host memory, NIC, local NVMe"),
    ("InfiniBand NDR, one port", "interconnects", "InfiniBand NDR", "every other node"),
)


def tiers(data_dir: Path) -> list[tuple[str, float, str]]:
    """(label, GB/s per direction for one GPU, what it reaches) of each tier, read from the data rows."""
    tables = {t: {r.name: r for r in validated_rows(data_dir, t)} for t in ("accelerators", "interconnects")}
    out = []
    for label, table, name, reach in TIERS:
        row = tables[table][name]
        value = row.memory_bandwidth_tbps * 1000 if table == "accelerators" else row.per_direction_gbps
        out.append((label, value, reach))
    return out


def _tiers(ax, data_dir: Path) -> None:
    rows = tiers(data_dir)
    bars = ax.barh([r[0] for r in rows], [r[1] for r in rows], edgecolor=INK, lw=0.5)
    for i, (bar, (_, value, reach)) in enumerate(zip(bars, rows, strict=True)):
        bar.set_facecolor(COLORS[i])
        bar.set_hatch(HATCHES[i])
        ax.text(value * 1.1, i, f"{value:,.0f} GB/s, to {reach}", va="center", fontsize=6.5)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlim(10, 3e4)
    ax.set_xlabel("GB/s per direction available to one GPU (log scale); HBM: read or write, total")
    ax.tick_params(axis="y", labelsize=7)


def fat_tree_endpoints(radix: int, tiers: int) -> int:
    """Most endpoints of a non-blocking fat tree of `tiers` levels of radix-k switches.

    That is k, k^2/2 or k^3/4; raises ValueError for another number of tiers.
    """
    if tiers not in (1, 2, 3):
        raise ValueError("1, 2 or 3 tiers")
    return radix * (radix // 2) ** (tiers - 1)


def _fat_tree_scale(ax, data_dir: Path) -> None:
    radices = [16, 32, 48, 64, 96, 128, 144, 192, 256]
    for t in (1, 2, 3):
        ax.plot(
            radices, [fat_tree_endpoints(k, t) for k in radices], marker="o", ms=3, label=f"{t} tier{'s' * (t > 1)}"
        )
    for k in (64, 144):
        for t in (2, 3):
            n = fat_tree_endpoints(k, t)
            ax.annotate(f"{n:,}", (k, n), (4, -9), textcoords="offset points", fontsize=6.5)
    for gpus in (1024, 16384):
        ax.axhline(gpus, color=INK, lw=0.7, ls=":")
        ax.text(17, gpus * 1.15, f"{gpus:,} GPUs, one NIC each", fontsize=6.5)
    ax.set_xscale("log", base=2)
    ax.set_xticks(radices, [str(k) for k in radices])
    ax.set_yscale("log")
    ax.set_xlabel("Switch radix k (ports at the NIC speed)")
    ax.set_ylabel("Most endpoints, non-blocking")
    ax.legend(fontsize=7, loc="upper left")


FIGURES = (
    Figure(
        "bandwidth-tiers",
        _tiers,
        "Horizontal bar chart, log scale, of the bandwidth one H100 GPU has to its memory, NVLink, PCIe and network",
        "What one GPU of an HGX H100 node with one NDR NIC per GPU can move per direction, from book/data: 3,350 "
        "GB/s of HBM3, 450 GB/s of NVLink 4 to the other GPUs of its node, 63 GB/s of PCIe 5.0 x16, and 50 GB/s of "
        "InfiniBand NDR to the rest of the cluster, 9x less than NVLink: why tensor and expert parallelism stay "
        "inside the NVLink domain. Peak link rates; measured rates are lower.",
        ("accelerators.yaml", "interconnects.yaml"),
        kind="wide",
    ),
    Figure(
        "fat-tree-scale",
        _fat_tree_scale,
        "Log-log plot of the most endpoints of a non-blocking fat tree against switch radix for one to three tiers",
        "Largest non-blocking fat tree of radix-k switches with all ports at one speed: k endpoints in one tier, "
        "k²/2 in two, k³/4 in three (the k-ary fat tree). 64-port switches reach 2,048 endpoints in two tiers "
        "and 65,536 in three; 144-port switches reach 10,368 in two, still short of 16,384 GPUs.",
    ),
)
