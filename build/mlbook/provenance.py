"""Build date and edition: from SOURCE_DATE_EPOCH and git, so two builds of one commit are identical."""

from __future__ import annotations

import os
import subprocess
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
    """A human label of this edition: MLBOOK_EDITION if set, else the git tag at HEAD, else ``commit <hash>``.

    Without git it is ``draft``. The override lets two builds of different commits carry the same label.
    """
    override = os.environ.get("MLBOOK_EDITION", "").strip()
    if override:
        return override
    tag = _git(root, "describe", "--tags", "--exact-match")
    if tag:
        return tag
    short = _git(root, "rev-parse", "--short=10", "HEAD")
    return f"commit {short}" if short else "draft"


def as_datetime(epoch: int) -> datetime:
    """The epoch as an aware UTC datetime."""
    return datetime.fromtimestamp(epoch, tz=UTC)
