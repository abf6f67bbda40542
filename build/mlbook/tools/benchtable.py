"""The benchmark's results: one measured run per stage, and the Markdown table with the target ratios."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Run:
    """One measured command."""

    book: str
    stage: str
    wall_s: float
    cpu_s: float
    peak_mb: float
    pages: int = 0
    bytes: int = 0  # size of what the stage wrote, where it counts (the chapter PDFs)

    @property
    def pages_per_s(self) -> float:
        """Pages per second of wall time (0 when the stage makes no pages)."""
        return self.pages / self.wall_s if self.pages and self.wall_s else 0.0


def table(runs: list[Run]) -> str:
    """The results as a Markdown table plus the target ratios per book."""
    lines = [
        "| Book | Stage | Wall (s) | CPU (s) | Peak memory (MB, PSS of all processes) | Pages | Pages/s |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        pages = f"{r.pages} | {r.pages_per_s:.1f}" if r.pages else " | "
        lines.append(f"| {r.book} | {r.stage} | {r.wall_s:.1f} | {r.cpu_s:.1f} | {r.peak_mb:.0f} | {pages} |")
    lines += [
        "",
        "| Book | PDF / floor (target <= 0.45) | PDF peak MB (target <= 500; 3x book <= 750) "
        "| warm / cold build (target <= 0.33) | EPUB s (target < 5) | serve s (target < 2) "
        "| chapter PDFs + Markdown / PDF (target < 0.10) | chapter PDFs MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for book in dict.fromkeys(r.book for r in runs):
        by = {r.stage: r for r in runs if r.book == book}
        serve = by.get("serve: save -> page shows it")
        lines.append(
            f"| {book} | {by['pdf (cold)'].wall_s / by['baseline: floor'].wall_s:.2f} | {by['pdf (cold)'].peak_mb:.0f} "
            f"| {by['build (warm)'].wall_s / by['build (cold)'].wall_s:.2f} | {by['epub'].wall_s:.1f} "
            f"| {f'{serve.wall_s:.1f}' if serve else 'n/a'} | {_editions(by)} |"
        )
    return "\n".join(lines) + "\n"


def _editions(by: dict[str, Run]) -> str:
    """The new editions' extra time over the PDF step's, and the chapter PDFs' total size (n/a if not measured)."""
    chapters, markdown = by.get("chapter pdfs"), by.get("markdown (llms)")
    if not chapters or not markdown:
        return "n/a | n/a"
    return f"{(chapters.wall_s + markdown.wall_s) / by['pdf (cold)'].wall_s:.3f} | {chapters.bytes / 1e6:.1f}"
