"""Joining PDF chunks: a link into another chunk reaches an anchor with non-ASCII letters."""

import io

import pytest
from pypdf import PdfReader

from mlbook.writers.pdf.assemble import XREF, Assembler
from mlbook.writers.pdf.render import render_chunk

pytestmark = pytest.mark.slow

PAGE = '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>{}</body></html>'


def test_a_cross_chunk_link_to_a_cjk_anchor_resolves(tmp_path):
    first = PAGE.format(f'<p><a href="{XREF}分布式--标题">to the heading</a></p>')
    second = PAGE.format('<h2 id="分布式--标题">标题</h2>')
    chunks = [
        render_chunk((html, tmp_path.as_uri() + "/", "", [str(tmp_path)], b"x", 1764374400)) for html in (first, second)
    ]
    # WeasyPrint writes the link's URI percent-encoded while the destination keeps its raw name.
    uri = str(PdfReader(io.BytesIO(chunks[0].pdf)).pages[0]["/Annots"][0].get_object()["/A"]["/URI"])
    assert "%E5%88%86" in uri and "分布式--标题" in chunks[1].anchors
    assembler = Assembler(chunks)
    assembler.resolve_links()
    reader = PdfReader(io.BytesIO(assembler.to_bytes()))
    action = reader.pages[0]["/Annots"][0].get_object()["/A"]
    assert (action["/S"], str(action["/D"])) == ("/GoTo", "分布式--标题")
    assert reader.get_destination_page_number(reader.named_destinations["分布式--标题"]) == 1
