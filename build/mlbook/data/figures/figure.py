"""A figure of the book: how it is drawn, its alt text and caption, and the data files it reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .. import specdata


@dataclass(frozen=True)
class Figure:
    """A figure: how to draw it, its alt text and caption, and the data files it reads (under book/data)."""

    name: str
    draw: Callable
    alt: str
    caption: str
    inputs: tuple[str, ...] = ()
    size: tuple[float, float] = (6.4, 3.8)  # inches


def validated_rows(data_dir: Path, name: str) -> list:
    """Validated rows of book/data/<name>.yaml; raises ValueError listing every defect."""
    rows, errors = specdata.load(data_dir, name)
    if errors:
        raise ValueError("; ".join(str(e) for e in errors))
    return rows
