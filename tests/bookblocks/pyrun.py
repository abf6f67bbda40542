"""Run one chapter's Python blocks in this process, in order, in one namespace; print JSON results.

Usage: ``python -m bookblocks.pyrun ROOT book/x.md TIMEOUT RESULTS.json WHERE...`` (the blocks to run,
``book/x.md:LINE`` each, one per line of the last argument).
Warnings are errors, as in the test suite.
A block marked ``needs-gpu`` or ``needs-multi-gpu`` runs too and must fail with a GPU-related error.
"""

from __future__ import annotations

import contextlib
import io
import json
import linecache
import re
import signal
import sys
import traceback
import types
import warnings
from pathlib import Path

from bookblocks import substitutions
from bookblocks.collect import parse_chapter
from bookblocks.markers import MUST_FAIL_ON_CPU

# An error whose text matches this is what a missing GPU looks like (CUDA, NCCL, NVML, a device count);
# these exception types are bugs in the block itself, whatever it needs, and never count as "needs a GPU".
GPU_ERROR = re.compile(r"cuda|gpu|nccl|nvml|nvidia|device|triton|accelerator", re.IGNORECASE)
BOOK_BUGS = ("NameError", "SyntaxError", "ImportError", "ModuleNotFoundError", "IndentationError", "TypeError")


class BlockTimeout(Exception):
    """Raised inside a block that ran past its time."""


def _alarm(signum, frame):
    raise BlockTimeout


def _error_text(exc: BaseException, wheres: set[str]) -> str:
    """The exception and the book line of its last traceback frame in the chapter's blocks."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in wheres]
    where = f" (line {frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}".strip()


def run(root: Path, relpath: str, timeout: int, out: Path, wheres: set[str]) -> list[dict]:
    """Evaluate the Python blocks of ``root/relpath``; write (after each block) and return one result each.

    Writing after each block keeps the results of the blocks before one that kills the interpreter.
    """
    document = parse_chapter(root / relpath, root)
    # The blocks run as the reader's script would: in a module called __main__ (so classes pickle and
    # `if __name__ == "__main__":` holds), with no command-line arguments.
    main = types.ModuleType("__main__")
    main.__dict__.update(document.namespace)
    sys.modules["__main__"] = main
    document.namespace = main.__dict__
    sys.argv = [relpath]
    results = []
    signal.signal(signal.SIGALRM, _alarm)
    for example in document.examples():
        block = example.parsed
        if block.runner != "python" or block.where not in wheres:
            continue
        reason = block.reason
        result = {"where": block.where, "reason": reason}
        if reason and reason not in MUST_FAIL_ON_CPU:
            results.append({**result, "status": "skipped"})
            out.write_text(json.dumps(results))
            continue
        source, log = substitutions.apply(block.source)
        result["substitutions"] = log
        # One file name per block ("book/x.md:LINE"), its padded source in linecache: tracebacks and
        # inspect.getsource (torch.compile reads it) see the block's lines at the chapter's line numbers.
        filename = block.where
        padded = "\n" * block.line + source
        linecache.cache[filename] = (len(padded), None, padded.splitlines(keepends=True), filename)
        code = compile(padded, filename, "exec", dont_inherit=True)
        error = None
        captured = io.StringIO()
        signal.alarm(timeout)
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(captured):
                warnings.simplefilter("error")
                for message, _why in substitutions.ALLOWED_WARNINGS:
                    warnings.filterwarnings("default", message=".*" + re.escape(message))
                exec(code, document.namespace)
        except BlockTimeout:
            error = f"code block timed out after {timeout} s"
        except BaseException as exc:  # noqa: BLE001 - the block's own failure is the result
            error = _error_text(exc, wheres)
        finally:
            signal.alarm(0)
        sys.stdout.write(captured.getvalue())
        results.append({**result, "status": _status(reason, error), "error": error, "output": captured.getvalue()})
        out.write_text(json.dumps(results))
    return results


def _status(reason: str | None, error: str | None) -> str:
    if reason is None:
        return "failed" if error else "passed"
    if error is None:
        return "stale-marker"
    if error.split(":", 1)[0] in BOOK_BUGS and not GPU_ERROR.search(error):
        return "wrong-failure"
    return "xfailed"


def main() -> int:
    """Command-line entry: print the results as one JSON list."""
    root, relpath, timeout, out = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    run(root, relpath, timeout, out, set(sys.argv[5].splitlines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
