"""The four live calculators in headless Chromium, compared with the tested scripts to the last printed digit.

One Chromium (conftest.chromium, shared with test_site_browser) opens the four pages once. Each page receives the
grid of its calculator (several hundred argument lists) and its own JavaScript (MLCalc.compute) evaluates the whole
grid in one call; the same lists run through the script's main() in-process (mlbook.data.calcrun). The grids hold
valid inputs, exact rounding ties (counted: ties where rounding half to even and JavaScript's toFixed disagree) and
refused inputs. Planted one-digit changes of each page's formula, and toFixed in place of the page's rounding, run
in a copy of formulas.js beside the page's own and must make the comparison fail. Further tests type into the forms
with the keyboard, check the labels, and check that a phone-wide page (390 px) does not scroll sideways. Every
request must stay on 127.0.0.1; the search index is answered with an empty one (these tests do not search).
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import random
import struct
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from conftest import ROOT
from mlbook.data import calcrun
from mlbook.data.calcforms import CALCULATORS, COLLECTIVE_TIME, FLOPS_MFU, KV_CACHE, TRAINING_MEMORY

pytestmark = pytest.mark.slow

CALC_DIR = ROOT / "scripts" / "calc"
PAGES = {name: f"misc/calculators/{name}/" for name in CALCULATORS}
TIMEOUT_MS = 15_000
REQUESTS: list[str] = []

# Run every case in the page; with `ties`, also note for each case how many printed numbers were exact ties at
# their last digit with an even digit before the 5 (where half to even and toFixed's half away from zero differ).
EVALUATE = """({name, ties}) => {
  const cases = window.mlbookGrid.cases;
  const F = window.MLCalcFormat;
  const fixed = F.fixed;
  let count = 0;
  if (ties) {
    F.fixed = (x, d) => {
      // Forty more digits show whether x has exactly d + 1 decimals (enough for every |x| above 1e-30).
      const exact = fixed(x, d + 40).replace(/0+$/, "");
      const frac = exact.split(".")[1] || "";
      if (frac.length === d + 1 && frac.endsWith("5") && "02468".includes(frac[d - 1])) count += 1;
      return fixed(x, d);
    };
  }
  try {
    return cases.map((argv) => {
      count = 0;
      const result = window.MLCalc.compute(name, argv);
      return [result.error ? {error: result.error} : {values: result.values}, count];
    });
  } finally {
    F.fixed = fixed;
  }
}"""


# A copy of formulas.js (source: its text, perhaps with a planted change) run beside the page's own, on a root of
# its own (the page's MLCalc stays untouched), with the page's link table, toFixed in place of the page's rounding
# when asked. It evaluates the page's grid and stops after `stop` cases that differ from the script's; each is
# returned with what the copy computed (a thrown error counts as a difference), for Python to check again.
DIFFER = """({name, source, toFixed, stop}) => {
  const {cases, expected} = window.mlbookGrid;
  const F = window.MLCalcFormat;
  const root = {MLCalcFormat: toFixed ? Object.assign({}, F, {fixed: (x, d) => x.toFixed(d)}) : F};
  new Function("window", "globalThis", source)(root, root);
  const links = {};
  for (const o of document.querySelectorAll('option[data-gbps]')) links[o.value] = Number(o.dataset.gbps);
  root.MLCalc.setLinks(links);
  const text = (r) => r.error !== undefined ? "E" + r.error
    : r.values !== undefined ? "V" + JSON.stringify(Object.entries(r.values).sort()) : "T" + r.threw;
  const found = [];
  for (let i = 0; i < cases.length && found.length < stop; i += 1) {
    let got;
    try {
      const r = root.MLCalc.compute(name, cases[i]);
      got = r.error ? {error: r.error} : {values: r.values};
    } catch (err) {
      got = {threw: String(err)};
    }
    if (text(got) !== text(expected[i])) found.push([i, got]);
  }
  return found;
}"""


# --------------------------------------------------------------------------- the grids


def _dec(value) -> str:
    """A float or Decimal as the shortest plain decimal text (no exponent)."""
    return format(Decimal(str(value)).normalize(), "f")


def training_memory_cases() -> list[list[str]]:
    calc, cases = TRAINING_MEMORY, []
    for params, dtype, optimizer, zero, dp in itertools.product(
        ["7", "70", "0.5", "405", "1e-6", "1e15"], ["bf16", "fp32"], ["adam", "sgd"], "0123", ["1", "8", "3"]
    ):
        cases.append(
            calcrun.argv(calc, {"params": params, "dtype": dtype, "optimizer": optimizer, "zero-stage": zero, "dp": dp})
        )
    # Exact ties: params = (8k + 1) * 2^26 / 10^9 billions gives 2^27 (8k + 1) bytes of bf16 weights = k + 0.125 GiB.
    for k in range(24):
        params = _dec(Decimal((8 * k + 1) * 2**26) / Decimal(10**9))
        cases.append(calcrun.argv(calc, {"params": params, "tp": str(1 + k % 3), "pp": "1"}))
    act = {"seq-len": "4096", "micro-batch": "1", "hidden": "4096", "layers": "32", "heads": "32"}
    for recompute, sp, tp, seq in itertools.product(
        ["none", "selective", "full"], ["true", "false"], ["1", "2", "8", "3"], ["2048", "8191"]
    ):
        cases.append(
            calcrun.argv(calc, {**act, "recompute": recompute, "sequence-parallel": sp, "tp": tp, "seq-len": seq})
        )
    cases.append(calcrun.argv(calc, {**act, "heads": "", "recompute": "full"}))
    cases.append(
        calcrun.argv(
            calc, {**act, "seq-len": "1000000000000000", "hidden": "1000000000000000", "layers": "999999999999999"}
        )
    )
    refused = [
        {"params": ""},
        {"params": "-7"},
        {"params": "0"},
        {"params": "seven"},
        {"params": "1e16"},
        {"params": "1e-7"},
        {"params": "nan"},
        {"params": "inf"},
        {"params": " 7 "},
        {"params": "+.5e1"},
        {"zero-stage": "4"},
        {"zero-stage": "-1"},
        {"zero-stage": "1.5"},
        {"zero-stage": ""},
        {"zero-stage": " 2\t"},
        {"dp": "0"},
        {"dp": "2.5"},
        {"dp": ""},
        {"dp": "1e3"},
        {"tp": "-2"},
        {"pp": "10000000000000000"},
        {**act, "layers": "2.5"},
        {**act, "layers": "-3"},
        {**act, "layers": ""},
        {**act, "heads": ""},
        {"seq-len": "8"},
        {"params": "", "zero-stage": "9"},
        {"dp": "x", "zero-stage": "9"},
        {"heads": "0"},
    ]
    cases += [calcrun.argv(calc, inputs) for inputs in refused]
    return cases


def kv_cache_cases() -> list[list[str]]:
    calc, cases = KV_CACHE, []
    for layers, heads, dim, seq, batch, dtype in itertools.product(
        ["1", "32", "80"],
        ["1", "8", "64"],
        ["64", "128"],
        ["1", "4096", "131072"],
        ["1", "3", "256"],
        ["2", "1", "0.5"],
    ):
        if (int(layers) + int(heads) + int(seq) + int(batch)) % 2 == 0:  # half of the product
            cases.append(
                calcrun.argv(
                    calc,
                    {
                        "layers": layers,
                        "kv-heads": heads,
                        "head-dim": dim,
                        "seq-len": seq,
                        "batch": batch,
                        "dtype-bytes": dtype,
                    },
                )
            )
    # Exact ties at 3 decimals: 2 * 2^25 * batch bytes = batch / 16 GiB (0.0625, 0.1875, ...).
    for batch in range(1, 40, 2):
        cases.append(
            calcrun.argv(
                calc,
                {
                    "layers": "1",
                    "kv-heads": "1",
                    "head-dim": "1",
                    "seq-len": "33554432",
                    "batch": str(batch),
                    "dtype-bytes": "1",
                },
            )
        )
    # Fractional byte counts (Python prints repr) and huge ones (printed as exact integers).
    for layers in ("1", "3", "7"):
        cases.append(
            calcrun.argv(
                calc,
                {
                    "layers": layers,
                    "kv-heads": "1",
                    "head-dim": "1",
                    "seq-len": "1",
                    "batch": "1",
                    "dtype-bytes": "0.5",
                },
            )
        )
    big = {
        "layers": "1000000000000000",
        "kv-heads": "999999999999999",
        "head-dim": "123456789",
        "seq-len": "1000000000000000",
        "batch": "77",
    }
    cases.append(calcrun.argv(calc, {**big, "dtype-bytes": "2"}))
    # Without --dtype-bytes the script keeps an exact integer product (its default is the int 2).
    cases.append(["--layers=1000000000000000", "--kv-heads=999999999999999", "--head-dim=3", "--seq-len=77777777777"])
    cases.append(["--layers=1", "--kv-heads=1", "--head-dim=1", "--seq-len=1", "--dtype-bytes=0.000001"])
    cases.append(["--layers=1", "--kv-heads=1", "--head-dim=1", "--seq-len=1", "--dtype-bytes=1e15"])
    refused = [
        {"layers": ""},
        {"layers": "2.5"},
        {"layers": "-1"},
        {"layers": "0"},
        {"kv-heads": "eight"},
        {"head-dim": "1e2"},
        {"seq-len": "8_192"},
        {"batch": ""},
        {"batch": "1000000000000001"},
        {"layers": "٣"},
        {"layers": "x", "batch": "y"},
    ]
    cases += [calcrun.argv(calc, inputs) for inputs in refused]
    cases.append(["--layers=1", "--kv-heads=1", "--head-dim=1", "--seq-len=1", "--dtype-bytes=0"])
    cases.append(["--layers=1", "--kv-heads=1", "--head-dim=1", "--seq-len=1", "--dtype-bytes=-2"])
    return cases


def flops_mfu_cases() -> list[list[str]]:
    calc, cases = FLOPS_MFU, []
    shape = {"layers": "32", "seq-len": "4096", "hidden": "4096"}
    for params, convention, tokens, total, gpus, peak, recompute in itertools.product(
        ["7", "8.03", "0.5", "70"],
        ["kaplan", "palm"],
        ["3000", "70000", "1", "", "125"],
        ["true", "false"],
        ["1", "8"],
        ["989.4", "128", ""],
        ["none", "full"],
    ):
        if (len(params) + len(tokens) + len(peak) + len(gpus)) % 2:  # half of the product
            continue
        if tokens == "" and (total == "true" or peak != ""):
            continue
        inputs = {**shape, "params": params, "attention-convention": convention, "tokens-per-sec": tokens}
        cases.append(
            calcrun.argv(calc, {**inputs, "total": total, "gpus": gpus, "peak-tflops": peak, "recompute": recompute})
        )
    # No attention term; exact ties of tokens/s per GPU (1/8, 3/8, 5/8 ... over 8 GPUs) and of TFLOPS.
    for tokens in range(1, 60, 2):
        cases.append(
            calcrun.argv(
                calc,
                {
                    "params": "0.5",
                    "layers": "",
                    "seq-len": "",
                    "hidden": "",
                    "tokens-per-sec": str(tokens),
                    "total": "true",
                    "gpus": "8",
                    "peak-tflops": "3",
                },
            )
        )
    refused = [
        {"params": ""},
        {"params": "-1"},
        {"layers": "", "seq-len": "4096"},
        {"layers": "2.5"},
        {"tokens-per-sec": "", "total": "true"},
        {"tokens-per-sec": "", "peak-tflops": "989"},
        {"peak-tflops": "0"},
        {"gpus": "0"},
        {"gpus": "1.5"},
        {"tokens-per-sec": "abc"},
        {"params": "1e16"},
    ]
    cases += [calcrun.argv(calc, inputs) for inputs in refused]
    return cases


def collective_time_cases() -> list[list[str]]:
    calc, cases = COLLECTIVE_TIME, []
    links = list(calcrun.module(calc, CALC_DIR).LINKS)
    for size, ranks, bw, op, algorithm, latency in itertools.product(
        ["1e9", "14e9", "4G", "512M", "16K", "1"],
        ["2", "8", "64", "1000"],
        ["100", "360", "0.5", "link"],
        ["all", "all_reduce", "all_gather"],
        ["ring", "tree"],
        ["0", "10"],
    ):
        if (len(size) + len(ranks) + len(bw) + len(op) + len(latency)) % 3:  # a third of the product
            continue
        if algorithm == "tree" and op == "all_gather":
            op = "reduce_scatter"  # refused: tree runs all_reduce only
        link = links[len(cases) % len(links)] if bw == "link" else ""
        inputs = {"bytes": size, "ranks": ranks, "busbw": bw if not link else "", "link": link}
        cases.append(calcrun.argv(calc, {**inputs, "op": op, "algorithm": algorithm, "latency-us": latency}))
    # Exact ties: S = 2000 q + 250 bytes over 2 ranks at 1 GB/s is an all-gather of q + 0.125 us.
    for q in range(40):
        cases.append(calcrun.argv(calc, {"bytes": str(2000 * q + 250), "ranks": "2", "busbw": "1", "op": "all_gather"}))
    refused = [
        {"bytes": ""},
        {"bytes": "0"},
        {"bytes": "-5"},
        {"bytes": "1e25"},
        {"bytes": "4X"},
        {"ranks": "1"},
        {"ranks": "2.5"},
        {"ranks": ""},
        {"busbw": ""},
        {"busbw": "0"},
        {"busbw": "-3"},
        {"latency-us": "-1"},
        {"latency-us": ""},
        {"op": "all_to_all", "algorithm": "tree"},
        {"bytes": "x", "ranks": "y"},
    ]
    cases += [calcrun.argv(calc, inputs) for inputs in refused]
    cases.append(["--bytes=1e9", "--ranks=8", "--busbw=1", "--link=InfiniBand NDR"])
    return cases


GRIDS = {
    "training-memory": training_memory_cases,
    "kv-cache": kv_cache_cases,
    "flops-mfu": flops_mfu_cases,
    "collective-time": collective_time_cases,
}


@functools.cache
def reference(name: str) -> tuple[list[list[str]], list[dict]]:
    """The grid of a calculator and what its script prints for each case ({values} or {error})."""
    cases = GRIDS[name]()
    out = []
    for argv in cases:
        result = calcrun.run(CALCULATORS[name], argv, CALC_DIR)
        out.append({"error": result.error} if result.error else {"values": result.values})
    return cases, out


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def formulas(real_site: Path) -> str:
    """The text of the built site's formulas.js."""
    return (real_site / "assets" / "calc" / "formulas.js").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def pages(chromium, site_server, real_site) -> Iterator[dict]:
    """Each calculator page, loaded once for the whole module and given its grid and the script's answers."""
    ctx = chromium.new_context(viewport={"width": 1280, "height": 800})
    ctx.set_default_timeout(TIMEOUT_MS)
    ctx.on("request", lambda request: REQUESTS.append(request.url))
    # Material's search worker would index the whole book on every page load; these pages get an empty index.
    config = json.loads((real_site / "search" / "search_index.json").read_text(encoding="utf-8"))["config"]
    empty = json.dumps({"config": config, "docs": []})
    ctx.route("**/search/search_index.json", lambda route: route.fulfill(body=empty, content_type="application/json"))
    loaded, errors = {}, {}
    try:
        for name, path in PAGES.items():
            page = ctx.new_page()
            errors[name] = []
            page.on("pageerror", lambda e, name=name: errors[name].append(str(e)))
            page.on("console", lambda m, name=name: m.type == "error" and errors[name].append(m.text))
            response = page.goto(site_server + path, wait_until="load")
            assert response is not None and response.ok, path
            page.wait_for_function("() => Boolean(window.MLCalc && window.MLCalc.compute && window.MLCalc.init)")
            cases, expected = reference(name)
            page.evaluate("(grid) => { window.mlbookGrid = grid; }", {"cases": cases, "expected": expected})
            loaded[name] = page
        yield {"page": loaded, "errors": errors}
    finally:
        ctx.close()


