"""The MkDocs plugin: a thin adapter that collects the book, checks it, and calls the writers after the build."""

from __future__ import annotations

import logging
import posixpath
import re
from html import escape as html_escape
from pathlib import Path

from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File

from . import calcblock, checks, dependencies, editions, figures, generated, provenance, sourcecheck
from .book import Book, from_outline
from .config import Options, PluginConfig
from .diagnostics import LOGGER, Reporter, WarningCounter, line_of
from .summary import summary

FIGURE = re.compile(r"^///\s*figure\s*\|\s*(?P<name>[\w-]+)\s*$")
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".svg", ".gif", ".webp"}
FIRST_PARAGRAPH = re.compile(r"<p>(.*?)</p>", re.S)
TAG = re.compile(r"<[^>]+>")
SNIPPET = re.compile(r'^(?P<indent>\s*)--8<--\s+"(?P<path>scripts/[^"]+)"\s*$')
FENCE = re.compile(r"^(?P<indent>\s*)(```|~~~)")


class BookPlugin(BasePlugin[PluginConfig]):
    """Registers scripts as site files, checks links and images, writes book.json, the PDF and the EPUB."""

    def on_startup(self, *, command: str, dirty: bool) -> None:
        """Remember whether this is `build` or `serve`."""
        self.command = command

    def on_config(self, config):
        """Start counting warnings (as --strict does) and fix the options for this build."""
        self.counter = WarningCounter()
        logging.getLogger("mkdocs").addHandler(self.counter)
        self.reporter = Reporter(LOGGER)
        self.sources: dict[str, str] = {}
        self.root = Path(config.config_file_path).resolve().parent
        config.extra["mlbook_output_name"] = self.config.output_name
        snippets = config.mdx_configs.setdefault("pymdownx.snippets", {})
        # Resolve included scripts from the repository root whatever the working directory; our own check
        # reports a missing one with its file and line (snippets' own error is a traceback).
        snippets["base_path"] = [str(self.root)]
        snippets["check_paths"] = False
        return config

    def on_files(self, files, config):
        """Serve every file under scripts/ with the site, so chapters can link and readers can download them."""
        scripts = self.root / "scripts"
        for path in sorted(p for p in scripts.rglob("*") if p.is_file()):
            rel = path.relative_to(self.root).as_posix()
            # Markdown there is documentation for the repository, not a chapter of the book.
            if "__pycache__" in rel or path.suffix in (".pyc", ".md"):
                continue
            files.append(File(rel, str(self.root), config.site_dir, config.use_directory_urls))
        self._add_figures(files, config)
        self._add_generated_pages(files, config)
        return files

    def _add_generated_pages(self, files, config) -> None:
        """The Downloads page and the Scripts appendix, written from the repository, with no file in book/."""
        docs = Path(config.docs_dir)
        pages = {
            self.config.downloads_page: generated.downloads(
                self.config.output_name, list(self.config.formats), self.config.downloads_page
            ),
            self.config.scripts_page: generated.scripts_index(
                self.root, docs, _nav_titles(config.nav or [], docs), self.config.scripts_page
            ),
        }
        in_nav = set(_nav_paths(config.nav or []))
        for src_uri, content in pages.items():
            if src_uri not in in_nav:  # a book that does not name the page in its nav does not get it
                continue
            if files.get_file_from_path(src_uri) is not None:
                self.reporter.report(
                    f"{docs.name}/{src_uri}",
                    1,
                    "generated page exists",
                    "the plugin writes this page; delete the file or rename the page in mkdocs.yml",
                )
                continue
            files.append(File.generated(config, src_uri, content=content))

    def _add_figures(self, files, config) -> None:
        """Draw (or take from the cache) every figure a chapter uses and serve it at figures/<name>.svg."""
        data_dir = Path(config.docs_dir) / "data"
        wanted = set()
        for page in files.documentation_pages():
            raw = Path(page.abs_src_path).read_bytes().decode("utf-8", errors="replace")
            wanted |= {m["name"] for line in raw.splitlines() if (m := FIGURE.match(line))}
        for name in sorted(wanted & set(figures.FIGURES)):
            try:
                svg = figures.render(name, data_dir, self.root / ".cache" / "figures")
            except (OSError, ValueError) as exc:
                self.reporter.report(f"{Path(config.docs_dir).name}/data", 1, "figure failed", f"{name}: {exc}")
                continue
            files.append(File.generated(config, f"figures/{name}.svg", abs_src_path=str(svg)))

    def on_nav(self, nav, config, files):
        """Keep the nav (the book model is built from it once pages have titles); check it against the files."""
        self.nav = nav
        docs = Path(config.docs_dir).name
        in_nav = set(_nav_paths(config.nav or []))
        config_text = Path(config.config_file_path).read_text(encoding="utf-8")
        for path in sorted(in_nav):
            if files.get_file_from_path(path) is None:
                line = line_of(config_text, f" {path}", path)
                self.reporter.report(
                    Path(config.config_file_path).name,
                    line,
                    "nav entry for a missing file",
                    f"'{path}' does not exist in {docs}/; fix the path or create the chapter",
                )
        for file in files.documentation_pages():
            if config.nav and file.src_uri not in in_nav:
                self.reporter.report(
                    f"{docs}/{file.src_uri}",
                    1,
                    "chapter missing from nav",
                    "add it under its part in the nav of mkdocs.yml (the nav is the book's order)",
                )
        return nav

    def on_page_read_source(self, page, config):
        """Read the chapter ourselves so invalid UTF-8 is reported with its line instead of a traceback."""
        if page.file.abs_src_path is None:  # a page the plugin generated
            self.sources[page.file.src_uri] = page.file.content_string
            return None
        source = f"{Path(config.docs_dir).name}/{page.file.src_uri}"
        text = sourcecheck.read_text(Path(page.file.abs_src_path), source, self.reporter)
        text = "# Unreadable chapter\n" if text is None else text.removeprefix("\ufeff")
        self.sources[page.file.src_uri] = text
        return text

    def on_page_markdown(self, markdown, page, config, files):
        """Check the raw source (line numbers are still known); add a download link above each included script."""
        source = f"{Path(config.docs_dir).name}/{page.file.src_uri}"
        sourcecheck.check(self.sources.get(page.file.src_uri, markdown), source, self.root, self.reporter)
        markdown = self._expand_figures(markdown, page.file.src_uri, source)
        text, calc_dir = self.sources.get(page.file.src_uri, markdown), self.root / "scripts" / "calc"
        markdown = calcblock.expand(
            markdown, page.file.src_uri, page.url, config.site_url or "", text, self.reporter, calc_dir
        )
        return add_download_links(markdown, page.file.src_uri)

    def _expand_figures(self, markdown: str, src_uri: str, source: str) -> str:
        """Replace each `/// figure | NAME` + `///` block with the figure and its caption."""
        lines, out, i = markdown.split("\n"), [], 0
        text = self.sources.get(src_uri, markdown)
        in_code = sourcecheck.fenced(lines)
        while i < len(lines):
            match = None if in_code[i] else FIGURE.match(lines[i])
            if not match:
                out.append(lines[i])
                i += 1
                continue
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "///"), i)
            if match["name"] in figures.FIGURES:
                out += ["", *figures.markdown(match["name"], src_uri), ""]
            else:
                known = ", ".join(sorted(figures.FIGURES))
                self.reporter.report(
                    source,
                    line_of(text, lines[i]),
                    "unknown figure",
                    f"'{match['name']}' is not a figure of build/mlbook/figures.py; known: {known}",
                )
            i = end + 1
        return "\n".join(out)

    # Runs last (lowest priority) so the search index and other plugins have finished writing the site.
    @event_priority(-100)
    def on_post_build(self, config) -> None:
        """Check the site; when the build counted no warning, write book.json and the editions."""
        site_only = {self.config.downloads_page}
        book = from_outline([o for item in self.nav.items if (o := _outline(item, site_only))])
        self._check_slugs(book, Path(config.docs_dir).name)
        options = self.options(config)
        editions.save_model(book, options, config.site_dir)
        # The editions are written after this check; links to them are valid when they will be written.
        coming = {editions.output_path(Path("."), options, fmt).as_posix() for fmt in editions.WRITERS}
        # Under `serve --dirty` only the rebuilt pages went through on_page_markdown: check just those.
        only = set(self.sources) if self.command == "serve" else None
        checks.check_site(book, Path(config.site_dir), self.sources, self.reporter, coming, only)
        if not self.config.enabled or self.command == "serve" and not self.config.enabled:
            return
        if self.counter.count:
            LOGGER.info("mlbook: %d warning(s) in this build: PDF and EPUB not written", self.counter.count)
            return
        try:
            results = editions.write_all(book, options, Path(config.site_dir))
        except Exception as exc:  # a writer failed: strict must fail the build, with the reason
            LOGGER.warning("mlbook: could not write the editions: %s", dependencies.explain(exc) or exc)
            return
        generated.fill_sizes(Path(config.site_dir), {fmt: r["bytes"] for fmt, r in results.items()})
        site = Path(config.site_dir)
        images = sum(  # the book's own images and figures, not the theme's assets
            1
            for p in site.rglob("*")
            if p.suffix.lower() in IMAGE_SUFFIXES and p.relative_to(site).parts[0] != "assets"
        )
        scripts = len(generated.script_files(self.root))
        for line in summary(book, self.sources, results, scripts, images, self.counter.count).splitlines():
            LOGGER.info(line)

    def on_page_content(self, html, page, config, files):
        """Give every page a description (front matter, else its first paragraph) for search engines and previews."""
        if not page.meta.get("description"):
            match = FIRST_PARAGRAPH.search(html)
            if match:
                text = " ".join(TAG.sub("", match.group(1)).split())
                text = text if len(text) <= 160 else text[:157].rsplit(" ", 1)[0] + "..."
                # The theme writes the description into an attribute as it is: escape it here.
                page.meta["description"] = html_escape(text, quote=True)
        return html

    def _check_slugs(self, book: Book, docs: str) -> None:
        seen: dict[str, str] = {}
        for chapter in book.pages():
            if chapter.slug in seen:
                self.reporter.report(
                    f"{docs}/{chapter.src_uri}",
                    1,
                    "duplicate slug",
                    f"'{chapter.slug}' is also the slug of {docs}/{seen[chapter.slug]}; rename one file",
                )
            seen.setdefault(chapter.slug, chapter.src_uri)

    def options(self, config) -> Options:
        """Writer options from mkdocs.yml and the plugin's settings."""
        epoch = provenance.source_epoch(self.root)
        return Options(
            title=config.site_name,
            author=config.site_author or "The ML Engineering Book contributors",
            subtitle=self.config.subtitle,
            language=config.theme.get("language") or "en",
            identifier=self.config.identifier,
            keywords=list(self.config.keywords),
            output_name=self.config.output_name,
            formats=list(self.config.formats),
            site_url=config.site_url or "",
            repo_url=config.repo_url or "",
            copyright=config.copyright or "",
            edition=provenance.edition(self.root),
            epoch=epoch,
            pdf_workers=self.config.pdf_workers,
            pdf_variant=self.config.pdf_variant,
            cache_dir=str(self.root / ".cache" / "pdf-chunks"),
        )


