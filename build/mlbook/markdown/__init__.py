"""Markdown-level transforms that know chapter and line: spec tables, figures, script download links."""
