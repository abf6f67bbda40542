"""Figures of the collectives: each as its buffers before and after on four ranks, and ring against tree steps.

The "after" buffers are computed from the "before" ones by the collective's definition (``after``), so the drawing
shows what the operation does, not a hand-drawn picture of it; the tests check ``after`` against the definitions.
"""

from __future__ import annotations

import math
from pathlib import Path

from .figure import Figure
from .style import box, canvas

RANKS = 4


def before(op: str) -> list[list[str]]:
    """Each rank's buffer before the collective: a list of RANKS chunk labels per rank ("" = unused slot)."""
    n = RANKS
    if op in ("all-reduce", "reduce-scatter", "reduce"):
        return [[f"{'abcd'[c]}{r}" for c in range(n)] for r in range(n)]  # chunk c of rank r's data
    if op == "all-gather":
        return [[f"x{r}" if c == r else "" for c in range(n)] for r in range(n)]
    if op == "broadcast":
        return [["a0", "b0", "c0", "d0"] if r == 0 else [""] * n for r in range(n)]
    if op == "all-to-all":
        return [[f"{r}>{c}" for c in range(n)] for r in range(n)]  # the piece rank r sends to rank c
    raise KeyError(op)


def after(op: str, buffers: list[list[str]]) -> list[list[str]]:
    """Each rank's buffer after the collective, computed from the buffers before it by the collective's definition.

    A sum of chunks is written "a0+a1+a2+a3"; the reduce's root and the broadcast's source is rank 0.
    """
    n = len(buffers)
    total = ["+".join(buffers[r][c] for r in range(n)) for c in range(n)]
    if op == "all-reduce":
        return [list(total) for _ in range(n)]
    if op == "reduce":
        return [list(total) if r == 0 else list(buffers[r]) for r in range(n)]
    if op == "reduce-scatter":
        return [[total[c] if c == r else "" for c in range(n)] for r in range(n)]
    if op == "all-gather":
        gathered = [next(b[c] for b in buffers if b[c]) for c in range(n)]
        return [list(gathered) for _ in range(n)]
    if op == "broadcast":
        return [list(buffers[0]) for _ in range(n)]
    if op == "all-to-all":
        return [[buffers[s][r] for s in range(n)] for r in range(n)]  # rank r receives piece s>r from each s
    raise KeyError(op)


def _short(label: str) -> str:
    """A sum of four chunks shown as Σa, so it fits a cell."""
    return f"Σ{label[0]}" if label.count("+") == RANKS - 1 else label


def _buffers(ax, op: str) -> None:
    n, cell = RANKS, 1.0
    canvas(ax, 2 * n + 3.2, n + 1.4)
    states = before(op), after(op, before(op))
    for side, (title, state) in enumerate(zip(("before", "after"), states, strict=True)):
        x0 = 1.0 + side * (n + 1.6)
        ax.text(x0 + n / 2, n + 0.9, f"{title} {op}", ha="center", fontsize=8, weight="bold")
        for r in range(n):
            y = n - 1 - r + 0.2
            if side == 0:
                ax.text(x0 - 0.15, y + 0.5, f"rank {r}", ha="right", va="center", fontsize=7)
            for c in range(n):
                label = state[r][c]
                # Shade by the chunk's letter (or its source rank), so equal data looks alike in grayscale too.
                shade = (
                    ("abcd".index(label[0]) + 1)
                    if label[:1] in tuple("abcd")
                    else (int(label[0]) + 1 if label[:1].isdigit() else 1)
                )
                if label.startswith("x"):
                    shade = int(label[1]) + 1
                if label:
                    box(ax, x0 + c * cell, y, cell * 0.95, 0.9, _short(label), shade)
                else:
                    box(ax, x0 + c * cell, y, cell * 0.95, 0.9, "", 3, alpha=0.25)
    ax.annotate("", (n + 2.5, n / 2), (n + 1.3, n / 2), arrowprops={"arrowstyle": "-|>", "lw": 1.2})


