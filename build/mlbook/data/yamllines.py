"""YAML data with the source line of every value, so a defect in a data file is reported at its line."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml


@dataclass
class DataError:
    """A defect in a data file: path relative to the repository, 1-based line, kind and detail."""

    path: str
    line: int
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.kind}: {self.detail}"


@dataclass
class Located:
    """A parsed YAML document and the line of each value, keyed by its path of keys and list indices."""

    data: object
    lines: dict[tuple, int] = field(default_factory=dict)
    raw: dict[tuple, str] = field(default_factory=dict)  # scalars as written, e.g. "17.10" (keeps the digits)

    def line(self, *path) -> int:
        """Line of the value at path, else of its nearest enclosing value that has one (1 at worst)."""
        for end in range(len(path), -1, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return 1


def shown_path(path: Path, root: Path) -> str:
    """The path as messages show it: relative to the repository root when it lies inside it."""
    try:
        return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return Path(path).as_posix()


def load(path: Path, shown: str) -> tuple[Located | None, list[DataError]]:
    """Parse a YAML file; return it with its lines, or None and the error with its line.

    shown: the path used in messages (``book/data/runbook.yaml``).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, [DataError(shown, 1, "unreadable data", str(exc))]
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        return None, [DataError(shown, mark.line + 1 if mark else 1, "invalid YAML", problem)]
    located = Located(data)
    if node is not None:
        _walk(node, (), located)
    return located, []


def _walk(node: yaml.Node, path: tuple, out: Located) -> None:
    out.lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            _walk(value, (*path, key.value), out)
            out.lines[(*path, key.value)] = key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*path, i), out)
    else:
        out.raw[path] = node.value
