"""Run the book's code blocks: Sybil collects them, markers say why one cannot run, a sandbox runs bash."""
