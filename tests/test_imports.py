"""The pipeline's import graph (built with grimp): no cycle, no private names across modules, writers free of MkDocs."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import grimp
import pytest

from conftest import ROOT

PIPELINE = ROOT / "build" / "mlbook"


def cycles(package: str) -> list[list[str]]:
    """One import chain per module pair that closes a cycle (imports inside functions count), shortest first."""
    graph = grimp.build_graph(package)
    found = []
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back:
                found.append([module, *back])
    return sorted(found, key=len)


def _module_of(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _target(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module an ImportFrom reads from."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def violations(root: Path) -> list[str]:
    """`file:line: what` for each private name taken from another module and each import inside a function."""
    out = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module, pkg = _module_of(path, root), path.name == "__init__.py"
        ours = {}  # local name -> module of ours it stands for
        for node in ast.walk(tree):
            where = f"{path.relative_to(root.parent)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.ImportFrom):
                source = _target(node, module, pkg)
                if source.split(".")[0] != root.name:
                    continue
                for alias in node.names:
                    ours[alias.asname or alias.name] = f"{source}.{alias.name}"
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        out.append(f"{where}: imports the private name {alias.name} of {source}")
            elif isinstance(node, ast.Import):
                ours.update({(a.asname or a.name): a.name for a in node.names if a.name.startswith(root.name)})
        for func in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
            for node in ast.walk(func):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if isinstance(node, ast.ImportFrom):
                    names = ["." * node.level + (node.module or "")]
                if any(n.startswith(".") or n.split(".")[0] == root.name for n in names):
                    out.append(f"{path.relative_to(root.parent)}:{node.lineno}: imports inside a function")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in ours
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                out.append(f"{path.relative_to(root.parent)}:{node.lineno}: uses the private name {node.attr}")
    return out


def test_the_pipeline_has_no_import_cycle():
    assert cycles("mlbook") == []


def test_no_module_uses_a_private_name_of_another_or_imports_inside_a_function():
    assert violations(PIPELINE) == []


def test_writers_and_the_book_model_never_import_mkdocs_and_nothing_imports_the_plugin():
    graph = grimp.build_graph("mlbook", include_external_packages=True)
    for part in ("mlbook.writers", "mlbook.html", "mlbook.options", "mlbook.book", "mlbook.checks", "mlbook.pages"):
        assert not graph.chain_exists(importer=part, imported="mkdocs", as_packages=True), part
    assert graph.find_modules_that_directly_import("mlbook.plugin") == set()


@pytest.fixture
def cyclic_package(tmp_path, monkeypatch):
    pkg = tmp_path / "cyclic"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text(
        textwrap.dedent(
            """
            from ._c import _helper


            def late():
                from . import a
            """
        )
    )
    (pkg / "_c.py").write_text("def _helper():\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return pkg


def test_the_checks_find_a_cycle_hidden_in_a_function_and_a_private_import(cyclic_package):
    assert cycles("cyclic")[0] == ["cyclic.a", "cyclic.b", "cyclic.a"]
    assert violations(cyclic_package) == [
        "cyclic/b.py:2: imports the private name _helper of cyclic._c",
        "cyclic/b.py:6: imports inside a function",
    ]
