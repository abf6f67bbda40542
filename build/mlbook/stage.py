"""A whole build that loses nothing: MkDocs builds into a staging folder that replaces site/ only on success."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from . import dependencies
from .diagnostics import DEBUG_HINT


def build(
    root: Path,
    site: Path,
    strict: bool = True,
    extra_env: dict[str, str] | None = None,
    staging: Path | None = None,
) -> int:
    """Build (mlbook.runner, in a child process) into a staging folder, on success swap it in as site; return the code.

    staging defaults to ``.<site>.staging`` beside site, so the swap is a rename on one file system.

    MkDocs empties its site_dir first and --strict fails only after post-build events, so building in place
    would destroy the last good site (and its PDF and EPUB) on every failed build.
    """
    root, site = Path(root).resolve(), Path(site).resolve()
    absent = _absent_packages()
    if absent:
        names = ", ".join(f"'{n}'" for n in absent)
        print(
            f"mlbook: cannot build: the Python package(s) {names} are not installed; {dependencies.SETUP_HINT}",
            file=sys.stderr,
        )
        return 1
    staging = Path(staging or site.with_name(f".{site.name}.staging")).resolve()
    if staging.exists():
        shutil.rmtree(staging)
    staging.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "mlbook.runner", str(root / "mkdocs.yml"), str(staging)]
    if not strict:
        cmd.append("--no-strict")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", **(extra_env or {})}
    code = subprocess.run(cmd, cwd=root, env=env, check=False).returncode
    if code < 0:  # killed by a signal: a crash in a C library, or the kernel's out-of-memory killer
        print(f"internal error: the build process was killed by signal {-code} ({DEBUG_HINT})", file=sys.stderr)
    if code != 0:
        shutil.rmtree(staging, ignore_errors=True)
        print(f"mlbook: build failed; the previous {site.name}/ was left untouched", file=sys.stderr)
        return 1 if code < 0 else code
    swap(staging, site)
    print(f"mlbook: site written to {site}")
    return 0


def swap(new: Path, site: Path) -> None:
    """Replace site by new with renames, so site/ is never half-written."""
    old = site.with_name(f".{site.name}.old")
    if old.exists():
        shutil.rmtree(old)
    if site.exists():
        site.rename(old)
    new.rename(site)
    if old.exists():
        shutil.rmtree(old)


def _absent_packages() -> list[str]:
    """Packages of the `book` extra that are not installed (none known when mlbook runs uninstalled)."""
    try:
        return dependencies.missing()
    except dependencies.md.PackageNotFoundError:
        return []
