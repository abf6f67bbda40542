from lxml import html

from mlbook.html.printable import make_printable

TABS = """<article><div class="tabbed-set tabbed-alternate" data-tabs="1:2">
<input checked id="t1" name="t" type="radio"><input id="t2" name="t" type="radio">
<div class="tabbed-labels"><label for="t1">First</label><label for="t2">Second</label></div>
<div class="tabbed-content"><div class="tabbed-block"><p>one</p></div><div class="tabbed-block"><p>two</p></div></div>
</div><p>after</p></article>"""

DETAILS = """<article><details class="info"><summary>Hidden</summary><p>body</p></details><p>after</p></article>"""


def test_tabs_become_labelled_sections_in_order():
    art = make_printable(html.fromstring(TABS))
    assert not art.cssselect("input, label, .tabbed-set")
    tabs = art.cssselect(".tabbed-print > .tab")
    assert [t.cssselect(".tab-title")[0].text for t in tabs] == ["First", "Second"]
    assert [t.cssselect("p")[1].text for t in tabs] == ["one", "two"]
    assert art.text_content().count("after") == 1


def test_details_become_open_admonitions_with_title():
    art = make_printable(html.fromstring(DETAILS))
    assert not art.cssselect("details, summary")
    adm = art.cssselect("div.admonition.info")[0]
    assert adm.cssselect(".admonition-title")[0].text == "Hidden"
    assert "body" in adm.text_content()
