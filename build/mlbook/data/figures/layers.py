"""Figures of communication inside a layer: the tensor-parallel MLP, ring attention's KV passing, MoE dispatch/combine.

The ring-attention and MoE pictures are computed from their rules (which KV block a rank holds at each step, which
expert a token is routed to), so the tests can check what the drawing claims.
"""

from __future__ import annotations

from pathlib import Path

from .figure import Figure
from .style import INK, arrow, box, canvas

HIDDEN, TP = 4096, 2  # the MLP drawn: h = 4096, a 4h GeLU MLP, split over t = 2 GPUs


def _tp_mlp(ax, data_dir: Path) -> None:
    h, t = HIDDEN, TP
    canvas(ax, 17, 6.2)
    for g in range(t):
        y = 3.4 - g * 2.3
        ax.text(0.1, y + 0.45, f"GPU {g}", fontsize=7.5, weight="bold", va="center")
        box(ax, 1.3, y, 1.6, 0.9, "X\n(b s x h)", 3, fontsize=6)
        box(ax, 3.9, y, 2.0, 0.9, f"A{g}: columns\n{h} x {4 * h // t}", 0, fontsize=6)
        box(ax, 6.6, y, 1.7, 0.9, f"Y{g} = GeLU(X A{g})", 2, fontsize=6)
        box(ax, 9.1, y, 2.0, 0.9, f"B{g}: rows\n{4 * h // t} x {h}", 0, fontsize=6)
        box(ax, 11.8, y, 1.7, 0.9, f"Z{g} = Y{g} B{g}\n(partial sum)", 1, fontsize=6)
        box(ax, 15.0, y, 1.6, 0.9, "Z = Z0 + Z1\n(b s x h)", 3, fontsize=6)
        for a, b in ((2.9, 3.9), (5.9, 6.6), (8.3, 9.1), (11.1, 11.8)):
            arrow(ax, (a, y + 0.45), (b, y + 0.45))
        arrow(ax, (13.5, y + 0.45), (15.0, y + 0.45))
    ax.plot([14.25, 14.25], [1.1, 4.3], color=INK, lw=1.4)
    ax.text(14.25, 4.55, "g: all-reduce\n(backward: identity)", ha="center", fontsize=6.5)
    ax.plot([0.95, 0.95], [1.1, 4.3], color=INK, lw=1.4, ls="--")
    ax.text(1.1, 4.55, "f: identity\n(backward: all-reduce)", ha="left", fontsize=6.5)
    ax.text(
        8.5,
        0.35,
        "no communication between the two matrix multiplies: GeLU acts on each column block alone",
        ha="center",
        fontsize=6.5,
    )


def ring_block(rank: int, step: int, ranks: int) -> int:
    """Index of the key/value block that `rank` holds at ring step `step`.

    A rank starts with its own block, then receives the one of rank - 1 at each step.
    """
    return (rank - step) % ranks


def causal_work(q_chunks: list[int], kv_chunks: list[int]) -> float:
    """Attention work of query chunks against key/value chunks under a causal mask, in chunk-pairs.

    A chunk attends fully to every earlier chunk (1), half to its own (0.5, the diagonal) and not to later ones (0).
    """
    return sum(1.0 if k < q else 0.5 if k == q else 0.0 for q in q_chunks for k in kv_chunks)


def zigzag_work(ranks: int) -> list[float]:
    """Causal work per rank under the load-balanced split, in units of one naive block (4 chunk-pairs).

    The sequence is cut into 2 x ranks chunks and rank r holds chunks r and 2 ranks - 1 - r.
    """
    n = 2 * ranks
    return [causal_work([r, n - 1 - r], list(range(n))) / 4 for r in range(ranks)]


CP = 4


def _ring_attention(ax, data_dir: Path) -> None:
    c = CP
    canvas(ax, 4.2 + c * 2.2 + 2.4, c + 1.8)
    for step in range(c):
        ax.text(3.0 + step * 2.2 + 1.0, c + 1.1, f"step {step + 1}", ha="center", fontsize=7)
    for r in range(c):
        y = c - 1 - r + 0.55
        ax.text(2.8, y + 0.4, f"rank {r}: Q{r}", ha="right", va="center", fontsize=7)
        for step in range(c):
            j = ring_block(r, step, c)
            work = causal_work([r], [j])
            text = f"Q{r} · KV{j}" + ("" if work == 1 else "\ndiagonal, half" if work else "\nmasked")
            box(
                ax, 3.0 + step * 2.2, y, 2.0, 0.8, text, (j + 1) if work else 3, fontsize=5.8, alpha=1 if work else 0.35
            )
            if step < c - 1 and r < c - 1:
                ax.annotate(
                    "",
                    (3.0 + (step + 1) * 2.2 + 0.1, y - 0.25),
                    (3.0 + step * 2.2 + 1.9, y + 0.1),
                    arrowprops={"arrowstyle": "-|>", "color": INK, "lw": 0.5},
                )
        ax.text(3.0 + c * 2.2 + 0.2, y + 0.4, f"work {causal_work([r], list(range(c))):g}", va="center", fontsize=7)
    ax.text(
        3.0,
        0.1,
        "KV blocks travel from rank r to r+1 (3 to 0) each step while each rank computes on the block it holds",
        fontsize=6.5,
    )


