"""Markdown of a chapter's problems: statement, then the answer collapsed under it (``??? success mlbook-answer``).

On the website the answer is a closed Material "details" block under its problem; the print editions move every
answer into an "Answers" section before "Sources" (answers.py does that on the built HTML).
"""

from __future__ import annotations

from pathlib import Path

from ..checks import datalinks
from ..data import problems

ANSWER_CLASS = "mlbook-answer"


def render(
    solved: list[problems.Solved],
    src_uri: str,
    docs_dir: Path,
    runbook_page: str = "runbook.md",
    runbook_titles: dict[str, str] | None = None,
) -> list[str]:
    """Markdown lines for the problems of one chapter, numbered from 1 in file order.

    runbook_titles maps runbook entry ids to their titles (the link text of a diagnosis problem's entry).
    """
    out: list[str] = []
    for n, item in enumerate(solved, 1):
        out += _problem(n, item, src_uri, docs_dir, (runbook_page, runbook_titles or {}))
    return out


def _problem(n: int, item: problems.Solved, src_uri: str, docs_dir: Path, runbook: tuple) -> list[str]:
    p = item.problem
    body = [*_paragraphs(item.answer())]
    if p.solve:
        body += ["", "Working:", ""]
        for name, step in p.solve.items():
            body.append(f"- `{name} = {step.formula}` = {item.values[name]}")
    notes = []
    if item.specs:
        cited = "; ".join(
            f"{s.row} `{s.field}` = {problems.show(s.value, s.unit, s.written)} ([source]({s.source}))"
            for s in _unique(item.specs)
        )
        tables = ", ".join(sorted({f"`book/data/{s.table}.yaml`" for s in item.specs}))
        notes.append(f"Spec numbers from {tables}: {cited}.")
    if item.scripts:
        links = ", ".join(f"[`{s.rsplit('/', 1)[-1]}`]({datalinks.relative(src_uri, s)})" for s in item.scripts)
        notes.append(f"Computed with {links}, the calculator the chapter shows.")
    if p.runbook:
        page, titles = runbook
        link = datalinks.relative(src_uri, f"{page}#{p.runbook}")
        notes.append(f"The 2 a.m. runbook has this symptom: [{titles.get(p.runbook, p.runbook)}]({link}).")
    see = "; ".join(f"[{datalinks.describe(docs_dir, t)}]({datalinks.relative(src_uri, t)})" for t in p.see)
    notes.append(f"Read more: {see}.")
    body += ["", *notes]
    return [
        f"### Problem {n}: {p.title} {{#problem-{p.id}}}",
        "",
        *_paragraphs(item.statement()),
        "",
        f'??? success {ANSWER_CLASS} "Answer to problem {n}"',
        "",
        *[f"    {line}" if line else "" for line in body],
        "",
    ]


def _paragraphs(text: str) -> list[str]:
    return text.strip().split("\n")


def _unique(specs):
    seen, out = set(), []
    for s in specs:
        if (s.row, s.field) not in seen:
            seen.add((s.row, s.field))
            out.append(s)
    return out
