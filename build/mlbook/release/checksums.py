"""The release's checksum file: SHA-256 of every other file, in the format `sha256sum -c` reads."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..writers.outputs import atomic_path

NAME = "SHA256SUMS"


def digest(path: Path) -> str:
    """The SHA-256 of a file as 64 lowercase hex digits, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write(folder: Path) -> Path:
    """Write folder/SHA256SUMS: one `<digest>  <name>` line per file in folder (not in subfolders), sorted."""
    folder = Path(folder)
    names = sorted(p.name for p in folder.iterdir() if p.is_file() and p.name != NAME)
    out = folder / NAME
    with atomic_path(out) as tmp:
        tmp.write_text("".join(f"{digest(folder / n)}  {n}\n" for n in names), encoding="utf-8")
    return out


def verify(folder: Path) -> list[str]:
    """One `name: problem` per file whose digest differs from SHA256SUMS, is missing, or is not listed."""
    folder = Path(folder)
    listed = {}
    for line in (folder / NAME).read_text(encoding="utf-8").splitlines():
        value, _, name = line.partition("  ")
        listed[name] = value
    present = {p.name for p in folder.iterdir() if p.is_file() and p.name != NAME}
    problems = [f"{n}: listed in {NAME} but missing" for n in sorted(set(listed) - present)]
    problems += [f"{n}: not listed in {NAME}" for n in sorted(present - set(listed))]
    problems += [f"{n}: SHA-256 differs" for n in sorted(present & set(listed)) if digest(folder / n) != listed[n]]
    return problems
