# The two entry points of the README: `make demo` and `make test`.
# Each creates its own virtualenv, so a fresh machine needs only Python 3.10+ and make.
#
# `make test` runs every check target listed in TEST_TARGETS, in order, cheapest first:
#   lint, layers, typecheck, docs, typing  static checks and the documentation build
#   unit                                   the test suite on $(PYTHON)
#   unit-py3.X                             the test suite again on each other supported
#                                          Python found (pyenv or PATH); skipped if absent
#   unit-langchain, unit-server,           the extra test environments (end of this file)
#   studio-browser
#
# What runs in parallel: the targets run one after another; inside `unit`, `unit-py3.X`,
# `unit-langchain` and `unit-server` pytest runs on $(PYTEST_WORKERS) worker processes
# (pytest-xdist, `--dist loadgroup`: a test module runs whole on one worker, so its
# module-scoped fixtures are set up once; the tests on real Ray and Dask clusters all
# run on one worker, see tests/conftest.py). Each worker gets its own PostgreSQL
# database, `<db>_gw0_<run>`, `<db>_gw1_<run>` (<db>: STATEGRAPH_TEST_PG's, default
# `test`; <run>: the run's id, so two runs at once never meet), dropped at the end. `PYTEST_WORKERS=0` runs serially.
#
# To add a test environment (an optional integration, a browser...), write a target
# that creates what it needs and runs its tests, then append it to TEST_TARGETS in the
# "Extra test environments" section near the end.

PYTHON ?= python3
TEST_VENV ?= .venv-test
DEMO_VENV ?= .venv-demo
PYTEST_ARGS ?=
# pytest-xdist workers of the test suites (0: no xdist, one process)
PYTEST_WORKERS ?= 2
PYTEST_PARALLEL := $(if $(filter 0,$(PYTEST_WORKERS)),-p no:xdist,-n $(PYTEST_WORKERS) --dist loadgroup)
PYTEST := -m pytest -q -p no:cacheprovider $(PYTEST_PARALLEL)
# Tests that run a static target's own command again (`mkdocs build --strict`, the
# typing corpus under mypy --strict and pyright, with the project's config, so on any
# Python they give what `docs` and `typing` gave). They stay for a bare `pytest`; the
# suites of `make unit*` leave them out, as `make test` runs those targets first.
RERUNS_OF_STATIC_CHECKS := \
	tests/docs/test_reference.py::test_site_builds_strict_without_a_warning \
	tests/package_metadata/test_typing_corpus.py::test_corpus_passes_mypy_strict \
	tests/package_metadata/test_typing_corpus.py::test_corpus_passes_pyright_strict
SUITE := $(PYTEST) $(addprefix --deselect ,$(RERUNS_OF_STATIC_CHECKS))
# extras installed for the main test run (tools, docs, notebook and example deps)
TEST_EXTRAS ?= dev
# a second environment with langchain-core, for the LangChain interop tests
LC_VENV ?= .venv-test-langchain
# every supported Python; the ones other than $(PYTHON)'s run the suite with `.[test]`
SUPPORTED_PYTHONS ?= 3.10 3.11 3.12 3.13

MAIN_VERSION := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
OTHER_PYTHONS := $(filter-out $(MAIN_VERSION),$(SUPPORTED_PYTHONS))
# the interpreter of version $(1): pyenv first, then PATH
python_for = $(firstword $(wildcard $(HOME)/.pyenv/versions/$(1).*/bin/python$(1)) $(shell command -v python$(1) 2>/dev/null))
UNIT_OTHERS := $(addprefix unit-py,$(OTHER_PYTHONS))

TEST_TARGETS := lint layers typecheck docs typing unit $(UNIT_OTHERS)

.PHONY: demo test lint typecheck typing layers docs unit $(UNIT_OTHERS) bench clean prefetch-venvs

