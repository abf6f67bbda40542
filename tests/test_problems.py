"""Problems as data: every answer recomputed from its inputs; planted defects fail at their file and line."""

import re
import shutil

import pytest
import yaml

from conftest import ROOT
from mlbook.book import slug_for
from mlbook.checks import datalinks
from mlbook.data import problems, runbook
from mlbook.markdown import problemblock

DATA = ROOT / "book" / "data"
PROBLEMS = DATA / "problems"
FILES = sorted(PROBLEMS.glob("*.yaml"))
# Every chapter of Parts II, IV and V, and the planning chapter of Part I, carries problems.
PARTS = ("hardware", "training", "inference")
CHAPTERS = sorted(
    [
        p.relative_to(ROOT / "book").as_posix()
        for d in PARTS
        for p in (ROOT / "book" / d).glob("*.md")
        if p.stem != "index"
    ]
    + ["insights/planning-a-training-run.md"]
)
BLOCK = re.compile(r"^///\s*problems\s*$", re.M)


def _load(path, root=ROOT, data_dir=DATA):
    return problems.load_file(path, root=root, data_dir=data_dir, calc_dir=ROOT / "scripts" / "calc")


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_answer_recomputes_from_its_inputs(path):
    solved, errors = _load(path)
    assert [str(e) for e in errors] == []
    raw = yaml.safe_load(path.read_text())
    assert len(solved) == len(raw) > 0
    for item in solved:  # every stated answer is one the inputs reproduce (checked inside load_file)
        assert item.answer() and item.statement()
        assert item.problem.runbook or any(s.answer is not None for s in item.problem.solve.values())


def test_at_least_80_problems_across_every_required_chapter():
    counts = {}
    for chapter in CHAPTERS:
        path = PROBLEMS / f"{slug_for(chapter)}.yaml"
        assert path.is_file(), f"{chapter} has no problems file {path.relative_to(ROOT)}"
        assert BLOCK.search((ROOT / "book" / chapter).read_text()), f"{chapter} has no `/// problems` block"
        counts[chapter] = len(yaml.safe_load(path.read_text()))
    assert min(counts.values()) >= 2, counts
    assert sum(counts.values()) >= 80, counts


def test_every_problems_file_belongs_to_a_chapter_with_a_block():
    chapters = {slug_for(p.relative_to(ROOT / "book").as_posix()): p for p in (ROOT / "book").rglob("*.md")}
    for path in FILES:
        assert path.stem in chapters, f"{path.name} names no chapter"
        assert BLOCK.search(chapters[path.stem].read_text())


def test_problems_block_sits_before_sources():
    for chapter in CHAPTERS:
        text = (ROOT / "book" / chapter).read_text()
        assert text.index("/// problems") < text.index("\n## Sources"), chapter


def test_ids_are_unique_across_the_book_and_links_resolve_to_headings():
    ids = {}
    entries = {e["id"] for e in yaml.safe_load((DATA / "runbook.yaml").read_text())["entries"]}
    for path in FILES:
        for item in yaml.safe_load(path.read_text()):
            assert item["id"] not in ids, f"{item['id']} in {path.name} and {ids.get(item['id'])}"
            ids[item["id"]] = path.name
            for target in item["see"]:
                chapter, _, anchor = target.partition("#")
                _, found = datalinks.headings(ROOT / "book", chapter)
                assert anchor in found, f"{path.name}: {item['id']}: no heading '#{anchor}' in {chapter}"
            if item.get("runbook"):
                assert item["runbook"] in entries, f"{path.name}: {item['id']}: no runbook entry {item['runbook']}"


# Planted defects. Each writes a copy of a real problem into book/data/problems/ under a temporary root, so the
# message shows the path exactly as the build does.


def _plant(tmp_path, edit=None, problem=None, mark=None):
    source = PROBLEMS / "insights-planning-a-training-run.yaml"
    target = tmp_path / "book" / "data" / "problems" / source.name
    target.parent.mkdir(parents=True)
    text = source.read_text() if problem is None else problem
    if edit:
        old, new = edit
        assert old in text
        text = text.replace(old, new, 1)
    target.write_text(text)
    mark = mark or (edit[1] if edit else None)
    line = next((i for i, ln in enumerate(text.splitlines(), 1) if mark and mark in ln), None)
    return target, line


def _messages(tmp_path, target, data_dir=DATA):
    return [str(e) for e in _load(target, root=tmp_path, data_dir=data_dir)[1]]


SHOWN = "book/data/problems/insights-planning-a-training-run.yaml"


def test_a_planted_wrong_answer_fails_at_its_line(tmp_path):
    target, line = _plant(tmp_path, ("answer: 3674}", "answer: 3700}"))
    assert _messages(tmp_path, target) == [
        f"{SHOWN}:{line}: wrong answer: gpus: the inputs give 3674 GPUs, the data says 3700 (±0.5)"
    ]


def test_a_stated_answer_holds_to_the_digits_written(tmp_path):
    target, line = _plant(tmp_path, ("answer: 6.78e24", "answer: 6.7e24"))
    assert _messages(tmp_path, target) == [
        f"{SHOWN}:{line}: wrong answer: flops: the inputs give 6.78318e+24 FLOPs, the data says 6.7e24 (±5e+22)"
    ]


