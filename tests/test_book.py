from mlbook.book import Book, from_outline, roman, slug_for

OUTLINE = [
    ("page", "Introduction", "index.md", ""),
    (
        "section",
        "Part I: Insights",
        [
            ("page", "Part I: Insights", "insights/index.md", "insights/"),
            ("page", "Battlefield", "insights/ai-battlefield.md", "insights/ai-battlefield/"),
            ("page", "Second", "insights/second.md", "insights/second/"),
        ],
    ),
    (
        "section",
        "Part II: Hardware",
        [("page", "Accelerators", "hardware/accelerators.md", "hardware/accelerators/")],
    ),
]


def test_slug_is_path_without_md_and_slashes_as_dashes():
    assert slug_for("training/model-parallelism.md") == "training-model-parallelism"
    assert slug_for("index.md") == "index"
    assert slug_for("a/b/c.md") == "a-b-c"


def test_parts_are_sections_and_index_is_the_part_page():
    book = from_outline(OUTLINE)
    assert [p.title for p in book.parts] == ["Part I: Insights", "Part II: Hardware"]
    assert book.parts[0].page.src_uri == "insights/index.md"
    assert book.parts[0].page.kind == "part"
    assert book.parts[1].page is None
    assert [c.slug for c in book.parts[0].chapters] == ["insights-ai-battlefield", "insights-second"]


def test_chapters_are_numbered_part_dot_chapter():
    book = from_outline(OUTLINE)
    assert [c.number for c in book.parts[0].chapters] == ["1.1", "1.2"]
    assert book.parts[1].chapters[0].display_title == "2.1 Accelerators"
    assert book.front[0].display_title == "Introduction"


def test_pages_in_reading_order_and_outline():
    book = from_outline(OUTLINE)
    assert [c.src_uri for c in book.pages()] == [
        "index.md",
        "insights/index.md",
        "insights/ai-battlefield.md",
        "insights/second.md",
        "hardware/accelerators.md",
    ]
    assert book.outline() == [
        (1, "Introduction"),
        (1, "Part I: Insights"),
        (2, "1.1 Battlefield"),
        (2, "1.2 Second"),
        (1, "Part II: Hardware"),
        (2, "2.1 Accelerators"),
    ]


def test_html_path_of_directory_urls():
    book = from_outline(OUTLINE)
    assert book.front[0].html_path == "index.html"
    assert book.parts[0].chapters[0].html_path == "insights/ai-battlefield/index.html"
    assert book.front[0].source == "book/index.md"


def test_json_round_trip_keeps_everything():
    book = from_outline(OUTLINE)
    again = Book.from_json(book.to_json())
    assert again == book
    assert again.to_json() == book.to_json()


def test_nested_sections_are_rejected():
    import pytest

    with pytest.raises(ValueError, match="nests another section"):
        from_outline([("section", "P", [("section", "Q", [])])])


def test_top_level_pages_after_the_parts_are_back_matter():
    book = from_outline([*OUTLINE, ("page", "Appendix: Scripts", "scripts.md", "scripts/")])
    assert [c.title for c in book.back] == ["Appendix: Scripts"]
    assert book.back[0].kind == "back"
    assert book.pages()[-1].src_uri == "scripts.md"
    assert book.outline()[-1] == (1, "Appendix: Scripts")
    assert Book.from_json(book.to_json()) == book


def test_part_numbers_are_roman_beyond_twelve():
    assert [roman(n) for n in (1, 4, 9, 12, 14, 24, 40, 99)] == ["I", "IV", "IX", "XII", "XIV", "XXIV", "XL", "XCIX"]
