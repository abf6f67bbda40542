"""Shared fixtures: one build of the real book per session, one of the mini fixture book, tool requirements."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CACHE = ROOT / ".cache" / "tests"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]


def in_ci() -> bool:
    """True under CI=true, where a missing system component is a failure, not a skip."""
    return os.environ.get("CI", "").lower() == "true"


def require(condition: bool, reason: str) -> None:
    """Skip (locally) or fail (under CI=true) when a system component is missing."""
    if condition:
        return
    if in_ci():
        pytest.fail(f"missing in CI: {reason}")
    pytest.skip(reason)


def script_env(**extra: str) -> dict[str, str]:
    """Environment for running a script in a test: no bytecode in scripts/, one thread per process."""
    return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", **extra}


def require_torch() -> None:
    """The scripts' smoke tests need torch (the `scripts` extra installs torch==2.13.0)."""
    import importlib.util

    require(importlib.util.find_spec("torch") is not None, f"torch is not importable by {sys.executable}")


def require_java() -> None:
    """EPUBCheck runs the official jar on Java."""
    require(shutil.which("java") is not None, "Java is not installed (apt-get install default-jre-headless)")


def build_site(
    root: Path, site: Path, env: dict[str, str] | None = None, timeout: float | None = None
) -> subprocess.CompletedProcess:
    """Run the staged build of the book at root into site, capturing its output.

    With timeout (seconds), a build still running then is killed with all its processes and the test fails.
    """
    code = (
        "import sys; from pathlib import Path; from mlbook import stage; "
        f"sys.exit(stage.build(Path({str(root)!r}), Path({str(site)!r})))"
    )
    cmd = [sys.executable, "-c", code]
    full_env = {**os.environ, "SOURCE_DATE_EPOCH": "1764374400", **(env or {})}
    with subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env, start_new_session=True
    ) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            pytest.fail(f"building {root} did not finish in {timeout} s (a hang)")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _run_id() -> str:
    """The id of this test run, shared by its pytest-xdist workers ('' without xdist)."""
    return os.environ.get("PYTEST_XDIST_TESTRUNUID", "")


@contextlib.contextmanager
def _once(name: str) -> Iterator[bool]:
    """Hold the lock of the session-wide output ``CACHE/name``; yield True when this run already made it.

    Under pytest-xdist every worker asks for a session fixture; the first one makes the output and marks it
    with the run's id, the others wait on the lock and reuse it. Without xdist the output is always made anew.
    """
    from filelock import FileLock

    CACHE.mkdir(parents=True, exist_ok=True)
    marker = CACHE / name / ".run"
    with FileLock(str(CACHE / f"{name}.lock")):
        run = _run_id()
        done = bool(run) and marker.is_file() and marker.read_text(encoding="utf-8") == run
        yield done
        if not done and run and (CACHE / name / "site").is_dir():
            marker.write_text(run, encoding="utf-8")


def _built(root: Path, name: str) -> Path:
    site = CACHE / name / "site"
    with _once(name) as done:
        if done:
            return site
        shutil.rmtree(site.parent, ignore_errors=True)
        site.parent.mkdir(parents=True)
        result = build_site(root, site)
        if result.returncode != 0:
            shutil.rmtree(site, ignore_errors=True)
            pytest.fail(f"building {root} failed:\n{result.stdout}\n{result.stderr}")
    return site


def _prebuilt_problem(site: Path) -> str:
    """Why site cannot stand for a build of this work tree ('' when it can).

    It can when the work tree is exactly its commit (no change, no untracked file), the site names that commit
    as its edition, and it holds the PDF and the EPUB: then it is what a build here would write.
    """

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True).stdout.strip()

    if not (site / "options.json").is_file():
        return f"{site} is not a built site (no options.json)"
    if git("status", "--porcelain"):
        return "the work tree has changes since its commit"
    head = git("rev-parse", "--short=10", "HEAD")
    edition = json.loads((site / "options.json").read_text(encoding="utf-8")).get("edition", "")
    if not head or head not in edition:
        return f"{site} was built from {edition!r}, not from HEAD ({head})"
    editions = ("ml-engineering-book.pdf", "ml-engineering-book.epub")
    missing = [name for name in editions if not (site / "downloads" / name).is_file()]
    return f"{site} lacks {', '.join(missing)}" if missing else ""


@pytest.fixture(scope="session")
def real_site() -> Path:
    """The real book built once per test session (site, PDF, EPUB).

    With MLBOOK_TEST_SITE (what `.ci/run` sets after its `make book`), a copy of that site is used instead,
    when it is a build of this very commit: the tests then check the README command's own output and CI does
    not build the book twice. Otherwise the book is built here.
    """
    prebuilt = os.environ.get("MLBOOK_TEST_SITE", "").strip()
    if prebuilt:
        source = (ROOT / prebuilt).resolve()
        problem = _prebuilt_problem(source)
        if not problem:
            site = CACHE / "real" / "site"
            with _once("real") as done:
                if not done:
                    shutil.rmtree(site.parent, ignore_errors=True)
                    shutil.copytree(source, site, symlinks=True)
            return site
        print(f"MLBOOK_TEST_SITE not used: {problem}; building the book", file=sys.__stderr__)
    return _built(ROOT, "real")