# Top-1 expert of each of the 4 tokens on each of 4 GPUs (GPU e holds expert e): a stated, uneven example.
ROUTES = ((2, 0, 2, 1), (3, 2, 0, 2), (1, 2, 3, 0), (2, 1, 3, 2))


def dispatch(routes: tuple[tuple[int, ...], ...]) -> list[list[tuple[int, int]]]:
    """Tokens (home GPU, index) that each expert GPU holds after the dispatch all-to-all, by source GPU order."""
    experts = len(routes)
    return [[(g, t) for g, row in enumerate(routes) for t, e in enumerate(row) if e == x] for x in range(experts)]


def combine(routes: tuple[tuple[int, ...], ...]) -> list[list[tuple[int, int]]]:
    """Tokens on each home GPU after the combine all-to-all: every token back in its place, as (expert, index)."""
    return [[(e, t) for t, e in enumerate(row)] for row in routes]


def _moe(ax, data_dir: Path) -> None:
    n = len(ROUTES)
    held = dispatch(ROUTES)
    width = max(max(len(h) for h in held), n)
    col = width * 0.62 + 0.4
    canvas(ax, 1.6 + 3 * col + 2 * 1.3, n * 1.15 + 1.4)
    titles = ("before dispatch: tokens at home", "after dispatch: at their expert", "after combine: back home")
    for k, title in enumerate(titles):
        x0 = 1.6 + k * (col + 1.3)
        ax.text(x0 + col / 2, n * 1.15 + 0.95, title, ha="center", fontsize=7, weight="bold")
        for g in range(n):
            y = (n - 1 - g) * 1.15 + 0.5
            if k == 0:
                ax.text(1.45, y + 0.3, f"GPU {g}", ha="right", va="center", fontsize=7)
                cells = [(f"→E{e}", e + 1) for e in ROUTES[g]]
            elif k == 1:
                cells = [(f"{src}.{t}", g + 1) for src, t in held[g]]
            else:
                cells = [(f"E{e}(x)", e + 1) for e, _ in combine(ROUTES)[g]]
            for i, (label, shade) in enumerate(cells):
                box(ax, x0 + i * 0.62, y, 0.58, 0.6, label, shade, fontsize=5)
        if k < 2:
            y_arrow = n * 1.15 + 0.35
            arrow(ax, (x0 + col * 0.7, y_arrow), (x0 + col + 1.3 + col * 0.3, y_arrow), "all-to-all")
    ax.text(
        1.6,
        0.05,
        "a.b = token b of GPU a; GPU e holds expert Ee; shading = the expert a token is routed to",
        fontsize=6.5,
    )


FIGURES = (
    Figure(
        "tp-mlp-split",
        _tp_mlp,
        "Diagram of a tensor-parallel MLP on two GPUs: A split by columns, GeLU, B split by rows, then one all-reduce",
        "Megatron-style tensor parallelism of a 4h MLP (h = 4096) over t = 2 GPUs: the first weight is split by "
        "columns (4096 x 8192 per GPU), so GeLU needs no communication; the second by rows (8192 x 4096), so each "
        "GPU holds a partial sum Z0 or Z1 and one all-reduce (g) gives every GPU Z. In the backward pass the "
        "all-reduce moves to the input (f). Drawn from the split rules in Shoeybi et al., 2019.",
        kind="diagram",
    ),
    Figure(
        "ring-attention-steps",
        _ring_attention,
        "Grid of four ranks by four ring steps showing which key-value block each rank's queries attend to",
        "Ring attention with context parallelism c = 4 and a causal mask, the sequence cut into 4 contiguous "
        "blocks: rank r keeps its queries Qr and receives the next KV block from rank r-1 at each step. Blocks "
        "later than the queries are masked, so the work per rank is 0.5, 1.5, 2.5 and 3.5 blocks; cutting the "
        "sequence into 8 chunks and giving rank r chunks r and 7-r evens it to 2 blocks each. Computed by "
        "layers.py: ring_block, causal_work.",
        kind="diagram",
    ),
    Figure(
        "moe-dispatch-combine",
        _moe,
        "Three columns of four GPUs: tokens at home, the same tokens grouped at their expert's GPU, then back home",
        "Expert parallelism over 4 GPUs with one expert each and top-1 routing of 4 tokens per GPU (a stated "
        "routing): the dispatch all-to-all moves each token to its expert's GPU, the combine all-to-all returns the "
        "expert outputs to the token's home. The routing is uneven: expert E2 receives 7 of the 16 tokens and E0 "
        "only 3, and every GPU waits for the busiest. Computed by layers.py: dispatch, combine.",
        kind="diagram",
    ),
)
