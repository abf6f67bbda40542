"""Every third-party module the pipeline imports is installed by the `book` extra (what `make book` installs)."""

from __future__ import annotations

import ast
import importlib.metadata as md
import sys
from pathlib import Path

from mlbook import dependencies

ROOT = Path(__file__).resolve().parent.parent
PIPELINE = ROOT / "build" / "mlbook"


def imported_modules(folder: Path) -> dict[str, str]:
    """Top-level module -> first `file:line` importing it, for every import in the folder (function-local too)."""
    found: dict[str, str] = {}
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def third_party(modules: dict[str, str]) -> dict[str, str]:
    """The modules that are neither the standard library nor mlbook itself."""
    return {m: where for m, where in modules.items() if m not in sys.stdlib_module_names and m != "mlbook"}


def unprovided(modules: dict[str, str], allowed: set[str]) -> list[str]:
    """`file:line: module` for each module that no distribution of allowed provides."""
    providers = md.packages_distributions()
    out = []
    for module, where in sorted(modules.items()):
        dists = {dependencies.canonical(d) for d in providers.get(module, [])}
        if not dists & allowed:
            out.append(f"{where}: {module} (from {sorted(dists) or 'nothing installed'})")
    return out


def test_every_build_import_comes_from_the_book_extra():
    modules = third_party(imported_modules(PIPELINE))
    assert {"weasyprint", "pypdf", "mkdocs", "ebooklib"} <= set(modules), "the import scan found too little"
    problems = unprovided(modules, dependencies.closure("mlbook", ("book",)))
    assert not problems, "imported by the pipeline but not installed by the `book` extra:\n" + "\n".join(problems)


def test_the_check_fails_on_a_module_outside_the_closure():
    # pytest is installed (the test extra) but `make book` does not install it: a build import of it must fail.
    closure = dependencies.closure("mlbook", ("book",))
    assert "pytest" not in closure and "pypdf" in closure
    assert unprovided({"pytest": "build/mlbook/x.py:3"}, closure) == ["build/mlbook/x.py:3: pytest (from ['pytest'])"]
    # Without the `book` extra's closure, pypdf (a PDF-writer import) would be reported.
    assert unprovided({"pypdf": "build/mlbook/x.py:1"}, dependencies.closure("mlbook", ())) != []


def test_a_missing_module_is_one_sentence_naming_the_package():
    message = dependencies.explain(ModuleNotFoundError("No module named 'yaml'", name="yaml"))
    assert message == (
        "the Python package 'PyYAML' (module 'yaml') is not installed; "
        "run `make setup` (it installs the `book` extra of pyproject.toml into .venv)"
    )
    assert dependencies.explain(ValueError("x")) is None


def test_missing_lists_the_direct_requirements_that_are_not_installed(monkeypatch):
    real = md.distribution

    def fake(name):
        if dependencies.canonical(name) == "pypdf":
            raise md.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(md, "distribution", fake)
    assert dependencies.missing() == ["pypdf"]


def test_build_stops_with_one_sentence_when_a_package_is_missing(monkeypatch, tmp_path, capsys):
    from mlbook import stage

    monkeypatch.setattr(dependencies, "missing", lambda: ["pypdf"])
    assert stage.build(tmp_path, tmp_path / "site") == 1
    err = capsys.readouterr().err
    assert err.strip() == (
        "mlbook: cannot build: the Python package(s) 'pypdf' are not installed; "
        "run `make setup` (it installs the `book` extra of pyproject.toml into .venv)"
    )
