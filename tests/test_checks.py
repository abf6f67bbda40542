"""Every kind of defect in a real build of the mini book: its exact message and a failed build."""

import shutil

import pytest

from conftest import FIXTURES, build_site

pytestmark = pytest.mark.slow

THEME = (FIXTURES.parent.parent / "build" / "mlbook" / "theme").as_posix()


def make_book(tmp_path):
    root = tmp_path / "book"
    shutil.copytree(FIXTURES / "mini", root)
    cfg = root / "mkdocs.yml"
    cfg.write_text(cfg.read_text().replace("../../../build/mlbook/theme", THEME))
    return root


def append(path, text):
    """Append text to a file and return the 1-based line of its first line."""
    before = path.read_text()
    path.write_text(before + text)
    return before.count("\n") + 1


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


BETA = "book/part-one/beta.md"


def _outside(root):
    line = append(root / BETA, "\nSee [outside](../../../outside.md).\n")
    return (
        f"{BETA}:{line + 1}: link outside the book: '../../../outside.md' leaves the book; link to a "
        "chapter's .md file or use a full https:// URL"
    )


def _same_anchor(root):
    edit(root / "book/part-one/alpha.md", "(#summary)", "(#nowhere)")
    return (
        "book/part-one/alpha.md:3: broken anchor: '#nowhere' does not exist in this chapter; use the id of one "
        "of its headings"
    )


def _missing_image(root):
    line = append(root / BETA, "\n![A circle](img/circle.svg)\n")
    return f"{BETA}:{line + 1}: missing image: 'img/circle.svg' does not exist; check the path relative to {BETA}"


def _no_alt(root):
    line = append(root / BETA, "\n![](img/square.svg)\n")
    return (
        f"{BETA}:{line + 1}: image without alt text: 'img/square.svg' has no alt text; write "
        "![what the image shows](...)"
    )


def _remote_image(root):
    line = append(root / BETA, "\n![Logo](https://example.org/logo.png)\n")
    return (
        f"{BETA}:{line + 1}: remote image: 'https://example.org/logo.png' is fetched from the network; put the "
        "image beside the chapter and link it relatively"
    )


def _missing_snippet(root):
    edit(root / "book/part-one/alpha.md", "scripts/hello.sh", "scripts/nope.sh")
    line = (root / "book/part-one/alpha.md").read_text().splitlines().index('--8<-- "scripts/nope.sh"') + 1
    return (
        f"book/part-one/alpha.md:{line}: missing snippet: 'scripts/nope.sh' does not exist; paths are relative "
        "to the repository root"
    )


def _nav_missing(root):
    edit(root / "mkdocs.yml", "      - part-one/beta.md\n", "      - part-one/beta.md\n      - part-one/nope.md\n")
    line = (root / "mkdocs.yml").read_text().splitlines().index("      - part-one/nope.md") + 1
    return (
        f"mkdocs.yml:{line}: nav entry for a missing file: 'part-one/nope.md' does not exist in book/; fix the "
        "path or create the chapter"
    )


def _not_in_nav(root):
    (root / "book/part-one/gamma.md").write_text("# Gamma\n\nText.\n")
    return (
        "book/part-one/gamma.md:1: chapter missing from nav: add it under its part in the nav of mkdocs.yml "
        "(the nav is the book's order)"
    )


def _duplicate_slug(root):
    (root / "book/part-one-beta.md").write_text("# Other beta\n\nText.\n")
    edit(root / "mkdocs.yml", "      - part-one/beta.md\n", "      - part-one/beta.md\n      - part-one-beta.md\n")
    line = (root / "mkdocs.yml").read_text().splitlines().index("      - part-one-beta.md") + 1
    return (
        f"mkdocs.yml:{line}: duplicate slug: book/part-one-beta.md and book/part-one/beta.md both get the identifier "
        "'part-one-beta', the name of their file in the EPUB and of their anchors in the PDF; rename one of them"
    )


def _bad_utf8(root):
    (root / BETA).write_bytes((root / BETA).read_bytes() + b"\nbad \xff byte\n")
    line = (root / BETA).read_bytes().count(b"\n")
    return f"{BETA}:{line}: invalid UTF-8: byte 0xff at column 5 is not UTF-8; re-save the file as UTF-8"


