"""A deterministic synthetic book for the benchmark, written to a folder of its own (never into book/).

Its chapters have the real book's mix of prose, code, tables and admonitions.
"""

from __future__ import annotations

import random
from pathlib import Path

WORDS = (
    "gradient tensor rank node bandwidth latency kernel memory cluster shard optimizer checkpoint batch token "
    "throughput collective pipeline stage replica scheduler partition allocation buffer stream device host "
    "precision overflow activation parameter layer attention cache queue fabric switch link storage volume "
    "the a of to and in for with on by that is are can when each every from into across while"
).split()
CODE = [
    "import torch",
    "import torch.distributed as dist",
    "x = torch.randn(4096, 4096, device=device, dtype=torch.bfloat16)",
    "dist.all_reduce(x, op=dist.ReduceOp.SUM)",
    "for step in range(steps):",
    "    loss = model(batch).mean()",
    "    loss.backward()",
    "    optimizer.step()",
    "    optimizer.zero_grad(set_to_none=True)",
    "print(f'rank {rank}: {x.float().norm().item():.3f}')",
]


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(10, 22))]
    return " ".join(words).capitalize() + "."


def _paragraph(rng: random.Random) -> str:
    return "\n".join(_sentence(rng) for _ in range(rng.randint(3, 6)))


def chapter(index: int, words: int, seed: int) -> str:
    """Markdown of one chapter of about `words` prose words, with code, a table and an admonition per section."""
    rng = random.Random(seed * 100003 + index)
    out, count, section = [f"# Chapter {index}: {rng.choice(WORDS)} and {rng.choice(WORDS)}", ""], 0, 0
    while count < words:
        section += 1
        out += [f"## Section {index}.{section}", ""]
        for _ in range(3):
            text = _paragraph(rng)
            count += len(text.split())
            out += [text, ""]
        out += ["```python", *(rng.choice(CODE) for _ in range(rng.randint(8, 20))), "```", ""]
        out += ["| Setting | Value (GB/s) | Ranks | Time (ms) | Note |", "| --- | --- | --- | --- | --- |"]
        out += [
            f"| {rng.choice(WORDS)} | {rng.uniform(1, 900):.1f} | {2 ** rng.randint(1, 10)} | "
            f"{rng.uniform(0.1, 99):.2f} | {rng.choice(WORDS)} {rng.choice(WORDS)} |"
            for _ in range(6)
        ]
        out += ["", '!!! note "Measured"', "    " + _sentence(rng), ""]
        out += [f"### Detail {index}.{section}", "", _paragraph(rng), ""]
    out += ["## Sources", "", "- [Synthetic source](https://example.org/)", ""]
    return "\n".join(out)


def generate(root: Path, words: int, seed: int = 0, chapter_words: int = 3100, theme_dir: Path | None = None) -> Path:
    """Write a book of about `words` prose words under root (book/ and mkdocs.yml); return root."""
    root = Path(root)
    chapters = max(1, round(words / chapter_words))
    parts = max(1, chapters // 10)
    nav = ["nav:", "  - Introduction: index.md"]
    (root / "book").mkdir(parents=True, exist_ok=True)
    (root / "book" / "index.md").write_text("# Synthetic book\n\nA generated book for benchmarks.\n")
    for p in range(parts):
        folder = root / "book" / f"part{p + 1}"
        folder.mkdir(exist_ok=True)
        (folder / "index.md").write_text(f"# Part {p + 1}\n\nThe chapters of part {p + 1}.\n")
        nav += [f'  - "Part {p + 1}":', f"      - part{p + 1}/index.md"]
        for c in range(p, chapters, parts):
            (folder / f"chapter{c + 1:03d}.md").write_text(chapter(c + 1, chapter_words, seed))
            nav.append(f"      - part{p + 1}/chapter{c + 1:03d}.md")
    theme = f"\n  custom_dir: {theme_dir}" if theme_dir else ""
    (root / "mkdocs.yml").write_text(
        f"site_name: Synthetic Book\nsite_url: https://synthetic.example.org/\ndocs_dir: book\n"
        f"theme:\n  name: material\n  font: false{theme}\n"
        "markdown_extensions: [admonition, tables, attr_list, md_in_html, footnotes, pymdownx.details, "
        "pymdownx.superfences, pymdownx.highlight, {toc: {permalink: true}}]\n"
        "plugins:\n  - search\n  - mlbook:\n      enabled: !ENV [MLBOOK_OUTPUTS, true]\n"
        "validation:\n  nav: {omitted_files: ignore, not_found: ignore}\n"
        "  links: {not_found: ignore, anchors: ignore}\n" + "\n".join(nav) + "\n"
    )
    (root / "scripts").mkdir(exist_ok=True)
    return root
