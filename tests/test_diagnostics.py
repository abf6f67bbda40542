import logging

from mlbook.diagnostics import Diagnostic, Reporter, line_of, line_offset


def test_message_shape():
    d = Diagnostic("book/a/b.md", 12, "broken link", "'x.md' does not exist")
    assert str(d) == "book/a/b.md:12: broken link: 'x.md' does not exist"


def test_each_defect_logged_once_on_the_mkdocs_logger(caplog):
    rep = Reporter()
    assert rep.logger.name.startswith("mkdocs.")
    with caplog.at_level(logging.WARNING, logger="mkdocs"):
        rep.report("book/a.md", 3, "broken link", "d")
        rep.report("book/a.md", 3, "broken link", "d")
        rep.report("book/a.md", 4, "broken link", "d")
    assert [r.getMessage() for r in caplog.records] == [
        "book/a.md:3: broken link: d",
        "book/a.md:4: broken link: d",
    ]
    assert rep.count == 2


def test_line_of_finds_needles_in_order_and_after_start():
    text = "one\n[a](x.md)\nthree\n[b](x.md)\n"
    assert line_of(text, "nothing", "x.md") == 2
    assert line_of(text, "x.md", start=line_offset(text, 2)) == 4
    assert line_of(text, "absent") == 1
