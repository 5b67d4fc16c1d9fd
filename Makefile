# nfs-tuner: `make run` starts the app, `make test` runs every test.
VENV      := .venv
PY        := $(VENV)/bin/python
STAMP     := $(VENV)/.installed
PYTEST_ARGS ?=
PROFILE   ?= gigabit
RTT_MS    ?=
MTU       ?= 9000

.PHONY: run test lint system-deps venv lab-up lab-down lab-status lab-heal lab-profile lab-mtu screenshots bundle clean

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

test: system-deps lint
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest $(PYTEST_ARGS)

# Type checking (strict; see [tool.mypy]) and linting, before the tests: well under a minute.
lint: $(STAMP)
	$(PY) -m ruff check app ui experiments tests benchmarks
	$(PY) -m mypy

# The local NFS lab: three User-Mode Linux hosts in a private network namespace.
lab-up: $(STAMP)
	$(PY) -m tests.lab up --profile $(PROFILE) $(if $(RTT_MS),--rtt-ms $(RTT_MS))

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

# The README's pictures: every wizard page (the demo's simulated hosts, Xvfb), the review window and the HTML report.
screenshots: $(STAMP)
	xvfb-run -a -s "-screen 0 1280x800x24" $(PY) -m ui.screenshots docs/screenshots
	QT_QPA_PLATFORM=offscreen $(PY) -m tests.report_screenshot docs/screenshots

# A single-file executable (PyInstaller) in build/bundle/.
bundle: $(STAMP)
	packaging/build-bundle.sh

clean:
	rm -rf $(VENV) build dist *.egg-info
