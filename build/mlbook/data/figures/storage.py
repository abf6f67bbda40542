"""Figures of storage: drive throughput from the spec data, and checkpoint write time against bandwidth."""

from __future__ import annotations

from pathlib import Path

from .figure import Figure, validated_rows
from .style import COLORS, HATCHES, INK


def _checkpoint_time(ax, data_dir: Path) -> None:
    bandwidths = [1, 2, 5, 10, 20, 50, 100, 200]  # GB/s aggregate write
    for params in (8e9, 70e9, 405e9):
        size = params * 14  # bytes: bf16 weights + fp32 master weights and two Adam moments
        ax.loglog(
            bandwidths,
            [size / (b * 1e9) / 60 for b in bandwidths],
            marker="o",
            ms=3,
            label=f"{params / 1e9:.0f}B parameters ({size / 1e12:.2f} TB)",
        )
    ax.set_xlabel("Aggregate write bandwidth to storage (GB/s)")
    ax.set_ylabel("Time to write one checkpoint (minutes)")
    ax.legend(fontsize=7)


def _storage_drives(ax, data_dir: Path) -> None:
    rows = sorted(validated_rows(data_dir, "storage"), key=lambda r: r.seq_read_gbps)
    ys = range(len(rows))
    ax.barh(
        [y + 0.2 for y in ys],
        [r.seq_read_gbps for r in rows],
        height=0.4,
        color=COLORS[0],
        edgecolor=INK,
        linewidth=0.5,
        label="sequential",
    )
    random = [r.rand_read_kiops * 4096e3 / 1e9 for r in rows]
    ax.barh(
        [y - 0.2 for y in ys],
        random,
        height=0.4,
        color=COLORS[1],
        hatch=HATCHES[1],
        edgecolor=INK,
        linewidth=0.5,
        label="4 KiB random",
    )
    ax.set_yticks(list(ys), [r.name for r in rows])
    ax.set_xscale("log")
    ax.set_xlabel("Read throughput per drive (GB/s, log scale; random = IOPS x 4 KiB)")
    ax.tick_params(axis="y", labelsize=6.5)
    ax.legend(fontsize=7)


FIGURES = (
    Figure(
        "checkpoint-write-time",
        _checkpoint_time,
        "Log-log plot of checkpoint write time in minutes against storage bandwidth for three model sizes",
        "Time to write a full training checkpoint (14 bytes per parameter: bf16 weights, fp32 master "
        "weights and two Adam moments) against aggregate storage write bandwidth.",
    ),
    Figure(
        "storage-drives",
        _storage_drives,
        "Horizontal bar chart of sequential and 4 KiB random read throughput per drive, log scale",
        "Sequential read throughput against 4 KiB random-read throughput (IOPS x 4 KiB) per drive, from "
        "vendor ratings. Data: book/data/storage.yaml.",
        ("storage.yaml",),
    ),
)
