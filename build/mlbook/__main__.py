"""Command line: `python -m mlbook build` (staged site + editions), or `pdf`/`epub` over an already built site."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from . import dependencies, stage, writers
from .book import Book


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run; returns the process exit code (0 ok, 1 failed, 2 usage)."""
    parser = argparse.ArgumentParser(prog="python -m mlbook", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build the site (and PDF/EPUB) into a staging folder, then swap it into place")
    b.add_argument("--site", default="site", help="output folder (default: site)")
    b.add_argument("--root", default=".", help="repository root holding mkdocs.yml (default: .)")
    for fmt in writers.WRITERS:
        w = sub.add_parser(fmt, help=f"write the {fmt.upper()} from an already built site")
        w.add_argument("site", nargs="?", default="site", help="built site folder holding book.json")
        w.add_argument("--out", help="output file (default: <site>/downloads/<name>.<fmt>)")
        if fmt == "pdf":
            w.add_argument("--variant", choices=["pdf/ua-1"], help="write a tagged, accessible PDF (single document)")
    args = parser.parse_args(argv)
    if args.command == "build":
        return stage.build(Path(args.root), Path(args.site))
    return write_one(args.command, Path(args.site), args.out, getattr(args, "variant", None))


def write_one(fmt: str, site: Path, out: str | None, variant: str | None = None) -> int:
    """Rerun one writer over a built site."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    if not (site / "book.json").is_file():
        print(f"error: {site}/book.json not found; build the site first (make html)", file=sys.stderr)
        return 1
    book, options = Book.load(site), writers.load_options(site)
    options.formats = [fmt]
    options.pdf_variant = variant or options.pdf_variant
    options.cache_dir = str(site.resolve().parent / ".cache" / "pdf-chunks")
    target = Path(out) if out else writers.output_path(site, options, fmt)
    try:
        module = __import__(writers.WRITERS[fmt][0], fromlist=["write"])
        count = module.write(book, options, site, target)
    except Exception as exc:
        print(f"error: {fmt}: {dependencies.explain(exc) or exc}", file=sys.stderr)
        return 1
    print(f"wrote {target} ({count} {'pages' if fmt == 'pdf' else 'chapters'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
