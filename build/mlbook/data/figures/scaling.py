"""Figures of what scale costs: tensor-parallel communication, rank jitter, and a reservation's goodput ledger.

Each follows a worked example of a chapter with the same inputs: the 70B tensor-parallel example of
book/training/model-parallelism.md, the jitter calculation and the 30-day goodput ledger of
book/orchestration/fleet-operations.md.
"""

from __future__ import annotations

from pathlib import Path
from statistics import NormalDist

from .figure import Figure
from .style import COLORS, HATCHES, INK

# The 70B example: h = 8192, 80 layers, micro-batch 1, sequence 4,096, bf16; 400 TFLOPS achieved per GPU.
TP_MODEL = {"params": 70e9, "hidden": 8192, "layers": 80, "seq": 4096, "flops": 400e12}


def tp_times(t: int, link: float, model: dict = TP_MODEL) -> tuple[float, float]:
    """(communication, compute) seconds per micro-batch per GPU under tensor parallelism of degree t.

    Communication: 4 ring all-reduces per layer (2 forward, 2 backward) of b s h x 2 bytes, each moving
    2 (t-1)/t of it per GPU at `link` bytes/s per direction, none overlapped. Compute: 6 N s FLOPs over t GPUs.
    """
    buffer = model["seq"] * model["hidden"] * 2
    comm = model["layers"] * 4 * 2 * (t - 1) / t * buffer / link
    compute = 6 * model["params"] * model["seq"] / t / model["flops"]
    return comm, compute


LINKS = {"NVLink 4 (H100), 450 GB/s per direction": 450e9, "one 400 Gb/s NIC per GPU, 50 GB/s": 50e9}


def _tp_share(ax, data_dir: Path) -> None:
    degrees = [2, 4, 8, 16, 32, 64]
    for label, link in LINKS.items():
        ratios = [tp_times(t, link)[0] / tp_times(t, link)[1] for t in degrees]
        ax.plot(degrees, ratios, marker="o", ms=3, label=label)
        k = degrees.index(8)
        ax.annotate(f"{ratios[k]:.1%} at t = 8", (8, ratios[k]), (5, -10), textcoords="offset points", fontsize=6.5)
    ax.axhline(1, color=INK, lw=0.8, ls=":")
    ax.set_xscale("log", base=2)
    ax.set_xticks(degrees, [str(t) for t in degrees])
    ax.set_yscale("log")
    ax.set_xlabel("Tensor-parallel degree t")
    ax.set_ylabel("TP communication / compute time")
    ax.legend(fontsize=6.5)


def jitter_slowdown(ranks: int, sigma: float) -> float:
    """Expected slowdown (a fraction) of a synchronous step that waits for the slowest of `ranks` ranks.

    Step times are independent normals with standard deviation sigma (a fraction of the mean); the expected
    maximum is Blom's approximation, sigma x Phi^-1((n - 0.375) / (n + 0.25)).
    """
    return sigma * NormalDist().inv_cdf((ranks - 0.375) / (ranks + 0.25))


def _jitter(ax, data_dir: Path) -> None:
    ranks = [2**k for k in range(1, 16)]
    for sigma in (0.01, 0.02, 0.05):
        ax.plot(
            ranks,
            [jitter_slowdown(n, sigma) * 100 for n in ranks],
            marker="o",
            ms=3,
            label=f"per-rank jitter: sd {sigma:.0%} of the step",
        )
    ax.set_xscale("log", base=2)
    ax.set_xticks(ranks[::2], [f"{n:,}" for n in ranks[::2]])
    ax.set_xlabel("Ranks waiting for each other every step")
    ax.set_ylabel("Expected job slowdown (%)")
    ax.legend(fontsize=6.5)


def goodput_ledger() -> tuple[dict[str, float], float, float]:
    """The fleet-operations chapter's ledger of a 30-day, 256-node reservation, with the chapter's inputs.

    Returns (hours lost per category, productive hours, reserved hours).
    """
    reserved = 30 * 24
    failures, interval, stall_s = 29, 0.5, 20
    restart = (5 + 10 + 8 + 2) / 60
    no_spare = {"waiting for nodes": 2 * 3.0, "planned maintenance": 2 * 2.0}
    running = reserved - sum(no_spare.values()) - failures * restart
    lost = {
        **no_spare,
        "restarts (29 x 25 min)": failures * restart,
        "recomputed steps": failures * interval / 2,
        "checkpoint stalls": running / interval * stall_s / 3600,
        "straggler": 36 * (1 - 1 / 1.08),
    }
    return lost, reserved - sum(lost.values()), reserved


def _goodput(ax, data_dir: Path) -> None:
    lost, productive, reserved = goodput_ledger()
    names = list(lost)
    hours = [lost[n] for n in names]
    bars = ax.barh(names, hours, edgecolor=INK, lw=0.5)
    for i, bar in enumerate(bars):
        bar.set_facecolor(COLORS[i % len(COLORS)])
        bar.set_hatch(HATCHES[i % len(HATCHES)])
        ax.text(hours[i] + 0.2, i, f"{hours[i]:.1f} h ({hours[i] / reserved:.1%})", va="center", fontsize=6.5)
    ax.invert_yaxis()
    ax.set_xlim(0, max(hours) * 1.35)
    ax.set_xlabel(
        f"Hours lost of a {reserved} h reservation; productive: {productive:.1f} h ({productive / reserved:.1%})"
    )
    ax.tick_params(axis="y", labelsize=7)


FIGURES = (
    Figure(
        "tp-communication-share",
        _tp_share,
        "Log-log plot of tensor-parallel communication time over compute time against TP degree for two links",
        "Tensor-parallel all-reduce time over compute time per micro-batch for the chapter's 70B example "
        "(h = 8192, 80 layers, sequence 4,096, bf16, 400 TFLOPS achieved, 4 ring all-reduces per layer, none "
        "overlapped): 15.5% at t = 8 over NVLink 4 at its 450 GB/s peak, 140% over a 50 GB/s NIC. The "
        "ratio grows with t because compute per GPU shrinks as 1/t while each GPU's traffic does not.",
    ),
    Figure(
        "straggler-jitter",
        _jitter,
        "Plot of expected slowdown of a synchronous job against rank count for three levels of per-rank jitter",
        "Expected slowdown when every step waits for the slowest of n ranks whose step times vary independently "
        "(normal, standard deviation 1%, 2% or 5% of the mean), by Blom's approximation of the expected maximum "
        "as in the chapter: 2% jitter costs 2.9% at 8 ranks and 7.9% at 16,384. A stated model, not a measurement.",
    ),
    Figure(
        "goodput-ledger",
        _goodput,
        "Horizontal bar chart of the hours a 30-day 2,048-GPU reservation loses, by category",
        "The chapter's goodput ledger of a 30-day reservation of 256 nodes (2,048 GPUs, 720 h): 29 failures from "
        "a 6,300 h node MTBF, 25 min per restart, checkpoints every 30 min with 20 s stalls, two waits without "
        "a spare and two maintenance windows. Restarts are the largest item (12.1 h); 680.2 h (94.5%) stay "
        "productive. Inputs are the chapter's stated assumptions.",
        kind="wide",
    ),
)
