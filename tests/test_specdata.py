"""Spec data: schema and consistency, the rendered tables equal the data, figures drawn and cached."""

import re

import pytest
import yaml

from conftest import ROOT
from mlbook.data import figures, specdata
from mlbook.markdown import spectable
from mlbook.markdown.fences import fenced

DATA = ROOT / "book" / "data"
# runbook.yaml and changes.yaml are validated by mlbook.data.runbook and mlbook.data.changes
# (tests/test_runbook.py, tests/test_changes.py), not as spec tables.
TABLES = sorted(p.stem for p in DATA.glob("*.yaml") if p.stem not in ("runbook", "changes"))


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
    row["dense_tflops"]["fp8"] = 1000.0
    _, errors = _load(tmp_path, [row])
    assert any("a sparse or per-package figure?" in str(e) for e in errors)


def test_bf16_and_fp16_peaks_must_agree(tmp_path):
    row = _accelerator()
    row["dense_tflops"] = {**row["dense_tflops"], "bf16": 989.4, "fp16": 494.7}  # fp16 with FP32 accumulate
    _, errors = _load(tmp_path, [row])
    assert any("dense bf16 (989.4) and fp16 (494.7) differ; vendors quote them equal" in str(e) for e in errors)
    row["dense_tflops"]["fp16"] = 989.5  # rounding, within 1%
    assert _load(tmp_path, [row])[1] == []


def _link(both):
    return {
        "name": "NVLink 4",
        "kind": "intra-node",
        "generation": "4",
        "year": 2022,
        "per_direction_gbps": 450,
        "both_directions_gbps": both,
        "unit_of_count": "per GPU",
        "source": "https://example.org/",
        "as_of": "2026-11-29",
    }


def test_the_arithmetic_checks_allow_1_percent_of_the_stated_figure(tmp_path):
    assert _load(tmp_path, [_link(909)], "interconnects")[1] == []  # |909 - 900| = 9 <= 1% of 909
    _, errors = _load(tmp_path, [_link(910)], "interconnects")  # |910 - 900| = 10 > 1% of 910
    assert [e.message for e in errors] == [
        "NVLink 4: row: Value error, both_directions_gbps (910.0) must be 2 x per_direction_gbps (450.0)"
    ]


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


LINK_WORDS = re.compile(
    r"PCIe\s*[3-7]|NVLink|NVSwitch|xGMI|Infinity Fabric|\bICI\b|InfiniBand|\b[HNX]DR\b|\bEFA\b|NeuronLink"
    r"|\d+\s*(G|Gb/s|Gigabit)\s*Ethernet|RoCE",
    re.IGNORECASE,
)
UNIT_WORDS = re.compile(r"tflops|tb/s|hbm|gb/s|gbps|iops|gt/s", re.IGNORECASE)


def _spec_names() -> set[str]:
    """Short names a spec row would mention: accelerator models and drive models from the data."""
    names = set()
    for row in yaml.safe_load((DATA / "accelerators.yaml").read_text()):
        # Model tokens: "H100", "MI300X", "v5p", "Trainium2", "B200" (letters and digits, not "80GB").
        names |= {w.strip("()") for w in row["name"].split() if re.fullmatch(r"\(?[A-Za-z]+\d+[A-Za-z]*\)?", w)}
    names |= {"Gaudi", "TPU"}  # "Intel Gaudi 3", "Google Cloud TPU v5p": the family word carries no digit
    for row in yaml.safe_load((DATA / "storage.yaml").read_text()):
        names.add(row["name"].split(" (")[0].split()[1])  # model, e.g. "9550", "PM9A3", "Exos"
    return names


def hand_written_spec_tables(lines: list[str], names: set[str]) -> list[int]:
    """1-based lines of Markdown tables (outside code) whose header has a unit and that list >= 2 spec rows.

    A spec row names an accelerator, a drive or a link generation in its first cell and has a number.
    """
    found = []
    for i, (line, code) in enumerate(zip(lines, fenced(lines), strict=True)):
        if code or not line.startswith("|") or not UNIT_WORDS.search(line):
            continue
        if i + 2 < len(lines) and set(lines[i + 1].replace(" ", "")) <= set("|-:"):
            rows = []
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append(row)
            first = [r.split("|")[1] for r in rows]
            spec = [
                r
                for r, f in zip(rows, first, strict=True)
                if re.search(r"\d", r) and (any(n in f for n in names) or LINK_WORDS.search(f))
            ]
            if len(spec) >= 2:
                found.append(i + 1)
    return found


def test_the_detector_finds_a_hand_written_table_of_links_and_of_accelerators():
    names = _spec_names()
    links = ["| Link | Per direction (GB/s) |", "|---|---|", "| NVLink 4 | 450 |", "| PCIe 5.0 x16 | 63 |"]
    gpus = ["Text", "", "| GPU | BF16 TFLOPS |", "| --- | --- |", "| H100 | 989 |", "| MI300X | 1307 |"]
    prose = ["| Setup | Fraction |", "|---|---|", "| NVLink 4 | 80% |", "| NDR | 92% |"]  # no unit in header
    assert hand_written_spec_tables(links, names) == [1]
    assert hand_written_spec_tables(gpus, names) == [3]
    assert hand_written_spec_tables(["```text", *links, "```"], names) == []
    assert hand_written_spec_tables(prose, names) == []


