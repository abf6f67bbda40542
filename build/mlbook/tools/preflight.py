"""Checks the machine before set-up: says in one sentence what to install instead of failing with a traceback.

Runs on the system Python with the standard library only: `python3 build/mlbook/tools/preflight.py`.
"""

from __future__ import annotations

import ctypes.util
import importlib.util
import shutil
import subprocess
import sys

FONT_PACKAGES = {
    "Noto Serif": "fonts-noto-core",
    "Noto Sans Mono": "fonts-noto-mono",
    "Noto Sans CJK SC": "fonts-noto-cjk",
    "Noto Color Emoji": "fonts-noto-color-emoji",
}


def problems() -> list[str]:
    """Every missing prerequisite of `make book`, each as an instruction."""
    out = []
    if sys.version_info < (3, 11):  # noqa: UP036 (runs on the system Python, which may be older)
        out.append(f"Python 3.11 or newer is needed (this is {sys.version.split()[0]}): install python3.11")
    if importlib.util.find_spec("ensurepip") is None or importlib.util.find_spec("venv") is None:
        out.append("Python's venv module is missing: sudo apt-get install python3-venv")
    if not ctypes.util.find_library("pango-1.0"):
        out.append(
            "Pango (needed by WeasyPrint for the PDF) is missing: sudo apt-get install libpango-1.0-0 "
            "libpangoft2-1.0-0 libharfbuzz-subset0"
        )
    if not ctypes.util.find_library("harfbuzz-subset"):
        out.append("HarfBuzz subsetting (needed by WeasyPrint) is missing: sudo apt-get install libharfbuzz-subset0")
    if not shutil.which("fc-list"):
        out.append("fontconfig is missing: sudo apt-get install fontconfig")
    else:
        families = subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True).stdout
        missing = sorted({pkg for fam, pkg in FONT_PACKAGES.items() if fam not in families})
        if missing:
            out.append(f"fonts for the PDF are missing: sudo apt-get install {' '.join(missing)}")
    if not shutil.which("git"):
        out.append("git is missing (the build dates come from the last commit): sudo apt-get install git")
    return out


def main() -> int:
    """Print each problem on stderr; exit 1 if there is any."""
    found = problems()
    for line in found:
        print(f"error: {line}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
