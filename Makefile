# The two entry points of the README: `make demo` and `make test`.
# Each creates its own virtualenv, so a fresh machine needs only Python 3.10+ and make.

PYTHON ?= python3
TEST_VENV ?= .venv-test
DEMO_VENV ?= .venv-demo
PYTEST_ARGS ?=
# The oldest supported Python, used for a second test run when it is installed.
PY310 ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.10*/bin/python3.10) $(shell command -v python3.10 2>/dev/null))
PY310_VENV ?= .venv-test-py310

.PHONY: demo test lint typecheck layers unit unit-py310 bench clean

$(TEST_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(TEST_VENV)
	$(TEST_VENV)/bin/python -m pip install -q --upgrade pip
	$(TEST_VENV)/bin/python -m pip install -q -e ".[dev]"
	touch $@

$(DEMO_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(DEMO_VENV)
	$(DEMO_VENV)/bin/python -m pip install -q --upgrade pip
	$(DEMO_VENV)/bin/python -m pip install -q -e .
	touch $@

demo: $(DEMO_VENV)/.installed
	$(DEMO_VENV)/bin/python examples/approval.py

lint: $(TEST_VENV)/.installed
	$(TEST_VENV)/bin/ruff check src tests bench examples
	$(TEST_VENV)/bin/ruff format --check src tests bench examples

typecheck: $(TEST_VENV)/.installed
	$(TEST_VENV)/bin/mypy

layers: $(TEST_VENV)/.installed
	$(TEST_VENV)/bin/lint-imports

unit: $(TEST_VENV)/.installed
	$(TEST_VENV)/bin/python -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)

# The suite again on Python 3.10 (the oldest supported version) when it is installed.
unit-py310:
	@if [ -n "$(PY310)" ]; then \
		$(PY310) -m venv $(PY310_VENV) && \
		$(PY310_VENV)/bin/python -m pip install -q --upgrade pip && \
		$(PY310_VENV)/bin/python -m pip install -q -e ".[test]" && \
		$(PY310_VENV)/bin/python -m pytest -q -p no:cacheprovider $(PYTEST_ARGS); \
	else \
		echo "Python 3.10 not found: skipping the 3.10 test run"; \
	fi

# Static checks first, then the whole test suite. pytest exits 5 when no test ran,
# which make treats as a failure.
test: lint typecheck layers unit unit-py310

bench: $(TEST_VENV)/.installed
	$(TEST_VENV)/bin/python -m bench

clean:
	rm -rf $(TEST_VENV) $(DEMO_VENV) $(PY310_VENV) .pytest_cache .mypy_cache .ruff_cache