# The test environments are built one at a time (`pip install -e .` of two of them at
# once would race on src/stategraph.egg-info): each build holds .venvs.lock (flock, when
# the machine has it), then builds only if its venv is still missing or stale.
VENV_LOCK := exec 9>.venvs.lock; if command -v flock >/dev/null 2>&1; then flock 9; fi;
venv_fresh = if [ -f $(1) ] && [ ! pyproject.toml -nt $(1) ]; then exit 0; fi;

$(TEST_VENV)/.installed: pyproject.toml
	@$(VENV_LOCK) $(call venv_fresh,$@) \
	echo "== creating $(TEST_VENV) (.[$(TEST_EXTRAS)])"; \
	$(PYTHON) -m venv $(TEST_VENV) && \
	$(TEST_VENV)/bin/python -m pip install -qq --upgrade pip && \
	$(TEST_VENV)/bin/python -m pip install -qq -e ".[$(TEST_EXTRAS)]" && \
	touch $@

# the venv of another supported Python (`.[test]` only)
.venv-test-py%/.installed: pyproject.toml
	@$(VENV_LOCK) $(call venv_fresh,$@) \
	py="$(call python_for,$*)"; venv=.venv-test-py$*; \
	echo "== creating $$venv ($$py)"; \
	$$py -m venv $$venv && \
	$$venv/bin/python -m pip install -qq --upgrade pip && \
	$$venv/bin/python -m pip install -qq -e ".[test]" && \
	touch $@
.PRECIOUS: .venv-test-py%/.installed

# `make test` builds the venvs of its later targets in the background, in the order
# those targets need them, while the static checks and the main suite run: pip spends
# most of its time waiting on the disk and the package index, not on the CPU. A target
# whose venv is still being built waits on the lock. Its log: .venvs.log.
OTHERS_FOUND = $(foreach v,$(OTHER_PYTHONS),$(if $(call python_for,$(v)),$(v)))
LATER_VENVS = $(foreach v,$(OTHERS_FOUND),$(if $(filter unit-py$(v),$(TEST_TARGETS)),.venv-test-py$(v)/.installed)) \
	$(if $(filter unit-langchain,$(TEST_TARGETS)),$(LC_VENV)/.installed) \
	$(if $(filter unit-server,$(TEST_TARGETS)),$(SERVER_VENV)/.installed)
prefetch-venvs: $(TEST_VENV)/.installed
	@if command -v flock >/dev/null 2>&1 && [ -n "$(strip $(LATER_VENVS))" ]; then \
		echo "== building $(strip $(LATER_VENVS)) in the background (log: .venvs.log)"; \
		$(MAKE) --no-print-directory -k $(LATER_VENVS) > .venvs.log 2>&1 & \
	fi

$(DEMO_VENV)/.installed: pyproject.toml
	@$(VENV_LOCK) $(call venv_fresh,$@) \
	$(PYTHON) -m venv $(DEMO_VENV) && \
	$(DEMO_VENV)/bin/python -m pip install -qq --upgrade pip && \
	$(DEMO_VENV)/bin/python -m pip install -qq -e . && \
	touch $@

demo: $(DEMO_VENV)/.installed
	$(DEMO_VENV)/bin/python examples/approval.py

lint: $(TEST_VENV)/.installed
	$(TEST_VENV)/bin/ruff check src tests bench examples tools
	$(TEST_VENV)/bin/ruff format --check src tests bench examples tools

typecheck: $(TEST_VENV)/.installed
	$(TEST_VENV)/bin/mypy

# The typing corpus (user code with assert_type) under mypy --strict and pyright strict.
typing: $(TEST_VENV)/.installed
	$(TEST_VENV)/bin/mypy --strict tests/typing_corpus
	$(TEST_VENV)/bin/pyright --pythonpath $(TEST_VENV)/bin/python

layers: $(TEST_VENV)/.installed
	$(TEST_VENV)/bin/lint-imports --no-logo

