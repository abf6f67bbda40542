"""Figures of accelerator specs: peak compute against HBM bandwidth, and FLOP per byte at peak."""

from __future__ import annotations

from pathlib import Path

from .figure import Figure, validated_rows
from .style import COLORS, INK


def _accelerators(data_dir: Path) -> list:
    return [r for r in validated_rows(data_dir, "accelerators") if r.dense_tflops.bf16 and r.memory_bandwidth_tbps]


def _peak_vs_bandwidth(ax, data_dir: Path) -> None:
    # Alternate label sides so devices with near-identical specs stay readable.
    for i, row in enumerate(sorted(_accelerators(data_dir), key=lambda r: (r.dense_tflops.bf16, r.name))):
        x, y = row.memory_bandwidth_tbps, row.dense_tflops.bf16
        ax.scatter(x, y, s=28, color=COLORS[0], edgecolor=INK, linewidth=0.5)
        offset, align = ((6, -9), "left") if i % 2 else ((-6, 5), "right")
        ax.annotate(row.name, (x, y), fontsize=6.5, xytext=offset, textcoords="offset points", ha=align)
    ax.set_xlabel("HBM bandwidth per device (TB/s)")
    ax.set_ylabel("Dense BF16 peak per device (TFLOPS)")


def _flops_per_byte(ax, data_dir: Path) -> None:
    rows = sorted(_accelerators(data_dir), key=lambda r: r.dense_tflops.bf16 / r.memory_bandwidth_tbps)
    ratios = [r.dense_tflops.bf16 / r.memory_bandwidth_tbps for r in rows]
    ax.barh([r.name for r in rows], ratios, color=COLORS[0], edgecolor=INK, linewidth=0.5)
    for y, value in enumerate(ratios):
        ax.text(value + 3, y, f"{value:.0f}", va="center", fontsize=7)
    ax.set_xlabel("FLOP per byte of HBM traffic at peak (dense BF16 TFLOPS / TB/s)")
    ax.tick_params(axis="y", labelsize=7)


FIGURES = (
    Figure(
        "peak-vs-bandwidth",
        _peak_vs_bandwidth,
        "Scatter plot of dense BF16 TFLOPS against HBM bandwidth for the accelerators in the spec table",
        "Dense BF16 peak against HBM bandwidth, per device. Data: book/data/accelerators.yaml.",
        ("accelerators.yaml",),
    ),
    Figure(
        "flops-per-byte",
        _flops_per_byte,
        "Bar chart of FLOP per byte at peak (dense BF16 TFLOPS divided by TB/s) for each accelerator",
        "How many FLOP each device can do per byte read from HBM at peak: below this arithmetic intensity "
        "a kernel is memory-bound. Data: book/data/accelerators.yaml.",
        ("accelerators.yaml",),
    ),
)
