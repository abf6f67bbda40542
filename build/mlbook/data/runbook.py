"""The 2 a.m. runbook as data: symptom -> first command -> what its output means -> the section and script to read.

``book/data/runbook.yaml`` holds the categories (in page order) and the entries. Each entry's command is a code
block that follows the book's marker rule: a reason class from REASONS when CI cannot run it, none when the
tests run it. Sections (``chapter.md#anchor``) and scripts are checked; every defect is a DataError at its line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..checks import datalinks
from . import yamllines
from .yamllines import DataError

# The book-wide reasons a code block cannot run in CI (GUIDE.md, "Code-block markers").
REASONS = (
    "needs-gpu",
    "needs-multi-gpu",
    "needs-multi-node",
    "needs-slurm-admin",
    "needs-root",
    "needs-network",
    "needs-cluster",
    "needs-hardware",
    "fragment",
    "config",
)
ID = r"^[a-z0-9]+(-[a-z0-9]+)*$"


class Strict(BaseModel):
    """Unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


class Command(Strict):
    """The first command to run: its language, its code, and why CI cannot run it (None: the tests run it)."""

    lang: str = Field(pattern=r"^(bash|python)$")
    code: str = Field(min_length=2)
    needs: str | None = None


class Category(Strict):
    """A group of symptoms, one section of the page."""

    id: str = Field(pattern=ID)
    title: str
    intro: str = ""


class Entry(Strict):
    """One symptom and what to do about it."""

    id: str = Field(pattern=ID)
    category: str
    title: str = Field(min_length=5)
    seen: str = Field(min_length=10)
    command: Command
    means: str = Field(min_length=20)
    section: str = Field(pattern=r"^[\w./-]+\.md#[\w-]+$")
    script: str | None = Field(None, pattern=r"^scripts/[\w./-]+$")


class Runbook(Strict):
    """The whole file."""

    categories: list[Category] = Field(min_length=1)
    entries: list[Entry] = Field(min_length=1)


@dataclass
class Loaded:
    """A validated runbook and the line of each entry (for messages about its links)."""

    runbook: Runbook
    path: str
    lines: dict[str, int]
    section_lines: dict[str, int]


def load(path: Path, *, root: Path, docs_dir: Path) -> tuple[Loaded | None, list[DataError]]:
    """Validate the runbook; check categories, ids, markers, section files and scripts. Return it and the defects."""
    shown = yamllines.shown_path(path, root)
    located, errors = yamllines.load(path, shown)
    if located is None:
        return None, errors
    try:
        book = Runbook.model_validate(located.data)
    except ValidationError as exc:
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "runbook"
            errors.append(DataError(shown, located.line(*err["loc"]), "invalid runbook", f"{where}: {err['msg']}"))
        return None, errors
    loaded = Loaded(book, shown, {}, {})
    categories = {c.id for c in book.categories}
    for i, entry in enumerate(book.entries):
        line = located.line("entries", i)
        if entry.id in loaded.lines or entry.id in categories:
            errors.append(DataError(shown, line, "duplicate id", f"'{entry.id}' is used twice"))
        loaded.lines.setdefault(entry.id, line)
        loaded.section_lines[entry.id] = located.line("entries", i, "section")
        errors += _entry_errors(entry, shown, located, i, categories, root, docs_dir)
    for cat in book.categories:
        if not any(e.category == cat.id for e in book.entries):
            errors.append(DataError(shown, 1, "empty category", f"no entry is in category '{cat.id}'"))
    return loaded, errors


def _entry_errors(entry: Entry, shown, located, i, categories, root: Path, docs_dir: Path) -> list[DataError]:
    errors = []
    if entry.category not in categories:
        detail = f"'{entry.category}' is not a category; known: {', '.join(sorted(categories))}"
        errors.append(DataError(shown, located.line("entries", i, "category"), "unknown category", detail))
    if entry.command.needs is not None and entry.command.needs not in REASONS:
        detail = f"'{entry.command.needs}' is not a marker reason; use one of {', '.join(REASONS)}"
        errors.append(DataError(shown, located.line("entries", i, "command", "needs"), "unknown marker", detail))
    dead = datalinks.file_error(docs_dir, entry.section)
    if dead:
        errors.append(DataError(shown, located.line("entries", i, "section"), "broken link", dead))
    if entry.script and not (Path(root) / entry.script).is_file():
        detail = f"'{entry.script}' does not exist; name a file under scripts/"
        errors.append(DataError(shown, located.line("entries", i, "script"), "missing script", detail))
    return errors


def render(loaded: Loaded, src_uri: str, docs_dir: Path) -> list[str]:
    """Markdown of the runbook page body: one section per category, one subsection per symptom."""
    out: list[str] = []
    book = loaded.runbook
    for cat in book.categories:
        out += [f"## {cat.title} {{#{cat.id}}}", ""]
        if cat.intro:
            out += [cat.intro.strip(), ""]
        for entry in (e for e in book.entries if e.category == cat.id):
            out += _entry(entry, src_uri, docs_dir)
    return out


def _entry(entry: Entry, src_uri: str, docs_dir: Path) -> list[str]:
    cmd = entry.command
    fence = f"```{{.{cmd.lang} .{cmd.needs}}}" if cmd.needs else f"```{cmd.lang}"
    deeper = f"[{datalinks.describe(docs_dir, entry.section)}]({datalinks.relative(src_uri, entry.section)})"
    if entry.script:
        name = entry.script.rsplit("/", 1)[-1]
        deeper += f"; the script [`{name}`]({datalinks.relative(src_uri, entry.script)})"
    return [
        f"### {entry.title} {{#{entry.id}}}",
        "",
        f"**You see:** {entry.seen.strip()}",
        "",
        "**Run first:**",
        "",
        fence,
        cmd.code.rstrip("\n"),
        "```",
        "",
        f"**What the output tells you:** {entry.means.strip()}",
        "",
        f"**Go deeper:** {deeper}.",
        "",
    ]
