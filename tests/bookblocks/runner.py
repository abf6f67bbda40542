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
# Hang guards, generous: make test runs three pytest-xdist workers on two cores, so a torchrun block that takes
# 15 s alone can take several times that. A hang still ends in minutes, named with its line.
BASH_TIMEOUT = 120  # seconds per bash block
PYTHON_TIMEOUT = 120  # seconds per Python block
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
INCLUDE = re.compile(r'\s*--8<--\s+"(?P<path>scripts/[^"]+)"')
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
    saved = saved_files(
        [b for b in blocks if b.path == relpath], (root / relpath).read_text(encoding="utf-8").splitlines()
    )
    save_files(saved, workdir)
    # Keyed by block.where ("book/x.md:LINE"): a chapter's blocks may come from a data file too (the runbook).
    by_where: dict[str, Result] = {}
    for block in blocks:
        early = _static(block)
        if early is not None:
            by_where[block.where] = early
    launched = launched_by(blocks, saved)
    python = [b for b in blocks if b.runner == "python" and b.where not in by_where and b.where not in launched]
    if python:
        by_where.update(_run_python(root, relpath, python, workdir))
    for block in blocks:
        if block.where in by_where or block.where in launched:
            continue
        if block.runner == "bash":
            by_where[block.where] = _run_bash(block, workdir, slurm_env)
        elif block.runner in ("yaml", "json", "dockerfile"):
            by_where[block.where] = validate.check(block, root)
    for where, (name, runs) in launched.items():
        block = next(b for b in blocks if b.where == where)
        failed = [r for r in runs if by_where[r.where].status != "passed"]
        if failed:
            detail = f"run as {name} by {failed[0].where}, which failed"
            by_where[where] = fail(block, "python block failed", detail)
        else:
            by_where[where] = Result(block, "passed")
    results = [by_where[b.where] for b in blocks if b.where in by_where]
    results += outputs.compare(blocks, by_where)
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


def launched_by(blocks: list[Block], saved: dict[str, Block]) -> dict[str, tuple[str, list[Block]]]:
    """Unmarked Python blocks saved as a file that later unmarked bash blocks run (``torchrun x.py``).

    Such a block is a program, not a snippet: it runs as the reader runs it, through those bash blocks,
    and passes when they pass.  Maps the block's ``where`` to (file name, the bash blocks that run it).
    """
    found = {}
    for name, block in saved.items():
        if block.runner != "python" or block.reason:
            continue
        word = re.compile(rf"(?<![\w/.-]){re.escape(name)}\b")
        runs = [b for b in blocks if b.runner == "bash" and not b.reason and word.search(b.source)]
        if runs:
            found[block.where] = (name, runs)
    return found


def save_files(saved: dict[str, Block], workdir: Path) -> None:
    """Write each block the prose names a file into ``workdir``, owned by the sandbox's user.

    A block that includes a scripts/ file is saved as that file's text, which is what the reader sees.
    """
    for name, block in saved.items():
        path = workdir / name
        included = INCLUDE.match(block.source) if block.included else None
        text = (workdir / included["path"]).read_text(encoding="utf-8") if included else block.source
        path.write_text(text, encoding="utf-8")
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


def _run_python(root: Path, relpath: str, blocks: list[Block], workdir: Path) -> dict[str, Result]:
    """All Python blocks of the chapter in one sandboxed process (bookblocks.pyrun)."""
    results_file = workdir / ".python-results.json"
    env = sandbox.environment(workdir)
    wheres = "\n".join(b.where for b in blocks)
    argv = [
        sys.executable,
        "-m",
        "bookblocks.pyrun",
        str(root),
        relpath,
        str(PYTHON_TIMEOUT),
        str(results_file),
        wheres,
    ]
    outcome = sandbox.run(argv, workdir, PYTHON_TIMEOUT * len(blocks) + 60, env)
    by_where = {b.where: b for b in blocks}
    if not results_file.exists():
        detail = "timed out" if outcome.timed_out else f"exit code {outcome.returncode}"
        tail = outcome.output.strip().splitlines()[-3:]
        return {b.where: fail(b, "python process died", f"{detail}: {' | '.join(tail)}") for b in blocks}
    found = {}
    for item in json.loads(results_file.read_text()):
        block = by_where[item["where"]]
        found[block.where] = _python_result(block, item)
    for block in blocks:
        if block.where not in found:
            found[block.where] = fail(block, "python block not run", "the chapter's process stopped before it")
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
    script = workdir / f".block-{Path(block.path).stem}-{block.line}.sh"
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
