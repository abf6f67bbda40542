"""The build wrapper's translations: MkDocs' configuration errors to mkdocs.yml lines, crashes to one line."""

import logging

import pytest
import yaml

from mlbook import runner
from mlbook.checks.tree import check_tree
from mlbook.diagnostics import Reporter

CONFIG = """site_name: X
theme:
  name: material
plugins:
  - search
  - nosuchplugin
  - mlbook:
      pdf_workerz: 2
nav:
  - Home: index.md
  - 42
"""


@pytest.mark.parametrize(
    ("key", "detail", "line"),
    [
        ("plugins", 'The "nosuchplugin" plugin is not installed', 6),
        ("plugins", "Plugin 'mlbook' option 'pdf_workerz': Unrecognised configuration name: pdf_workerz", 8),
        ("nav", "Expected nav item to be a string or dict, got a int: 42", 11),
        ("theme", "Unrecognised theme name: 'nope'", 2),
        ("docs_dir", "The path 'x' isn't an existing directory.", 1),
    ],
)
def test_a_configuration_error_points_at_its_line(key, detail, line):
    assert runner.config_line(CONFIG, key, detail) == line


def test_mkdocs_config_records_become_diagnostics_and_page_errors_are_remembered():
    translator = runner.Translator("mkdocs.yml", CONFIG, "book")
    record = logging.LogRecord("mkdocs", logging.ERROR, "", 0, "Config value 'nav': Expected x: 42", (), None)
    assert translator.filter(record)
    assert record.getMessage() == "mkdocs.yml:11: invalid configuration: Expected x: 42"
    page = logging.LogRecord("mkdocs", logging.ERROR, "", 0, "Error reading page 'a/b.md': boom", (), None)
    assert not translator.filter(page) and translator.page == "a/b.md"


def test_a_yaml_error_names_the_line_where_the_construct_began():
    text = "site_name: X\nextra:\n  tags: [one, two\n  other: 1\n"
    try:
        yaml.safe_load(text)
    except yaml.YAMLError as exc:
        try:
            raise ValueError("wrapped") from None
        except ValueError as outer:
            outer.__context__ = exc
            line = runner.yaml_problem(outer, "mkdocs.yml")
    assert line.startswith("mkdocs.yml:3: invalid configuration: YAML error: while parsing a flow sequence, ")
    assert line.endswith("on line 4")


def test_an_unforeseen_exception_is_one_line():
    assert runner.crash(RuntimeError("boom"), "a.md", "book") == (
        "internal error: RuntimeError: boom while rendering book/a.md (MLBOOK_DEBUG=1 shows the traceback)"
    )
    assert runner.crash(RecursionError("too deep"), "a.md", "book").startswith("book/a.md:1: could not render: ")
    disk = OSError(28, "No space left on device", "/site/x.html")
    assert runner.crash(disk, None, "book") == "error: No space left on device: /site/x.html"
    missing = ModuleNotFoundError("No module named 'yaml'", name="yaml")
    assert runner.crash(missing, None, "book").startswith("error: the Python package 'PyYAML'")


def test_the_tree_walk_stops_at_cycles_and_finds_what_mkdocs_cannot_read(tmp_path):
    docs = tmp_path / "book"
    (docs / "a" / "b").mkdir(parents=True)
    (docs / "a" / "b" / "up").symlink_to("../..")
    (docs / "a" / "ok").symlink_to("b")  # a second path to a folder inside the book: allowed
    (docs / "gone.md").symlink_to("nowhere.md")
    (tmp_path / "elsewhere").mkdir()
    (docs / "ext").symlink_to(tmp_path / "elsewhere")
    reporter = Reporter(logging.getLogger("test.tree"))
    assert check_tree(docs, "book", reporter) == 4
    assert [(d.path, d.kind) for d in reporter.seen] == [
        ("book/a/b/up", "symlink cycle"),
        ("book/a/ok/up", "symlink cycle"),
        ("book/ext", "symlink outside the book"),
        ("book/gone.md", "broken symlink"),
    ]


def test_the_command_line_says_an_unforeseen_error_in_one_line(monkeypatch, capsys):
    from mlbook import __main__ as cli
    from mlbook import stage

    def fail(*args, **kwargs):
        raise PermissionError(13, "Permission denied", "site/.old")

    monkeypatch.setattr(stage, "build", fail)
    monkeypatch.delenv("MLBOOK_DEBUG", raising=False)
    assert cli.run(["build", "--site", "site"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "internal error: PermissionError: [Errno 13] Permission denied: 'site/.old' "
        "(MLBOOK_DEBUG=1 shows the traceback)\n"
    )
