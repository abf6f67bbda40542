"""Figures of time: the 1F1B pipeline schedule, a training step's compute/communication overlap, a request's life."""

from __future__ import annotations

from pathlib import Path

from .figure import Figure
from .style import INK, arrow, box, canvas


def one_f_one_b(stages: int, micro: int, fwd: float = 1.0, bwd: float = 2.0) -> list[tuple[int, str, int, float]]:
    """The 1F1B pipeline schedule as (stage, "F" or "B", micro-batch, start time) in units of one forward.

    Stage s runs stages-1-s warm-up forwards, then alternates one forward and one backward, then drains the
    backwards; a forward waits for the previous stage's forward of the same micro-batch, a backward for the next
    stage's backward. Raises ValueError if micro < stages.
    """
    if micro < stages:
        raise ValueError("1F1B needs at least as many micro-batches as stages")
    orders = []
    for s in range(stages):
        warm = stages - 1 - s
        order = [("F", i) for i in range(warm)]
        f, b = warm, 0
        while b < micro:
            if f < micro:
                order.append(("F", f))
                f += 1
            order.append(("B", b))
            b += 1
        orders.append(order)
    done: dict[tuple[int, str, int], float] = {}
    free, pos, out = [0.0] * stages, [0] * stages, []
    while any(pos[s] < len(orders[s]) for s in range(stages)):
        for s in range(stages):
            if pos[s] == len(orders[s]):
                continue
            kind, i = orders[s][pos[s]]
            dep = (s - 1, "F", i) if kind == "F" else (s + 1, "B", i)
            if kind == "F" and s == 0 or kind == "B" and s == stages - 1:
                dep = (s, "F", i) if kind == "B" else None
            if dep is not None and dep not in done:
                continue
            start = max(free[s], done[dep] if dep else 0.0)
            free[s] = done[(s, kind, i)] = start + (fwd if kind == "F" else bwd)
            out.append((s, kind, i, start))
            pos[s] += 1
    return out


def _pipeline_schedule(ax, data_dir: Path) -> None:
    stages, micro = 4, 8
    ops = one_f_one_b(stages, micro)
    end = max(start + (1 if k == "F" else 2) for _, k, _, start in ops)
    canvas(ax, end + 2, stages + 1.2)
    for s, kind, i, start in ops:
        box(
            ax,
            1.5 + start,
            stages - 1 - s + 0.6,
            1 if kind == "F" else 2,
            0.8,
            f"{kind}{i + 1}",
            0 if kind == "F" else 1,
            fontsize=6,
        )
    for s in range(stages):
        ax.text(1.3, stages - 1 - s + 1.0, f"stage {s}", ha="right", va="center", fontsize=7)
    ax.text(
        1.5 + end / 2,
        0.15,
        f"time (one forward = 1 unit, backward = 2); step = {end:.0f} units, of which {3 * micro} busy per stage",
        ha="center",
        fontsize=7,
    )


def _request(ax, data_dir: Path) -> None:
    # An 8B-class model in bf16 on one GPU, batch 1: prefill compute-bound, decode bound by reading the weights.
    queue, prompt, flops, weights, hbm, out_tokens = 0.05, 2000, 400e12, 16e9, 3.35e12, 8
    prefill = 2 * 8e9 * prompt / flops  # 0.08 s
    tpot = weights / hbm  # 4.8 ms per output token
    scale = 40  # drawing units per second
    canvas(ax, 10.6, 3.2)
    x = 0.3
    box(ax, x, 1.6, queue * scale, 0.7, "queued", 3)
    box(ax, x + queue * scale, 1.6, prefill * scale, 0.7, "prefill: 2,000 tokens", 0)
    t0 = x + (queue + prefill) * scale
    for k in range(out_tokens):
        box(ax, t0 + k * tpot * scale * 3, 1.6, tpot * scale * 3 * 0.95, 0.7, f"t{k + 2}", 1, fontsize=6)
    ax.plot([t0], [1.95], marker="v", color=INK)
    arrow(ax, (x, 1.2), (t0, 1.2), f"TTFT = queue + prefill = {(queue + prefill) * 1e3:.0f} ms", style="<|-|>")
    arrow(ax, (t0, 2.7), (t0 + tpot * scale * 3, 2.7), "", style="<|-|>")
    ax.text(t0 + tpot * scale * 1.5, 2.95, f"TPOT = {tpot * 1e3:.1f} ms (time axis x3 here)", ha="left", fontsize=7)
    ax.text(x, 0.5, "request arrives", fontsize=7)
    ax.text(t0, 0.5, "first token (t1) leaves with the prefill", fontsize=7)


def _overlap(ax, data_dir: Path) -> None:
    # Backward of 8 layer buckets, 10 ms each; each bucket's gradient all-reduce takes 6 ms and starts when both
    # its gradients are ready and the previous all-reduce is done (one communication stream).
    layers, back, comm, fwd = 8, 10.0, 6.0, 40.0
    canvas(ax, 140, 4)
    scale = 1.0
    box(ax, 5, 2.4, fwd * scale, 0.8, "forward 40 ms", 0)
    busy = 0.0
    for k in range(layers):
        start = 5 + fwd + k * back
        box(ax, start, 2.4, back * 0.95, 0.8, f"B{layers - k}", 2, fontsize=6)
        ready = start + back
        begin = max(ready, busy)
        busy = begin + comm
        box(ax, begin, 1.2, comm * 0.95, 0.8, "AR", 1, fontsize=6)
    end_compute = 5 + fwd + layers * back
    ax.text(2, 2.8, "compute", ha="right", va="center", fontsize=7)
    ax.text(2, 1.6, "NCCL", ha="right", va="center", fontsize=7)
    ax.plot([end_compute, end_compute], [0.9, 3.4], color=INK, ls=":", lw=0.9)
    ax.plot([busy, busy], [0.9, 3.4], color=INK, ls="--", lw=0.9)
    arrow(ax, (end_compute, 0.6), (busy, 0.6), "", style="<|-|>")
    ax.text(busy + 2, 0.6, f"exposed: {busy - end_compute:.0f} ms of {layers * comm:.0f} ms", va="center", fontsize=7)


FIGURES = (
    Figure(
        "pipeline-1f1b-schedule",
        _pipeline_schedule,
        "Gantt chart of forward and backward micro-batch boxes on four pipeline stages under the 1F1B schedule",
        "The 1F1B schedule on p = 4 stages with m = 8 micro-batches, a backward taking twice a forward: the empty "
        "slots at the start and end are the bubble, (p-1)/(m+p-1) = 3/11 of the step. Schedule computed by "
        "build/mlbook/data/figures/timeline.py: one_f_one_b.",
        kind="diagram",
    ),
    Figure(
        "training-step-overlap",
        _overlap,
        "Timeline of a training step: forward, eight backward buckets, and gradient all-reduces overlapping them",
        "Data-parallel step with bucketed gradient all-reduce (as DDP does): each of 8 buckets' all-reduce "
        "(6 ms) starts once its backward (10 ms) is done, so only the last bucket's is exposed. Times are a "
        "stated model, not a measurement.",
        kind="wide",
    ),
    Figure(
        "request-timeline",
        _request,
        "Timeline of one inference request: queueing, prefill, then one box per output token, with TTFT and TPOT",
        "One request to an 8B-class bf16 model at batch 1: 50 ms queued (assumed), prefill of 2,000 tokens at "
        "2 x 8e9 x 2,000 FLOP / 400 TFLOPS = 80 ms, then each output token reads the 16 GB of weights at "
        "3.35 TB/s, TPOT = 4.8 ms. TTFT = 130 ms.",
        kind="wide",
    ),
)
