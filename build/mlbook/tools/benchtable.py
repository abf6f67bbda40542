"""The benchmark's results: one measured run per stage, and the Markdown tables with the target ratios."""

from __future__ import annotations

from dataclasses import dataclass

# The author's loop, measured in rounds under the same load: the site alone, after a one-sentence edit, unchanged.
HTML = "make html"
EDIT = "edit one chapter"
NO_CHANGE = "no change"


@dataclass
class Run:
    """One measured command; cpu_s counts its whole process tree, load is the 1-minute load average at its start."""

    book: str
    stage: str
    wall_s: float
    cpu_s: float
    peak_mb: float
    pages: int = 0
    bytes: int = 0  # size of what the stage wrote, where it counts (the chapter PDFs)
    load: float = 0.0

    @property
    def pages_per_s(self) -> float:
        """Pages per second of wall time (0 when the stage makes no pages)."""
        return self.pages / self.wall_s if self.pages and self.wall_s else 0.0


def table(runs: list[Run]) -> str:
    """The results as a Markdown table plus the target ratios per book (n/a where a stage was not measured)."""
    lines = [
        "| Book | Stage | Wall (s) | CPU (s, whole process tree) | Peak memory (MB, PSS of all processes) "
        "| Pages | Pages/s | Load (1 min) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        pages = f"{r.pages} | {r.pages_per_s:.1f}" if r.pages else " | "
        lines.append(
            f"| {r.book} | {r.stage} | {r.wall_s:.1f} | {r.cpu_s:.1f} | {r.peak_mb:.0f} | {pages} | {r.load:.1f} |"
        )
    books = list(dict.fromkeys(r.book for r in runs))
    lines += [
        "",
        "| Book | PDF / floor (target <= 0.45) | PDF peak MB (target <= 500; 3x book <= 750) "
        "| warm / cold build (target <= 0.33) | EPUB s (target < 5) | serve s (target < 2) "
        "| chapter PDFs + Markdown / PDF (target < 0.10) | chapter PDFs MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for book in books:
        by = {r.stage: r for r in runs if r.book == book}
        pdf, floor = by.get("pdf (cold)"), by.get("baseline: floor")
        serve = by.get("serve: save -> page shows it")
        cells = [
            _ratio(pdf, floor, "wall_s"),
            f"{pdf.peak_mb:.0f}" if pdf else "n/a",
            _ratio(by.get("build (warm)"), by.get("build (cold)"), "wall_s"),
            f"{by['epub'].wall_s:.1f}" if "epub" in by else "n/a",
            f"{serve.wall_s:.1f}" if serve else "n/a",
            _editions(by),
        ]
        lines.append(f"| {book} | {' | '.join(cells)} |")
    lines += [
        "",
        "| Book | make html s | edit one chapter s | edit / html (target <= 1.5), wall (CPU) | no change s "
        "| no change / html (target <= 1.2), wall (CPU) | PDF CPU / floor CPU (target <= 0.6) | load |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for book in books:
        mine = [r for r in runs if r.book == book]
        html, edit, same = (_fastest(mine, stage) for stage in (HTML, EDIT, NO_CHANGE))
        by = {r.stage: r for r in mine}
        loads = [r.load for r in mine if r.stage in (HTML, EDIT, NO_CHANGE)]
        cells = [
            _seconds(html),
            _seconds(edit),
            f"{_ratio(edit, html, 'wall_s')} ({_ratio(edit, html, 'cpu_s')})",
            _seconds(same),
            f"{_ratio(same, html, 'wall_s')} ({_ratio(same, html, 'cpu_s')})",
            _ratio(by.get("pdf (cold)"), by.get("baseline: floor"), "cpu_s"),
            f"{min(loads):.1f}-{max(loads):.1f}" if loads else "n/a",
        ]
        lines.append(f"| {book} | {' | '.join(cells)} |")
    return "\n".join(lines) + "\n"


def _fastest(runs: list[Run], stage: str) -> Run | None:
    """The stage's run with the least wall time (the one least disturbed by other jobs), or None."""
    return min((r for r in runs if r.stage == stage), key=lambda r: r.wall_s, default=None)


def _ratio(top: Run | None, bottom: Run | None, field: str) -> str:
    if top is None or bottom is None or not getattr(bottom, field):
        return "n/a"
    return f"{getattr(top, field) / getattr(bottom, field):.2f}"


def _seconds(run: Run | None) -> str:
    return f"{run.wall_s:.1f}" if run else "n/a"


def _editions(by: dict[str, Run]) -> str:
    """The new editions' extra time over the PDF step's, and the chapter PDFs' total size (n/a if not measured)."""
    chapters, markdown, pdf = by.get("chapter pdfs"), by.get("markdown (llms)"), by.get("pdf (cold)")
    if not chapters or not markdown or not pdf:
        return "n/a | n/a"
    return f"{(chapters.wall_s + markdown.wall_s) / pdf.wall_s:.3f} | {chapters.bytes / 1e6:.1f}"
