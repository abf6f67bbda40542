"""Every code block in book/ runs here or carries a marker saying why it cannot (issue 21).

Static checks (fast): markers are well formed, the run shares meet their floors, no program is pasted.
Runs (slow): each chapter's blocks in the sandbox (bookblocks.runner), SLURM commands against the
two-node test cluster.  With the real book built, the three per-chapter counts must agree: fences in
the source, ``<pre>`` blocks in the built page, blocks Sybil collected.
``make test-blocks CHAPTER=book/x.md`` runs one chapter.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bookblocks import cache, collect, programs, runner, sandbox, stats
from bookblocks.markers import REASONS
from conftest import ROOT, require

CHAPTERS = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "book").rglob("*.md"))
SELECTED = [os.environ["CHAPTER"]] if os.environ.get("CHAPTER") else CHAPTERS


@functools.cache
def blocks_of(relpath: str) -> tuple:
    return tuple(collect.chapter_blocks(ROOT / relpath, ROOT))


def test_every_fence_is_well_formed():
    """A language first, then at most one reason from the fixed list (or an output class), brace form only."""
    problems = []
    for relpath in CHAPTERS:
        for block in blocks_of(relpath):
            problems += [f"{block.where}: bad code-block marker: {p}" for p in block.problems]
            if not block.lang:
                problems.append(f"{block.where}: code block without language: add one (```bash, ```text, ...)")
            if block.reason and block.runner is None:
                problems.append(f"{block.where}: marker on a {block.lang} block: only code blocks take a reason")
    assert not problems, "\n".join(problems)


def _run_shares() -> dict[str, tuple[int, int]]:
    rows = []
    for relpath in CHAPTERS:
        for block in blocks_of(relpath):
            if block.runner:
                status = "included" if block.included else "skipped" if block.reason else "passed"
                rows.append((block.runner, status, block.reason))
    return stats.shares(rows)


@pytest.mark.parametrize("lang", sorted(stats.FLOORS))
def test_run_shares_meet_floors(lang):
    """At least 70% of Python and 40% of bash blocks are unmarked (so they run) or include a tested file."""
    run, total = _run_shares()[lang]
    assert run >= stats.FLOORS[lang] * total, f"{lang}: {run}/{total} blocks run, floor {stats.FLOORS[lang]:.0%}"


def test_no_program_is_pasted():
    """Programs a reader copies (15+ lines with a shebang, __main__, argparse or #SBATCH) are scripts/ files."""
    problems = [msg for relpath in CHAPTERS for block in blocks_of(relpath) if (msg := programs.pasted(block))]
    assert not problems, "\n".join(problems)


_FILLER = "".join(f"x{i} = {i}\n" for i in range(14))


@pytest.mark.parametrize(
    ("body", "sign"),
    [
        ("#!/usr/bin/env python3\n" + _FILLER, "a shebang"),
        (_FILLER + 'if __name__ == "__main__":\n', 'if __name__ == "__main__":'),
        ("import argparse\n" + _FILLER, "argparse"),
    ],
)
def test_a_planted_pasted_program_is_reported_at_its_line(tmp_path: Path, body: str, sign: str):
    """Planted: a 15-line program is reported with its line and sign; an inclusion or a 14-line block is not."""
    book = tmp_path / "book"
    book.mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "x.py").write_text("#!/usr/bin/env python3\n" + _FILLER * 3)
    short = "#!/bin/bash\n" + "".join(f"#SBATCH --comment={i}\n" for i in range(13))
    text = f'# T\n\nIntro.\n\n```python\n{body}```\n\n```bash\n{short}```\n\n```python\n--8<-- "scripts/x.py"\n```\n'
    (book / "t.md").write_text(text)
    found = [m for b in collect.chapter_blocks(book / "t.md", tmp_path) if (m := programs.pasted(b))]
    assert len(found) == 1, found
    assert found[0].startswith("book/t.md:5: pasted program: 15 lines with " + sign), found