def _bad_front_matter(root):
    (root / BETA).write_text("---\ntitle: [oops\n---\n" + (root / BETA).read_text())
    return (
        f"{BETA}:2: invalid front matter: YAML error: expected ',' or ']', but got '<stream end>'; fix the YAML "
        "between the '---' lines"
    )


def _unclosed_fence(root):
    line = append(root / BETA, "\n```python\nx = 1\n")
    return (
        f"{BETA}:{line + 1}: unclosed code fence: the ``` opened here is never closed and swallows the rest of "
        "the chapter; add a closing ```"
    )


def _skipped_level(root):
    line = append(root / BETA, "\n#### Too deep\n")
    return f"{BETA}:{line + 1}: heading level skipped: a level-4 heading follows a level-2 heading; use ###"


def _no_title(root):
    (root / BETA).write_text("Just text, no title.\n\n## Summary\n")
    return f"{BETA}:3: missing title: the first heading must be the chapter title, a single '# Title' line"


# Failure kinds reported publicly (issue 24, item 7); each names its thread.


def _absolute_image(root):
    # zhaoterryy/mkdocs-pdf-export-plugin#92: '/img/x.png' had no base to resolve against.
    line = append(root / BETA, "\n![A square](/part-one/img/square.svg)\n")
    return (
        f"{BETA}:{line + 1}: absolute path: '/part-one/img/square.svg' is written from the site's root and breaks "
        "when the site is served under a path or opened from disk; write it relative to the chapter: "
        "'img/square.svg'"
    )


def _absolute_link(root):
    line = append(root / BETA, "\nSee [alpha](/part-one/alpha/#summary).\n")
    return (
        f"{BETA}:{line + 1}: absolute path: '/part-one/alpha/#summary' is written from the site's root and breaks "
        "when the site is served under a path or opened from disk; write it relative to the chapter: "
        "'alpha.md#summary'"
    )


def _no_trailing_slash(root):
    # orzih/mkdocs-with-pdf#21: a chapter's address without its trailing slash resolved on the site only.
    line = append(root / BETA, "\nSee [alpha](../alpha#summary).\n")
    return (
        f"{BETA}:{line + 1}: broken link: '../alpha#summary' is a chapter's address without its trailing slash; "
        "link to its .md file: 'alpha.md#summary'"
    )


def _snippet_section(root):
    # facelessuser/pymdown-extensions#1946: a missing section printed nothing.
    (root / "scripts" / "hello.sh").write_text("# --8<-- [start:greet]\necho hi\n# --8<-- [end:greet]\n")
    line = append(
        root / BETA, '\n```bash\n--8<-- "scripts/hello.sh:greet"\n```\n\n```bash\n--8<-- "scripts/hello.sh:bye"\n```\n'
    )
    return (
        f"{BETA}:{line + 6}: missing snippet section: 'scripts/hello.sh' has no section 'bye'; mark it with "
        "'--8<-- [start:bye]' and '--8<-- [end:bye]'"
    )


DEFECTS = [
    _absolute_image,
    _absolute_link,
    _no_trailing_slash,
    _snippet_section,
    _outside,
    _same_anchor,
    _missing_image,
    _no_alt,
    _remote_image,
    _missing_snippet,
    _nav_missing,
    _not_in_nav,
    _duplicate_slug,
    _bad_utf8,
    _bad_front_matter,
    _unclosed_fence,
    _skipped_level,
    _no_title,
]


@pytest.mark.parametrize("defect", DEFECTS, ids=[d.__name__.strip("_") for d in DEFECTS])
def test_defect_fails_the_build_with_its_message_once(defect, tmp_path):
    root = make_book(tmp_path)
    expected = defect(root)
    result = build_site(root, tmp_path / "site", env={"MLBOOK_OUTPUTS": "false"})
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert out.count(expected) == 1, out
    assert "Traceback" not in out
    assert not (tmp_path / "site").exists()


def test_image_from_the_local_file_system_is_refused(tmp_path):
    root = make_book(tmp_path)
    line = append(root / BETA, '\n<img alt="secret" src="file:///etc/passwd">\n')
    result = build_site(root, tmp_path / "site", env={"MLBOOK_OUTPUTS": "false"})
    out = result.stdout + result.stderr
    assert result.returncode != 0
    expected = (
        f"{BETA}:{line + 1}: image outside the book: 'file:///etc/passwd' is not a file of the book; put the "
        "image beside the chapter"
    )
    assert out.count(expected) == 1, out
