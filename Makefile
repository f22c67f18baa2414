# podium: the two commands of the README.
#   make demo  - set up .venv, score a sample submission of every challenge, then serve the demo contest
#                (make demo SERVE=0: score only; PORT=8000 by default)
#   make test  - set up .venv, install missing system components (root with apt-get only), check the code (ruff, mypy),
#                build the docs site (mkdocs), run the whole test suite (docstring examples included), then the kernel and fuzz tests bounds-checked
PYTHON ?= python3
SERVE ?= 1
PORT ?= 8000
# make test's pytest processes (pytest-xdist): CI has 2 cores; JOBS=0 runs the tests in one process
JOBS ?= 2
VENV := .venv
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml constraints.txt | cksum | cut -d' ' -f1)

.PHONY: demo test setup clean

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt $(wildcard src/podium/*/*.c src/podium/*.h)  # a changed C source is built again
	$(PYTHON) -c 'import sys; sys.exit("podium needs Python 3.11 or newer") if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	$(VENV)/bin/python -c 'import podium.scoring.kernels'  # the kernels compiled for this CPU, and for any (podium.accel.jit)
	NUMBA_CPU_NAME=generic $(VENV)/bin/python -c 'import podium.scoring.kernels'
	$(VENV)/bin/python -m compileall -q src  # bytecode written even where PYTHONDONTWRITEBYTECODE is set: each command starts 0.1 s sooner
	rm -f $(VENV)/.installed-*
	touch $@

demo: $(STAMP) demo-data/.scored
ifeq ($(SERVE),1)
	$(VENV)/bin/podium serve --contest examples/contests/demo/contest.toml --data demo-data/service --port $(PORT) --team demo
endif

demo-data/.scored: $(STAMP)  # the demo sets are written and scored once (again when podium is installed anew)
	$(VENV)/bin/podium demo
	touch $@

test: $(STAMP)
	tools/system-components.sh bwrap=bubblewrap '/usr/lib/postgresql/*/bin/initdb=postgresql' /usr/bin/chromium=chromium dockerd=docker.io /bin/busybox=busybox-static /usr/sbin/nginx=nginx mkfs.ext4=e2fsprogs
	$(VENV)/bin/ruff check src tests tools benchmarks
	$(VENV)/bin/ruff format --check src tests tools benchmarks  # one layout of code, lines of 120 (strings and comments are left whole)
	$(VENV)/bin/mypy
	site=$$(mktemp -d) && trap 'rm -rf "$$site"' EXIT && NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir "$$site"  # the docs site: a broken link or a page out of the nav fails (not --quiet: it hides them)
	$(VENV)/bin/lint-imports  # the layers of docs/layout.md: no import runs back up the flow
	$(VENV)/bin/python -m pytest -n $(JOBS) --dist loadfile -m 'not latency'  # a test file stays in one process: its shared server and its order are kept
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider -m latency tests  # the tests that time requests, with the machine to themselves
	# The kernel and fuzz tests again with every array access bounds-checked, compiled into a cache of their own
	# (Numba's cache key leaves the flag out: a shared cache would serve the unchecked machine code).
	NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR=$(VENV)/numba-boundscheck PODIUM_FUZZ_CASES=30 $(VENV)/bin/python -m pytest -q -p no:cacheprovider -n $(JOBS) \
		tests/test_png_rows.py tests/test_metric_label_scan.py tests/test_detection_scan.py tests/test_detection_matching.py tests/test_fuzzy_jaccard_sums.py \
		tests/test_kernel_preconditions.py tests/test_fuzzed_inputs.py -k "not archives and not uploads and not contest_files and not terms"

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