def test_no_hand_written_spec_table_in_the_book():
    names = _spec_names()
    offenders = [
        f"{md.relative_to(ROOT)}:{line}"
        for md in sorted((ROOT / "book").rglob("*.md"))
        for line in hand_written_spec_tables(md.read_text(encoding="utf-8").splitlines(), names)
    ]
    assert offenders == [], "spec tables of accelerators, links and drives must come from book/data via /// spec-table"


def _drive(**changes):
    row = {
        "name": "Test drive",
        "kind": "nvme-ssd",
        "interface": "PCIe 4.0 x4",
        "year": 2022,
        "seq_read_gbps": 7.0,
        "seq_write_gbps": 5.0,
        "rand_read_kiops": 1000,
        "rand_write_kiops": 200,
        "source": "https://example.org/",
        "as_of": "2026-11-29",
    }
    return {**row, **changes}


def test_a_drive_faster_than_its_interface_is_an_error(tmp_path):
    assert _load(tmp_path, [_drive()], "storage")[1] == []
    _, errors = _load(tmp_path, [_drive(seq_read_gbps=14.0)], "storage")
    assert any("seq_read_gbps 14.0 exceeds PCIe 4.0 x4 (7.88 GB/s)" in str(e) for e in errors)
    _, errors = _load(tmp_path, [_drive(rand_read_kiops=3000)], "storage")
    assert any("rand_read_kiops x 4 KiB = 12.29 GB/s exceeds" in str(e) for e in errors)
    _, errors = _load(
        tmp_path,
        [
            _drive(
                kind="hdd",
                interface="SAS 12 Gb/s",
                seq_read_gbps=0.3,
                seq_write_gbps=0.3,
                rand_read_kiops=90,
                rand_write_kiops=0.4,
            )
        ],
        "storage",
    )
    assert any("a hard disk above 5,000 random IOPS" in str(e) for e in errors)


def test_storage_table_cells_equal_the_data():
    rows = spectable.load(DATA, "storage")
    body = [ln for ln in spectable.render(rows, "storage") if ln.startswith("| ") and not ln.startswith("| Drive")]
    for row, line in zip(rows, body, strict=True):
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        assert cells[0] == row["name"] and cells[1] == row["interface"]
        assert cells[3] == f"{spectable._num(row['seq_read_gbps'])} / {spectable._num(row['seq_write_gbps'])}"


def test_bandwidth_ladder_relates_links_to_hbm():
    rows = [r for f in ("accelerators", "interconnects") for r in spectable.load(DATA, f)]
    by = {r["name"]: r for r in rows}
    gpu, link = "NVIDIA H100 SXM5", "NVLink 4 (H100)"
    lines = spectable.render(rows, "bandwidth-ladder", [gpu, link])
    cells = [c.strip() for c in lines[3].strip("|").split(" | ")]
    ratio = by[gpu]["memory_bandwidth_tbps"] * 1000 / by[link]["per_direction_gbps"]
    assert cells[0] == link and cells[3] == f"1/{ratio:.0f}"
    assert "both" not in lines[0] and "per direction" in lines[0]
    with pytest.raises(ValueError, match="starts with an accelerator row"):
        spectable.render(rows, "bandwidth-ladder", [link, gpu])


def test_every_accelerator_row_has_a_status_and_at_least_25_ship():
    rows, errors = specdata.load(DATA, "accelerators")
    assert errors == []
    shipping = [r for r in rows if r.status == "shipping"]
    assert len(shipping) >= 25
    assert {r.status for r in rows} <= {"shipping", "announced"}


def test_a_missing_or_unknown_status_is_an_error(tmp_path):
    row = _accelerator()
    del row["status"]
    _, errors = _load(tmp_path, [row, _accelerator(status="sampling")])
    text = [str(e) for e in errors]
    assert any("status: Field required" in t for t in text)
    assert any("status: Input should be 'shipping' or 'announced'" in t for t in text)


def test_announced_rows_are_labelled_and_can_be_filtered_out():
    rows = spectable.load(DATA, "accelerators")
    announced = [r["name"] for r in rows if r["status"] == "announced"]
    assert announced, "the data has announced parts"
    everything = spectable.render(rows, "accelerators")
    for name in announced:
        line = next(ln for ln in everything if ln.startswith(f"| {name} |"))
        assert "(announced)" in line.split(" | ")[1]
    shipping = spectable.render(rows, "accelerators", status="shipping")
    assert not any(ln.startswith(f"| {n} |") for n in announced for ln in shipping)
    assert sum(ln.startswith("| ") for ln in shipping) - 1 == sum(r["status"] == "shipping" for r in rows)
    with pytest.raises(ValueError, match="shipping or announced"):
        spectable.render(rows, "accelerators", status="sampled")


