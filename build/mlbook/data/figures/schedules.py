"""Figures of computed schedules: interleaved 1F1B against plain 1F1B, a ZeRO-3/FSDP step, and serving batches.

Each schedule is computed by a small simulator here (in-order execution per device or stream, each operation
starting when its dependencies have finished), so the drawing shows what the rules give, and the tests check the
simulators against the closed-form results the chapters quote.
"""

from __future__ import annotations

from pathlib import Path

from .figure import Figure
from .style import INK, arrow, box, canvas

Op = tuple[int, int, str, int]  # (device, model chunk, "F" or "B", micro-batch)


def interleaved_orders(stages: int, micro: int, chunks: int) -> list[list[tuple[int, str, int]]]:
    """Per device, its (chunk, "F"/"B", micro-batch) operations in order, as Megatron-LM's schedules run them.

    chunks == 1 is plain 1F1B: stages-1-d warm-up forwards on device d, then one forward one backward, then the
    remaining backwards. chunks > 1 is the interleaved schedule (Narayanan et al., SC21): device d holds chunks
    (virtual stages d, d + stages, ...); forwards go through groups of `stages` micro-batches chunk by chunk,
    backwards in reverse chunk order, with 2(stages-1-d) + (chunks-1) stages warm-up forwards.
    Raises ValueError if micro < stages, or if chunks > 1 and micro is not a multiple of stages.
    """
    if micro < stages:
        raise ValueError("1F1B needs at least as many micro-batches as stages")
    if chunks > 1 and micro % stages:
        raise ValueError("the interleaved schedule needs micro-batches in multiples of the stage count")
    total = micro * chunks

    def op(k: int, forward: bool) -> tuple[int, int]:
        group, pos = divmod(k, stages * chunks)
        chunk = pos // stages
        return (chunk if forward else chunks - 1 - chunk), group * stages + pos % stages

    orders = []
    for d in range(stages):
        warm = stages - 1 - d if chunks == 1 else min(2 * (stages - 1 - d) + (chunks - 1) * stages, total)
        seq = [("F", k) for k in range(warm)]
        for k in range(total - warm):
            seq += [("F", k + warm), ("B", k)]
        seq += [("B", k) for k in range(total - warm, total)]
        orders.append([(*op(k, kind == "F")[:1], kind, op(k, kind == "F")[1]) for kind, k in seq])
    return orders


