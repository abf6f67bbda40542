"""The colours of highlighted code in print and e-book editions: one Pygments style for the PDF and the EPUB."""

from __future__ import annotations

import functools
import re

from pygments.formatters import HtmlFormatter

CODE_STYLE = "friendly"


def css() -> str:
    """The CSS rules of CODE_STYLE for Pygments' token classes under ``.highlight``."""
    return HtmlFormatter(style=CODE_STYLE).get_style_defs(".highlight")


@functools.cache
def styled_classes() -> set[str]:
    """Pygments token classes that CODE_STYLE colours; whitespace colour never shows."""
    return set(re.findall(r"^\.highlight \.(\w+) ", css(), re.M)) - {"w"}
