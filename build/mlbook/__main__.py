"""Command line: `python -m mlbook build` (staged site + editions), or one edition over an already built site."""

from __future__ import annotations

import argparse
import logging
import sys
import traceback
from pathlib import Path

from . import dependencies, release, stage, writers
from .book import Book, BookFormatError
from .diagnostics import DEBUG_HINT, EditionError, debug


def parser() -> argparse.ArgumentParser:
    """The command line: `build`, and one command per edition of writers.FORMATS with that edition's options."""
    parser = argparse.ArgumentParser(prog="python -m mlbook", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build the site (and the editions) into a staging folder, then swap it in")
    b.add_argument("--site", default="site", help="output folder (default: site)")
    b.add_argument("--root", default=".", help="repository root holding mkdocs.yml (default: .)")
    d = sub.add_parser("dist", help="write the release set (editions, site tarball, SHA256SUMS) from a built site")
    d.add_argument("site", nargs="?", default="site", help="built site folder holding book.json (default: site)")
    d.add_argument("--out", default="dist", help="release folder, replaced whole (default: dist)")
    for name, fmt in writers.FORMATS.items():
        w = sub.add_parser(name, help=f"write the {fmt.title} ({fmt.use}) from an already built site")
        w.add_argument("site", nargs="?", default="site", help="built site folder holding book.json")
        w.add_argument("--out", help="folder that stands for the site root in the output paths (default: the site)")
        for arg in fmt.arguments:
            w.add_argument(arg.flag, dest=arg.option, choices=arg.choices or None, help=arg.help)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run; returns the process exit code (0 ok, 1 failed, 2 usage)."""
    args = parser().parse_args(argv)
    if args.command == "build":
        return stage.build(Path(args.root), Path(args.site))
    if args.command == "dist":
        return dist(Path(args.site), Path(args.out))
    fmt = writers.FORMATS[args.command]
    settings = {a.option: getattr(args, a.option) for a in fmt.arguments if getattr(args, a.option) is not None}
    return write_one(args.command, Path(args.site), args.out, settings)


def dist(site: Path, out: Path) -> int:
    """Write the release set of a built site into out; print what it holds, or one error line."""
    try:
        names = release.make(site, out)
    except (release.ReleaseError, ValueError) as exc:
        print(exc, file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"{exc.filename or out}:1: cannot write the release: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"wrote {out}/: {', '.join(names)}")
    return 0


def write_one(name: str, site: Path, out: str | None, settings: dict | None = None) -> int:
    """Rerun one edition's writer over a built site; settings override the saved options."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    if not (site / "book.json").is_file():
        print(f"error: {site}/book.json not found; build the site first (make html)", file=sys.stderr)
        return 1
    try:
        book, options = Book.load(site), writers.load_options(site)
    except BookFormatError as exc:
        print(f"error: {site}/{exc}", file=sys.stderr)
        return 1
    options.formats = [name]
    for option, value in (settings or {}).items():
        setattr(options, option, value)
    options.cache_dir = str(site.resolve().parent / ".cache" / "pdf-chunks")
    try:
        result = writers.write_one(writers.FORMATS[name], book, options, site, Path(out) if out else site)
    except EditionError as exc:
        for diag in exc.diagnostics({}):
            print(diag, file=sys.stderr)
        print(f"error: the {exc.edition} was not written; the previous file is unchanged", file=sys.stderr)
        return 1
    except Exception as exc:
        print(f"error: {name}: {dependencies.explain(exc) or exc}", file=sys.stderr)
        return 1
    if result["skipped"]:
        print(f"{result['title']} not written: {result['skipped']}")
        return 0
    paths = result["paths"]
    where = paths[0] if len(paths) == 1 else f"{len(paths)} files under {Path(paths[0]).parent}"
    print(f"wrote {where} ({result['count']} {result['unit']})")
    return 0


def run(argv: list[str] | None = None) -> int:
    """main, with anything unforeseen said in one line (MLBOOK_DEBUG=1 adds the traceback)."""
    try:
        return main(argv)
    except KeyboardInterrupt:
        print("mlbook: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # no traceback reaches the user unasked
        if debug():
            traceback.print_exc()
        print(f"internal error: {type(exc).__name__}: {exc} ({DEBUG_HINT})", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(run())
