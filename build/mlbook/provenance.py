"""Build date and edition: from SOURCE_DATE_EPOCH and git, so two builds of one commit are identical."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path


def _git(root: Path, *args: str) -> str:
    try:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def source_epoch(root: Path) -> int:
    """Seconds since 1970 (UTC) that stand for "now" in every output.

    SOURCE_DATE_EPOCH wins; else the last commit's time; else 0 (1970-01-01), never the wall clock.
    """
    env = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if env.isdigit():
        return int(env)
    stamp = _git(root, "log", "-1", "--format=%ct")
    return int(stamp) if stamp.isdigit() else 0


def edition(root: Path) -> str:
    """The edition string every output carries: ``git describe --tags`` (e.g. ``v1.0-3-gabc1234567``).

    MLBOOK_EDITION wins (check it with edition_problem first). A commit with no tag before it is
    ``commit <hash>``; without git (or outside a repository) it is ``draft``. The hash is always 10 hex digits,
    so two clones of one commit give the same string. A dirty work tree is not marked: the string names the
    commit, and two builds of one commit must be identical.
    """
    override = os.environ.get("MLBOOK_EDITION", "").strip()
    if override:
        return override
    described = _git(root, "describe", "--tags", "--abbrev=10")
    if described:
        return described
    short = _git(root, "rev-parse", "--short=10", "HEAD")
    return f"commit {short}" if short else "draft"


def edition_problem(value: str | None = None) -> str:
    """Why an MLBOOK_EDITION value (default: the environment's) cannot be an edition string, else ''.

    An edition is printed on covers, in metadata and in file names: one line of at most 64 printable characters.
    """
    value = (os.environ.get("MLBOOK_EDITION", "") if value is None else value).strip()
    if len(value) > 64:
        return f"MLBOOK_EDITION: bad edition: {len(value)} characters; use at most 64"
    bad = next((ch for ch in value if not ch.isprintable()), None)
    if bad is not None:
        return f"MLBOOK_EDITION: bad edition: {bad!r} is not printable; use one line of plain text"
    return ""


@dataclass(frozen=True)
class History:
    """What git says about the editions before this one.

    known: False when there is no usable history (no git, not a repository, or a shallow clone); why says which.
    previous: the tag the changes are counted from ('' when there is none: the first edition).
    """

    known: bool
    why: str = ""
    previous: str = ""


def history(root: Path) -> History:
    """The previous edition's tag: the newest tag before HEAD, or before the tag at HEAD when HEAD is tagged."""
    inside = _git(root, "rev-parse", "--is-inside-work-tree")
    if inside != "true":
        return History(False, "without its git history")
    if _git(root, "rev-parse", "--is-shallow-repository") == "true":
        return History(False, "from a shallow clone of its repository")
    at_head = _git(root, "describe", "--tags", "--exact-match", "HEAD")
    before = "HEAD^" if at_head else "HEAD"
    if at_head and not _git(root, "rev-parse", "--verify", "--quiet", "HEAD^"):
        return History(True)
    return History(True, previous=_git(root, "describe", "--tags", "--abbrev=0", before))


def file_at(root: Path, rev: str, path: str) -> str | None:
    """The text of a file (path relative to root) as it was at rev, or None when it did not exist there."""
    try:
        out = subprocess.run(["git", "show", f"{rev}:./{path}"], cwd=root, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.decode("utf-8", errors="replace") if out.returncode == 0 else None


def as_datetime(epoch: int) -> datetime:
    """The epoch as an aware UTC datetime."""
    return datetime.fromtimestamp(epoch, tz=UTC)