def mismatches(page, name: str) -> tuple[list[str], list[int]]:
    """Cases where the page and the script differ (one line each), and the per-case count of discriminating ties."""
    cases, expected = reference(name)
    got = page.evaluate(EVALUATE, {"name": name, "ties": True})
    bad = [
        f"{' '.join(argv)}\n    script: {want}\n    page:   {have}"
        for argv, want, (have, _) in zip(cases, expected, got, strict=True)
        if have != want
    ]
    return bad, [ties for _, ties in got]


def differing(page, name: str, source: str, to_fixed: bool = False, stop: int = 1) -> list[tuple[int, dict]]:
    """Up to `stop` cases where a copy of formulas.js (source) differs from the script; each checked here too."""
    _, expected = reference(name)
    found = page.evaluate(DIFFER, {"name": name, "source": source, "toFixed": to_fixed, "stop": stop})
    # The page's comparison found them; Python's must agree (a comparison that always differs proves nothing).
    assert all(got != expected[i] for i, got in found), found
    return [(i, got) for i, got in found]


# --------------------------------------------------------------------------- the comparison


@pytest.mark.parametrize("name", sorted(CALCULATORS))
def test_page_prints_the_scripts_numbers(pages, name, formulas):
    cases, expected = reference(name)
    assert len(cases) >= 200
    refusals = [r["error"] for r in expected if "error" in r]
    assert len(refusals) >= 10, "the grid must include refused inputs"
    bad, ties = mismatches(pages["page"][name], name)
    assert bad == [], f"{len(bad)} of {len(cases)} cases differ:\n" + "\n".join(bad[:10])
    assert pages["errors"][name] == []
    # The grid exercises the rounding rule: ties where half to even and toFixed disagree.
    assert sum(1 for t in ties if t) >= 8, f"only {sum(1 for t in ties if t)} cases print a discriminating tie"
    printed = [v for r in expected if "values" in r for v in r["values"].values()]
    assert not [v for v in printed if "nan" in v.lower() or "inf" in v.lower()]
    # The unchanged copy that the planted tests run agrees on every case (so a difference there is the plant's).
    assert differing(pages["page"][name], name, formulas, stop=len(cases)) == []


