# The ML Engineering Book. `make help` lists the targets; `make book` is the default.
# Targets only call tools; the logic lives in build/mlbook (Python).
SHELL := /bin/bash
.DEFAULT_GOAL := book
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check -c requirements/constraints.txt
# pytest-xdist workers for make test: most tests wait on programs (SLURM, torchrun, browsers), so more than the cores.
TEST_WORKERS ?= 3
# Every date in the outputs comes from this (the last commit's time unless set by the caller).
export SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
export NO_MKDOCS_2_WARNING := 1
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: help book html pdf epub dist serve lint test test-blocks test-fast coverage bench split-rows gpu-smoke check-links-external clean setup

help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(VENV)/.book: pyproject.toml requirements/constraints.txt
	@$(PYTHON) build/mlbook/tools/preflight.py
	@test -x $(PY) || $(PYTHON) -m venv $(VENV) || { echo "error: could not create $(VENV); install python3-venv" >&2; exit 1; }
	@$(PIP) -e '.[book]' || { echo "error: installing the book's Python packages failed (see pip's message above)" >&2; exit 1; }
	@touch $@

$(VENV)/.test: $(VENV)/.book
	@$(PIP) -e '.[test,scripts]' || { echo "error: installing the test packages failed (see pip's message above)" >&2; exit 1; }
	@touch $@

setup: $(VENV)/.book ## Create .venv with what `make book` needs

book: $(VENV)/.book ## Build the site, PDF and EPUB into site/ (site/downloads/)
	$(PY) -m mlbook build --site site

html: $(VENV)/.book ## Build only the website into site/
	MLBOOK_OUTPUTS=false $(PY) -m mlbook build --site site

pdf: $(VENV)/.book ## Rewrite the PDF from the built site/
	$(PY) -m mlbook pdf site

epub: $(VENV)/.book ## Rewrite the EPUB from the built site/
	$(PY) -m mlbook epub site

dist: book ## Build the book, then the release set into dist/ (editions, site tarball, SHA256SUMS)
	$(PY) -m mlbook dist site --out dist

serve: $(VENV)/.book ## Live preview on http://127.0.0.1:8000 (PDF/EPUB off; MLBOOK_OUTPUTS=true to include)
	MLBOOK_OUTPUTS=$${MLBOOK_OUTPUTS:-false} $(PY) -m mkdocs serve --dirty --dev-addr 127.0.0.1:8000

lint: $(VENV)/.test ## Lint the pipeline, scripts, tests, chapters and the publishing workflow (actionlint)
	$(VENV)/bin/ruff check build scripts tests
	$(VENV)/bin/ruff format --check build scripts tests
	$(VENV)/bin/pymarkdown --config .pymarkdown.json scan -r book
	$(VENV)/bin/codespell --ignore-words .codespell-words book scripts build tests README.md
	git ls-files -co --exclude-standard -- 'scripts/*.sh' 'scripts/*.slurm' | xargs -r shellcheck
	git ls-files -co --exclude-standard -- 'scripts/*.sh' 'scripts/*.slurm' | xargs -r -n1 bash -n
	$(VENV)/bin/actionlint .github/workflows/*.yml

test: lint ## Everything CI runs: lint, then the whole test suite on TEST_WORKERS processes (ends with the book code-block summary)
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup
	@cat .cache/tests/book-blocks-summary.txt 2>/dev/null || true

test-blocks: $(VENV)/.test ## Run one chapter's code blocks: make test-blocks CHAPTER=book/x.md
	@test -n "$(CHAPTER)" || { echo "error: name the chapter: make test-blocks CHAPTER=book/<part>/<file>.md" >&2; exit 2; }
	@test -f "$(CHAPTER)" || { echo "error: $(CHAPTER) does not exist" >&2; exit 2; }
	BOOKBLOCKS_CACHE=0 CHAPTER=$(CHAPTER) $(PY) -m pytest tests/test_book_blocks.py -k test_chapter_blocks_run

test-fast: $(VENV)/.test ## Unit tests only (no full book build); run before each commit
	$(PY) -m pytest -m "not slow"

coverage: $(VENV)/.test ## Line coverage of test-fast per module, PDF worker processes included (.cache/coverage/)
	@mkdir -p .cache/coverage
	$(PY) -m coverage erase
	$(PY) -m coverage run -m pytest -m "not slow" -q
	$(PY) -m coverage combine -q
	$(PY) -m coverage report

gpu-smoke: $(VENV)/.test ## Every script's CUDA/NCCL path, small, on one GPU (CPU/gloo path without one); SMOKE_PYTHON=python with CUDA torch
	PYTHON=$${SMOKE_PYTHON:-$(abspath $(PY))} bash scripts/gpu_smoke.sh

check-links-external: $(VENV)/.test ## Check every http(s) link in book/ (needs network; not part of make test)
	$(PY) -m mlbook.tools.extlinks book

bench: $(VENV)/.test ## Speed and memory of each build stage vs baselines (real + synthetic books; several minutes)
	$(PY) -m mlbook.tools.bench

split-rows: $(VENV)/.test ## Lay out the built site's tables as the PDF does; list rows split across pages (~1.5 min)
	$(PY) -m mlbook.tools.split_rows site

clean: ## Remove build outputs and caches (site/, .cache/), nothing else
	rm -rf -- site .site.old .site.staging .cache dist .dist.staging
