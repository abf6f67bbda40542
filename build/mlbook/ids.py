"""The one ASCII-safe identifier scheme: chapter slugs (PDF anchors, EPUB file names, per-chapter files), element ids.

Any file name MkDocs accepts (CJK, spaces, colons, ``#``, ``%``, ``&``) gets an identifier that is at once a valid
file name on every system, a URL path segment and fragment that needs no percent-encoding, and an XHTML id:

- a **slug** is made of ``a-z``, ``0-9``, ``_`` and single ``-``: ASCII letters are lower-cased (EPUB requires file
  names that stay unique after case folding), accented letters lose their accent (``é`` -> ``e``), other letters
  and digits (CJK, Cyrillic...) become ``u`` and their code point in hex (``分`` -> ``u5206``), everything else
  (``/``, spaces, punctuation) becomes ``-``; runs of ``-`` collapse, so a slug never holds ``--`` and
  ``<slug>--<id>`` (a PDF anchor) splits unambiguously. Two chapters with the same slug are a build error.
- an **element id** (a heading's or footnote's) is kept as written when it is already URL-safe, else each unsafe
  character becomes ``_<hex code point>_`` (``fn:@#`` -> ``fn:_40__23_``), so ids from attribute lists, raw HTML
  or punctuation footnote labels make valid fragments.
"""

from __future__ import annotations

import re
import unicodedata

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown", ".mkdn", ".mkd")
SAFE_ID = re.compile(r"[A-Za-z0-9_.:-]+")
SAFE_ID_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:-")
SAFE_NAME = re.compile(r"[a-z0-9_]+(?:-[a-z0-9_]+)*")


def _slug_char(c: str) -> str:
    """The slug spelling of one character (see the module docstring)."""
    if c.isascii():
        return c.lower() if c.isalnum() or c == "_" else "-"
    if not c.isalnum():
        return "-"
    plain = "".join(ch for ch in unicodedata.normalize("NFKD", c) if ch.isascii() and ch.isalnum())
    return plain.lower() if plain else f"-u{ord(c):x}-"


def slug(path: str) -> str:
    """The identifier of a page: its path without the Markdown suffix, spelt with ``a-z0-9_-`` only.

    >>> slug("training/model-parallelism.md")
    'training-model-parallelism'
    >>> slug("分布式/第一章 入门: A&B.md")
    'u5206-u5e03-u5f0f-u7b2c-u4e00-u7ae0-u5165-u95e8-a-b'
    """
    stem = path
    for suffix in MARKDOWN_SUFFIXES:
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    text = "".join(_slug_char(c) for c in unicodedata.normalize("NFC", stem))
    return re.sub(r"-+", "-", text).strip("-") or "page"


def element_id(raw: str) -> str:
    """An element id spelt so that ``#<id>`` is a valid URL fragment: unchanged when already safe.

    >>> element_id("model-parallelism"), element_id("fn:@#"), element_id("标题")
    ('model-parallelism', 'fn:_40__23_', '_6807__9898_')
    """
    if SAFE_ID.fullmatch(raw):
        return raw
    return "".join(c if c in SAFE_ID_CHARS else f"_{ord(c):x}_" for c in raw)


ESCAPE = re.compile(r"_([0-9a-f]{1,6})_")


def original_id(safe: str) -> str:
    """The element id as the site page spells it, from its element_id spelling (the inverse of element_id).

    Used where only the safe spelling is at hand (a PDF destination) and a link must point at the site page.
    An id that was already safe is returned unchanged; one that only looks escaped (``x_20_y`` written so in the
    source) would be read back as ``x y``, a spelling no heading id generator produces.

    >>> original_id("_6807__9898_"), original_id("fn:_40__23_"), original_id("model-parallelism")
    ('标题', 'fn:@#', 'model-parallelism')
    """

    def char(m: re.Match) -> str:
        code = int(m.group(1), 16)
        return chr(code) if code <= 0x10FFFF and chr(code) not in SAFE_ID_CHARS else m.group(0)

    raw = ESCAPE.sub(char, safe)
    return raw if raw != safe and element_id(raw) == safe else safe


def is_safe_name(name: str) -> bool:
    """Whether name (a slug, or a file name stem) uses only the slug alphabet."""
    return SAFE_NAME.fullmatch(name) is not None