PLANTS = {
    # One digit of each page's formula, changed in a copy of formulas.js.
    "training-memory": [
        "const master = w !== 4 ? 4 : 0;",
        "perSbh = 2.0;",
        "perSbh = sequenceParallel ? 34.0 / t",
        'const states = optimizer === "adam" ? 8 : 4;',
    ],
    "kv-cache": ["const shape = [2, a.layers, a.kv_heads, a.head_dim];", "F.fixed(total / GIB, 3)"],
    "flops-mfu": ["6.0 * (a.params * 1e9)", "(2.0 * a.params * 1e9 + attention / 3)", "(peak * 1e12)"],
    "collective-time": [
        "(2.0 * (ranks - 1)) / ranks",
        "2 * (BigInt(ranks).toString(2).length - 1)",
        "steps(op, ranks, algorithm) * latencyUs * 1e-6",
    ],
}


def _plant(text: str) -> str:
    """The text with its first digit changed by one (2 -> 3, 9 -> 8)."""
    for i, ch in enumerate(text):
        if ch.isdigit():
            return text[:i] + ("8" if ch == "9" else str(int(ch) + 1)) + text[i + 1 :]
    raise ValueError(f"no digit in {text!r}")


@pytest.mark.parametrize(("name", "snippet"), [(n, s) for n, snippets in PLANTS.items() for s in snippets])
def test_a_planted_one_digit_change_fails_the_comparison(pages, formulas, name, snippet):
    assert formulas.count(snippet) == 1, f"the snippet to plant is not unique in formulas.js: {snippet}"
    found = differing(pages["page"][name], name, formulas.replace(snippet, _plant(snippet)))
    assert found, f"planting {_plant(snippet)!r} left every case equal: the grid does not cover it"


