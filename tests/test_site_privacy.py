"""Static privacy and accessibility scan of the built real site: nothing is loaded from another host.

Every loadable reference in every HTML page and every url(...) / @import in every CSS file must be relative or
same-origin; no page names a known third-party font, CDN or tracking host; every page declares English; every
image has alternative text; the 404 page exists.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import lxml.html
import pytest

from mlbook.data.calcforms import CALCULATORS

pytestmark = pytest.mark.slow

THIRD_PARTY = [
    "fonts.googleapis.com",
    "fonts.gstatic.com",
    "cdn.jsdelivr",
    "unpkg",
    "google-analytics",
    "googletagmanager",
]
# <link rel=...> values that make the browser fetch the href.
LOADING_RELS = {
    "stylesheet",
    "icon",
    "shortcut",
    "apple-touch-icon",
    "mask-icon",
    "preload",
    "modulepreload",
    "prefetch",
    "preconnect",
    "dns-prefetch",
    "manifest",
}
CSS_URL = re.compile(r"""url\(\s*(['"]?)(.*?)\1\s*\)|@import\s+(['"])(.*?)\3""", re.IGNORECASE | re.DOTALL)
HARMLESS_SCHEMES = {"data", "blob", "about"}


def foreign(ref: str) -> bool:
    """True when ref would load from some other origin (a scheme with a host, or protocol-relative '//host')."""
    ref = ref.strip()
    if not ref or ref.startswith("#"):
        return False
    parts = urlsplit(ref)
    if parts.scheme.lower() in HARMLESS_SCHEMES:
        return False
    return bool(parts.scheme or parts.netloc or ref.startswith("//"))


def srcset_urls(value: str) -> list[str]:
    return [candidate.split()[0] for candidate in value.split(",") if candidate.strip()]


def css_urls(text: str) -> list[str]:
    return [m.group(2) or m.group(4) or "" for m in CSS_URL.finditer(text)]


def loadable_refs(doc) -> list[str]:
    refs: list[str] = []
    for el in doc.iter("script", "img", "source", "iframe", "audio", "video", "track", "embed", "input"):
        refs += [el.get(a) for a in ("src", "poster", "data") if el.get(a)]
        if el.get("srcset"):
            refs += srcset_urls(el.get("srcset"))
    for el in doc.iter("object"):
        if el.get("data"):
            refs.append(el.get("data"))
    for el in doc.iter("link"):
        if set((el.get("rel") or "").lower().split()) & LOADING_RELS and el.get("href"):
            refs.append(el.get("href"))
        if el.get("imagesrcset"):
            refs += srcset_urls(el.get("imagesrcset"))
    for el in doc.iter("style"):
        refs += css_urls(el.text_content())
    for el in doc.xpath("//*[@style]"):
        refs += css_urls(el.get("style"))
    return refs


@pytest.fixture(scope="module")
def pages(real_site: Path) -> dict[str, tuple[str, object]]:
    """Every HTML page of the site: relative path -> (raw text, parsed document)."""
    found = {}
    for path in sorted(real_site.rglob("*.html")):
        text = path.read_text(encoding="utf-8")
        found[path.relative_to(real_site).as_posix()] = (text, lxml.html.document_fromstring(text))
    assert len(found) >= 20
    return found


def test_html_loads_nothing_from_another_host(pages):
    bad = [f"{name}: {ref}" for name, (_, doc) in pages.items() for ref in loadable_refs(doc) if foreign(ref)]
    assert bad == []


def test_css_loads_nothing_from_another_host(real_site):
    sheets = sorted(real_site.rglob("*.css"))
    assert sheets
    bad = [
        f"{sheet.relative_to(real_site)}: {ref}"
        for sheet in sheets
        for ref in css_urls(sheet.read_text(encoding="utf-8"))
        if foreign(ref)
    ]
    assert bad == []


def test_no_page_names_a_third_party_host(pages):
    bad = [f"{name}: {host}" for name, (text, _) in pages.items() for host in THIRD_PARTY if host in text.lower()]
    assert bad == []


def test_404_page_exists(real_site, pages):
    assert (real_site / "404.html").is_file()
    _, doc = pages["404.html"]
    assert "404" in doc.text_content()


def test_every_page_is_english(pages):
    bad = [name for name, (_, doc) in pages.items() if doc.getroottree().getroot().get("lang") != "en"]
    assert bad == []


def test_every_image_has_alt_text(pages):
    bad = [
        f"{name}: {img.get('src')}"
        for name, (_, doc) in pages.items()
        for img in doc.iter("img")
        if not (img.get("alt") or "").strip()
    ]
    assert bad == []


def test_calculator_pages_are_scanned_and_their_scripts_reach_no_host(pages, real_site):
    # The live calculators (build/mlbook/markdown/calcblock.py) run their own JavaScript: it must come from the site and
    # must not open a connection anywhere (no URL, fetch, XHR, WebSocket, beacon or dynamic import).
    for name in CALCULATORS:
        _, doc = pages[f"misc/calculators/{name}/index.html"]
        scripts = [el.get("src") for el in doc.iter("script") if el.get("src")]
        assert any(src.endswith("assets/calc/formulas.js") for src in scripts), name
        assert not [src for src in scripts if foreign(src)], name
    sources = sorted((real_site / "assets" / "calc").glob("*.js"))
    assert len(sources) >= 3
    network = re.compile(r"https?://|fetch\(|XMLHttpRequest|WebSocket|sendBeacon|import\(|EventSource")
    assert [js.name for js in sources if network.search(js.read_text(encoding="utf-8"))] == []
