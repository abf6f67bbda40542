"""The 2 a.m. runbook: schema, coverage, markers, and planted dead links and scripts reported at their line."""

import pytest
import yaml

from conftest import ROOT
from mlbook.book import Book, Chapter
from mlbook.checks import datalinks
from mlbook.data import runbook
from mlbook.diagnostics import Reporter

DATA = ROOT / "book" / "data" / "runbook.yaml"
SHOWN = "book/data/runbook.yaml"
CATEGORIES = {"hangs", "nccl-network", "oom", "xid-ecc", "slow", "loss-nan", "slurm", "storage", "inference"}


def _load(path=DATA, root=ROOT):
    return runbook.load(path, root=root, docs_dir=ROOT / "book")


def test_the_runbook_validates_with_60_symptoms_across_the_categories():
    loaded, errors = _load()
    assert [str(e) for e in errors] == []
    entries = loaded.runbook.entries
    assert len(entries) >= 60
    per_category = {c.id: sum(e.category == c.id for e in entries) for c in loaded.runbook.categories}
    assert set(per_category) >= CATEGORIES, per_category
    assert min(per_category.values()) >= 4, per_category


def test_every_section_names_a_heading_of_its_chapter():
    loaded, _ = _load()
    for entry in loaded.runbook.entries:
        chapter, _, anchor = entry.section.partition("#")
        _, found = datalinks.headings(ROOT / "book", chapter)
        assert anchor in found, f"{entry.id}: no heading '#{anchor}' in {chapter}"


def test_the_runbook_page_is_early_in_the_nav_and_renders_the_block():
    nav = (ROOT / "mkdocs.yml").read_text().split("\nnav:\n", 1)[1]
    assert nav.index("runbook.md") < nav.index("Part I")
    assert "/// runbook\n///" in (ROOT / "book" / "runbook.md").read_text()


def test_every_command_carries_a_known_marker_or_none():
    loaded, _ = _load()
    assert all(e.command.needs is None or e.command.needs in runbook.REASONS for e in loaded.runbook.entries)
    assert sum(e.command.needs is None for e in loaded.runbook.entries) >= 10  # the ones CI runs


# The unmarked commands run as code blocks of book/runbook.md: tests/test_book_blocks.py collects the rendered
# page's blocks (each reported at its `code:` line here) and runs them in its sandbox, as written.


def test_rendered_page_has_one_subsection_per_symptom_with_a_marked_fence():
    loaded, _ = _load()
    lines = runbook.render(loaded, "runbook.md", ROOT / "book")
    assert sum(ln.startswith("### ") for ln in lines) == len(loaded.runbook.entries)
    assert sum(ln.startswith("## ") for ln in lines) == len(loaded.runbook.categories)
    fences = [ln for ln in lines if ln.startswith("```{.") or ln in ("```bash", "```python")]
    assert len(fences) == len(loaded.runbook.entries)
    first = loaded.runbook.entries[0]
    assert f"### {first.title} {{#{first.id}}}" in lines


def _plant(tmp_path, old, new):
    text = DATA.read_text()
    assert old in text
    text = text.replace(old, new, 1)
    target = tmp_path / "book" / "data" / "runbook.yaml"
    target.parent.mkdir(parents=True)
    target.write_text(text)
    (tmp_path / "scripts").symlink_to(ROOT / "scripts")  # the scripts the entries name
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if new.strip() in ln)
    return target, line


def _first(key):
    return yaml.safe_load(DATA.read_text())["entries"][0][key]


def test_a_planted_dead_section_fails_at_its_line(tmp_path):
    section = _first("section")
    target, line = _plant(tmp_path, f"section: {section}", "section: hardware/no-such-chapter.md#intro")
    _, errors = _load(target, tmp_path)
    assert [str(e) for e in errors] == [
        f"{SHOWN}:{line}: broken link: 'hardware/no-such-chapter.md' is not a chapter under book/; "
        "name an existing CHAPTER.md#anchor"
    ]


def test_a_planted_missing_script_fails_at_its_line(tmp_path):
    target, line = _plant(tmp_path, f"script: {_first('script')}", "script: scripts/debug/no_such_tool.py")
    _, errors = _load(target, tmp_path)
    assert [str(e) for e in errors] == [
        f"{SHOWN}:{line}: missing script: 'scripts/debug/no_such_tool.py' does not exist; name a file under scripts/"
    ]


def test_a_planted_unknown_marker_fails_at_its_line(tmp_path):
    needs = yaml.safe_load(DATA.read_text())["entries"][0]["command"]["needs"]
    target, line = _plant(tmp_path, f"needs: {needs}", "needs: needs-coffee")
    _, errors = _load(target, ROOT)
    assert len(errors) == 1 and str(errors[0]).startswith(f"{target}:{line}: unknown marker: 'needs-coffee'")


def test_a_planted_dead_anchor_fails_after_the_build_at_the_data_line(tmp_path):
    site = tmp_path / "site"
    (site / "hardware" / "x").mkdir(parents=True)
    (site / "hardware" / "x" / "index.html").write_text(
        '<html><body><article class="md-content__inner"><h2 id="real">Real</h2></article></body></html>'
    )
    book = Book([Chapter("X", "hardware/x.md", "hardware/x/", kind="front", level=1)])
    reporter = Reporter()
    links = [datalinks.DataLink(SHOWN, 7, "hardware/x.md#real"), datalinks.DataLink(SHOWN, 9, "hardware/x.md#gone")]
    datalinks.check_anchors(book, site, links, reporter)
    assert [str(d) for d in reporter.seen] == [
        f"{SHOWN}:9: broken anchor: '#gone' is not an id of book/hardware/x.md; use the id of one of its headings"
    ]


@pytest.mark.parametrize("key", ["seen", "means", "section"])
def test_a_missing_field_is_an_error_at_the_entry(tmp_path, key):
    data = yaml.safe_load(DATA.read_text())
    del data["entries"][0][key]
    target = tmp_path / "runbook.yaml"
    target.write_text(yaml.safe_dump(data, sort_keys=False))
    _, errors = _load(target, tmp_path)
    assert any(f"invalid runbook: entries.0.{key}: Field required" in str(e) for e in errors), errors
