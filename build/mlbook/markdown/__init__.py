"""Markdown-level transforms that know chapter and line: spec tables, figures, data blocks, calculators, scripts."""
