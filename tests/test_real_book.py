"""The real book, built once per session: outline, navigation, EPUBCheck, every nav page present."""

import re

import pytest
from pypdf import PdfReader

from conftest import ROOT, require_java
from inspect_outputs import epub_nav, epubcheck, parts_and_chapters, pdf_internal_links, pdf_outline
from mlbook.book import Book

pytestmark = pytest.mark.slow

PARTS = ["Insights", "Hardware", "Orchestration", "Training", "Inference", "Development", "Miscellaneous"]


@pytest.fixture(scope="module")
def book(real_site):
    return Book.load(real_site)


def test_seven_parts_in_order(book):
    assert [p.title.split(": ", 1)[1] for p in book.parts] == PARTS
    assert all(p.page is not None and p.chapters for p in book.parts)


def test_every_nav_page_was_built(real_site, book):
    for chapter in book.pages():
        assert (real_site / chapter.html_path).is_file(), chapter.source


def test_pdf_outline_equals_the_book_model(real_site, book):
    outline = pdf_outline(real_site / "downloads" / "ml-engineering-book.pdf")
    parts = [p.title for p in book.parts]
    assert parts_and_chapters(outline, parts) == [(1, "Contents"), *book.outline()]


def test_pdf_has_at_least_40_pages_and_no_dangling_link(real_site):
    pdf = real_site / "downloads" / "ml-engineering-book.pdf"
    assert len(PdfReader(str(pdf)).pages) >= 40
    wanted, defined = pdf_internal_links(pdf)
    assert wanted and [w for w in wanted if w not in defined] == []


def test_epub_nav_equals_the_book_model(real_site, book):
    nav = epub_nav(real_site / "downloads" / "ml-engineering-book.epub")
    entries = [(level, label) for level, label, _ in nav]
    assert parts_and_chapters(entries, [p.title for p in book.parts]) == book.outline()


def test_epubcheck_reports_nothing(real_site):
    require_java()
    assert epubcheck(real_site / "downloads" / "ml-engineering-book.epub") == []


def test_scripts_are_served_with_the_site(real_site):
    assert (real_site / "scripts" / "network" / "collective_bench.py").is_file()


def test_chapter_pages_show_last_update_edit_link_and_description(real_site):
    page = (real_site / "hardware" / "accelerators" / "index.html").read_text(encoding="utf-8")
    assert "git-revision-date-localized-plugin-date" in page
    assert (
        'href="https://git.example.org/ml-engineering-book/ml-engineering-book/edit/main/book/hardware/accelerators.md"'
        in page
    )
    # The description is the chapter's own first paragraph, which leads with advice, not a template opener.
    source = (ROOT / "book" / "hardware" / "accelerators.md").read_text(encoding="utf-8").split("\n")[2]
    description = re.search(r'<meta name="description" content="([^"]*)"', page).group(1)
    assert description.startswith(source.split(" (")[0][:60]) and not description.startswith("This chapter")
    assert '<meta property="og:title" content="Accelerators">' in page


def test_generated_pages_exist_and_list_every_script(real_site):
    from conftest import ROOT
    from mlbook.pages.scripts import script_files

    downloads = (real_site / "downloads" / "index.html").read_text(encoding="utf-8")
    assert "ml-engineering-book.pdf" in downloads and " MB</span>" in downloads
    appendix = (real_site / "scripts" / "index.html").read_text(encoding="utf-8")
    for path in script_files(ROOT):
        assert path.relative_to(ROOT / "scripts").as_posix() in appendix


