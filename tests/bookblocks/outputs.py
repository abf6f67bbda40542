"""Check ``{.text .output}`` blocks against the fresh run of the code block right before them.

A line ``...`` in the expected output stands for any number of lines, and ``...`` inside a line for
any text, so a block may trim a long or variable output.  ``{.text .output-sample}`` is not compared:
it shows a run that CI cannot reproduce (a GPU's numbers), and the line before it says what produced it.
"""

from __future__ import annotations

import re

from bookblocks.markers import Block


def pattern(expected: str) -> re.Pattern[str]:
    """A regular expression for ``expected`` with its ellipses (``...``) as wildcards."""
    parts = []
    for line in expected.strip("\n").splitlines():
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
            continue
        text = r"\s*".join(re.escape(word) for word in line.split()) if line.strip() else ""
        parts.append(r"[ \t]*" + text.replace(re.escape("..."), r"[^\n]*") + r"[ \t]*\n")
    return re.compile("".join(parts), re.DOTALL)


def matches(expected: str, actual: str) -> bool:
    """True when ``actual`` contains the lines of ``expected`` in order (ellipses as wildcards)."""
    actual = "\n".join(line.rstrip() for line in actual.splitlines()) + "\n"
    return pattern(expected).search(actual) is not None


def compare(blocks: list[Block], results: dict) -> list:
    """One failed Result per ``.output`` block that does not match its code block's run."""
    from bookblocks.runner import Result, fail

    found = []
    for previous, block in zip(blocks, blocks[1:], strict=False):
        if block.output is None:
            continue
        if previous.runner is None or previous.output is not None:
            found.append(fail(block, "output without code", "an .output block follows the code block it shows"))
            continue
        if block.output != "output":
            found.append(Result(block, "sample"))
            continue
        ran = results.get(previous.where)
        if ran is None or ran.status != "passed":
            found.append(fail(block, "output not checked", f"its code block at {previous.where} did not run"))
        elif not matches(block.source, ran.output):
            got = " | ".join(ran.output.strip().splitlines()[:6])
            found.append(fail(block, "output differs", f"a fresh run of {previous.where} printed: {got}"))
        else:
            found.append(Result(block, "passed"))
    return found
