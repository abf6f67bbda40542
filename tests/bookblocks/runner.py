"""Run every block of one chapter: Python in one sandboxed process, bash block by block, YAML/JSON parsed.

Each block ends as one :class:`Result`; a failing one carries a message ``book/x.md:LINE: kind: detail``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from bookblocks import outputs, sandbox, substitutions, validate
from bookblocks.collect import chapter_blocks
from bookblocks.markers import Block

TESTS = Path(__file__).resolve().parents[1]
BASH_TIMEOUT = 60  # seconds per bash block
PYTHON_TIMEOUT = 60  # seconds per Python block
# The prose tells the reader to save a block as a file; the runner does the same, writing the block into
# the chapter's folder before any block runs.  In the paragraph just before a block, "save it as `x.py`",
# "In `x.py`, ..." or "The following `x.py`" name the block below; "Saved as `x.py` and run ..." or
# "the sampler above saved as `x.py`" name the block above.
_NAME = r"`(?P<name>[\w.-]+\.(?:py|sh|slurm|yaml|json|txt))`"
SAVE_NEXT = re.compile(
    r"(?:\b[Ss]ave (?:it|this|them|the [\w -]{1,30}?) (?:as|to)|(?:^|\. )In|\b[Tt]he following|"
    r"\b[Tt]he file below, saved as|, as) " + _NAME
)
# A block whose first line is a comment naming a file ("# fsdp2_toy.py: shard ...") is that file.
FIRST_LINE = re.compile(r"#\s*(?P<name>[\w.-]+\.(?:py|sh|slurm))\b")
SAVE_PREV = re.compile(r"(?:(?:^|\. )Saved as|\babove saved as) " + _NAME)
SLURM_CLIENT = re.compile(r"(?<![\w./-])(sbatch|srun|salloc|squeue|sinfo|scontrol|scancel|sacct|sstat|sprio)\b")


@dataclass
class Result:
    """The outcome of one block: ``passed``, ``xfailed`` (a needs-gpu block failed on CPU), ``skipped``,
    ``included`` (a scripts/ file, run by its own tests) or ``failed`` (with ``message``)."""

    block: Block
    status: str
    message: str = ""
    substitutions: list[str] = field(default_factory=list)
    output: str = ""


@dataclass
class ChapterRun:
    """Everything the runner learnt about one chapter."""

    relpath: str
    blocks: list[Block]
    results: list[Result]

    @property
    def failures(self) -> list[str]:
        """One line per failed block."""
        return [r.message for r in self.results if r.status == "failed"]


def fail(block: Block, kind: str, detail: str) -> Result:
    """A failed result with the house message shape."""
    detail = detail.strip().replace("\n", " | ")
    return Result(block, "failed", f"{block.where}: {kind}: {detail[:600]}")


def run_chapter(root: Path, relpath: str, workdir: Path, slurm_env: dict[str, str] | None = None) -> ChapterRun:
    """Run the blocks of ``root/relpath`` with ``workdir`` as the sandbox's folder (created here)."""
    blocks = chapter_blocks(root / relpath, root)
    sandbox.make_workdir(workdir)
    saved = saved_files(blocks, (root / relpath).read_text(encoding="utf-8").splitlines())
    save_files(saved, workdir)
    by_line: dict[int, Result] = {}
    for block in blocks:
        early = _static(block)
        if early is not None:
            by_line[block.line] = early
    launched = launched_by(blocks, saved)
    python = [b for b in blocks if b.runner == "python" and b.line not in by_line and b.line not in launched]
    if python:
        by_line.update(_run_python(root, relpath, python, workdir))
    for block in blocks:
        if block.line in by_line or block.line in launched:
            continue
        if block.runner == "bash":
            by_line[block.line] = _run_bash(block, workdir, slurm_env)
        elif block.runner in ("yaml", "json", "dockerfile"):
            by_line[block.line] = validate.check(block, root)
    for line, (name, runs) in launched.items():
        block = next(b for b in blocks if b.line == line)
        failed = [r for r in runs if by_line[r.line].status != "passed"]
        if failed:
            by_line[line] = fail(block, "python block failed", f"run as {name} by line {failed[0].line}, which failed")
        else:
            by_line[line] = Result(block, "passed")
    results = [by_line[b.line] for b in blocks if b.line in by_line]
    results += outputs.compare(blocks, by_line)
    return ChapterRun(relpath, blocks, results)


def saved_files(blocks: list[Block], lines: list[str]) -> dict[str, Block]:
    """File name -> block, for each block the paragraph before it (or after it) tells the reader to save."""
    found: dict[str, Block] = {}
    for index, block in enumerate(blocks):
        paragraph: list[str] = []
        for line in reversed(lines[: block.line - 1]):
            if not line.strip() and paragraph:
                break
            if line.strip():
                paragraph.insert(0, line.strip())
        prose = " ".join(paragraph)
        for match in SAVE_NEXT.finditer(prose):
            found[match.group("name")] = block
        earlier = [b for b in blocks[:index] if b.runner]
        for match in SAVE_PREV.finditer(prose):
            if earlier:
                found[match.group("name")] = earlier[-1]
        first = FIRST_LINE.match(block.source)
        if first:
            found.setdefault(first.group("name"), block)
    return {name: block for name, block in found.items() if block.runner}