def test_a_planted_batch_script_is_reported():
    """#SBATCH lines alone make a 15-line bash block a program (the batch scripts' sign)."""
    block = next(b for b in blocks_of("book/orchestration/slurm-users.md") if b.runner == "bash")
    planted = dataclasses.replace(block, source="".join(f"#SBATCH --comment={i}\n" for i in range(15)))
    message = programs.pasted(planted)
    assert message and "15 lines with #SBATCH lines" in message, message


@pytest.fixture(scope="module")
def workroot() -> Iterator[Path]:
    """A folder every user can enter (pytest's own temporary folders are private to root)."""
    require(sandbox.available() is None, sandbox.available() or "")
    path = Path(tempfile.mkdtemp(prefix="book-blocks-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def needs_slurm(relpath: str) -> bool:
    """True when an unmarked bash block of the chapter runs a SLURM client command (conftest groups them)."""
    return any(b.runner == "bash" and not b.reason and runner.SLURM_CLIENT.search(b.source) for b in blocks_of(relpath))


def slurm_env(request, workroot: Path, relpath: str) -> dict[str, str] | None:
    """SLURM_CONF of the test cluster (a copy nobody can read), when the chapter runs SLURM commands."""
    if not needs_slurm(relpath):
        return None
    cluster = request.getfixturevalue("slurm")
    conf = workroot / "slurm.conf"
    if not conf.exists():
        shutil.copy(cluster.conf, conf)
        conf.chmod(0o644)
    return {"SLURM_CONF": str(conf)}


@pytest.mark.slow
@pytest.mark.parametrize("relpath", SELECTED)
def test_chapter_blocks_run(relpath: str, workroot: Path, request):
    """Each block passes, fails on CPU as its needs-gpu marker says, or is skipped by its marker."""
    chapter_key = cache.key(ROOT, relpath)  # before the run: the inputs it reads
    rows = cache.load(chapter_key)
    if rows is not None:  # identical inputs passed before: counted as such in the summary line
        stats.record(request.node, relpath, rows, cached=True)
        return
    started = time.monotonic()
    env = slurm_env(request, workroot, relpath)
    try:
        run = runner.run_chapter(ROOT, relpath, workroot / relpath.replace("/", "_"), env)
    finally:
        if env:  # the next chapter starts on an idle cluster, whatever this one submitted or drained
            request.getfixturevalue("slurm").settle()
    seconds = time.monotonic() - started
    rows = [(r.block.runner or r.block.lang, r.status, r.block.reason) for r in run.results]
    stats.record(request.node, relpath, rows, cached=False)
    for result in run.results:
        for entry in result.substitutions:
            print(f"{result.block.where}: substituted {entry}")
    if os.environ.get("BOOKBLOCKS_LOG"):  # a running record while the slow suite goes on
        with open(os.environ["BOOKBLOCKS_LOG"], "a", encoding="utf-8") as log:
            log.write("".join(f"{message}\n" for message in run.failures) or f"{relpath}: ok ({seconds:.0f} s)\n")
    code = [b for b in run.blocks if b.runner]
    assert len([r for r in run.results if r.block.runner]) == len(code), "a code block got no result"
    assert not run.failures, "\n".join(run.failures)
    cache.store(chapter_key, relpath, rows)


@pytest.mark.slow
def test_block_counts_agree(real_site: Path):
    """Per chapter: fences in the source == code blocks in the built HTML == blocks Sybil collected."""
    problems = []
    for relpath in CHAPTERS:
        text = (ROOT / relpath).read_text(encoding="utf-8")
        page = _built_page(real_site, relpath)
        html = collect.count_html_blocks(page.read_text(encoding="utf-8"))
        source, collected = collect.count_source_fences(text, ROOT), len(blocks_of(relpath))
        if not source == html == collected:
            problems.append(f"{relpath}:1: block counts differ: {source} fences, {html} in HTML, {collected} collected")
    assert not problems, "\n".join(problems)


def _built_page(site: Path, relpath: str) -> Path:
    rel = Path(relpath).relative_to("book")
    if rel.name == "index.md":
        return site / rel.parent / "index.html"
    return site / rel.with_suffix("") / "index.html"


def test_reason_labels_are_on_the_site():
    """The website labels every reason class (book/assets/site.css); the PDF and EPUB styles do not."""
    css = (ROOT / "book" / "assets" / "site.css").read_text(encoding="utf-8")
    missing = [reason for reason, label in REASONS.items() if f".{reason}" not in css or f'"{label}"' not in css]
    assert not missing, f"book/assets/site.css has no label for: {', '.join(missing)}"


def _with_includes(text: str) -> str:
    """A chapter's text with each ``--8<-- "path"`` line replaced by that file, as the build shows it."""
    return re.sub(
        r'^--8<-- "([^"]+)"$', lambda m: (ROOT / m.group(1)).read_text(encoding="utf-8"), text, flags=re.MULTILINE
    )


@pytest.mark.slow
def test_pdf_and_epub_show_no_labels(real_site: Path):
    """The labels come from the site CSS only: the PDF text and the EPUB styles have none of them."""
    from inspect_outputs import epub_files, pdf_text

    labels = [label for reason, label in REASONS.items() if reason.startswith("needs-")]
    downloads = real_site / "downloads"
    epub = epub_files(downloads / "ml-engineering-book.epub")
    for name, data in epub.items():
        if name.endswith(".css"):
            text = data.decode("utf-8", errors="replace")
            assert not [label for label in labels if label in text], f"{name} labels code blocks"
    squeeze = "".join(pdf_text(downloads / "ml-engineering-book.pdf").split())
    prose = "".join(" ".join(_with_includes((ROOT / p).read_text(encoding="utf-8")) for p in CHAPTERS).split())
    for label in labels:
        word = "".join(label.split())
        assert squeeze.count(word) <= prose.count(word), f"the PDF shows the label {label!r} on code blocks"


def test_runbook_blocks_are_collected_at_their_yaml_lines():
    """book/runbook.md's blocks come from book/data/runbook.yaml: one per entry, each at its `code:` line."""
    import yaml

    entries = yaml.safe_load((ROOT / collect.RUNBOOK).read_text(encoding="utf-8"))["entries"]
    blocks = blocks_of("book/runbook.md")
    assert len(blocks) == len(entries) == collect.count_source_fences((ROOT / "book/runbook.md").read_text(), ROOT)
    lines = (ROOT / collect.RUNBOOK).read_text(encoding="utf-8").splitlines()
    for block in blocks:
        assert block.path == collect.RUNBOOK and lines[block.line - 1].strip().startswith("code:"), block.where
    assert {b.source for b in blocks} == {e["command"]["code"] for e in entries}


def test_sandbox_restarts_only_its_own_start_failure(monkeypatch, tmp_path):
    """unshare's own error (no output of the block) is retried; a block's failure is returned at once."""
    outputs = iter(["unshare: sigprocmask unblock failed: Invalid argument\n", "ran\n"])
    monkeypatch.setattr(
        sandbox, "_run_once", lambda *a: sandbox.Outcome(1 if "unshare" in (o := next(outputs)) else 0, o, 9)
    )
    assert sandbox.run(["true"], tmp_path, 9, {}).output == "ran\n"
    calls = []
    monkeypatch.setattr(sandbox, "_run_once", lambda *a: calls.append(a) or sandbox.Outcome(1, "boom\n", 9))
    assert sandbox.run(["false"], tmp_path, 9, {}).output == "boom\n" and len(calls) == 1
    monkeypatch.setattr(sandbox, "_run_once", lambda *a: calls.append(a) or sandbox.Outcome(1, "unshare: x\n", 9))
    assert sandbox.run(["true"], tmp_path, 9, {}).returncode == 1 and len(calls) == 1 + sandbox.SETUP_ATTEMPTS
