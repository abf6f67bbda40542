"""Figures of sharded checkpoints: which saved file each loading rank reads when DCP reshards on load.

The pieces are computed from the row ranges of the two shardings (torch.chunk's split: ceil(rows / ranks) rows per
rank, the last ones shorter), as in scripts/checkpoint/dcp_demo.py's 32-row weight saved on 2 ranks, loaded on 3.
"""

from __future__ import annotations

import math
from pathlib import Path

from .figure import Figure
from .style import INK, box, canvas

ROWS, SAVED_ON, LOADED_ON = 32, 2, 3


def chunks(rows: int, ranks: int) -> list[tuple[int, int]]:
    """Row ranges [start, stop) of each rank when dimension 0 of `rows` rows is split over `ranks`.

    As torch.chunk splits it (FSDP2's sharding): ceil(rows / ranks) rows per rank, fewer on the last ones.
    """
    size = math.ceil(rows / ranks)
    return [(min(r * size, rows), min((r + 1) * size, rows)) for r in range(ranks)]


def reads(rows: int, saved_on: int, loaded_on: int) -> list[list[tuple[int, int, int]]]:
    """For each loading rank, the (file, start row, stop row) pieces it reads.

    The pieces are the overlaps of its range with the ranges the saving ranks wrote (file i = rank i's __i_0.distcp).
    """
    saved = chunks(rows, saved_on)
    out = []
    for lo, hi in chunks(rows, loaded_on):
        out.append([(f, max(lo, a), min(hi, b)) for f, (a, b) in enumerate(saved) if max(lo, a) < min(hi, b)])
    return out


def _resharding(ax, data_dir: Path) -> None:
    scale = 0.13  # drawing units per row
    canvas(ax, 16, ROWS * scale + 2.0)
    top = ROWS * scale + 0.6

    def column(x: float, ranges: list[tuple[int, int]], name: str, title: str) -> None:
        ax.text(x + 1.4, top + 0.45, title, ha="center", fontsize=7, weight="bold")
        for i, (a, b) in enumerate(ranges):
            label = name.format(i=i) + f"\nrows {a}-{b - 1}"
            box(ax, x, top - b * scale, 2.8, (b - a) * scale * 0.96, label, i, fontsize=6)

    column(0.4, chunks(ROWS, SAVED_ON), "rank {i}", f"save on {SAVED_ON} ranks")
    column(4.9, chunks(ROWS, SAVED_ON), "file __{i}_0.distcp", "files written")
    column(12.6, chunks(ROWS, LOADED_ON), "rank {i}", f"load on {LOADED_ON} ranks")
    for a, b in chunks(ROWS, SAVED_ON):
        mid = top - (a + b) / 2 * scale
        ax.annotate("", (4.9, mid), (3.2, mid), arrowprops={"arrowstyle": "-|>", "color": INK, "lw": 0.8})
    for pieces in reads(ROWS, SAVED_ON, LOADED_ON):
        for f, a, b in pieces:
            mid = top - (a + b) / 2 * scale
            ax.annotate("", (12.6, mid), (7.7, mid), arrowprops={"arrowstyle": "-|>", "color": INK, "lw": 0.8})
            ax.text(
                10.15,
                mid,
                f"rows {a}-{b - 1} from file {f}",
                ha="center",
                va="center",
                fontsize=6,
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.4},
            )
    ax.text(0.4, 0.1, ".metadata (written once) maps each global row range to its file and offset", fontsize=6.5)


FIGURES = (
    Figure(
        "dcp-resharding",
        _resharding,
        "Diagram of a 32-row weight saved by two ranks into two files and read back by three ranks, piece by piece",
        "Resharding on load with PyTorch Distributed Checkpoint, for the chapter's demo weight of 32 rows: two "
        "saving ranks write rows 0-15 and 16-31 to one file each; three loading ranks need rows 0-10, 11-21 and "
        "22-31, so rank 1 reads rows 11-15 from one file and 16-21 from the other, guided by .metadata. Computed "
        "from the two row splits by checkpointing.py: reads.",
        kind="diagram",
    ),
)
