"""The MkDocs plugin: MkDocs events only, each handing the book to a stage (checks, transforms, pages, writers)."""

from __future__ import annotations

import logging
import traceback
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File

from . import dependencies, navigation, provenance, writers
from .book import from_outline
from .checks import nav as nav_checks
from .checks import site as site_checks
from .checks import source as source_checks
from .checks import tree as tree_checks
from .config import PluginConfig
from .data import changes as changes_data
from .data import figures
from .diagnostics import DEBUG_HINT, LOGGER, EditionError, Reporter, WarningCounter, WriterError, debug
from .html import drawings
from .html.description import describe
from .markdown import calcblock
from .markdown import figures as figure_blocks
from .markdown.datablocks import DataBlocks
from .markdown.scriptlinks import add_download_links
from .options import Options
from .pages import changes, downloads, scripts
from .summary import count_images, summary
from .writers.registry import BANNER, DOWNLOADS, PAGE, ROOT


def outside_files(files, docs_dir: Path) -> dict[str, str]:
    """src_uri -> real path of each file of the docs folder that is a symbolic link to a place outside it."""
    root = docs_dir.resolve()
    out = {}
    for f in files:
        if f.abs_src_path and Path(f.abs_src_path).is_relative_to(docs_dir.absolute()):
            real = Path(f.abs_src_path).resolve()
            if not real.is_relative_to(root):
                out[f.src_uri] = str(real)
    return out


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
        self.datablocks = DataBlocks(self.root, Path(config.docs_dir), self.reporter)
        self.generated: dict[str, File] = {}
        problems = writers.unmet_needs(list(self.config.formats))
        if problems:
            raise PluginError(f"mkdocs.yml: plugins: mlbook: formats: {'; '.join(problems)}")
        problem = provenance.edition_problem()
        if problem:
            raise PluginError(problem)
        # One edition string and one date for the whole build: every page and every edition print the same.
        self.edition, self.epoch = provenance.edition(self.root), provenance.source_epoch(self.root)
        config.extra["mlbook_edition"] = self.edition
        snippets = config.mdx_configs.setdefault("pymdownx.snippets", {})
        # Resolve included scripts from the repository root whatever the working directory; our own check
        # reports a missing one with its file and line (snippets' own error is a traceback).
        snippets["base_path"] = [str(self.root)]
        snippets["check_paths"] = False
        # MkDocs walks docs_dir right after this event, following every symlink: stop here if that walk would loop.
        docs = Path(config.docs_dir)
        if tree_checks.check_tree(docs, docs.name, self.reporter):
            raise PluginError(f"mlbook: {docs.name}/ cannot be read as a book (see above); nothing was built")
        return config

    def on_files(self, files, config):
        """Serve every file under scripts/ with the site, so chapters can link and readers can download them."""
        for path in scripts.served_files(self.root):
            rel = path.relative_to(self.root).as_posix()
            files.append(File(rel, str(self.root), config.site_dir, config.use_directory_urls))
        self._add_figures(files, config)
        self._add_generated_pages(files, config)
        self.outside = outside_files(files, Path(config.docs_dir))
        for src_uri, real in self.outside.items():
            if src_uri.endswith(".md"):
                self.reporter.report(
                    f"{Path(config.docs_dir).name}/{src_uri}",
                    1,
                    "symlink outside the book",
                    f"it is a link to {real}, outside {Path(config.docs_dir).name}/; copy the chapter into the book",
                )
        return files

    def _add_generated_pages(self, files, config) -> None:
        """The Downloads page and the Scripts appendix, written from the repository, with no file in book/."""
        docs = Path(config.docs_dir)
        pages = {
            self.config.downloads_page: "",  # written in on_nav, once the book's order is known
            self.config.scripts_page: scripts.scripts_index(
                self.root, docs, navigation.titles(config.nav or [], docs), self.config.scripts_page
            ),
        }
        if self.config.changes_page in navigation.paths(config.nav or []):
            pages[self.config.changes_page] = self._changes(config)
        in_nav = set(navigation.paths(config.nav or []))
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
            self.generated[src_uri] = File.generated(config, src_uri, content=content)
            files.append(self.generated[src_uri])

    def _changes(self, config) -> str:
        """The "What changed" page: the entries of book/data/changes.yaml added since the previous tag."""
        docs = Path(config.docs_dir)
        order = navigation.paths(config.nav or [])
        path = docs / "data" / "changes.yaml"
        entries, errors = changes_data.load(path, f"{docs.name}/data/changes.yaml", set(order))
        for error in errors:
            self.reporter.report(error.path, error.line, error.kind, error.detail)
        history = provenance.history(self.root)
        earlier = set()
        if history.previous:
            rel = path.resolve().relative_to(self.root).as_posix()
            earlier = changes_data.keys_of(provenance.file_at(self.root, history.previous, rel))
        return changes.changes_page(
            changes.new_entries(entries, earlier),
            order,
            navigation.titles(config.nav or [], docs),
            history,
            self.edition,
            self.config.changes_per_chapter,
            self.config.changes_page,
        )

    def _add_figures(self, files, config) -> None:
        """Draw (or take from the cache) every figure a chapter uses and serve it at figures/<name>.svg."""
        data_dir = Path(config.docs_dir) / "data"
        texts = [
            Path(page.abs_src_path).read_bytes().decode("utf-8", errors="replace")
            for page in files.documentation_pages()
        ]
        for name in sorted(figure_blocks.wanted(texts)):
            try:
                svg = figures.render(name, data_dir, self.root / ".cache" / "figures")
            except (OSError, ValueError) as exc:
                self.reporter.report(f"{Path(config.docs_dir).name}/data", 1, "figure failed", f"{name}: {exc}")
                continue
            files.append(File.generated(config, f"figures/{name}.svg", abs_src_path=str(svg)))

    def on_nav(self, nav, config, files):
        """Keep the nav (the book model is built from it once pages have titles); check it; place the editions."""
        self.nav = nav
        self._offer_editions(files, config)
        chapters = [f.src_uri for f in files.documentation_pages()] if config.nav else []
        nav_checks.check_nav(
            set(navigation.paths(config.nav or [])),
            lambda path: files.get_file_from_path(path) is not None,
            chapters,
            (Path(config.config_file_path).name, Path(config.config_file_path).read_text(encoding="utf-8")),
            Path(config.docs_dir).name,
            self.reporter,
        )
        return nav

    def _offer_editions(self, files, config) -> None:
        """Put every configured edition's outputs where its registry entry offers them (writers.FORMATS)."""
        draft = from_outline([o for item in self.nav.items if (o := navigation.outline(item, set()))])
        self.page_links: dict[str, list[dict]] = {}
        options = self.options(config)
        config.extra["mlbook_banner"] = [o.link() for _, o in writers.offers(draft, options, BANNER)]
        config.extra["mlbook_root"] = [o.link() for _, o in writers.offers(draft, options, ROOT)]
        for _, output in writers.offers(draft, options, PAGE):
            self.page_links.setdefault(output.page, []).append(output.link())
        if self.config.downloads_page in self.generated:
            offered = writers.offers(draft, options, DOWNLOADS)
            text = downloads.downloads(offered, self.config.downloads_page)
            self.generated[self.config.downloads_page].content_string = text

    def on_page_context(self, context, page, config, nav):
        """Give the theme the editions this page offers (main.html shows them above the content)."""
        context["mlbook_page_links"] = self.page_links.get(page.file.src_uri, [])
        return context

    def on_page_read_source(self, page, config):
        """Read the chapter ourselves so invalid UTF-8 is reported with its line instead of a traceback."""
        if page.file.abs_src_path is None:  # a page the plugin generated
            self.sources[page.file.src_uri] = page.file.content_string
            return None
        source = f"{Path(config.docs_dir).name}/{page.file.src_uri}"
        text = source_checks.read_text(Path(page.file.abs_src_path), source, self.reporter)
        text = "# Unreadable chapter\n" if text is None else text.removeprefix("\ufeff")
        self.sources[page.file.src_uri] = text
        return text

    def on_page_markdown(self, markdown, page, config, files):
        """Check the raw source (line numbers still known); expand figures, data and calculator blocks; link scripts."""
        src_uri = page.file.src_uri
        source = f"{Path(config.docs_dir).name}/{src_uri}"
        text = self.sources.get(src_uri, markdown)
        source_checks.check(text, source, self.root, self.reporter)
        markdown = figure_blocks.expand(markdown, text, src_uri, source, self.reporter)
        markdown = self.datablocks.expand(markdown, src_uri, text)
        calc_dir = self.root / "scripts" / "calc"
        markdown = calcblock.expand(markdown, src_uri, page.url, config.site_url or "", text, self.reporter, calc_dir)
        return add_download_links(markdown, src_uri)

    # Runs last (lowest priority) so the search index and other plugins have finished writing the site.
    @event_priority(-100)
    def on_post_build(self, config) -> None:
        """Check the site; when the build counted no warning, write book.json and the editions."""
        site_only = {self.config.downloads_page}
        book = from_outline([o for item in self.nav.items if (o := navigation.outline(item, site_only))])
        mkdocs_yml = Path(config.config_file_path)
        nav_checks.check_slugs(
            book, (mkdocs_yml.name, mkdocs_yml.read_text(encoding="utf-8")), Path(config.docs_dir).name, self.reporter
        )
        options = self.options(config)
        writers.save_model(book, options, config.site_dir)
        # The editions are written after this check; links to them are valid when they will be written.
        coming = writers.planned_paths(book, options)
        # Under `serve --dirty` only the rebuilt pages went through on_page_markdown: check just those.
        only = set(self.sources) if self.command == "serve" else None
        site_checks.check_site(
            book, Path(config.site_dir), self.sources, self.reporter, coming, only, getattr(self, "outside", {})
        )
        self.datablocks.check_anchors(book, Path(config.site_dir))
        if not self.config.enabled or self.command == "serve" and not self.config.enabled:
            return
        if self.counter.count:
            LOGGER.info("mlbook: %d warning(s) in this build: PDF and EPUB not written", self.counter.count)
            return
        try:
            results = writers.write_all(book, options, Path(config.site_dir))
        except EditionError as exc:  # the writer named what it refused to write: one diagnostic each
            sources = {**self.sources, mkdocs_yml.name: mkdocs_yml.read_text(encoding="utf-8")}
            for diag in exc.diagnostics(sources, Path(config.docs_dir).name):
                self.reporter.report(diag.path, diag.line, diag.kind, diag.detail)
            LOGGER.info("mlbook: the %s was not written; the previous one is kept", exc.edition)
            return
        except Exception as exc:  # a writer failed: strict must fail the build, with the reason
            reason = dependencies.explain(exc)
            if reason or isinstance(exc, WriterError):
                LOGGER.warning("mlbook: could not write the editions: %s", reason or exc)
            else:  # nobody foresaw it: one line, the traceback when asked
                if debug():
                    LOGGER.warning("%s", "".join(traceback.format_exception(exc)).rstrip())
                LOGGER.warning(
                    "internal error: %s: %s while writing the editions (%s)", type(exc).__name__, exc, DEBUG_HINT
                )
            return
        site = Path(config.site_dir)
        downloads.fill_sizes(site, {key: size for r in results.values() for key, size in r["sizes"].items()})
        count = len(scripts.script_files(self.root))
        for line in summary(book, self.sources, results, count, count_images(site), self.counter.count).splitlines():
            LOGGER.info(line)

    def on_page_content(self, html, page, config, files):
        """Draw math and diagrams at build time; give every page a description for search engines and previews."""
        src_uri = page.file.src_uri
        html = drawings.prepare_page(
            html,
            page.url,
            self.sources.get(src_uri, ""),
            f"{Path(config.docs_dir).name}/{src_uri}",
            Path(config.docs_dir),
            self.root / ".cache" / "drawings",
            self.reporter,
        )
        if not page.meta.get("description"):
            description = describe(html)
            if description is not None:
                page.meta["description"] = description
        return html

    def options(self, config) -> Options:
        """Writer options from mkdocs.yml and the plugin's settings."""
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
            edition=self.edition,
            epoch=self.epoch,
            pdf_workers=self.config.pdf_workers,
            pdf_variant=self.config.pdf_variant,
            cache_dir=str(self.root / ".cache" / "pdf-chunks"),
        )