def _nav_paths(entries) -> list[str]:
    """Every file path named in a raw `nav` config value (nested lists and dicts), in order."""
    out = []
    for entry in entries if isinstance(entries, list) else [entries]:
        if isinstance(entry, dict):
            for value in entry.values():
                out += _nav_paths(value)
        elif isinstance(entry, str) and not entry.startswith(("http://", "https://")):
            out.append(entry)
    return out


def _outline(item, site_only: set[str]):
    """The nav item as a plain outline tuple; site-only pages and external links are left out (None)."""
    if item.is_page:
        if item.file.src_uri in site_only:
            return None
        return ("page", item.title, item.file.src_uri, item.url)
    if item.is_section:
        return ("section", item.title, [o for o in (_outline(c, site_only) for c in item.children) if o])
    return None


def _nav_titles(entries, docs: Path) -> dict[str, str]:
    """Title of every page named in the raw nav: its nav title, else the first '# ' line of its file."""
    titles = {}
    for entry in entries if isinstance(entries, list) else [entries]:
        if isinstance(entry, dict):
            for title, value in entry.items():
                if isinstance(value, str):
                    titles[value] = title
                else:
                    titles.update(_nav_titles(value, docs))
        elif isinstance(entry, str) and (docs / entry).is_file():
            first = next(
                (ln for ln in (docs / entry).read_text(errors="replace").splitlines() if ln.startswith("# ")), ""
            )
            titles[entry] = first[2:].strip() or entry
    return titles


def add_download_links(markdown: str, src_uri: str) -> str:
    """Insert a download link to the tested file before every fenced block that includes a script."""
    lines = markdown.split("\n")
    for i in range(len(lines) - 1, -1, -1):
        match = SNIPPET.match(lines[i])
        if not match:
            continue
        start = next((j for j in range(i - 1, -1, -1) if FENCE.match(lines[j])), None)
        if start is None:
            continue
        path = match["path"]
        href = posixpath.relpath(path, posixpath.dirname(src_uri) or ".")
        indent = FENCE.match(lines[start])["indent"]
        lines[start:start] = [
            f"{indent}Download [`{posixpath.basename(path)}`]({href}) (the tested file).",
            "",
        ]
    return "\n".join(lines)


def load_book(site_dir: Path) -> Book:
    """The book model saved in a built site (for the command line)."""
    return Book.load(site_dir)
