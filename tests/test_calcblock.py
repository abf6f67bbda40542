"""The `/// calculator` block: the form and the print table it writes, and its defects with file and line."""

from __future__ import annotations

import lxml.html
import pytest

from conftest import ROOT
from mlbook.data import calcrun
from mlbook.data.calcforms import CALCULATORS, KV_CACHE
from mlbook.diagnostics import Reporter
from mlbook.html.printable import make_printable
from mlbook.markdown import calcblock

CALC_DIR = ROOT / "scripts" / "calc"
PAGE = "misc/calculators/kv-cache/"


class Recorder:
    def __init__(self) -> None:
        self.messages: list[str] = []

    def warning(self, message: str) -> None:
        self.messages.append(message)


def expand(markdown: str, site_url: str = "https://book.example/") -> tuple[str, list[str]]:
    recorder = Recorder()
    html = calcblock.expand(markdown, "misc/x.md", PAGE, site_url, markdown, Reporter(recorder), CALC_DIR)
    return html, recorder.messages


def block_html(markdown: str, **kw) -> lxml.html.HtmlElement:
    html, messages = expand(markdown, **kw)
    assert messages == []
    start = html.index('<div class="mlbook-calc"')
    return lxml.html.fragment_fromstring(html[start : html.rindex("</div>") + 6])


KV_BLOCK = "# T\n\nText.\n\n/// calculator | kv-cache\nlayers: 32\nkv-heads: 32\nseq-len: 4096\n///\n\nMore.\n"


def test_block_writes_a_labelled_form_filled_with_the_scripts_numbers():
    el = block_html(KV_BLOCK)
    form = el.cssselect("form.mlbook-calc-live")[0]
    controls = form.cssselect("[data-flag]")
    assert [c.get("name") for c in controls] == [f.name for f in KV_CACHE.fields]
    for control in controls:
        labels = form.cssselect(f"label[for='{control.get('id')}']")
        assert len(labels) == 1 and labels[0].text_content().strip()
    assert form.cssselect("[name='layers']")[0].get("value") == "32"
    assert form.cssselect("[name='dtype-bytes'] option[selected]")[0].get("value") == "2"
    # 2 * 32 * 32 * 128 * 4096 * 2 bytes = 2 GiB: what kv_cache.py prints.
    shown = {o.get("data-key"): o.text_content() for o in form.cssselect("output")}
    assert shown == {"bytes": "2147483648", "gib": "2.000", "per_token_bytes": "524288"}
    command = form.cssselect(".mlbook-calc-command code")[0].text_content()
    args = calcrun.argv(KV_CACHE, {"layers": "32", "kv-heads": "32", "seq-len": "4096"})
    assert command == calcrun.command(KV_CACHE, args)
    assert form.cssselect(".mlbook-calc-command a")[0].get("href") == "../../../scripts/calc/kv_cache.py"
    assert el.cssselect("pre.mlbook-calc-formula")[0].text_content().startswith("bytes = 2 (K and V)")


def test_print_table_has_the_inputs_results_and_the_live_address():
    el = block_html(KV_BLOCK)
    printed = el.cssselect("div.mlbook-calc-print")[0]
    tables = printed.cssselect("table")
    inputs = {r[0].text_content(): r[1].text_content() for r in tables[0].cssselect("tbody tr")}
    assert inputs["Layers"] == "32" and inputs["Cache precision"] == "bf16 / fp16 (2 bytes)"
    results = [[c.text_content() for c in r] for r in tables[1].cssselect("tbody tr")]
    assert results[1] == ["KV cache (GiB, 2^30 bytes)", "2.000"]
    live = printed.cssselect("a[href^='https://']")[0]
    assert live.get("href") == "https://book.example/" + PAGE and live.text_content() == live.get("href")
    # Without a site_url the address is the page's path as text, no link.
    bare = block_html(KV_BLOCK, site_url="").cssselect("div.mlbook-calc-print")[0]
    assert not bare.cssselect("a[href^='http']") and f"the page {PAGE} of the book's website" in bare.text_content()


def test_print_drops_the_form_and_keeps_the_table():
    html, _ = expand(KV_BLOCK)
    article = lxml.html.fragment_fromstring(f"<article>{html[html.index('<div') :]}</article>")
    make_printable(article)
    assert article.cssselect("form") == [] and article.cssselect("input") == []
    assert article.cssselect("div.mlbook-calc-print table") and article.cssselect("pre.mlbook-calc-formula")


def test_every_calculator_renders_its_defaults():
    for name in CALCULATORS:
        el = block_html(f"/// calculator | {name}\n///\n")
        assert el.cssselect("form.mlbook-calc-live output"), name


def test_link_options_carry_the_scripts_bandwidths():
    el = block_html("/// calculator | collective-time\nlink: InfiniBand NDR\n///\n")
    option = el.cssselect("[name='link'] option[selected]")[0]
    assert option.get("value") == "InfiniBand NDR" and option.get("data-gbps") == "50.0"
    assert el.cssselect("[name='busbw']")[0].get("disabled") is not None
    assert el.cssselect("output[data-key='busbw']")[0].text_content() == "50"


@pytest.mark.parametrize(
    ("body", "line", "detail"),
    [
        (
            "/// calculator | kv-cash\n///\n",
            3,
            "unknown calculator 'kv-cash'; known: collective-time, flops-mfu, kv-cache, training-memory",
        ),
        (
            "/// calculator | kv-cache\nlayers: 32\nheads: 8\n///\n",
            5,
            "'heads: 8' is not 'field: value' with a field of kv-cache: "
            "layers, kv-heads, head-dim, seq-len, batch, dtype-bytes",
        ),
        ("/// calculator | kv-cache\ndtype-bytes: 3\n///\n", 4, "dtype-bytes: '3' is not one of: '2', '1', '0.5', '4'"),
        (
            "/// calculator | kv-cache\nlayers: 2.5\n///\n",
            3,
            "the example inputs are refused: kv_cache.py: error: "
            "argument --layers: must be a whole number from 1 to 10^15, got '2.5'",
        ),
        ("/// calculator | kv-cache\nlayers: 2\n", 3, "the block is not closed with a line '///'"),
    ],
)
def test_defects_are_reported_with_file_and_line(body, line, detail):
    html, messages = expand("# T\n\n" + body)
    assert messages == [f"book/misc/x.md:{line}: calculator: {detail}"]
    assert "/// calculator" in html  # the block stays visible; the build fails on the warning


def test_second_block_defect_gets_its_own_line_and_code_blocks_are_left_alone():
    text = (
        "# T\n\n/// calculator | kv-cache\n///\n\n```text\n/// calculator | nope\n```\n\n"
        "/// calculator | kv-cache\nlayers: 0\n///\n"
    )
    html, messages = expand(text)
    assert messages == [
        "book/misc/x.md:10: calculator: the example inputs are refused: kv_cache.py: error: argument --layers: "
        "must be a whole number from 1 to 10^15, got '0'"
    ]
    assert "/// calculator | nope" in html and html.count('<form class="mlbook-calc-live"') == 1
