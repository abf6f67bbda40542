import pytest

from mlbook.html.links import relative, resolve


@pytest.mark.parametrize(
    ("page", "href", "expected"),
    [
        ("training/x/", "../y/", ("page", "training/y/", "")),
        ("training/x/", "../../hardware/acc/#hbm", ("page", "hardware/acc/", "hbm")),
        ("training/x/", "#sec", ("page", "training/x/", "sec")),
        ("", "insights/", ("page", "insights/", "")),
        ("training/x/", "../../scripts/a/b.py", ("file", "scripts/a/b.py", "")),
        ("training/x/", "img/p.svg", ("file", "training/x/img/p.svg", "")),
        ("training/x/", "https://example.org/a", ("external", "https://example.org/a", "")),
        ("training/x/", "mailto:a@b.c", ("external", "mailto:a@b.c", "")),
        ("training/x/", "file:///etc/passwd", ("bad", "file:///etc/passwd", "")),
        ("training/x/", "../../../../etc/passwd", ("bad", "../../../../etc/passwd", "")),
        ("a/", "../index.html#top", ("page", "", "top")),
    ],
)
def test_resolve(page, href, expected):
    target = resolve(page, href)
    assert (target.kind, target.url, target.fragment) == expected


def test_relative_round_trips_with_resolve():
    rel = relative("training/x/", "scripts/a/b.py")
    assert rel == "../../scripts/a/b.py"
    assert resolve("training/x/", rel).url == "scripts/a/b.py"