@pytest.fixture(scope="session")
def mini_site() -> Path:
    """The mini fixture book (one of each construct) built once per test session."""
    return _built(FIXTURES / "mini", "mini")


@pytest.fixture(scope="session")
def print_site() -> Path:
    """The print fixture book (constructs that once printed wrongly) built once per test session."""
    return _built(FIXTURES / "print", "print")


@pytest.fixture(scope="session")
def nested_site() -> Path:
    """The nested fixture book (nested sections, an interlude, CJK and punctuation in file names) built once."""
    return _built(FIXTURES / "nested", "nested")


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@pytest.fixture(scope="session")
def site_server(real_site: Path) -> Iterator[str]:
    """The real built site over http on 127.0.0.1 (a free port), shared by the browser tests; the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(real_site))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="session")
def chromium():
    """One headless Chromium (Debian's, never a downloaded one, through Playwright) for every browser test."""
    require(importlib.util.find_spec("playwright") is not None, "playwright is not installed (pip install -e .[test])")
    require(CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK), f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def slurm(tmp_path_factory):
    """The two-node test SLURM cluster (tests/test_slurm.py starts it), shared by the launcher and book-block tests."""
    import test_slurm

    yield from test_slurm.start_session_cluster(tmp_path_factory)


BLOCKS_SUMMARY = CACHE / "book-blocks-summary.txt"


def pytest_sessionstart(session):
    """Forget the last session's book-block summary (`make test` prints the one this session writes)."""
    BLOCKS_SUMMARY.unlink(missing_ok=True)


def pytest_runtest_logreport(report):
    """Gather the book-block rows of each chapter's test, also from pytest-xdist workers."""
    from bookblocks import stats

    if report.when == "call":
        stats.gather(report)


def pytest_terminal_summary(terminalreporter, config):
    """Write the one-line summary of the book's code blocks, when this session ran them."""
    from bookblocks import stats

    if stats.RESULTS and not hasattr(config, "workerinput"):
        line = stats.summary_line(stats.RESULTS)
        BLOCKS_SUMMARY.parent.mkdir(parents=True, exist_ok=True)
        BLOCKS_SUMMARY.write_text(line + "\n", encoding="utf-8")
        terminalreporter.write_line(line)


# Modules that run real programs (torchrun, SLURM, fio, a browser): integration tests, left out of test-fast.
INTEGRATION_MODULES = {"test_scripts_run", "test_scripts_toolkit", "test_scripts_cluster", "test_slurm"}


# Modules whose tests take minutes (book builds, browsers): started early under xdist.
HEAVY_MODULES = {"test_book_blocks", "test_real_book", "test_corpus", "test_site_browser", "test_calc_browser"}


def xdist_group(item) -> str:
    """The pytest-xdist group of a test: all users of the test SLURM share one worker (one cluster); a
    chapter's code blocks are a group of their own; any other test goes with its module (whose module-scoped
    fixtures then run once)."""
    module = item.module.__name__.rsplit(".", 1)[-1]
    relpath = getattr(getattr(item, "callspec", None), "params", {}).get("relpath")
    if "slurm" in item.fixturenames or module == "test_slurm":
        return "slurm"
    if module == "test_book_blocks" and relpath:
        return "slurm" if item.module.needs_slurm(relpath) else f"blocks:{relpath}"
    return module


def pytest_collection_modifyitems(config, items):
    """Mark every test of an integration module as slow; group the tests for pytest-xdist (``-n``).

    Under xdist the groups are ordered longest first (the SLURM group, then the book builds' users), so that
    no long group starts last and holds one worker alone at the end.
    """
    for item in items:
        if item.module.__name__.rsplit(".", 1)[-1] in INTEGRATION_MODULES:
            item.add_marker(pytest.mark.slow)
    if not config.pluginmanager.hasplugin("xdist") or not config.getoption("numprocesses", None):
        return
    groups = {id(item): xdist_group(item) for item in items}
    for item in items:
        item.add_marker(pytest.mark.xdist_group(groups[id(item)]))
    first = {}
    for index, item in enumerate(items):
        first.setdefault(groups[id(item)], index)

    def rank(group: str) -> int:
        if group == "slurm":
            return 0
        return 1 if group.startswith("blocks:") or group in HEAVY_MODULES else 2

    items.sort(key=lambda item: (rank(groups[id(item)]), first[groups[id(item)]]))
