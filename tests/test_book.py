import pytest

from mlbook.book import Book, BookFormatError, Chapter, Section, from_outline, roman, slug_for

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
    assert book.items[0].display_title == "Introduction"


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
    assert book.items[0].html_path == "index.html"
    assert book.parts[0].chapters[0].html_path == "insights/ai-battlefield/index.html"
    assert book.items[0].source == "book/index.md"


def test_json_round_trip_keeps_everything():
    book = from_outline(OUTLINE)
    again = Book.from_json(book.to_json())
    assert again == book
    assert again.to_json() == book.to_json()


def test_top_level_pages_after_the_parts_stay_last():
    book = from_outline([*OUTLINE, ("page", "Appendix: Scripts", "scripts.md", "scripts/")])
    assert book.items[-1].title == "Appendix: Scripts"
    assert (book.items[-1].kind, book.items[-1].level) == ("front", 1)
    assert book.pages()[-1].src_uri == "scripts.md"
    assert book.outline()[-1] == (1, "Appendix: Scripts")
    assert Book.from_json(book.to_json()) == book


def test_part_numbers_are_roman_beyond_twelve():
    assert [roman(n) for n in (1, 4, 9, 12, 14, 24, 40, 99)] == ["I", "IV", "IX", "XII", "XIV", "XXIV", "XL", "XCIX"]


NESTED = [
    ("page", "Preface", "index.md", ""),
    (
        "section",
        "Part I: One",
        [
            ("page", "Part I: One", "one/index.md", "one/"),
            ("page", "A", "one/a.md", "one/a/"),
            (
                "section",
                "Group",
                [
                    ("page", "Group", "one/group/index.md", "one/group/"),
                    ("page", "B", "one/group/b.md", "one/group/b/"),
                    ("section", "Deeper", [("page", "C", "one/group/deeper/c.md", "one/group/deeper/c/")]),
                ],
            ),
            ("page", "D", "one/d.md", "one/d/"),
        ],
    ),
    ("page", "Interlude", "interlude.md", "interlude/"),
    ("section", "Part II: Two", [("page", "E", "two/e.md", "two/e/")]),
]


def test_nested_sections_are_numbered_to_any_depth_and_keep_nav_order():
    book = from_outline(NESTED)
    assert book.outline() == [
        (1, "Preface"),
        (1, "Part I: One"),
        (2, "1.1 A"),
        (2, "1.2 Group"),
        (3, "1.2.1 B"),
        (3, "1.2.2 Deeper"),
        (4, "1.2.2.1 C"),
        (2, "1.3 D"),
        (1, "Interlude"),
        (1, "Part II: Two"),
        (2, "2.1 E"),
    ]
    assert [c.src_uri for c in book.pages()] == [
        "index.md",
        "one/index.md",
        "one/a.md",
        "one/group/index.md",
        "one/group/b.md",
        "one/group/deeper/c.md",
        "one/d.md",
        "interlude.md",
        "two/e.md",
    ]


def test_a_nested_index_page_carries_its_sections_title_and_number():
    group = from_outline(NESTED).parts[0].children[1]
    assert isinstance(group, Section) and group.page.display_title == "1.2 Group"
    assert (group.page.kind, group.page.level, group.slug) == ("chapter", 2, "one-group-index")
    deeper = group.children[1]
    assert (deeper.page, deeper.slug, deeper.display_title) == (None, "section-1-2-2", "1.2.2 Deeper")
    assert from_outline(NESTED).parts[1].slug == "part-2"


def test_only_a_first_child_named_index_is_the_section_page():
    book = from_outline([("section", "P", [("page", "A", "p/a.md", "p/a/"), ("page", "I", "p/index.md", "p/")])])
    assert book.parts[0].page is None
    assert [c.number for c in book.parts[0].chapters] == ["1.1", "1.2"]


def test_nested_json_round_trip_and_version():
    book = from_outline(NESTED)
    assert Book.from_json(book.to_json()) == book
    assert '"version": 2' in book.to_json()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"front": [], "parts": [], "back": []}', "shape version 1, this mlbook reads version 2; rebuild the site"),
        ('{"version": 7, "items": []}', "shape version 7, this mlbook reads version 2; update mlbook"),
    ],
)
def test_book_json_of_another_version_is_a_clear_error(text, message):
    with pytest.raises(BookFormatError, match=message):
        Book.from_json(text)


@pytest.mark.parametrize(
    ("path", "slug"),
    [
        ("training/model-parallelism.md", "training-model-parallelism"),
        ("分布式/训练.md", "u5206-u5e03-u5f0f-u8bad-u7ec3"),
        ("My Chapter: Part 1 #2 100% R&D.md", "my-chapter-part-1-2-100-r-d"),
        ("Café/naïve.md", "cafe-naive"),
        ("a--b.md", "a-b"),
        ("###.md", "page"),
    ],
)
def test_slugs_are_ascii_safe_for_any_file_name(path, slug):
    assert slug_for(path) == slug
    assert Chapter("t", path, "x/").slug == slug
