"""Developer tools, not part of a build: benchmark, synthetic books, external links, preflight, calculator links."""
