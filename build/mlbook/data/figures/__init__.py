"""Original figures drawn with matplotlib at build time from book/data and stated cost models, cached by content.

Each figure is an SVG with real text, written to ``.cache/figures/<name>-<hash>.svg`` (never into book/), where the
hash covers the figure's code, its data files and the matplotlib version, so an unchanged figure is not redrawn.
"""

from __future__ import annotations

import hashlib
import inspect
import io
from pathlib import Path

from . import (
    accelerators,
    bandwidth,
    checkpointing,
    collectives,
    layers,
    memory,
    models,
    network,
    parallelism,
    scaling,
    schedules,
    serving,
    stability,
    stepmemory,
    storage,
    style,
    timeline,
    topology,
)
from .figure import Figure

# The figure families, one module per subject.
FAMILIES = (
    accelerators,
    network,
    storage,
    models,
    parallelism,
    collectives,
    memory,
    timeline,
    topology,
    layers,
    schedules,
    stepmemory,
    serving,
    scaling,
    bandwidth,
    checkpointing,
    stability,
)

# Every figure by name; a family module holds the figures of one subject.
FIGURES = {f.name: f for family in FAMILIES for f in family.FIGURES}


def digest(figure: Figure, data_dir: Path) -> str:
    """Content hash of everything the figure depends on (its code, its data files, matplotlib's version)."""
    import matplotlib

    # The whole family module: a helper the drawing calls changes the figure too.
    h = hashlib.sha256(inspect.getsource(inspect.getmodule(figure.draw)).encode() + inspect.getsource(_svg).encode())
    h.update(inspect.getsource(style).encode())
    h.update(matplotlib.__version__.encode())
    h.update(figure.caption.encode())
    for name in figure.inputs:
        h.update((Path(data_dir) / name).read_bytes())
    return h.hexdigest()[:16]


def render(name: str, data_dir: Path, cache_dir: Path) -> Path:
    """Return the cached SVG of a figure, drawing it first if its inputs changed. Raises KeyError if unknown."""
    figure = FIGURES[name]
    out = Path(cache_dir) / f"{name}-{digest(figure, data_dir)}.svg"
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        tmp.write_bytes(_svg(figure, data_dir))
        tmp.replace(out)
    return out


def _svg(figure: Figure, data_dir: Path) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context({**style.RC, "svg.hashsalt": figure.name}):
        fig, ax = plt.subplots(figsize=figure.inches)
        figure.draw(ax, Path(data_dir))
        if figure.kind == "plot":
            ax.grid(True, which="major", alpha=0.3, linestyle="-")
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
        plt.close(fig)
    return buf.getvalue().encode("utf-8")
