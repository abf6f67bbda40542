"""One MkDocs build in this process with every failure said as a diagnostic: `python -m mlbook.runner CONFIG SITE`.

stage.build runs this in a child process. MkDocs' own failures become `mkdocs.yml:<line>: <kind>: <detail>`
(configuration) or `book/<path>:<line>: ...` (a page that could not be rendered) lines; an exception nobody foresaw
becomes one `internal error:` line. MLBOOK_DEBUG=1 shows the traceback too.
"""

from __future__ import annotations

import argparse
import faulthandler
import logging
import re
import sys
import traceback
from pathlib import Path

import yaml
from mkdocs import config as mkdocs_config
from mkdocs import exceptions
from mkdocs.commands import build as mkdocs_build

from . import dependencies
from .diagnostics import DEBUG_HINT, Diagnostic, debug

CONFIG_VALUE = re.compile(r"Config value '(?P<key>[^']+)': (?P<detail>.*)", re.S)
PAGE_ERROR = re.compile(r"Error (?:reading|building) page '(?P<page>[^']+)':")
QUOTED = re.compile(r"['\"]([^'\"]{2,})['\"]")


def config_line(text: str, key: str, detail: str = "") -> int:
    """The line of mkdocs.yml an error is about: a name quoted in detail within the key's block, else the key's."""
    match = re.search(rf"^{re.escape(key)}\s*:", text, re.M)
    if not match:
        return 1
    end = re.search(r"^\S", text[match.end() :], re.M)
    block = text[match.start() : match.end() + end.start()] if end else text[match.start() :]
    tail = detail.rsplit(": ", 1)[-1].strip() if ": " in detail else ""
    for name in [tail, *QUOTED.findall(detail)]:
        found = re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", block) if 0 < len(name) < 80 else None
        if found:
            return text.count("\n", 0, match.start() + found.start()) + 1
    return text.count("\n", 0, match.start()) + 1


class Translator(logging.Filter):
    """Rewrites MkDocs' own records into diagnostics, and remembers the page an error was about."""

    def __init__(self, config_name: str, config_text: str, docs: str) -> None:
        super().__init__()
        self.config_name, self.config_text, self.docs = config_name, config_text, docs
        self.page: str | None = None
        self.errors = 0

    def filter(self, record: logging.LogRecord) -> bool:
        """Translate one record in place; drop MkDocs' bare "Error reading page" lines (the crash says more)."""
        message = record.getMessage()
        if record.levelno >= logging.ERROR:
            self.errors += 1
        match = PAGE_ERROR.match(message)
        if match:
            self.page = match["page"]
            return False
        match = CONFIG_VALUE.match(message)
        if match:
            line = config_line(self.config_text, match["key"], match["detail"])
            detail = " ".join(match["detail"].split())
            record.msg, record.args = str(Diagnostic(self.config_name, line, "invalid configuration", detail)), ()
        return True


class Format(logging.Formatter):
    """MkDocs' console format without colours: ``WARNING -  message``."""

    def format(self, record: logging.LogRecord) -> str:
        """One record as printed."""
        return f"{record.levelname:<8}-  {record.getMessage()}"


def yaml_problem(exc: BaseException, name: str) -> str | None:
    """The diagnostic for a YAML syntax error behind a ConfigurationError, or None.

    The line is where the construct that failed began (a bracket never closed), else where PyYAML stopped.
    """
    cause = exc.__context__ or exc.__cause__
    if not isinstance(cause, yaml.MarkedYAMLError):
        return None
    mark = cause.context_mark or cause.problem_mark
    problem = cause.problem or "not valid YAML"
    if cause.context and cause.problem_mark and cause.context_mark:
        problem = f"{cause.context}, {problem} on line {cause.problem_mark.line + 1}"
    return str(Diagnostic(name, mark.line + 1 if mark else 1, "invalid configuration", f"YAML error: {problem}"))


def crash(exc: BaseException, page: str | None, docs: str) -> str:
    """The one line an unforeseen exception becomes."""
    missing = dependencies.explain(exc)
    if missing:
        return f"error: {missing}"
    what = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
    if isinstance(exc, RecursionError | MemoryError) and page:
        return str(Diagnostic(f"{docs}/{page}", 1, "could not render", f"{what}; the page nests too deeply"))
    if isinstance(exc, OSError) and exc.filename and not page:
        return f"error: {exc.strerror or what}: {exc.filename}"
    where = f" while rendering {docs}/{page}" if page else ""
    return f"internal error: {what}{where} ({DEBUG_HINT})"


def run(config_file: Path, site_dir: Path, strict: bool) -> int:
    """Build once; return 0 on success, 1 on any failure (each said on stderr)."""
    name = config_file.name
    if not config_file.is_file():
        print(f"{name}:1: missing configuration: {config_file} does not exist", file=sys.stderr)
        return 1
    text = config_file.read_text(encoding="utf-8", errors="replace")
    docs = "book"
    docs_match = re.search(r"^docs_dir:\s*['\"]?([^'\"\n#]+)", text, re.M)
    if docs_match:
        docs = Path(docs_match.group(1).strip()).name
    logger = logging.getLogger("mkdocs")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(Format())
    translator = Translator(name, text, docs)
    handler.addFilter(translator)
    logger.addHandler(handler)
    try:
        cfg = mkdocs_config.load_config(config_file=str(config_file), site_dir=str(site_dir), strict=strict)
    except exceptions.ConfigurationError as exc:
        print(yaml_problem(exc, name) or str(Diagnostic(name, 1, "invalid configuration", str(exc))), file=sys.stderr)
        return 1
    except exceptions.Abort as exc:
        print(f"mlbook: {exc.message}", file=sys.stderr)
        return 1
    cfg.plugins.on_startup(command="build", dirty=False)
    try:
        mkdocs_build.build(cfg)
    except exceptions.Abort as exc:
        print(f"mlbook: {exc.message}", file=sys.stderr)
        return 1
    except Exception as exc:  # the promise of this module: no traceback reaches the user unasked
        if debug():
            traceback.print_exc()
        print(crash(exc, translator.page, docs), file=sys.stderr)
        return 1
    finally:
        cfg.plugins.on_shutdown()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command line of the child process."""
    parser = argparse.ArgumentParser(prog="python -m mlbook.runner", description=__doc__)
    parser.add_argument("config_file", type=Path)
    parser.add_argument("site_dir", type=Path)
    parser.add_argument("--no-strict", dest="strict", action="store_false")
    args = parser.parse_args(argv)
    if debug():
        faulthandler.enable()
    try:
        return run(args.config_file, args.site_dir, args.strict)
    except KeyboardInterrupt:
        print("mlbook: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # anything outside the build itself (loading the configuration's plugins...)
        if debug():
            traceback.print_exc()
        print(crash(exc, None, "book"), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