def test_no_code_line_or_table_cell_is_clipped_in_the_pdf(real_site, book):
    """Every line of every code block and every table cell of the book is in the PDF's text layer."""
    import re
    import unicodedata

    from mlbook.html import article

    def norm(text):
        # Wrap markers, and list bullets that extraction emits after a page's text, are not content.
        return re.sub(r"[\s\u21aa\u2022]+", "", unicodedata.normalize("NFKC", text))

    furniture = (
        {c.display_title for c in book.pages()} | {c.title for c in book.pages()} | {p.title for p in book.parts}
    )

    def body(page_text):
        # Drop what extraction puts after the content: the running header (one title), the page number, and
        # the markers of the page's list items ("1.", "2.", "•"), which are drawn separately from the item
        # text. Only one title goes: a table cell that ends the page may itself end with a chapter's title.
        lines = page_text.split("\n")
        after = re.compile(r"[0-9ivxlc]+|(?:[0-9]+|[a-z]|[ivx]+)\.|\u2022")
        header = False
        while lines:
            last = lines[-1].strip()
            if after.fullmatch(last):
                lines.pop()
            elif last in furniture and not header:
                lines.pop()
                header = True
            else:
                break
        return "\n".join(lines)

    from inspect_outputs import page_texts

    text = norm("".join(body(t) for t in page_texts(real_site / "downloads" / "ml-engineering-book.pdf")))
    missing, checked = [], 0
    for chapter in book.pages():
        art = article.load(real_site, chapter)
        pieces = [ln for code in art.cssselect("pre > code") for ln in code.text_content().split("\n")]
        pieces += [cell.text_content() for cell in art.cssselect("td, th")]
        for piece in filter(norm, pieces):
            checked += 1
            if norm(piece) not in text:
                missing.append(f"{chapter.source}: {piece[:80]}")
    assert checked > 1000
    assert missing == []


def test_every_chapter_pdf_has_the_books_pages_and_its_part_of_the_outline(real_site, book):
    from mlbook.writers.registry import chapter_file, chapters_with_pdf

    whole = PdfReader(str(real_site / "downloads" / "ml-engineering-book.pdf"))
    dests = whole.named_destinations
    starts = sorted(whole.get_destination_page_number(dests[c.slug]) for c in book.pages() if c.slug in dests)
    outline = pdf_outline(real_site / "downloads" / "ml-engineering-book.pdf")
    for chapter in chapters_with_pdf(book):
        path = real_site / chapter_file(chapter)
        pdf, start = PdfReader(str(path)), whole.get_destination_page_number(dests[chapter.slug])
        end = next((s for s in starts if s > start), len(whole.pages))
        assert len(pdf.pages) == end - start, chapter.source
        assert pdf.page_labels == [str(n + 1) for n in range(start, end)], chapter.source
        own = pdf_outline(path)
        at = outline.index((2, chapter.display_title))
        assert own == [(1, chapter.display_title)] + [(lv - 1, t) for lv, t in outline[at + 1 : at + len(own)]]
        wanted, defined = pdf_internal_links(path)
        assert [w for w in wanted if w not in defined] == [], chapter.source


def test_the_markdown_export_holds_every_page_script_and_spec_row(real_site, book):
    import re

    from conftest import ROOT

    index = (real_site / "llms.txt").read_text(encoding="utf-8")
    text = (real_site / "llms-full.txt").read_text(encoding="utf-8")
    assert len(re.findall(r"^- \[.+?\]\(.+?\)", index, re.M)) == len(book.pages())
    sources = {p: p.read_text(encoding="utf-8") for p in sorted((ROOT / "book").rglob("*.md"))}
    # Code blocks are literal: the contributing chapter shows `/// calculator` and escaped includes in them.
    prose = re.sub(r"^(```+|~~~+)[^\n]*\n.*?^\1[ \t]*$", "", text, flags=re.M | re.S)
    for markup in ("--8<--", "\n///", "<div", "<span", 'class="', "headerlink", "¶"):
        assert markup not in prose.replace("`--8<--`", ""), markup
    for path in re.findall(r'^\s*--8<--\s+"([^"]+)"', text, re.M):
        assert any(f';--8<-- "{path}"' in s for s in sources.values()), f"unexpanded include of {path}"
    scripts = {m for s in sources.values() for m in re.findall(r'--8<--\s+"(scripts/[^"]+)"', s)}
    assert len(scripts) >= 5
    for script in scripts:
        first = next(ln for ln in (ROOT / script).read_text(encoding="utf-8").splitlines() if ln.strip())
        assert first in text, script
    shown = [cell for source in sources.values() for cell in spec_table_first_cells(ROOT, source)]
    assert len(shown) >= 20
    assert [cell for cell in shown if cell not in text] == []