def _figure(op: str, what: str) -> Figure:
    def draw(ax, data_dir: Path, op=op) -> None:
        _buffers(ax, op)

    draw.__name__ = f"_{op.replace('-', '_')}"
    return Figure(
        f"collective-{op}",
        draw,
        f"Two four-by-four grids of buffer chunks on ranks 0 to 3, before and after a {op}: {what}",
        f"{op.capitalize()} on four ranks: each row is one rank's buffer in four chunks, before and after. "
        f"{what[0].upper()}{what[1:]}. Σa is the sum a0+a1+a2+a3 of chunk a over the ranks. Drawn from the "
        "collective's definition (build/mlbook/data/figures/collectives.py: after).",
        kind="diagram",
    )


def _ring_vs_tree(ax, data_dir: Path) -> None:
    ranks = [2**k for k in range(1, 15)]
    ax.plot(ranks, [2 * (n - 1) for n in ranks], label="ring all-reduce: 2(n-1) steps")
    ax.plot(ranks, [2 * math.log2(n) for n in ranks], label="tree all-reduce: 2 log2(n) steps (reduce, then broadcast)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("Ranks n")
    ax.set_ylabel("Latency-bound steps in sequence")
    ax.legend()


def _ring_steps(ax, data_dir: Path) -> None:
    # Which chunk each rank sends at each step of a ring reduce-scatter then all-gather (n = 4).
    n = RANKS
    canvas(ax, 2 * (n - 1) * 1.1 + 1.6, n + 1.6)
    for step in range(2 * (n - 1)):
        x = 1.4 + step * 1.1
        ax.text(x + 0.5, n + 1.0, f"step {step + 1}", ha="center", fontsize=7)
        for r in range(n):
            chunk = (r - step) % n if step < n - 1 else (r + 1 - (step - (n - 1))) % n
            y = n - 1 - r + 0.5
            box(ax, x, y, 1.0, 0.8, f"{'abcd'[chunk]} → {(r + 1) % n}", chunk + 1, fontsize=6.5)
    for r in range(n):
        ax.text(1.3, n - 1 - r + 0.9, f"rank {r}", ha="right", va="center", fontsize=7)
    ax.text(1.4 + 1.1 * (n - 1) / 2, 0.1, "reduce-scatter: add and pass on", ha="center", fontsize=7)
    ax.text(1.4 + 1.1 * (n - 1) * 1.5, 0.1, "all-gather: copy and pass on", ha="center", fontsize=7)


FIGURES = (
    _figure("all-reduce", "every rank ends with the sum of every chunk over all ranks"),
    _figure("reduce-scatter", "rank r ends with only chunk r of the sum, a quarter of the buffer"),
    _figure("all-gather", "every rank contributes one chunk and ends with all of them"),
    _figure("broadcast", "rank 0's buffer is copied to every rank"),
    _figure("reduce", "rank 0 ends with the sum; the other ranks' buffers are unchanged"),
    _figure("all-to-all", "rank r's piece for rank c ends on rank c: the transpose of the grid"),
    Figure(
        "ring-allreduce-steps",
        _ring_steps,
        "Grid of six steps by four ranks showing which chunk each rank sends to its ring neighbour",
        "Ring all-reduce on four ranks: at each of the 2(n-1) = 6 steps every rank sends one chunk (a quarter "
        "of the buffer) to rank r+1; the first 3 steps add what arrives (reduce-scatter), the last 3 copy it "
        "(all-gather). Schedule computed in build/mlbook/data/figures/collectives.py.",
        kind="diagram",
    ),
    Figure(
        "ring-vs-tree-steps",
        _ring_vs_tree,
        "Log-log plot of the number of sequential steps of ring and tree all-reduce against rank count",
        "Sequential steps, each paying the per-message latency a once, of a ring all-reduce, 2(n-1), and of a "
        "binary-tree all-reduce (reduce up, broadcast down), 2 log2(n): at thousands of ranks the ring's "
        "latency term dominates small messages, which is why NCCL also has tree algorithms.",
    ),
)
