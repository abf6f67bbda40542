"""Scripts reach readers only by inclusion from the tested file: every script is included, none is pasted."""

import re

import pytest

from conftest import ROOT
from mlbook.markdown.fences import FENCE, fenced
from mlbook.pages.scripts import script_files

INCLUDE = re.compile(r'^\s*--8<--\s+"(scripts/[^"]+)"\s*$', re.M)


def chapters():
    return sorted((ROOT / "book").rglob("*.md"))


def included():
    return {m for md in chapters() for m in INCLUDE.findall(md.read_text(encoding="utf-8"))}


@pytest.mark.parametrize("script", [p.relative_to(ROOT).as_posix() for p in script_files(ROOT)])
def test_every_script_is_shown_in_a_chapter_by_inclusion(script):
    assert script in included(), f'{script} is not included by any chapter (--8<-- "{script}" in a fenced block)'


def _code_blocks(text):
    lines = text.split("\n")
    block = []
    for line, in_code in zip(lines, fenced(lines), strict=True):
        if in_code and not FENCE.match(line):
            block.append(line.strip())
        elif block:
            yield block
            block = []


def test_no_fenced_block_repeats_more_than_five_lines_of_a_script():
    windows = {}
    for path in script_files(ROOT):
        lines = [ln.strip() for ln in path.read_text(encoding="utf-8", errors="replace").splitlines()]
        lines = [ln for ln in lines if len(ln) > 3]
        for i in range(len(lines) - 5):
            windows[tuple(lines[i : i + 6])] = path.name
    offenders = []
    for md in chapters():
        for block in _code_blocks(md.read_text(encoding="utf-8")):
            block = [ln for ln in block if len(ln) > 3]
            for i in range(len(block) - 5):
                if tuple(block[i : i + 6]) in windows:
                    offenders.append(f"{md.relative_to(ROOT)} repeats 6+ lines of {windows[tuple(block[i : i + 6])]}")
                    break
    assert offenders == []
