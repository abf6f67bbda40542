"""The Python packages `make book` installs (the `book` extra), and one-sentence messages when one is missing."""

from __future__ import annotations

import importlib.metadata as md
import re

from packaging.requirements import Requirement

# Import names that differ from the distribution that provides them (for messages when the module is absent,
# where importlib.metadata cannot map it).
DISTRIBUTION_OF = {
    "yaml": "PyYAML",
    "PIL": "pillow",
    "ebooklib": "EbookLib",
    "pygments": "Pygments",
    "markdown": "Markdown",
    "mkdocs_material": "mkdocs-material",
    "material": "mkdocs-material",
    "pymdownx": "pymdown-extensions",
}
SETUP_HINT = "run `make setup` (it installs the `book` extra of pyproject.toml into .venv)"


def canonical(name: str) -> str:
    """A distribution name in PEP 503 normal form (``PyYAML`` -> ``pyyaml``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(root: str = "mlbook", extras: tuple[str, ...] = ("book",)) -> set[str]:
    """Canonical names of every installed distribution that ``root[extras]`` pulls in, itself included.

    Environment markers are evaluated for this interpreter; a required distribution that is not installed is
    left out (the caller compares against what is needed). Raises importlib.metadata.PackageNotFoundError when
    root itself is not installed.
    """
    seen: set[str] = set()
    todo: list[tuple[str, tuple[str, ...]]] = [(root, extras)]
    while todo:
        name, wanted = todo.pop()
        key = canonical(name)
        try:
            requires = md.requires(name) or []
        except md.PackageNotFoundError:
            if key == canonical(root):
                raise
            continue
        seen.add(key)
        for text in requires:
            req = Requirement(text)
            envs = [{"extra": e} for e in wanted] or [{"extra": ""}]
            if req.marker is None or any(req.marker.evaluate(env) for env in envs):
                if canonical(req.name) not in seen or req.extras:
                    todo.append((req.name, tuple(sorted(req.extras))))
    return seen


def missing(root: str = "mlbook", extras: tuple[str, ...] = ("book",)) -> list[str]:
    """Names of the distributions that ``root[extras]`` requires directly but that are not installed."""
    out = []
    for text in md.requires(root) or []:
        req = Requirement(text)
        if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in extras):
            continue
        try:
            md.distribution(req.name)
        except md.PackageNotFoundError:
            out.append(req.name)
    return out


def explain(exc: BaseException) -> str | None:
    """One sentence for a missing module (ModuleNotFoundError), naming the package to install; None otherwise."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    top = exc.name.split(".")[0]
    package = DISTRIBUTION_OF.get(top, top)
    return f"the Python package '{package}' (module '{top}') is not installed; {SETUP_HINT}"
