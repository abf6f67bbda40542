"""Checks of the docs folder before MkDocs walks it: symlink cycles, links out of the book, names it cannot use.

MkDocs walks the docs folder following symbolic links and never detects a cycle: a link to a parent folder makes
it list the book again at every depth until the path is too long, and two such links make the walk exponential
(a hang). This walk follows links too, but only into folders it is not already inside, and reports the rest.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..diagnostics import Reporter


def _name(raw: str) -> str | None:
    """The name when it is valid UTF-8 (os.fsdecode escapes undecodable bytes as surrogates), else None."""
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return raw


def check_tree(docs_dir: Path, docs: str, reporter: Reporter) -> int:
    """Report every symlink cycle, folder linked from outside the book, broken link and non-UTF-8 name.

    docs_dir: the docs folder; docs: its name in messages (``book``). Returns the number of problems reported.
    """
    root = Path(docs_dir).resolve()
    before = reporter.count

    def walk(folder: Path, rel: str, inside: tuple[Path, ...]) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            reporter.report(f"{docs}/{rel}", 1, "unreadable folder", f"{exc.strerror}; fix its permissions")
            return
        for entry in entries:
            name = _name(entry.name)
            where = f"{docs}/{rel}/{entry.name}" if rel else f"{docs}/{entry.name}"
            if name is None:
                shown = os.fsencode(where).decode("utf-8", errors="replace")
                reporter.report(
                    shown, 1, "file name not UTF-8", "rename it with a UTF-8 name; MkDocs cannot publish it"
                )
                continue
            child = f"{rel}/{name}" if rel else name
            if entry.is_symlink():
                _link(Path(entry.path), child, where, inside)
            elif entry.is_dir():
                walk(Path(entry.path), child, (*inside, Path(entry.path).resolve()))

    def _link(path: Path, child: str, where: str, inside: tuple[Path, ...]) -> None:
        target = os.readlink(path)
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            reporter.report(
                where, 1, "broken symlink", f"it points to '{target}', which does not exist; fix or remove it"
            )
            return
        if not real.is_dir():
            return  # a linked file: the plugin refuses it when it lies outside the book (see checks.site)
        if not real.is_relative_to(root):
            reporter.report(
                where, 1, "symlink outside the book", f"it points to '{target}', outside {docs}/; copy what it needs"
            )
        elif real in inside:
            reporter.report(
                where,
                1,
                "symlink cycle",
                f"it points to '{target}', a folder that holds it, so the book would contain itself; remove the link",
            )
        else:
            walk(path, child, (*inside, real))

    walk(root, "", (root,))
    return reporter.count - before
