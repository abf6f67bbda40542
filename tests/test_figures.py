"""Figures: each renders in the one style, has alt text and a caption, is placed in a chapter, and draws its model."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import pytest

from mlbook.data import figures
from mlbook.data.figures import collectives, memory, parallelism, style, timeline, topology

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "book" / "data"
NEW_FAMILIES = (parallelism, collectives, memory, timeline, topology)


def _used_in_book() -> dict[str, list[str]]:
    used: dict[str, list[str]] = {}
    for md in (ROOT / "book").rglob("*.md"):
        for line in md.read_text(encoding="utf-8").splitlines():
            if m := re.match(r"^///\s*figure\s*\|\s*([\w-]+)\s*$", line):
                used.setdefault(m[1], []).append(str(md.relative_to(ROOT)))
    return used


def test_every_figure_has_alt_text_a_caption_and_a_place_in_a_chapter():
    used = _used_in_book()
    for name, fig in figures.FIGURES.items():
        assert len(fig.alt) > 30 and len(fig.caption) > 40, name
        assert name in used, f"{name} is not placed in any chapter"
    # The target for the book as a whole.
    assert len(set(used) & set(figures.FIGURES)) >= 20


@pytest.mark.parametrize("name", [f.name for fam in NEW_FAMILIES for f in fam.FIGURES])
def test_each_new_figure_renders_as_svg_with_real_text_on_a_white_card(name, tmp_path):
    svg = figures.render(name, DATA, tmp_path).read_text(encoding="utf-8")
    assert svg.startswith("<?xml") and "<text" in svg  # svg.fonttype none: text stays text
    assert "DejaVu Sans" in svg
    # Opaque white background: legible in the site's dark scheme.
    assert re.search(r'<g id="patch_1">\s*<path[^>]*style="fill: #ffffff"', svg)


def test_the_style_pairs_every_colour_with_a_line_style_for_grayscale_print():
    cycle = list(style.RC["axes.prop_cycle"])
    assert len({c["linestyle"] for c in cycle}) == len(cycle) == len({c["color"] for c in cycle})
    assert len(set(style.HATCHES)) == len(style.HATCHES) == len(style.FILLS)


def test_zero_figure_bars_equal_the_16_bytes_per_parameter_model():
    fig, ax = plt.subplots()
    with plt.rc_context(style.RC):
        memory._zero_stages(ax, DATA)
    totals = [0.0] * 4
    for bar in ax.patches:
        totals[round(bar.get_x() + bar.get_width() / 2)] += bar.get_height()
    plt.close(fig)
    psi, n = 7.5e9, 64
    expected = [16 * psi, (4 + 12 / n) * psi, (2 + 14 / n) * psi, 16 * psi / n]
    assert totals == pytest.approx([e / 1e9 for e in expected])
    assert [round(t, 1) for t in totals] == [120.0, 31.4, 16.6, 1.9]  # the numbers the caption states


def test_serving_figure_caption_states_how_many_sequences_fit():
    usable = memory.HBM * (1 - memory.RESERVE)
    weights, kv = memory.serving_bytes(1, 8192)
    assert kv == 2**30 and weights == 16e9
    assert int((usable - weights) // kv) == 52
    assert "52 such sequences" in figures.FIGURES["serving-gpu-memory"].caption


@pytest.mark.parametrize("op", ["all-reduce", "reduce-scatter", "all-gather", "broadcast", "reduce", "all-to-all"])
def test_collective_after_buffers_follow_the_definition(op):
    before = collectives.before(op)
    after = collectives.after(op, before)
    n = len(before)
    total = ["+".join(before[r][c] for r in range(n)) for c in range(n)]
    expected = {
        "all-reduce": [total] * n,
        "reduce": [total, *before[1:]],
        "reduce-scatter": [[total[c] if c == r else "" for c in range(n)] for r in range(n)],
        "all-gather": [[f"x{c}" for c in range(n)]] * n,
        "broadcast": [before[0]] * n,
        "all-to-all": [[f"{s}>{r}" for s in range(n)] for r in range(n)],
    }[op]
    assert after == expected


def test_1f1b_schedule_has_the_bubble_of_the_formula_and_respects_dependencies():
    p, m, f, b = 4, 8, 1.0, 2.0
    ops = timeline.one_f_one_b(p, m, f, b)
    assert len(ops) == 2 * p * m
    end = {(s, k, i): t + (f if k == "F" else b) for s, k, i, t in ops}
    start = {(s, k, i): t for s, k, i, t in ops}
    step = max(end.values())
    assert step == (m + p - 1) * (f + b)  # bubble (p-1)/(m+p-1) of the step
    for (s, k, i), t in start.items():
        if k == "F" and s > 0:
            assert t >= end[(s - 1, "F", i)]
        if k == "B" and s < p - 1:
            assert t >= end[(s + 1, "B", i)]
    for s in range(p):  # one op at a time per stage
        spans = sorted((start[o], end[o]) for o in start if o[0] == s)
        assert all(a[1] <= b_[0] for a, b_ in zip(spans, spans[1:], strict=False))
    with pytest.raises(ValueError):
        timeline.one_f_one_b(4, 2)


def test_topologies_follow_their_wiring_rules():
    links = topology.fat_tree_links(8, 4)
    assert len(set(links)) == 32 and {s for _, s in links} == set(range(4))  # every leaf to every spine once
    cables = topology.rail_links(4, 8)
    assert all(nic == rail for _, nic, rail in cables) and len(cables) == 32


def test_parallel_layouts_split_the_model_without_gaps():
    assert [parallelism.holds("pipeline (PP)", g) for g in range(4)] == [
        "layers 0-7",
        "layers 8-15",
        "layers 16-23",
        "layers 24-31",
    ]
    assert parallelism.holds("expert (EP)", 3) == "experts 48-63"
    assert parallelism.holds("context (CP)", 3) == "tokens 96k-128k"