# The documentation site: broken links and missing API entries fail the build.
docs: $(TEST_VENV)/.installed
	NO_MKDOCS_2_WARNING=1 $(TEST_VENV)/bin/mkdocs build --strict --site-dir .site

unit: $(TEST_VENV)/.installed
	$(TEST_VENV)/bin/python $(SUITE) $(PYTEST_ARGS)

# The suite on another supported Python (its own venv, `.[test]` only).
$(UNIT_OTHERS): unit-py%:
	@py="$(call python_for,$*)"; \
	if [ -z "$$py" ]; then echo "Python $* not found: skipping its test run"; exit 0; fi; \
	$(MAKE) --no-print-directory .venv-test-py$*/.installed && \
	echo "== test suite on Python $* ($$py)" && \
	.venv-test-py$*/bin/python $(SUITE) $(PYTEST_ARGS)

bench: $(TEST_VENV)/.installed
	$(TEST_VENV)/bin/python -m bench

clean:
	rm -rf $(TEST_VENV) $(DEMO_VENV) $(LC_VENV) $(SERVER_VENV) .venv-test-py3.* .site .pytest_cache .mypy_cache .ruff_cache \
		.venvs.lock .venvs.log

# ---------------------------------------------------------------------------------
# Extra test environments. Add a target here and append it to TEST_TARGETS:
#
#   test-foo: $(TEST_VENV)/.installed
#   	$(TEST_VENV)/bin/python -m pip install -qq -e ".[foo]"
#   	$(TEST_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/foo
#   .PHONY: test-foo
#   TEST_TARGETS += test-foo

# The LangChain interop tests, in an environment that has langchain-core (the main
# environment does not, so the main suite proves stategraph runs without it). The
# LangGraph ecosystem (langchain's create_agent, langgraph-swarm, langgraph-supervisor)
# is installed without its dependencies, so without LangGraph: the tests run it on
# stategraph through stategraph.compat.install_langgraph_alias(). Versions are pinned
# to those tools/langchain_boundary/recorded/langgraph.json.gz was recorded with.
LC_CORE_VERSION ?= 1.8.3
LC_ECOSYSTEM ?= langchain==1.5.2 langgraph-swarm==0.1.0 langgraph-supervisor==0.0.31
$(LC_VENV)/.installed: pyproject.toml
	@$(VENV_LOCK) $(call venv_fresh,$@) \
	echo "== creating $(LC_VENV)"; \
	$(PYTHON) -m venv $(LC_VENV) && \
	$(LC_VENV)/bin/python -m pip install -qq --upgrade pip && \
	$(LC_VENV)/bin/python -m pip install -qq -e ".[test,langchain]" "langchain-core==$(LC_CORE_VERSION)" && \
	$(LC_VENV)/bin/python -m pip install -qq --no-deps $(LC_ECOSYSTEM) && \
	touch $@

unit-langchain: $(LC_VENV)/.installed
	$(LC_VENV)/bin/python $(PYTEST) tests/interop $(PYTEST_ARGS)
.PHONY: unit-langchain
TEST_TARGETS += unit-langchain


# The server's tests driven by LangGraph's own clients (langgraph-sdk, RemoteGraph from
# LangGraph 1.2.22, the JS SDK from npm with the machine's Node.js), on SQLite and, when
# STATEGRAPH_TEST_PG names a database, on PostgreSQL. Their own venv: LangGraph pulls in
# langchain-core, which the main environment must not have.
SERVER_VENV ?= .venv-test-server
$(SERVER_VENV)/.installed: pyproject.toml
	@$(VENV_LOCK) $(call venv_fresh,$@) \
	echo "== creating $(SERVER_VENV)"; \
	$(PYTHON) -m venv $(SERVER_VENV) && \
	$(SERVER_VENV)/bin/python -m pip install -qq --upgrade pip && \
	$(SERVER_VENV)/bin/python -m pip install -qq -e ".[test,server,server-test]" && \
	touch $@

