"""The real website in a real browser (headless Chromium through Playwright), served over http on 127.0.0.1.

Material's search only works over http, so the built site is served by Python's http.server on a free port.
Every request of every page is recorded: none may leave 127.0.0.1.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow

SCREENSHOTS = ROOT / ".cache" / "screenshots"
VIEWPORTS = {"desktop": (1280, 800), "phone": (390, 844)}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TIMEOUT_MS = 15_000

# Every request any page of this module made (url), for the same-origin check.
REQUESTS: list[str] = []


@pytest.fixture(scope="module")
def server(site_server: str) -> str:
    """The built site over http on 127.0.0.1 (conftest.site_server); the base URL ending in '/'."""
    return site_server


@pytest.fixture(scope="module")
def browser(chromium):
    """The session's Chromium (conftest.chromium), shared with the calculator tests."""
    return chromium


@pytest.fixture
def context(browser):
    """A fresh browser context (own storage), light scheme, desktop viewport; every request recorded."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme="light")
    ctx.set_default_timeout(TIMEOUT_MS)
    ctx.on("request", lambda request: REQUESTS.append(request.url))
    try:
        yield ctx
    finally:
        ctx.close()


class Problems:
    """Console errors, page errors, failed requests and HTTP errors seen by one page."""

    def __init__(self, page):
        self.items: list[str] = []
        page.on("console", lambda m: m.type == "error" and self.items.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: self.items.append(f"page error: {e}"))
        page.on("requestfailed", self._failed)
        page.on("response", lambda r: r.status >= 400 and self.items.append(f"HTTP {r.status}: {r.url}"))

    def _failed(self, request) -> None:
        # A request the page itself cancelled by navigating (a reload while the favicon loads) is no failure.
        if request.failure != "net::ERR_ABORTED":
            self.items.append(f"failed: {request.url} ({request.failure})")


def goto(page, url: str) -> None:
    response = page.goto(url, wait_until="load")
    assert response is not None and response.ok, f"{url}: {response and response.status}"
    page.wait_for_load_state("networkidle")


def scheme(page) -> str:
    return page.evaluate("document.body.getAttribute('data-md-color-scheme')")


def test_front_page_has_no_console_errors_or_failed_requests(context, server):
    page = context.new_page()
    problems = Problems(page)
    goto(page, server)
    assert page.locator("h1").first.is_visible()
    assert problems.items == []


@pytest.mark.parametrize(
    ("term", "chapter"),
    [("busbw", "hardware/collectives/"), ("PagedAttention", "inference/fundamentals/")],
)
def test_search_finds_the_chapter(context, server, term, chapter):
    page = context.new_page()
    problems = Problems(page)
    goto(page, server)
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    box = page.locator("input.md-search__input")
    box.click()
    # Material reads the query on key events, so type it (fill() alone starts no search).
    box.press_sequentially(term, delay=20)
    page.locator(".md-search-result__meta", has_text="matching").wait_for()
    wanted = f"/{chapter}"
    try:
        page.wait_for_function(
            "(path) => [...document.querySelectorAll('.md-search-result__list a.md-search-result__link')]"
            ".some((a) => new URL(a.href).pathname === path)",
            arg=wanted,
            timeout=5_000,
        )
    except PlaywrightTimeout:
        pass
    links = page.locator(".md-search-result__list a.md-search-result__link")
    hrefs = [urlsplit(h) for h in links.evaluate_all("(as) => as.map((a) => a.href)")]
    assert any(h.hostname == "127.0.0.1" and h.path == wanted for h in hrefs), (
        f"{term!r}: no result links to {wanted}: {[h.path for h in hrefs]}"
    )
    assert problems.items == []


def test_colour_toggle_switches_and_survives_a_reload(context, server):
    page = context.new_page()
    problems = Problems(page)
    goto(page, server)
    assert scheme(page) == "default"
    page.locator("label.md-header__button[for='__palette_1']").click()
    page.wait_for_function("document.body.getAttribute('data-md-color-scheme') === 'slate'")
    page.reload(wait_until="networkidle")
    assert scheme(page) == "slate"
    # ... and on another page of the site (the choice is stored for the whole site).
    goto(page, f"{server}hardware/accelerators/")
    assert scheme(page) == "slate"
    page.locator("label.md-header__button[for='__palette_0']").click()
    page.wait_for_function("document.body.getAttribute('data-md-color-scheme') === 'default'")
    page.reload(wait_until="networkidle")
    assert scheme(page) == "default"
    assert problems.items == []


@pytest.mark.parametrize(
    ("suffix", "content_type"),
    [(".pdf", "application/pdf"), (".epub", "application/epub+zip")],
)
def test_header_download_links_are_served(context, server, real_site, suffix, content_type):
    page = context.new_page()
    goto(page, server)
    link = page.locator(f".md-download-links a[href$='{suffix}']")
    assert link.count() == 1
    href = link.evaluate("(a) => a.href")
    assert urlsplit(href).hostname == "127.0.0.1"
    response = context.request.get(href)
    assert response.status == 200
    assert response.headers["content-type"].split(";")[0].strip() == content_type
    body = response.body()
    assert body == (real_site / urlsplit(href).path.lstrip("/")).read_bytes()
    assert body[:4] == (b"%PDF" if suffix == ".pdf" else b"PK\x03\x04")


def test_script_download_links_match_the_scripts(context, server):
    page = context.new_page()
    problems = Problems(page)
    goto(page, f"{server}scripts/")
    links = page.locator("article a[href$='.py'], article a[href$='.slurm'], article a[href$='.sh']")
    hrefs = sorted({links.nth(i).evaluate("(a) => a.href") for i in range(links.count())})
    prefix = f"{server}scripts/"
    hrefs = [h for h in hrefs if h.startswith(prefix)]
    assert hrefs, "the Scripts appendix links no script"
    for href in hrefs:
        relative = href[len(prefix) :]
        response = context.request.get(href)
        assert response.status == 200, href
        assert response.body() == (ROOT / "scripts" / relative).read_bytes(), relative
    # The download link above an included script in a chapter serves the same bytes.
    goto(page, f"{server}hardware/collectives/")
    chapter_links = page.locator("article a[href$='scripts/network/collective_bench.py']")
    assert chapter_links.count() >= 1
    response = context.request.get(chapter_links.first.evaluate("(a) => a.href"))
    assert response.status == 200
    assert response.body() == (ROOT / "scripts" / "network" / "collective_bench.py").read_bytes()
    assert problems.items == []


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("viewport", sorted(VIEWPORTS))
def test_screenshots(browser, server, theme, viewport):
    width, height = VIEWPORTS[viewport]
    ctx = browser.new_context(viewport={"width": width, "height": height}, color_scheme=theme)
    ctx.set_default_timeout(TIMEOUT_MS)
    ctx.on("request", lambda request: REQUESTS.append(request.url))
    try:
        page = ctx.new_page()
        problems = Problems(page)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        for name, path in [("front", ""), ("accelerators", "hardware/accelerators/")]:
            goto(page, f"{server}{path}")
            assert scheme(page) == ("slate" if theme == "dark" else "default")
            shot = SCREENSHOTS / f"{name}-{theme}-{width}x{height}.png"
            shot.unlink(missing_ok=True)
            page.screenshot(path=str(shot))
            data = shot.read_bytes()
            assert data[:8] == PNG_MAGIC and len(data) > 1000, shot
        assert problems.items == []
    finally:
        ctx.close()


def test_no_request_leaves_localhost(context, server):
    """Runs last: besides its own page loads, checks every request the module's pages made."""
    page = context.new_page()
    for path in ["", "hardware/accelerators/", "inference/fundamentals/", "scripts/", "downloads/", "404.html"]:
        page.goto(f"{server}{path}", wait_until="load")
        page.wait_for_load_state("networkidle")
    assert len(REQUESTS) > 10
    foreign = sorted(
        {
            u
            for u in REQUESTS
            if urlsplit(u).scheme not in ("data", "blob", "about") and urlsplit(u).hostname != "127.0.0.1"
        }
    )
    assert foreign == []
