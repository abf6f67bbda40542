"""The EPUB ships the code colours: a highlighted token in a chapter has a CSS rule that colours it."""

import zipfile

import cssselect2
import tinycss2
from lxml import etree

from mlbook.book import Book, Chapter
from mlbook.options import Options
from mlbook.writers import epub

ARTICLE = (
    '<html><body><article class="md-content__inner"><h1 id="intro">Intro</h1>'
    '<div class="language-python highlight"><pre><span></span><code>'
    '<span class="kn">import</span> <span class="nn">os</span>\n'
    '<span class="nb">print</span><span class="p">(</span><span class="s2">"hi"</span><span class="p">)</span>'
    "</code></pre></div></article></body></html>"
)


def options() -> Options:
    return Options(
        title="T", author="A", subtitle="S", language="en", identifier="urn:uuid:0", keywords=[],
        output_name="t", formats=["epub"], site_url="", repo_url="", copyright="", edition="e", epoch=0,
    )  # fmt: skip


def colour_of(css: str, root: etree._Element, element: etree._Element) -> str | None:
    """The colour the last matching rule of css gives element (None when no rule colours it)."""
    wrapper = cssselect2.ElementWrapper.from_xml_root(root)
    target = next(w for w in wrapper.iter_subtree() if w.etree_element is element)
    colour = None
    for rule in tinycss2.parse_stylesheet(css, skip_whitespace=True, skip_comments=True):
        if rule.type != "qualified-rule":
            continue
        selectors = cssselect2.compile_selector_list(rule.prelude)
        if any(s.test(target) for s in selectors):
            for decl in tinycss2.parse_declaration_list(rule.content, skip_whitespace=True, skip_comments=True):
                if decl.type == "declaration" and decl.lower_name == "color":
                    colour = tinycss2.serialize(decl.value).strip()
    return colour


def test_a_highlighted_keyword_in_the_epub_has_a_colour(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(ARTICLE)
    epub.write(Book(front=[Chapter("Intro", "index.md", "", kind="front")]), options(), site, tmp_path)
    out = tmp_path / "downloads" / "t.epub"
    with zipfile.ZipFile(out) as z:
        css = z.read("EPUB/style.css").decode()
        doc = etree.fromstring(z.read("EPUB/index.xhtml"))
    ns = {"x": "http://www.w3.org/1999/xhtml"}
    assert doc.xpath("//x:link[@rel='stylesheet']/@href", namespaces=ns) == ["style.css"]
    keyword = doc.xpath("//x:span[@class='kn']", namespaces=ns)[0]
    assert keyword.text == "import"
    assert colour_of(css, doc, keyword) not in (None, "inherit")
    string = doc.xpath("//x:span[@class='s2']", namespaces=ns)[0]
    assert colour_of(css, doc, string) not in (None, colour_of(css, doc, keyword))
