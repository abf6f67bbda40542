"""The record of what changed for readers: ``book/data/changes.yaml``, one entry per change, curated by hand.

Each entry names the chapter it changed (its path under ``book/``, as in the nav) and says the change in one
sentence for a reader, not for a developer. The file only grows; the "What changed" page lists the entries that
were not in the file at the previous tag (compared as chapter and text). Every defect is a DataError at its line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import yamllines
from .yamllines import DataError

MAX_CHARS = 300  # one sentence a reader takes in at a glance


class Change(BaseModel):
    """One change: the chapter (path under book/, e.g. ``hardware/accelerators.md``) and what changed in it."""

    model_config = ConfigDict(extra="forbid")

    chapter: str = Field(pattern=r"^[\w./-]+\.md$")
    change: str = Field(min_length=10, max_length=MAX_CHARS, pattern=r"^[^\n\r]+$")


@dataclass(frozen=True)
class Entry:
    """A validated change and its line in the file."""

    chapter: str
    change: str
    line: int

    @property
    def key(self) -> tuple[str, str]:
        """What makes two entries the same change (in this file and in its version at an earlier tag)."""
        return self.chapter, " ".join(self.change.split())


def load(path: Path, shown: str, chapters: set[str]) -> tuple[list[Entry], list[DataError]]:
    """The entries of the file at path (none when it does not exist) and its defects.

    shown: the path used in messages (``book/data/changes.yaml``); chapters: the src_uri of every page in the nav.
    """
    if not Path(path).is_file():
        return [], []
    located, errors = yamllines.load(path, shown)
    if located is None:
        return [], errors
    items = located.data.get("changes") if isinstance(located.data, dict) else None
    if not isinstance(items, list) or set(located.data) != {"changes"}:
        detail = "the file must be one key, 'changes:', holding a list of entries (chapter, change)"
        return [], [*errors, DataError(shown, 1, "invalid changes", detail)]
    entries, seen = [], set()
    for i, item in enumerate(items):
        try:
            change = Change.model_validate(item)
        except ValidationError as exc:
            for err in exc.errors():
                where = ".".join(str(p) for p in ("changes", i, *err["loc"]))
                line = located.line("changes", i, *err["loc"])
                errors.append(DataError(shown, line, "invalid changes", f"{where}: {err['msg']}"))
            continue
        entry = Entry(change.chapter, change.change, located.line("changes", i))
        if change.chapter not in chapters:
            detail = f"'{change.chapter}' is not a page of the book; name its path under book/ as in the nav"
            errors.append(DataError(shown, located.line("changes", i, "chapter"), "unknown chapter", detail))
        elif entry.key in seen:
            errors.append(DataError(shown, entry.line, "duplicate change", "the same change is listed twice"))
        seen.add(entry.key)
        entries.append(entry)
    return entries, errors


def keys_of(text: str | None) -> set[tuple[str, str]]:
    """The changes in an earlier version of the file (its text), leniently: what cannot be read counts as absent."""
    try:
        data = yaml.safe_load(text or "")
    except yaml.YAMLError:
        return set()
    items = data.get("changes") if isinstance(data, dict) else None
    return {
        Entry(item["chapter"], item["change"], 0).key
        for item in (items if isinstance(items, list) else [])
        if isinstance(item, dict) and isinstance(item.get("chapter"), str) and isinstance(item.get("change"), str)
    }