@pytest.mark.parametrize("name", sorted(CALCULATORS))
def test_tofixed_rounding_fails_the_comparison(pages, formulas, name):
    cases, expected = reference(name)
    found = differing(pages["page"][name], name, formulas, to_fixed=True, stop=len(cases))
    assert len(found) >= 8, found
    if name == "kv-cache":  # 2^26 bytes = 0.0625 GiB: Python prints 0.062, toFixed(3) 0.063
        assert any(expected[i]["values"]["gib"] == "0.062" and got["values"]["gib"] == "0.063" for i, got in found)


def format_values() -> list[float]:
    """Doubles for the formatting test: exact ties at 2, 3 and 4 decimals, awkward magnitudes, random bit patterns."""
    rng = random.Random(27)
    xs = [0.0, -0.0, 0.125, 0.375, 2.5, 1.005, 1e16, 1e15, 1e21, 1e22, 1e-5, 1e-4, 5e-324, 1.7976931348623157e308]
    xs += [k / 8 for k in range(-40, 400)] + [k / 16 for k in range(1, 200, 2)] + [k / 32 for k in range(1, 200, 2)]
    xs += [9.9995, 99999.5, 9.999995, 0.00012345650000000001, 1.96875, 0.96875, 76562.5]
    for _ in range(600):
        xs.append(struct.unpack("d", struct.pack("Q", rng.getrandbits(63)))[0])
        xs.append(rng.random() * 10 ** rng.randint(-10, 30))
        xs.append(rng.randint(0, 2**60) * 2.0 ** rng.randint(-80, 20))
    return [x for x in xs if math.isfinite(x)]


