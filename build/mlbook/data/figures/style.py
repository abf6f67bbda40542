"""The one style of every figure: the book's font, a palette that survives grayscale print, sizes and helpers.

Each series differs by colour *and* by line style, marker or hatch, so a figure reads in grayscale print and for
colour-blind readers. Figures are drawn on an opaque white card, so they stay legible in the site's dark scheme.
The palette follows the site's indigo primary and orange accent (mkdocs.yml), with Okabe-Ito-like companions.
"""

from __future__ import annotations

from cycler import cycler

# Indigo (primary), orange (accent), teal, grey, magenta: distinct in hue and in lightness.
COLORS = ("#3949ab", "#e65100", "#00897b", "#616161", "#ad1457", "#f9a825")
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (1, 1)))

HATCHES = ("", "///", "...", "xx", "\\\\\\", "++")
# Light fills for boxes in diagrams (text on them stays black), each paired with a hatch for print.
FILLS = ("#c5cae9", "#ffccbc", "#b2dfdb", "#e0e0e0", "#f8bbd0", "#fff59d")
INK = "#212121"
WIDTH = 6.4  # inches: every figure has the width of the text column
SIZES = {"plot": (WIDTH, 3.8), "tall": (WIDTH, 5.0), "diagram": (WIDTH, 3.4), "wide": (WIDTH, 2.6)}

RC = {
    "svg.fonttype": "none",
    "font.size": 8,
    # DejaVu ships with matplotlib and with every Debian system: same metrics everywhere.
    "font.family": "DejaVu Sans",
    "mathtext.fontset": "dejavusans",
    "axes.unicode_minus": False,
    "axes.prop_cycle": cycler(color=COLORS[:4]) + cycler(linestyle=LINESTYLES[:4]),
    "lines.markersize": 3,
    "lines.linewidth": 1.4,
    "axes.edgecolor": INK,
    "axes.labelcolor": INK,
    "text.color": INK,
    "xtick.color": INK,
    "ytick.color": INK,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.fontsize": 7,
    "legend.frameon": False,
    "hatch.linewidth": 0.6,
    "figure.facecolor": "white",
    "savefig.facecolor": "white",
}


def box(ax, x: float, y: float, w: float, h: float, text: str = "", shade: int = 0, fontsize: float = 7, **kw) -> None:
    """A labelled box of a diagram: lower-left (x, y), w by h in data units, filled with FILLS[shade] and its hatch."""
    from matplotlib.patches import Rectangle

    ax.add_patch(
        Rectangle(
            (x, y),
            w,
            h,
            facecolor=FILLS[shade % len(FILLS)],
            hatch=HATCHES[shade % len(HATCHES)],
            edgecolor=INK,
            linewidth=0.8,
            **kw,
        )
    )
    if text:
        ax.text(
            x + w / 2,
            y + h / 2,
            text,
            ha="center",
            va="center",
            fontsize=fontsize,
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.6, "alpha": 0.85} if shade else None,
        )


def arrow(ax, start: tuple[float, float], end: tuple[float, float], text: str = "", style: str = "-|>", **kw) -> None:
    """An arrow from start to end in data units, optionally labelled at its middle."""
    ax.annotate("", end, start, arrowprops={"arrowstyle": style, "color": INK, "lw": 0.9, **kw})
    if text:
        ax.text(
            (start[0] + end[0]) / 2,
            (start[1] + end[1]) / 2,
            text,
            ha="center",
            va="center",
            fontsize=6.5,
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5},
        )


def canvas(ax, width: float, height: float) -> None:
    """Set up a diagram's axes: data units 0..width by 0..height, no ticks, equal-ish aspect left to the figure."""
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_axis_off()