def pipeline_times(
    stages: int, micro: int, chunks: int = 1, fwd: float = 1.0, bwd: float = 2.0
) -> dict[Op, tuple[float, float]]:
    """Start and end time of every operation of the (interleaved) 1F1B schedule, in units of one stage's forward.

    A chunk's forward takes fwd / chunks and its backward bwd / chunks. Virtual stage chunk x stages + d runs on
    device d; a forward waits for the previous virtual stage's forward of that micro-batch, a backward for the next
    one's backward (the last stage's backward for its own forward). Raises RuntimeError if the orders deadlock.
    """
    orders = interleaved_orders(stages, micro, chunks)
    last = stages * chunks - 1
    done: dict[Op, tuple[float, float]] = {}
    free, pos = [0.0] * stages, [0] * stages
    while any(pos[d] < len(orders[d]) for d in range(stages)):
        progressed = False
        for d in range(stages):
            while pos[d] < len(orders[d]):
                chunk, kind, i = orders[d][pos[d]]
                v = chunk * stages + d
                if kind == "F":
                    dep = None if v == 0 else ((v - 1) % stages, (v - 1) // stages, "F", i)
                else:
                    dep = (d, chunk, "F", i) if v == last else ((v + 1) % stages, (v + 1) // stages, "B", i)
                if dep is not None and dep not in done:
                    break
                start = max(free[d], done[dep][1] if dep else 0.0)
                end = start + (fwd if kind == "F" else bwd) / chunks
                done[(d, chunk, kind, i)] = (start, end)
                free[d] = end
                pos[d] += 1
                progressed = True
        if not progressed:
            raise RuntimeError("pipeline orders deadlock")
    return done


def _gantt(ax, times: dict[Op, tuple[float, float]], stages: int, y0: float, x0: float, title: str) -> float:
    end = max(e for _, e in times.values())
    ax.text(x0, y0 + stages + 0.25, title, fontsize=7.5, weight="bold")
    for (d, chunk, kind, i), (s, e) in times.items():
        shade = (0 if kind == "F" else 1) + 2 * chunk
        label = f"{kind}{i + 1}" if e - s >= 0.99 else f"{i + 1}"
        box(ax, x0 + s, y0 + stages - 1 - d + 0.1, (e - s) * 0.97, 0.8, label, shade, fontsize=5)
    for d in range(stages):
        ax.text(x0 - 0.3, y0 + stages - 1 - d + 0.5, f"GPU {d}", ha="right", va="center", fontsize=6.5)
    return end


def _interleaved(ax, data_dir: Path) -> None:
    p, m = 4, 8
    plain, inter = pipeline_times(p, m, 1), pipeline_times(p, m, 2)
    t1, t2 = max(e for _, e in plain.values()), max(e for _, e in inter.values())
    canvas(ax, t1 + 2.5, 2 * p + 2.6)
    _gantt(ax, plain, p, p + 1.6, 1.8, f"1F1B: step = {t1:g} units, bubble {1 - 3 * m / t1:.0%}")
    _gantt(ax, inter, p, 0.6, 1.8, f"interleaved, 2 chunks per GPU: step = {t2:g} units, bubble {1 - 3 * m / t2:.0%}")
    ax.text(
        1.8,
        0.05,
        "Fn/Bn or n: forward/backward of micro-batch n; chunk 1: F plain, B ///; chunk 2: F dotted, B crossed; "
        "F = 1 unit, B = 2",
        fontsize=6.5,
    )


def fsdp_step(layers: int, gather: float, fwd: float, bwd: float, scatter: float) -> dict[str, tuple[float, float]]:
    """Start and end (ms) of each operation of a ZeRO-3/FSDP step on one compute and one communication stream.

    Every layer's weights are all-gathered before its forward ("AG Fi") and again before its backward ("AG Bi");
    its gradients are reduce-scattered after its backward ("RS i"). The communication stream runs in the order an
    FSDP-style prefetch issues them (the next gather before the current reduce-scatter) and holds at most two
    gathered layers: a gather waits until the compute two layers back has finished. Compute op "Fi"/"Bi" waits
    for its gather and the previous compute op.
    """
    compute = [f"F{i}" for i in range(layers)] + [f"B{i}" for i in reversed(range(layers))]
    comm = [f"AG {c}" for c in compute[:layers]]
    back = compute[layers:]
    comm.append(f"AG {back[0]}")
    for k, c in enumerate(back):
        if k + 1 < len(back):
            comm.append(f"AG {back[k + 1]}")
        comm.append(f"RS {c[1:]}")
    t: dict[str, tuple[float, float]] = {}
    cpos = 0
    comm_free = compute_free = 0.0
    pending = list(comm)
    while cpos < len(compute) or pending:
        progressed = False
        if pending:
            name = pending[0]
            kind, target = name.split()
            if kind == "AG":
                k = compute.index(target)
                ready = None if k < 2 else t.get(compute[k - 2], (None, None))[1]
                ok = k < 2 or ready is not None
            else:
                ready = t.get(f"B{target}", (None, None))[1]
                ok = ready is not None
            if ok:
                start = max(comm_free, ready or 0.0)
                comm_free = start + (gather if kind == "AG" else scatter)
                t[name] = (start, comm_free)
                pending.pop(0)
                progressed = True
        if cpos < len(compute) and f"AG {compute[cpos]}" in t:
            c = compute[cpos]
            start = max(compute_free, t[f"AG {c}"][1])
            compute_free = start + (fwd if c[0] == "F" else bwd)
            t[c] = (start, compute_free)
            cpos += 1
            progressed = True
        if not progressed:
            raise RuntimeError("FSDP schedule deadlocks")
    return t


FSDP = {"layers": 4, "gather": 4.0, "fwd": 5.0, "bwd": 10.0, "scatter": 4.0}  # ms


def _fsdp(ax, data_dir: Path) -> None:
    t = fsdp_step(**FSDP)
    end = max(e for _, e in t.values())
    busy = FSDP["layers"] * (FSDP["fwd"] + FSDP["bwd"])
    scale = 1.55
    canvas(ax, end * scale + 10, 4.2)
    x0 = 8
    for name, (s, e) in t.items():
        if name.startswith(("AG", "RS")):
            shade, y, label = (1 if name.startswith("AG") else 4), 1.2, name.replace(" ", "\n", 1)
        else:
            shade, y, label = (0 if name[0] == "F" else 2), 2.5, name
        box(ax, x0 + s * scale, y, (e - s) * scale * 0.96, 0.9, label, shade, fontsize=5.5)
    ax.text(x0 - 0.8, 2.95, "compute", ha="right", va="center", fontsize=7)
    ax.text(x0 - 0.8, 1.65, "NCCL", ha="right", va="center", fontsize=7)
    compute_end = t[f"B{0}"][1]
    ax.plot([x0 + end * scale] * 2, [0.9, 3.6], color=INK, ls="--", lw=0.9)
    arrow(ax, (x0, 0.6), (x0 + end * scale, 0.6), "", style="<|-|>")
    ax.text(
        x0 + end * scale / 2,
        0.25,
        f"step {end:g} ms: compute {busy:g} ms, waiting for gathers {compute_end - busy:g} ms, "
        f"last reduce-scatter {end - compute_end:g} ms",
        ha="center",
        fontsize=6.5,
    )
    ax.text(x0, 3.85, "AG: all-gather of a layer's weights;  RS: reduce-scatter of its gradients", fontsize=6.5)


def static_batches(lengths: list[int], slots: int) -> list[tuple[int, int, int, int]]:
    """(request, slot, start step, end step) of each request under static batching.

    Batches of `slots` requests in arrival order, each batch running until its longest request has finished.
    """
    out, t = [], 0
    for b in range(0, len(lengths), slots):
        batch = lengths[b : b + slots]
        out += [(b + k, k, t, t + n) for k, n in enumerate(batch)]
        t += max(batch)
    return out


def continuous_batches(lengths: list[int], slots: int) -> list[tuple[int, int, int, int]]:
    """(request, slot, start step, end step) of each request under continuous batching.

    A waiting request takes the first slot that frees, at the next decode step (arrival order, ties to the
    lowest slot).
    """
    free, out = [0] * slots, []
    for r, n in enumerate(lengths):
        slot = min(range(slots), key=lambda s: (free[s], s))
        out.append((r, slot, free[slot], free[slot] + n))
        free[slot] += n
    return out


# Output lengths in decode steps of eight requests queued at step 0 (a stated example, not a trace).
REQUESTS, SLOTS = [8, 3, 5, 2, 6, 4, 7, 3], 4


def _batching(ax, data_dir: Path) -> None:
    st, ct = static_batches(REQUESTS, SLOTS), continuous_batches(REQUESTS, SLOTS)
    ends = max(e for *_, e in st), max(e for *_, e in ct)
    canvas(ax, ends[0] + 4.2, 2 * SLOTS + 2.4)
    for row, (title, sched, end) in enumerate((("static batching", st, ends[0]), ("continuous batching", ct, ends[1]))):
        y0 = (1 - row) * (SLOTS + 1.1) + 0.6
        used = sum(REQUESTS) / (SLOTS * end)
        ax.text(
            3.2, y0 + SLOTS + 0.15, f"{title}: {end} steps, {used:.0%} of slot-steps used", fontsize=7.5, weight="bold"
        )
        for s in range(SLOTS):
            ax.text(3.0, y0 + SLOTS - 1 - s + 0.45, f"slot {s}", ha="right", va="center", fontsize=6.5)
        for r, slot, a, b in sched:
            box(ax, 3.2 + a, y0 + SLOTS - 1 - slot + 0.1, (b - a) * 0.97, 0.75, "ABCDEFGH"[r], r % 6, fontsize=6.5)
    ax.text(3.2, 0.1, "one box = one request's decode steps (one token per step); blank = idle slot", fontsize=6.5)


FIGURES = (
    Figure(
        "pipeline-interleaved-schedule",
        _interleaved,
        "Two Gantt charts of four GPUs: plain 1F1B above, interleaved 1F1B with two model chunks per GPU below",
        "Plain and interleaved 1F1B on p = 4 GPUs with m = 8 micro-batches, a backward taking twice a forward: "
        "with v = 2 chunks per GPU each box is half as long and the fill and drain shrink, so the step drops "
        "from 33 to 28.5 units and the bubble from 3/11 to 3/19 of it, (p-1)/(v m + p-1), at the cost of twice "
        "the point-to-point messages. Computed by build/mlbook/data/figures/schedules.py from Megatron-LM's "
        "operation order.",
        kind="tall",
    ),
    Figure(
        "fsdp-step-timeline",
        _fsdp,
        "Timeline of a ZeRO-3 step over four layers: all-gathers and reduce-scatters on one stream, compute on another",
        "One ZeRO-3/FSDP step of a 4-layer model under a stated cost model (all-gather 4 ms, reduce-scatter 4 ms, "
        "forward 5 ms and backward 10 ms per layer): each layer's weights are gathered twice and its gradients "
        "reduce-scattered once, the 3(N-1)/N x weight bytes of the chapter; prefetching the next gather hides most "
        "of it: the step takes 68 ms for 60 ms of compute, the first gather and the last reduce-scatter exposed. "
        "Computed by schedules.py: fsdp_step.",
        kind="wide",
    ),
    Figure(
        "static-vs-continuous-batching",
        _batching,
        "Two Gantt charts of four batch slots serving eight requests: static batching above, continuous below",
        "Eight requests (A-H, 8, 3, 5, 2, 6, 4, 7 and 3 output tokens) queued at once on a server with 4 batch "
        "slots: static batching waits for each batch's longest request and needs 15 decode steps, continuous "
        "batching fills a freed slot at the next step and needs 12 (63% against 79% of slot-steps busy). "
        "Stated example, prefill left out; computed by schedules.py.",
        kind="tall",
    ),
)