def test_formatting_matches_python_digit_for_digit(pages):
    xs = format_values()
    got = pages["page"]["kv-cache"].evaluate(
        """(xs) => { const F = window.MLCalcFormat;
             return xs.map((x) => [F.fixed(x, 2), F.fixed(x, 3), F.fixed(x, 4), F.exponent(x, 4), F.general(x),
                                   F.general(x, 6), F.repr(x), Number.isInteger(x) ? F.integer(x) : ""]); }""",
        xs,
    )
    want = [
        [
            f"{x:.2f}",
            f"{x:.3f}",
            f"{x:.4f}",
            f"{x:.4e}",
            f"{x:g}",
            f"{x:.6g}",
            repr(x),
            str(int(x)) if x.is_integer() else "",
        ]
        for x in xs
    ]
    bad = [(x, g, w) for x, g, w in zip(xs, got, want, strict=True) if g != w]
    assert bad == [], bad[:5]
    assert got[xs.index(0.125)][0] == "0.12"  # ties to even, where toFixed gives 0.13


# --------------------------------------------------------------------------- the form as a reader uses it


TYPED = {
    "training-memory": [
        ({"zero-stage": "3", "dp": "64"}, None),
        ({"zero-stage": "4"}, "--zero-stage"),
        ({"layers": "2.5"}, "--layers"),
    ],
    "kv-cache": [
        ({"seq-len": "131072", "batch": "4"}, None),
        ({"layers": ""}, "--layers"),
        ({"kv-heads": "-8"}, "--kv-heads"),
    ],
    "flops-mfu": [({"tokens-per-sec": "192000", "gpus": "64"}, None), ({"peak-tflops": "0"}, "--peak-tflops")],
    "collective-time": [
        ({"ranks": "512", "latency-us": "5"}, None),
        ({"bytes": "-1"}, "--bytes"),
        ({"ranks": "1"}, "--ranks"),
    ],
}