unit-server: $(SERVER_VENV)/.installed
	STATEGRAPH_TEST_PG=$${STATEGRAPH_TEST_PG:-postgresql://postgres@127.0.0.1:5432/test} \
		$(SERVER_VENV)/bin/python $(PYTEST) -m server tests/server $(PYTEST_ARGS)
.PHONY: unit-server
TEST_TARGETS += unit-server


# The studio in a real headless Chromium: Debian's `chromium` package driven by
# Playwright for Python (no browser download). Installs Chromium with apt-get when it
# is missing (as root), and the studio extra + Playwright into the test venv.
CHROMIUM ?= /usr/bin/chromium
studio-browser: $(TEST_VENV)/.installed
	@if [ ! -x "$(CHROMIUM)" ]; then \
		if [ "$$(id -u)" = "0" ]; then \
			echo "== installing Debian's chromium (apt-get)"; \
			apt-get update -q && apt-get install -y -q chromium || exit 1; \
		else \
			echo "studio-browser: $(CHROMIUM) is missing; install Debian's chromium as root" \
			     "(apt-get install chromium) or set CHROMIUM=/path/to/chromium." >&2; exit 1; \
		fi; \
	fi
	@$(VENV_LOCK) echo "== installing the studio extra and Playwright into $(TEST_VENV)"; \
	$(TEST_VENV)/bin/python -m pip install -qq -e ".[studio]" "playwright>=1.40"
	STATEGRAPH_CHROMIUM=$(CHROMIUM) $(TEST_VENV)/bin/python -m pytest -q -p no:cacheprovider -m browser tests/studio $(PYTEST_ARGS)
.PHONY: studio-browser
TEST_TARGETS += studio-browser


# The React page of examples/server/ui (LangGraph's useStream hook) served by
# `stategraph serve --ui` and driven in Debian's headless Chromium by Playwright, on
# SQLite and PostgreSQL. The page is built with the machine's Node.js/npm (`npm ci`
# cached per package-lock.json in ~/.cache/stategraph/server-ui; needs the npm registry
# the first time). Installs Chromium with apt-get when it is missing (as root).
server-browser: $(SERVER_VENV)/.installed
	@if [ ! -x "$(CHROMIUM)" ]; then \
		if [ "$$(id -u)" = "0" ]; then \
			echo "== installing Debian's chromium (apt-get)"; \
			apt-get update -q && apt-get install -y -q chromium || exit 1; \
		else \
			echo "server-browser: $(CHROMIUM) is missing; install Debian's chromium as root" \
			     "(apt-get install chromium) or set CHROMIUM=/path/to/chromium." >&2; exit 1; \
		fi; \
	fi
	$(SERVER_VENV)/bin/python -m pip install -q "playwright>=1.40"
	STATEGRAPH_CHROMIUM=$(CHROMIUM) \
	STATEGRAPH_TEST_PG=$${STATEGRAPH_TEST_PG:-postgresql://postgres@127.0.0.1:5432/test} \
		$(SERVER_VENV)/bin/python -m pytest -q -p no:cacheprovider -m browser tests/server $(PYTEST_ARGS)
.PHONY: server-browser
TEST_TARGETS += server-browser


# The pictures of docs/screenshots.md (drawings, notebook, studio), made again in
# Debian's Chromium driven by Playwright. Not part of `make test`.
screenshots: $(TEST_VENV)/.installed
	$(TEST_VENV)/bin/python -m pip install -qq -e ".[studio]" "playwright>=1.40" nbconvert
	STATEGRAPH_CHROMIUM=$(CHROMIUM) $(TEST_VENV)/bin/python tools/screenshots.py --out docs/screenshots
.PHONY: screenshots


# ---------------------------------------------------------------------------------
# Static checks and the docs first, then the whole test suite on every Python found.
# pytest exits 5 when no test ran, which make treats as a failure. Keep this rule
# last: make expands TEST_TARGETS when it reads it.
test: prefetch-venvs $(TEST_TARGETS)