def test_further_sources_are_linked_in_the_source_column():
    rows = spectable.load(DATA, "accelerators")
    row = next(r for r in rows if r["also_sources"])
    line = next(ln for ln in spectable.render(rows, "accelerators", [row["name"]]) if ln.startswith(f"| {row['name']}"))
    assert row["source"] in line and all(f"]({url})" in line for url in row["also_sources"])


def _table_cells(name):
    rows = spectable.load(DATA, name)
    lines = spectable.render(rows, name)
    body = [ln for ln in lines[2:] if ln.startswith("| ")]
    assert len(body) == len(rows)
    return rows, [[c.strip() for c in ln.strip("|").split(" | ")] for ln in body]


def test_hbm_table_cells_equal_the_data_and_bandwidth_is_pins_times_rate():
    rows, cells = _table_cells("hbm")
    for row, cell in zip(rows, cells, strict=True):
        assert cell[0] == row["name"] and cell[5] == spectable._num(row["per_stack_gbps"])
        assert abs(row["max_pin_gbit"] * row["interface_bits"] / 8 - row["per_stack_gbps"]) < 1
    assert [r["name"] for r in rows][-1] == "HBM4" and rows[-1]["interface_bits"] == 2048


def test_a_wrong_hbm_stack_bandwidth_is_an_error(tmp_path):
    row = yaml.safe_load((DATA / "hbm.yaml").read_text())[2]  # HBM3
    row["per_stack_gbps"] = 1638.4  # both directions of nothing: 2x the pins x rate
    _, errors = _load(tmp_path, [row], "hbm")
    assert any("6.4 Gb/s x 1024 pins / 8 = 819.2 GB/s" in str(e) for e in errors)


def test_caches_table_cells_equal_the_data():
    rows, cells = _table_cells("caches")
    for row, cell in zip(rows, cells, strict=True):
        assert cell[0] == row["name"]
        assert cell[1:4] == [spectable._num(row[k]) for k in ("l2_mb", "llc_mb", "sram_mb")]
    _, errors = specdata.load(DATA, "caches")
    assert errors == []


def test_a_cache_row_without_any_size_is_an_error(tmp_path):
    row = {"name": "X", "vendor": "Y", "source": "https://example.org/", "as_of": "2026-12-01"}
    _, errors = _load(tmp_path, [row], "caches")
    assert any("needs at least one of" in str(e) for e in errors)


def test_power_rows_agree_with_the_accelerator_rows_and_their_own_arithmetic(tmp_path):
    accel = {r["name"]: r for r in spectable.load(DATA, "accelerators")}
    rows, cells = _table_cells("power-clocks")
    matched = 0
    for row, cell in zip(rows, cells, strict=True):
        assert cell[0] == row["name"] and cell[1].startswith(spectable._num(row["max_power_w"]))
        if row["name"] in accel:
            matched += 1
            if accel[row["name"]]["tdp_w"] is not None:
                assert accel[row["name"]]["tdp_w"] == row["max_power_w"], row["name"]
            if row["dense_fp16_tflops"] and accel[row["name"]]["dense_tflops"]["fp16"]:
                assert abs(accel[row["name"]]["dense_tflops"]["fp16"] - row["dense_fp16_tflops"]) < 0.5, row["name"]
    assert matched == len(rows), "every power row names an accelerators.yaml row"
    bad = yaml.safe_load((DATA / "power-clocks.yaml").read_text())[1]  # H100 SXM5
    bad["boost_clock_mhz"] = 1980  # the maximum SM clock, not the clock behind the tensor peak
    _, errors = _load(tmp_path, [bad], "power-clocks")
    assert any("not dense_fp16_tflops 989.4" in str(e) for e in errors)


def test_cloud_network_rows_add_up_and_render_per_direction():
    rows, cells = _table_cells("cloud-networks")
    for row, cell in zip(rows, cells, strict=True):
        assert cell[0] == row["name"] and cell[5] == spectable._num(row["fabric_gbit"])
        assert float(cell[6]) == round(row["fabric_gbit"] / 8 / row["accelerators"], 1)
    header = spectable.render(rows, "cloud-networks")[0]
    assert "per direction" in header and "both" not in header


def test_cloud_network_nic_sum_is_checked(tmp_path):
    row = yaml.safe_load((DATA / "cloud-networks.yaml").read_text())[1]  # p5.48xlarge
    row["fabric_gbit"] = 6400  # both directions added
    _, errors = _load(tmp_path, [row], "cloud-networks")
    assert any("32 NICs x 100.0 Gb/s = 3200.0" in str(e) for e in errors)


def test_every_data_table_is_shown_in_the_book():
    shown = set()
    for md in (ROOT / "book").rglob("*.md"):
        lines = md.read_text(encoding="utf-8").splitlines()
        shown |= {
            spectable.DATA_OF[m.group("name")] if isinstance(spectable.DATA_OF.get(m.group("name")), str) else ""
            for ln, code in zip(lines, fenced(lines), strict=True)
            if not code and (m := spectable.OPEN.match(ln)) and m.group("name") in spectable.DATA_OF
        }
    assert set(TABLES) <= shown