READ_FORM = """() => {
  const form = document.querySelector('form.mlbook-calc-live');
  const error = form.querySelector('.mlbook-calc-error');
  return {
    inputs: Object.fromEntries([...form.querySelectorAll('[data-flag]')]
      .map((el) => [el.name, el.type === 'checkbox' ? (el.checked ? 'true' : 'false') : el.value])),
    error: error.hidden ? null : error.textContent,
    values: Object.fromEntries([...form.querySelectorAll('output[data-key]')]
      .filter((o) => o.value !== '').map((o) => [o.dataset.key, o.value])),
    command: form.querySelector('.mlbook-calc-command code').textContent,
    resultsHidden: form.querySelector('.mlbook-calc-results').hidden,
    invalid: [...form.querySelectorAll('[aria-invalid="true"]')].map((el) => el.name),
    describedByError: [...form.querySelectorAll('[data-flag]')]
      .filter((el) => (el.getAttribute('aria-describedby') || '').split(' ').includes(error.id)).map((el) => el.name),
  };
}"""
RESET_FORM = """() => { const form = document.querySelector('form.mlbook-calc-live'); form.reset();
  window.MLCalc.redraw(form); }"""


def _type(page, field: str, text: str) -> None:
    """Replace a text box's content from the keyboard, as a reader does."""
    page.locator(f"form.mlbook-calc-live [name='{field}']").focus()
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")
    if text:
        page.keyboard.type(text)


@pytest.mark.parametrize("name", sorted(CALCULATORS))
def test_typing_updates_results_and_refusals(pages, name):
    calc, page = CALCULATORS[name], pages["page"][name]
    try:
        for changes, refused_flag in TYPED[name]:
            page.evaluate(RESET_FORM)
            for field, text in changes.items():
                _type(page, field, text)
            shown = page.evaluate(READ_FORM)
            assert shown["inputs"] == {f.name: shown["inputs"][f.name] for f in calc.fields}
            assert {k: shown["inputs"][k] for k in changes} == changes
            args = calcrun.argv(calc, shown["inputs"])
            want = calcrun.run(calc, args, CALC_DIR)
            assert shown["command"] == calcrun.command(calc, args)
            if refused_flag:
                assert want.error and f"argument {refused_flag}:" in want.error
                assert shown["error"] == want.error and shown["resultsHidden"] and shown["values"] == {}
                # The refused field, and only it, is marked invalid and described by the refusal.
                field = refused_flag.removeprefix("--")
                assert shown["invalid"] == [field] and shown["describedByError"] == [field], shown
            else:
                assert shown["error"] is None and not shown["resultsHidden"] and shown["values"] == want.values
                assert shown["invalid"] == [] and shown["describedByError"] == [], shown
    finally:
        page.evaluate(RESET_FORM)
    assert pages["errors"][name] == []


