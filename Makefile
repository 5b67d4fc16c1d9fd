# nfs-tuner: `make run` starts the app, `make test` runs every test, `make check` the quick ones.
VENV      := .venv
PY        := $(VENV)/bin/python
STAMP     := $(VENV)/.installed
PYTEST_ARGS ?=
PROFILE   ?= gigabit
RTT_MS    ?=
MTU       ?= 9000
KERNEL    ?=
LAB_KERNEL ?= 7.2
SECOND_KERNEL ?= 6.1
CHECK_WORKERS ?= auto
# Python keeps its bytecode (__pycache__, ignored by git and the packages) even where the environment says not to:
# pytest otherwise rewrites every test module's asserts afresh in each run, 18 s of a run's collection.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test check lint man dist deb system-deps venv lab-up lab-down lab-status lab-heal lab-profile lab-mtu screenshots bundle clean

$(STAMP): pyproject.toml
	@py="$${PYTHON:-}"; [ -n "$$py" ] || py=$$(sh tests/find-python.sh) || exit 1; \
	if [ ! -x $(PY) ]; then echo "make: creating $(VENV) with $$py"; "$$py" -m venv $(VENV) || { \
		echo "make: '$$py -m venv' failed; on Debian/Ubuntu install python3-venv (or python3.12-venv)" >&2; exit 1; }; fi
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	@touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/nfs-tuner $(if $(SSH_CONFIG),--ssh-config $(SSH_CONFIG))

system-deps:
	@sh tests/system-deps.sh

# Every test: the lab's in three shares on three labs (UML 7.2, fetched once into .lab/kernels) beside the
# tests that need no lab, then the lab tests marked every_kernel on UML 6.1: tests/run-suites.sh says how.
# SECOND_KERNEL= leaves the second kernel out; pytest's 5 means PYTEST_ARGS left none of a run's tests.
test: system-deps lint
	QT_QPA_PLATFORM=offscreen sh tests/run-suites.sh $(PY) "$(LAB_KERNEL)" "$(SECOND_KERNEL)" $(PYTEST_ARGS)

# The everyday check, under 3 minutes on two cores: lint, then every test that needs no lab, no root and no
# subprocess-heavy tool (those are marked `slow`: builds, installs, the agent under Python 3.6, ansible, real
# shells, the helper and switch run as programs), on every core (pytest-xdist; CHECK_WORKERS=1 for one):
# 5,222 tests in 2 min 48 s on two idle cores, lint's 10 s included (2 min 57 s without bytecode from a run before).
check: lint
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -n $(CHECK_WORKERS) -m "not lab and not slow" $(PYTEST_ARGS)

# Type checking (strict; see [tool.mypy]) and linting, before the tests: well under a minute.
lint: $(STAMP)
	$(PY) -m ruff check app ui experiments tests benchmarks
	$(PY) -m mypy

# nfs-tuner(1), made from the parser (never kept in git, so it cannot drift): man -l build/man/nfs-tuner.1
man: $(STAMP)
	@mkdir -p build/man
	$(PY) -m app.shell.manpage > build/man/nfs-tuner.1

# The wheel and sdist (twine check passes on both), for PyPI or `pipx install dist/nfs_tuner-*.whl`.
dist: $(STAMP)
	rm -rf dist
	$(PY) -m build --outdir dist .
	$(PY) -m twine check --strict dist/*

# The Debian package: build/nfs-tuner_<version>-1_<arch>.deb with its own Python under /usr/lib/nfs-tuner
# (packaging/deb/build-deb.sh says why); lintian passes with the overrides it ships, each explained.
deb: dist
	packaging/deb/build-deb.sh dist/nfs_tuner-*.whl build
	lintian --fail-on error,warning build/nfs-tuner_*.deb

# The local NFS lab: three User-Mode Linux hosts in a private network namespace.
# KERNEL=7.2 boots Debian testing's UML 7.2 (fetched into .lab/kernels once) instead of bookworm's 6.1.
lab-up: $(STAMP)
	$(PY) -m tests.lab up --profile $(PROFILE) $(if $(RTT_MS),--rtt-ms $(RTT_MS)) $(if $(KERNEL),--kernel $(KERNEL))

lab-down: $(STAMP)
	$(PY) -m tests.lab down

lab-status: $(STAMP)
	$(PY) -m tests.lab status

# Restart any lab guest that stopped answering (its console is kept).
lab-heal: $(STAMP)
	$(PY) -m tests.lab heal

# Reshape the running lab: make lab-profile PROFILE=wan RTT_MS=10
lab-profile: $(STAMP)
	$(PY) -m tests.lab profile $(PROFILE) $(if $(RTT_MS),--rtt-ms $(RTT_MS))

# Set the lab switch's MTU (1500 makes an MTU black hole for hosts asked for 9000).
lab-mtu: $(STAMP)
	$(PY) -m tests.lab mtu $(MTU)

# The README's pictures: every wizard page (the demo's simulated hosts, Xvfb), the review window and the
# HTML report at 1280×800; then the pages that show most at 1024×700, at 1920×1080 and at 2× (1920×1080
# pixels, a 960×540 window: QT_SCALE_FACTOR=2), named -1024, -1920 and -2x. A window that cannot be
# made that small fails the target; a page that scrolls sideways is named on stderr.
SHOTS     := docs/screenshots
SHOTS_FEW := 1-hosts,3-plan,4-run,5-results
screenshots: $(STAMP)
	xvfb-run -a -s "-screen 0 1280x800x24" $(PY) -m ui.screenshots $(SHOTS)
	QT_QPA_PLATFORM=offscreen $(PY) -m tests.report_screenshot $(SHOTS)
	xvfb-run -a -s "-screen 0 1280x800x24" $(PY) -m ui.screenshots $(SHOTS) --size 1024x700 --suffix=-1024 --only $(SHOTS_FEW)
	QT_QPA_PLATFORM=offscreen $(PY) -m tests.report_screenshot $(SHOTS) --size 1024x700 --suffix=-1024 --review-only
	xvfb-run -a -s "-screen 0 1920x1080x24" $(PY) -m ui.screenshots $(SHOTS) --size 1920x1080 --suffix=-1920 --only $(SHOTS_FEW)
	QT_QPA_PLATFORM=offscreen $(PY) -m tests.report_screenshot $(SHOTS) --size 1920x1080 --suffix=-1920 --review-only
	QT_SCALE_FACTOR=2 xvfb-run -a -s "-screen 0 1920x1080x24" $(PY) -m ui.screenshots $(SHOTS) --size 960x540 \
		--suffix=-2x --only $(SHOTS_FEW),4-run-dark
	QT_SCALE_FACTOR=2 xvfb-run -a -s "-screen 0 1920x1080x24" $(PY) -m tests.report_screenshot $(SHOTS) \
		--size 960x540 --suffix=-2x --review-only

# A single-file executable (PyInstaller) in build/bundle/.
bundle: $(STAMP)
	packaging/build-bundle.sh

clean:
	rm -rf $(VENV) build dist *.egg-info
