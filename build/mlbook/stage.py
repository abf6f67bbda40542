"""A whole build that loses nothing: MkDocs builds into a staging folder that replaces site/ only on success."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from . import dependencies


def build(
    root: Path,
    site: Path,
    strict: bool = True,
    extra_env: dict[str, str] | None = None,
    staging: Path | None = None,
) -> int:
    """Run `mkdocs build` into a staging folder and, on exit 0, swap it into place as site; return the exit code.

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
    cmd = [
        sys.executable,
        "-m",
        "mkdocs",
        "build",
        "--config-file",
        str(root / "mkdocs.yml"),
        "--site-dir",
        str(staging),
    ]
    if strict:
        cmd.append("--strict")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", **(extra_env or {})}
    code = subprocess.run(cmd, cwd=root, env=env, check=False).returncode
    if code != 0:
        shutil.rmtree(staging, ignore_errors=True)
        print(f"mlbook: build failed; the previous {site.name}/ was left untouched", file=sys.stderr)
        return code
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