@pytest.mark.parametrize("name", sorted(CALCULATORS))
def test_every_refusal_of_the_grid_points_at_a_field(pages, name):
    refusals = sorted({r["error"] for r in reference(name)[1] if "error" in r})
    flags = {f.flag for f in CALCULATORS[name].fields}
    named = pages["page"][name].evaluate("(errors) => errors.map((e) => window.MLCalc.refusedFlags(e))", refusals)
    assert [(e, f) for e, f in zip(refusals, named, strict=True) if not f or not set(f) <= flags] == []


def test_the_page_opens_with_the_blocks_example_computed(pages):
    for name, page in pages["page"].items():
        shown = page.evaluate(READ_FORM)
        want = calcrun.run(CALCULATORS[name], calcrun.argv(CALCULATORS[name], shown["inputs"]), CALC_DIR)
        assert shown["error"] is None and shown["values"] == want.values, name


def test_choosing_a_link_replaces_the_typed_bandwidth(pages):
    page = pages["page"]["collective-time"]
    try:
        page.select_option("form.mlbook-calc-live [name='link']", "NVLink 4 (H100)")
        assert page.locator("form.mlbook-calc-live [name='busbw']").is_disabled()
        shown = page.evaluate(READ_FORM)
        args = calcrun.argv(COLLECTIVE_TIME, shown["inputs"])
        assert "--link=NVLink 4 (H100)" in args and not any(a.startswith("--busbw") for a in args)
        want = calcrun.run(COLLECTIVE_TIME, args, CALC_DIR)
        assert want.values["busbw"] == "450" and shown["values"] == want.values
        assert shown["command"].endswith("'--link=NVLink 4 (H100)' --op=all --algorithm=ring --latency-us=0")
    finally:
        page.evaluate(RESET_FORM)


@pytest.mark.parametrize("name", sorted(CALCULATORS))
def test_every_control_is_labelled_and_reachable_by_tab(pages, name):
    page = pages["page"][name]
    controls = page.evaluate(
        """() => [...document.querySelectorAll('form.mlbook-calc-live [data-flag]')].map((el) => ({
              name: el.name, label: [...el.labels].map((l) => l.textContent.trim()).join(' '),
              tabbable: el.tabIndex >= 0 && !el.disabled}))"""
    )
    assert [c["name"] for c in controls] == [f.name for f in CALCULATORS[name].fields]
    assert all(c["label"] for c in controls), controls
    # Tab walks the enabled controls in order.
    enabled = [c["name"] for c in controls if c["tabbable"]]
    page.locator(f"form.mlbook-calc-live [name='{enabled[0]}']").focus()
    for expected in enabled[1:]:
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.name") == expected


@pytest.mark.parametrize("name", sorted(CALCULATORS))
def test_pages_fit_a_phone(pages, name):
    page = pages["page"][name]
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        widths = page.evaluate(
            """() => { const f = document.querySelector('form.mlbook-calc-live');
                return {page: document.documentElement.scrollWidth, form: f.scrollWidth, box: f.clientWidth,
                        right: Math.max(...[...f.querySelectorAll('input, select, label, output')]
                                        .map((e) => e.getBoundingClientRect().right))}; }"""
        )
    finally:
        page.set_viewport_size({"width": 1280, "height": 800})
    assert widths["page"] <= 390 and widths["form"] <= widths["box"] and widths["right"] <= 390, widths


def test_print_table_is_hidden_on_the_site_and_the_form_shown(pages):
    for page in pages["page"].values():
        assert page.locator("form.mlbook-calc-live").is_visible()
        assert not page.locator(".mlbook-calc-print").is_visible()
        assert page.locator("pre.mlbook-calc-formula").is_visible()


def test_no_request_leaves_localhost(pages):
    """Runs last: every request of this module's pages went to the local server."""
    assert len(REQUESTS) > 10
    foreign = sorted(
        {
            u
            for u in REQUESTS
            if urlsplit(u).scheme not in ("data", "blob", "about") and urlsplit(u).hostname != "127.0.0.1"
        }
    )
    assert foreign == []
