from lxml import html

from mlbook.html.codewrap import MARKER, wrap_code, wrap_line_html


def test_short_lines_are_untouched():
    assert wrap_line_html("abc\ndef", 10) == "abc\ndef"


def test_long_line_breaks_with_marker_and_keeps_every_character():
    out = wrap_line_html("x" * 25, 10)
    lines = out.split("\n")
    assert lines[0] == "x" * 10
    assert all(line.startswith(MARKER) for line in lines[1:])
    assert out.replace(MARKER, "").replace("\n", "") == "x" * 25


def test_tags_take_no_columns_and_entities_take_one():
    out = wrap_line_html('<span class="k">&lt;&lt;</span>abcdefgh', 10)
    assert out == '<span class="k">&lt;&lt;</span>abcdefgh'
    out = wrap_line_html('<span class="k">&lt;&lt;</span>abcdefghij', 10)
    assert out.endswith("abcdefgh\n" + MARKER + "ij")


def test_wrap_code_rewrites_only_long_blocks():
    art = html.fromstring(
        '<article><pre><code><span class="n">a</span> = 1</code></pre>'
        '<pre><code class="py"><span class="n">b</span> = "' + "y" * 120 + '"</code></pre></article>'
    )
    wrap_code(art, 50)
    first, second = art.cssselect("pre > code")
    assert "wrap-marker" not in html.tostring(first, encoding="unicode")
    assert second.get("class") == "py"
    text = second.text_content()
    assert text.count("\u21aa") == 2
    assert text.replace("\u21aa", "").replace("\n", "") == 'b = "' + "y" * 120 + '"'


def test_unstyled_spans_are_unwrapped_and_text_kept():
    from mlbook.html.codewrap import drop_unstyled_spans

    art = html.fromstring(
        '<article><pre><code><span class="k">def</span><span class="w"> </span><span class="n">f</span>'
        '<span class="p">():</span></code></pre></article>'
    )
    assert drop_unstyled_spans(art, {"k"}) == 3
    code = art.cssselect("code")[0]
    assert [s.get("class") for s in code.iter("span")] == ["k"]
    assert code.text_content() == "def f():"
