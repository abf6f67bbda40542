"""The block runner catches each planted defect of the fixture chapter with its book/<path>.md:<line>."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from bookblocks import collect, runner, sandbox
from bookblocks.markers import parse_info
from conftest import FIXTURES, require

ROOT = FIXTURES / "blocks"
CHAPTER = "book/planted.md"


def fence_lines() -> list[int]:
    """The opening-fence line of each block of the fixture chapter, in order."""
    return [b.line for b in collect.chapter_blocks(ROOT / CHAPTER, ROOT)]


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    require(sandbox.available() is None, sandbox.available() or "")
    root = Path(tempfile.mkdtemp(prefix="book-blocks-planted-"))
    root.chmod(0o755)
    saved = runner.BASH_TIMEOUT
    runner.BASH_TIMEOUT = 3
    try:
        yield runner.run_chapter(ROOT, CHAPTER, root / "work")
    finally:
        runner.BASH_TIMEOUT = saved
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.slow
def test_each_planted_defect_fails_with_its_line(planted):
    lines = fence_lines()
    expected = {
        lines[6]: "python block failed: ImportError: cannot import name 'all_reduce_everything'",
        lines[7]: "python block failed: AssertionError: Torch not compiled with CUDA enabled",
        lines[8]: "bash block failed: exit code",  # sudo is missing (127) or refuses nobody (1)
        lines[9]: "stale marker: .needs-gpu but the block ran on CPU without error",
        lines[10]: "code block timed out after 3 s",
    }
    failures = planted.failures
    for line, message in expected.items():
        assert any(f.startswith(f"{CHAPTER}:{line}: {message}") for f in failures), (line, message, failures)
    assert len(failures) == len(expected), failures


@pytest.mark.slow
def test_good_blocks_pass_and_markers_hold(planted):
    status = {r.block.line: r.status for r in planted.results}
    lines = fence_lines()
    assert [status[line] for line in lines[:6]] == ["passed", "passed", "passed", "xfailed", "passed", "skipped"]


def test_other_fence_forms_are_reported():
    """`python notest` renders as a paragraph under superfences: the marker check reports it."""
    assert parse_info("python notest")[2] is not None
    assert parse_info("{.python .needs-gpu}") == ("python", ("needs-gpu",), None)
    assert "unknown class" in parse_info("{.bash .needs-magic}")[2]


def test_blocks_in_admonitions_and_tabs_are_collected(tmp_path):
    text = (
        "# T\n\n!!! note\n    ```python\n    x = 1\n    ```\n\n"
        '=== "Tab"\n\n    ```{.bash .needs-gpu}\n    nvidia-smi\n    ```\n\n'
        "````text\n```python\nshown, not run\n```\n````\n"
    )
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "t.md").write_text(text)
    blocks = collect.chapter_blocks(tmp_path / "book" / "t.md", tmp_path)
    assert [(b.line, b.lang, b.reason) for b in blocks] == [
        (4, "python", None),
        (10, "bash", "needs-gpu"),
        (14, "text", None),
    ]
    assert blocks[0].source == "x = 1\n"
    assert collect.count_source_fences(text) == 3


def _sleepers(seconds: str) -> list[int]:
    """Host pids of the processes running exactly ``sleep SECONDS``."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "cmdline").read_bytes().split(b"\0")[:2] == [b"sleep", seconds.encode()]:
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def test_a_timed_out_block_leaves_no_process_behind(tmp_path):
    """Grandchildren that left the session (setsid) or entered namespaces of their own die with the block."""
    require(sandbox.available() is None, sandbox.available() or "")
    seconds = f"{86000 + os.getpid() % 1000}.25"  # a duration no other process on this machine sleeps
    work = Path(tempfile.mkdtemp(prefix="book-blocks-leak-"))
    work.chmod(0o755)
    try:
        sandbox.make_workdir(work / "w")
        script = work / "w" / "block.sh"
        script.write_text(
            f"sleep {seconds} &\nsetsid sleep {seconds} &\n(setsid unshare -Urm sleep {seconds} &)\n"
            f"sleep 1\necho started\nsleep 600\n"
        )
        outcome = sandbox.run(["bash", str(script)], work / "w", 4, sandbox.environment(work / "w"))
        left = _sleepers(seconds)
        for pid in left:  # never leave them running, even when the assertion below fails
            os.kill(pid, signal.SIGKILL)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert outcome.timed_out and "started" in outcome.output, outcome.output
    assert not left, f"{len(left)} processes of the timed-out block still run: {left}"