def launched_by(blocks: list[Block], saved: dict[str, Block]) -> dict[int, tuple[str, list[Block]]]:
    """Unmarked Python blocks saved as a file that later unmarked bash blocks run (``torchrun x.py``).

    Such a block is a program, not a snippet: it runs as the reader runs it, through those bash blocks,
    and passes when they pass.  Maps the block's line to (file name, the bash blocks that run it).
    """
    found = {}
    for name, block in saved.items():
        if block.runner != "python" or block.reason:
            continue
        word = re.compile(rf"(?<![\w/.-]){re.escape(name)}\b")
        runs = [b for b in blocks if b.runner == "bash" and not b.reason and word.search(b.source)]
        if runs:
            found[block.line] = (name, runs)
    return found


def save_files(saved: dict[str, Block], workdir: Path) -> None:
    """Write each block the prose names a file into ``workdir``, owned by the sandbox's user."""
    for name, block in saved.items():
        path = workdir / name
        path.write_text(block.source, encoding="utf-8")
        shutil.chown(path, sandbox.USER)


def _static(block: Block) -> Result | None:
    """The result of a block that is not executed: malformed, text, included or marked."""
    if block.problems:
        return fail(block, "bad code-block marker", block.problems[0])
    if block.runner is None:
        return None  # text and other non-code languages: nothing to run
    if block.included:
        return Result(block, "included")
    if block.reason and not (block.runner == "python" and block.reason in ("needs-gpu", "needs-multi-gpu")):
        return Result(block, "skipped")
    return None


def _run_python(root: Path, relpath: str, blocks: list[Block], workdir: Path) -> dict[int, Result]:
    """All Python blocks of the chapter in one sandboxed process (bookblocks.pyrun)."""
    results_file = workdir / ".python-results.json"
    env = sandbox.environment(workdir)
    lines = ",".join(str(b.line) for b in blocks)
    argv = [sys.executable, "-m", "bookblocks.pyrun", str(root), relpath, str(PYTHON_TIMEOUT), str(results_file), lines]
    outcome = sandbox.run(argv, workdir, PYTHON_TIMEOUT * len(blocks) + 60, env)
    by_line = {b.line: b for b in blocks}
    if not results_file.exists():
        detail = "timed out" if outcome.timed_out else f"exit code {outcome.returncode}"
        tail = outcome.output.strip().splitlines()[-3:]
        return {b.line: fail(b, "python process died", f"{detail}: {' | '.join(tail)}") for b in blocks}
    found = {}
    for item in json.loads(results_file.read_text()):
        block = by_line[item["line"]]
        found[block.line] = _python_result(block, item)
    for block in blocks:
        if block.line not in found:
            found[block.line] = fail(block, "python block not run", "the chapter's process stopped before it")
    return found


def _python_result(block: Block, item: dict) -> Result:
    status, error = item["status"], item.get("error") or ""
    subs = item.get("substitutions", [])
    if status == "passed":
        return Result(block, "passed", substitutions=subs, output=item.get("output", ""))
    if status == "skipped":
        return Result(block, "skipped")
    if status == "xfailed":
        return Result(block, "xfailed", substitutions=subs)
    if status == "stale-marker":
        return fail(block, "stale marker", f".{block.reason} but the block ran on CPU without error: drop the marker")
    if status == "wrong-failure":
        return fail(block, f".{block.reason} block failed for a reason other than a missing GPU", error)
    if "timed out" in error:
        return fail(block, "timeout", error)
    return fail(block, "python block failed", error)


def _run_bash(block: Block, workdir: Path, slurm_env: dict[str, str] | None) -> Result:
    """One bash block in the sandbox (host network only for SLURM client commands)."""
    source, subs = substitutions.apply(block.source)
    uses_slurm = bool(SLURM_CLIENT.search(source))
    if uses_slurm and slurm_env is None:
        return Result(block, "skipped", "SLURM test cluster not available")
    script = workdir / f".block-{block.line}.sh"
    script.write_text(source + "\n")
    shutil.chown(script, sandbox.USER)
    env = sandbox.environment(workdir, slurm_env if uses_slurm else None)
    argv = ["bash", "--noprofile", "--norc", "-e", str(script)]
    outcome = sandbox.run(argv, workdir, BASH_TIMEOUT, env, network=uses_slurm)
    if outcome.timed_out:
        return Result(block, "failed", f"{block.where}: code block timed out after {BASH_TIMEOUT} s", subs)
    if outcome.returncode != 0:
        tail = " | ".join(outcome.output.strip().splitlines()[-4:])
        return fail(block, "bash block failed", f"exit code {outcome.returncode}: {tail}")
    return Result(block, "passed", substitutions=subs, output=outcome.output)


def slurm_environment(env: dict[str, str]) -> dict[str, str]:
    """The variables a sandboxed SLURM client needs from the test cluster's environment."""
    return {key: value for key, value in env.items() if key == "SLURM_CONF"} | {
        key: value for key, value in os.environ.items() if key == "MUNGE_SOCKET"
    }