def test_a_corrected_spec_flows_into_the_answer(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(DATA, data, ignore=shutil.ignore_patterns("problems"))
    specs = data / "accelerators.yaml"
    specs.write_text(specs.read_text().replace("bf16: 989.4, fp16: 989.4", "bf16: 1200, fp16: 1200", 1))
    target, _ = _plant(tmp_path)
    messages = _messages(tmp_path, target, data)
    assert any(": wrong answer: gpu_hours: the inputs give 3.92" in m for m in messages), messages


def test_a_misspelt_spec_row_names_the_closest_row(tmp_path):
    target, line = _plant(tmp_path, ("NVIDIA H100 SXM5/dense", "NVIDIA H100 SXM/dense"))
    assert _messages(tmp_path, target) == [
        f"{SHOWN}:{line}: unknown spec: no row 'NVIDIA H100 SXM' in book/data/accelerators.yaml; "
        "did you mean 'NVIDIA H100 SXM5'?"
    ]


def test_a_spec_unit_that_disagrees_with_the_data_is_an_error(tmp_path):
    target, line = _plant(tmp_path, ("dense_tflops.bf16}", "dense_tflops.bf16, unit: GB/s}"))
    assert _messages(tmp_path, target) == [
        f"{SHOWN}:{line}: wrong unit: peak: the data gives dense_tflops.bf16 in TFLOPS, not GB/s"
    ]


def test_a_formula_that_fails_is_reported_at_its_line(tmp_path):
    target, line = _plant(tmp_path, ("ceil(gpu_hours", "ceil(gpu_hour"))
    (msg,) = _messages(tmp_path, target)
    assert msg.startswith(f"{SHOWN}:{line}: formula failed: gpus: NameNotDefined")


def test_an_unknown_key_and_an_unknown_template_name_are_errors(tmp_path):
    target, line = _plant(tmp_path, ("  see: [", "  sea: [insights/x.md]\n  see: ["), mark="sea:")
    (msg,) = _messages(tmp_path, target)
    assert msg == f"{SHOWN}:{line}: invalid problem: sea: Extra inputs are not permitted"
    target.write_text(target.read_text().replace("  sea: [insights/x.md]\n", "").replace("{gpus};", "{gpu};"))
    (msg,) = _messages(tmp_path, target)
    assert ": unknown name: answer: '{gpu}' is not one of" in msg


def test_an_unused_input_is_an_error(tmp_path):
    target, line = _plant(tmp_path, ("  given:\n", "  given:\n    spare: {value: 1, unit: GB}\n"), mark="spare")
    assert _messages(tmp_path, target) == [
        f"{SHOWN}:{line}: unused input: 'spare' is used in no formula and no template; use it or remove it"
    ]


@pytest.mark.parametrize(
    ("value", "unit", "raw", "text"),
    [
        (6.7832e24, "FLOPs", "6.78e24", "6.78 × 10²⁴ FLOPs"),
        (17.08, "GiB", "17.1", "17.1 GiB"),
        (3674.0, "GPUs", "3674", "3,674 GPUs"),
        (40.0, "%", "40", "40%"),
        (9.0, "x", "9", "9x"),
        (True, "", None, "yes"),
        (0.1234, "s", None, "0.123 s"),
        (123456.0, "tokens/s", None, "123,456 tokens/s"),
    ],
)
def test_quantities_show_the_digits_written_and_their_unit(value, unit, raw, text):
    assert problems.show(value, unit, raw) == text


def test_tolerance_is_half_the_last_digit_written():
    assert problems.tolerance("17.1") == pytest.approx(0.05)
    assert problems.tolerance("295") == 0.5
    assert problems.tolerance("1.4e12") == pytest.approx(5e10)


def test_a_number_alone_drops_the_unit_and_a_format_spec_applies():
    q = problems.Quantity(8192.0, "tokens", "8192")
    assert f"{q}|{q:n}|{q:.1f}" == "8,192 tokens|8,192|8192.0"


def test_rendered_problem_has_a_collapsed_answer_with_links_relative_to_the_chapter():
    solved, _ = _load(PROBLEMS / "insights-planning-a-training-run.yaml")
    lines = problemblock.render(solved[:1], "insights/planning-a-training-run.md", ROOT / "book")
    text = "\n".join(lines)
    assert lines[0].startswith("### Problem 1: ") and lines[0].endswith("{#problem-gpu-count-for-a-deadline}")
    assert '??? success mlbook-answer "Answer to problem 1"' in text
    assert "[`flops_mfu.py`](../scripts/calc/flops_mfu.py)" in text
    assert "`dense_tflops.bf16` = 989.4 TFLOPS ([source](https://" in text  # the spec number as the data has it
    assert "(planning-a-training-run.md#from-gpu-hours-to-a-gpu-count)" in text
    answer = text.split("??? success", 1)[1]
    assert all(ln.startswith("    ") or not ln for ln in answer.splitlines()[1:])  # all inside the block


def test_runbook_ids_named_by_diagnosis_problems_exist():
    loaded, errors = runbook.load(DATA / "runbook.yaml", root=ROOT, docs_dir=ROOT / "book")
    assert errors == []
    named = [p for path in FILES for p in yaml.safe_load(path.read_text()) if p.get("runbook")]
    assert named, "no diagnosis problem points at a runbook entry"
    assert all(p["runbook"] in loaded.lines for p in named)
