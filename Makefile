# `make demo` and `make test` create .venv when it is missing.
PY      := .venv/bin/python
STAMP   := .venv/.installed
export PATH := $(CURDIR)/.venv/bin:$(PATH)

.PHONY: demo test lit pytest bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv .venv
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) examples/demo.py

test: $(STAMP)
	.venv/bin/lit -sv lit_tests
	$(PY) -m pytest -n 2 tests

lit: $(STAMP)
	.venv/bin/lit -sv lit_tests

pytest: $(STAMP)
	$(PY) -m pytest -n 2 tests

bench: $(STAMP)
	$(PY) bench/parse_print.py

clean:
	rm -rf .venv build *.egg-info
