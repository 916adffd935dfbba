# The two entry points of the README: `make demo` and `make test`.
# Each creates its own virtualenv, so a fresh machine needs only Python 3.10+ and make.

PYTHON ?= python3
TEST_VENV ?= .venv-test
DEMO_VENV ?= .venv-demo
PYTEST_ARGS ?=

.PHONY: demo test lint typecheck layers unit bench clean

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

# Static checks first, then the whole test suite. pytest exits 5 when no test ran,
# which make treats as a failure.
test: lint typecheck layers unit

bench: $(TEST_VENV)/.installed
	$(TEST_VENV)/bin/python -m bench

clean:
	rm -rf $(TEST_VENV) $(DEMO_VENV) .pytest_cache .mypy_cache .ruff_cache
