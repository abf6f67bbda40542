"""The fonts the PDF needs, found through fontconfig, with the Debian package that provides each."""

from __future__ import annotations

import shutil
import subprocess

from ...diagnostics import WriterError

# family -> Debian package that installs it.
REQUIRED = {
    "Noto Serif": "fonts-noto-core",
    "Noto Sans": "fonts-noto-core",
    "Noto Sans Mono": "fonts-noto-mono",
    "Noto Sans Symbols2": "fonts-noto-core",  # task-list boxes
    "Noto Sans CJK SC": "fonts-noto-cjk",
    "Noto Color Emoji": "fonts-noto-color-emoji",
}


class MissingFonts(WriterError):
    """Raised when a font family the PDF uses is not installed; the message names the packages."""


def installed_families() -> set[str]:
    """Font family names fontconfig knows (empty when fc-list is missing)."""
    if not shutil.which("fc-list"):
        return set()
    out = subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True, check=False).stdout
    return {name.strip() for line in out.splitlines() for name in line.split(",")}


def require() -> None:
    """Raise MissingFonts naming the Debian packages to install when any required family is absent."""
    have = installed_families()
    missing = sorted({pkg for family, pkg in REQUIRED.items() if family not in have})
    if missing:
        raise MissingFonts(
            f"the PDF needs fonts that are not installed; install them with: sudo apt-get install {' '.join(missing)}"
        )
