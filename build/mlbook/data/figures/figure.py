"""A figure of the book: how it is drawn, its alt text and caption, and the data files it reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .. import specdata
from .style import SIZES


@dataclass(frozen=True)
class Figure:
    """A figure: how to draw it, its alt text and caption, and the data files it reads (under book/data).

    ``kind`` is "plot" (axes with a light grid) or "diagram" (no axes; the drawing sets its own canvas);
    ``size`` defaults to the style's size for the kind (style.SIZES, inches).
    """

    name: str
    draw: Callable
    alt: str
    caption: str
    inputs: tuple[str, ...] = ()
    size: tuple[float, float] | None = None
    kind: str = "plot"

    @property
    def inches(self) -> tuple[float, float]:
        """Width and height in inches: the given size, else the style's size for the kind."""
        return self.size or SIZES[self.kind if self.kind in SIZES else "plot"]


def validated_rows(data_dir: Path, name: str) -> list:
    """Validated rows of book/data/<name>.yaml; raises ValueError listing every defect."""
    rows, errors = specdata.load(data_dir, name)
    if errors:
        raise ValueError("; ".join(str(e) for e in errors))
    return rows