def spec_table_first_cells(root, source):
    """The first cell of every row of every spec table a chapter shows (blocks inside code fences are examples)."""
    import re

    from mlbook.markdown import spectable
    from mlbook.markdown.fences import fenced

    lines = source.split("\n")
    prose = "\n".join(line for line, code in zip(lines, fenced(lines), strict=True) if not code)
    cells = []
    for name, body in re.findall(r"^///\s*spec-table\s*\|\s*([\w-]+)\s*\n(.*?)^///\s*$", prose, re.M | re.S):
        only = [n.strip() for b in body.splitlines() if b.startswith("rows:") for n in b[5:].split(";")]
        files = spectable.DATA_OF[name] if isinstance(spectable.DATA_OF[name], tuple) else (spectable.DATA_OF[name],)
        data = [row for f in files for row in spectable.load(root / "book" / "data", f)]
        table = spectable.render(data, name, [n for n in only if n] or None)
        cells += [line.split(" | ")[0].removeprefix("| ") for line in table[2:] if line.startswith("| ")]
    return cells


def _data_counts() -> tuple[list[str], list[tuple[str, str]]]:
    """(every problem id in book/data/problems/, every runbook entry's (id, title)) from the YAML itself."""
    import yaml

    problems = [
        p["id"]
        for f in sorted((ROOT / "book" / "data" / "problems").glob("*.yaml"))
        for p in yaml.safe_load(f.read_text())
    ]
    entries = yaml.safe_load((ROOT / "book" / "data" / "runbook.yaml").read_text())["entries"]
    return problems, [(e["id"], e["title"]) for e in entries]


def test_every_problem_and_runbook_entry_reaches_all_three_editions(real_site):
    """Each problem (with its answer) and each runbook symptom is in the site, the PDF and the EPUB.

    Counted from the data, not from the output: a problem file or runbook entry that a page stops rendering,
    or an edition that drops answers, makes one of the counts fall short.
    """
    from lxml import html as lhtml

    from inspect_outputs import epub_files

    problem_ids, runbook_entries = _data_counts()
    assert len(problem_ids) >= 80 and len(runbook_entries) >= 60, (len(problem_ids), len(runbook_entries))
    wanted_problems = {f"problem-{p}" for p in problem_ids}
    wanted_answers = {f"answer-{p}" for p in problem_ids}
    wanted_runbook = {i for i, _ in runbook_entries}

    site_ids, answers_shown = set(), 0
    for page in real_site.rglob("*.html"):
        if "downloads" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        if "problem-" not in text and "runbook" not in page.as_posix():
            continue
        root = lhtml.fromstring(text)
        site_ids |= {h.get("id") for h in root.iter("h3") if h.get("id")}
        answers_shown += sum("Answer to problem" in (s.text_content() or "") for s in root.iter("summary"))
    assert wanted_problems <= site_ids and wanted_runbook <= site_ids, sorted(
        (wanted_problems | wanted_runbook) - site_ids
    )[:5]
    assert answers_shown == len(problem_ids)
    # The site search finds every runbook symptom (Material indexes each h3 as its own section).
    import json

    index = json.loads((real_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    located = {d["location"].rsplit("#", 1)[-1] for d in index["docs"] if d["location"].startswith("runbook/#")}
    assert wanted_runbook <= located, sorted(wanted_runbook - located)[:5]

    epub_ids = set()
    for name, data in epub_files(real_site / "downloads" / "ml-engineering-book.epub").items():
        if name.endswith(".xhtml"):
            epub_ids |= set(re.findall(r'\bid="([^"]+)"', data.decode("utf-8")))
    missing = sorted((wanted_problems | wanted_answers | wanted_runbook) - epub_ids)
    assert missing == [], missing[:5]

    _, destinations = pdf_internal_links(real_site / "downloads" / "ml-engineering-book.pdf")
    names = {d.rsplit("--", 1)[-1].lstrip("/").rsplit("#", 1)[-1] for d in destinations}
    missing = sorted((wanted_problems | wanted_answers | wanted_runbook) - names)
    assert missing == [], missing[:5]
