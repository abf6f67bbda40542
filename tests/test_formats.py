"""The one registry of editions: what is configured is offered, and only that, everywhere it renders."""

import pytest

from mlbook import __main__ as cli
from mlbook import writers
from mlbook.book import Book, Chapter, Part
from mlbook.options import Options
from mlbook.pages.downloads import downloads, fill_sizes, human
from mlbook.summary import summary
from mlbook.writers.registry import BANNER, DOWNLOADS, PAGE, PLACES, ROOT
from saved_site import copy


def options(formats) -> Options:
    return Options(
        title="T", author="A", subtitle="S", language="en", identifier="urn:uuid:0", keywords=[],
        output_name="book", formats=list(formats), site_url="", repo_url="", copyright="", edition="e", epoch=0,
    )  # fmt: skip


BOOK = Book(parts=[Part("Part I", 1, None, [Chapter("Alpha", "p/alpha.md", "p/alpha/", number="1.1")])])


def test_every_entry_declares_where_each_output_is_offered():
    for fmt in writers.FORMATS.values():
        outputs = fmt.outputs(BOOK, options(writers.FORMATS))
        assert outputs, fmt.name
        for output in outputs:
            assert output.offered and output.offered <= set(PLACES), (fmt.name, output)
            assert (PAGE in output.offered) == bool(output.page), (fmt.name, output)
    keys = [o.key for f in writers.FORMATS.values() for o in f.outputs(BOOK, options(writers.FORMATS))]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("name", list(writers.FORMATS))
def test_a_format_that_is_not_configured_is_offered_nowhere(name):
    others = [n for n in writers.FORMATS if n != name and name not in writers.FORMATS[n].needs]
    opts = options(others)
    theirs = {o.path for o in writers.FORMATS[name].outputs(BOOK, opts)}
    for place in PLACES:
        assert not theirs & {o.path for _, o in writers.offers(BOOK, opts, place)}, place
    assert not theirs & writers.planned_paths(BOOK, opts)
    page = downloads(writers.offers(BOOK, opts, DOWNLOADS))
    assert not [p for p in theirs if p.rsplit("/", 1)[-1] in page]


def test_the_downloads_page_lists_each_offered_output_with_a_size_placeholder():
    page = downloads(writers.offers(BOOK, options(["pdf", "epub"]), DOWNLOADS))
    assert "| PDF | [book.pdf](downloads/book.pdf) |" in page
    assert '<span class="mlbook-size" data-format="epub"></span>' in page
    assert "| --- |" not in downloads([])


def test_the_banner_offers_the_whole_book_files():
    offered = [o.path for _, o in writers.offers(BOOK, options(["pdf", "epub"]), BANNER)]
    assert offered == ["downloads/book.pdf", "downloads/book.epub"]
    assert writers.offers(BOOK, options([]), BANNER) == []
    assert all(o.path.count("/") == 0 for _, o in writers.offers(BOOK, options(writers.FORMATS), ROOT))


def test_the_command_line_has_one_command_per_entry_with_its_options():
    parser = cli.parser()
    for name, fmt in writers.FORMATS.items():
        args = parser.parse_args([name, "site"])
        assert args.command == name
        for arg in fmt.arguments:
            assert getattr(parser.parse_args([name, arg.flag, arg.choices[0]]), arg.option) == arg.choices[0]
    with pytest.raises(SystemExit):
        parser.parse_args(["no-such-edition"])


def test_the_config_offers_exactly_the_registry():
    from mlbook.config import PluginConfig

    choice = PluginConfig.formats.option_type
    assert set(choice.choices) == set(writers.FORMATS)
    assert PluginConfig.formats.default == [n for n, f in writers.FORMATS.items() if f.default]


def test_an_edition_that_needs_another_says_so():
    needing = [(n, f.needs[0]) for n, f in writers.FORMATS.items() if f.needs]
    for name, need in needing:
        assert writers.unmet_needs([name]) == [
            f"'{name}' needs '{need}' (it reads that edition's file); add '{need}' or remove '{name}'"
        ]
    assert writers.unmet_needs(list(writers.FORMATS)) == []


def test_summary_and_sizes_come_from_the_results(tmp_path):
    results = {
        "pdf": {"title": "PDF", "count": 12, "unit": "pages", "bytes": 2_500_000, "seconds": 3.0, "skipped": ""},
        "x": {"title": "X files", "count": 0, "unit": "files", "bytes": 0, "seconds": 0.0, "skipped": "not for y"},
    }
    lines = summary(BOOK, {}, results, 1, 0, 0).splitlines()
    assert lines[2:] == ["mlbook: PDF 12 pages, 2.5 MB, 3.0 s", "mlbook: X files not written: not for y"]
    page = tmp_path / "index.html"
    page.write_text('<span class="mlbook-size" data-format="pdf"></span>')
    fill_sizes(tmp_path, {"pdf": 2_500_000})
    assert page.read_text() == '<span class="mlbook-size" data-format="pdf">2.5 MB</span>'
    assert (human(999), human(1_000_000), human(120)) == ("1 kB", "1.0 MB", "1 kB")


def test_write_all_writes_each_configured_edition_and_reports_its_files(tmp_path):
    site = copy(tmp_path)
    opts = writers.load_options(site)
    opts.formats = ["epub"]
    results = writers.write_all(Book.load(site), opts, site, tmp_path / "out")
    epub = tmp_path / "out" / "downloads" / "ml-engineering-book.epub"
    assert list(results) == ["epub"] and results["epub"]["paths"] == [str(epub)]
    assert results["epub"]["sizes"] == {"epub": epub.stat().st_size} and results["epub"]["count"] == 4
    assert results["epub"]["skipped"] == "" and results["epub"]["unit"] == "documents"


def test_the_command_line_reruns_one_edition_over_a_built_site(tmp_path, capsys):
    site = copy(tmp_path)
    assert cli.main(["epub", str(site), "--out", str(tmp_path / "out")]) == 0
    out = tmp_path / "out" / "downloads" / "ml-engineering-book.epub"
    assert capsys.readouterr().out == f"wrote {out} (4 documents)\n"
    assert cli.main(["epub", str(tmp_path / "nothing")]) == 1
    assert "book.json not found" in capsys.readouterr().err


def test_an_edition_these_options_skip_writes_nothing_and_says_why(tmp_path):
    site = copy(tmp_path)
    opts = writers.load_options(site)
    opts.formats, opts.pdf_variant = ["llms", "chapters"], "pdf/ua-1"
    results = writers.write_all(Book.load(site), opts, site)
    assert list(results) == ["chapters", "llms"]  # registry order
    assert results["chapters"]["skipped"] == "a tagged pdf/ua-1 PDF cannot be cut into chapters"
    assert results["chapters"]["paths"] == [] and not (site / "downloads" / "chapters").exists()
    files = {"llms": "llms.txt", "llms-full": "llms-full.txt"}
    assert results["llms"]["sizes"] == {key: (site / path).stat().st_size for key, path in files.items()}


def test_the_command_line_says_what_an_edition_is_missing(tmp_path, capsys):
    site = copy(tmp_path)
    assert cli.main(["llms", str(site)]) == 0
    assert capsys.readouterr().out == f"wrote 2 files under {site} (4 pages)\n"
    assert cli.main(["chapters", str(site)]) == 1  # the book PDF is not there
    err = capsys.readouterr().err
    assert "error: chapters: downloads/ml-engineering-book.pdf not found: write the PDF first" in err
