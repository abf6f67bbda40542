"""Spec data: schema and consistency, the rendered tables equal the data, figures drawn and cached."""

import re

import pytest
import yaml

from conftest import ROOT
from mlbook import figures, specdata, spectable
from mlbook.sourcecheck import fenced

DATA = ROOT / "book" / "data"
TABLES = sorted(p.stem for p in DATA.glob("*.yaml"))


@pytest.mark.parametrize("name", TABLES)
def test_every_data_file_validates_with_a_source_and_date_per_row(name):
    rows, errors = specdata.load(DATA, name)
    assert [str(e) for e in errors] == []
    assert rows and all(r.source and r.as_of for r in rows)


def _accelerator(**changes):
    row = yaml.safe_load((DATA / "accelerators.yaml").read_text())[0]
    row.update(changes)
    return row


def _load(tmp_path, rows, name="accelerators"):
    (tmp_path / f"{name}.yaml").write_text("# comment line\n" + yaml.safe_dump(rows, sort_keys=False))
    return specdata.load(tmp_path, name)


def test_unknown_key_is_an_error_with_its_line(tmp_path):
    _, errors = _load(tmp_path, [_accelerator(), _accelerator(memroy_gb=80)])
    text = [str(e) for e in errors]
    assert len(text) == 1 and "memroy_gb: Extra inputs are not permitted" in text[0]
    first = f"- name: {_accelerator()['name']}"
    line = (tmp_path / "accelerators.yaml").read_text().splitlines().index(first, 2) + 1
    assert f"accelerators.yaml:{line}: invalid data: NVIDIA" in text[0]


def test_a_sparse_figure_in_the_dense_column_is_caught(tmp_path):
    row = _accelerator()
    row["dense_tflops"] = {**row["dense_tflops"], "bf16": 1978.9, "fp16": 1978.9}  # sparse headline, not halved
    _, errors = _load(tmp_path, [row])
    assert any("dense fp8 (1978.9) below dense bf16" in str(e) or "sparse" in str(e) for e in errors) is False or errors
    row["dense_tflops"]["fp8"] = 1000.0
    _, errors = _load(tmp_path, [row])
    assert any("a sparse or per-package figure?" in str(e) for e in errors)


def test_both_directions_must_be_twice_one_direction(tmp_path):
    row = {
        "name": "NVLink 4",
        "kind": "intra-node",
        "generation": "4",
        "year": 2022,
        "per_direction_gbps": 450,
        "both_directions_gbps": 450,
        "unit_of_count": "per GPU",
        "source": "https://example.org/",
        "as_of": "2026-11-29",
    }
    _, errors = _load(tmp_path, [row], "interconnects")
    assert any("must be 2 x per_direction_gbps" in str(e) for e in errors)


def test_rendered_table_cells_equal_the_data():
    rows = spectable.load(DATA, "accelerators")
    lines = spectable.render(rows, "accelerators")
    body = [ln for ln in lines if ln.startswith("| ") and not ln.startswith("| Accelerator")]
    assert len(body) == len(rows)
    for row, line in zip(rows, body, strict=True):
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        assert cells[0] == row["name"]
        assert cells[3] == spectable._num(row["memory_bandwidth_tbps"])
        assert cells[4] == spectable._num(row["dense_tflops"]["bf16"])
        assert row["source"] in cells[-1]
    assert "dense" in lines[0].lower() or "dense" in lines[0]


def test_figures_are_drawn_as_svg_with_text_and_cached(tmp_path):
    first = figures.render("peak-vs-bandwidth", DATA, tmp_path)
    svg = first.read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "foreignObject" not in svg
    assert "<text" in svg or "font" in svg  # real text, not paths only
    stamp = first.stat().st_mtime_ns
    assert figures.render("peak-vs-bandwidth", DATA, tmp_path) == first
    assert first.stat().st_mtime_ns == stamp  # taken from the cache, not redrawn


def test_at_least_six_data_figures_appear_in_the_book():
    used = set()
    for md in (ROOT / "book").rglob("*.md"):
        lines = md.read_text(encoding="utf-8").splitlines()
        used |= {
            m.group(1)
            for ln, code in zip(lines, fenced(lines), strict=True)
            if not code and (m := re.match(r"^///\s*figure\s*\|\s*([\w-]+)", ln))
        }
    assert len(used & set(figures.FIGURES)) >= 6


def test_no_hand_written_spec_table_of_accelerators():
    names = [r["name"] for r in yaml.safe_load((DATA / "accelerators.yaml").read_text())]
    short = {n.split()[1] if n.split()[0] in ("NVIDIA", "AMD", "Intel", "Google", "AWS") else n for n in names}
    offenders = []
    for md in sorted((ROOT / "book").rglob("*.md")):
        lines = md.read_text(encoding="utf-8").splitlines()
        for i, (line, code) in enumerate(zip(lines, fenced(lines), strict=True)):
            header = line.lower()
            if code or not line.startswith("|") or not re.search(r"tflops|tb/s|hbm", header):
                continue
            if i + 2 < len(lines) and set(lines[i + 1].replace(" ", "")) <= set("|-:"):
                rows = []
                for row in lines[i + 2 :]:
                    if not row.startswith("|"):
                        break
                    rows.append(row)
                spec_rows = [r for r in rows if any(s in r.split("|")[1] for s in short) and re.search(r"\d", r)]
                if len(spec_rows) >= 2:
                    offenders.append(f"{md.relative_to(ROOT)}:{i + 1}")
    assert offenders == [], "spec tables must come from book/data via /// spec-table"
