"""Shared fixtures. The ``lab`` fixture gives the tests real hosts (tests/lab)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.lab.kernels import DEFAULT as DEFAULT_KERNEL
from tests.lab.lab import Lab, LabError


@dataclass
class LabHandle:
    lab: Lab

    @property
    def ssh_config(self) -> Path:
        return self.lab.ssh_config

    @property
    def known_hosts(self) -> Path:
        return self.lab.known_hosts

    @property
    def key(self) -> Path:
        return self.lab.key

    def run(self, host: str, command: str, *, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``command`` as root on a lab host over real SSH."""
        return self.lab.ssh(host, command, timeout=timeout, check=check)


# `make test` runs the lab's tests as three shares on three labs side by side (tests/run-suites.sh), beside
# two labs of the second kernel (its every_kernel tests, and the calibrated ones). Whole files, so the tests
# that leave sessions for others keep them (test_sweep_lab's for test_review_lab); the rest is share 1.
# Balanced on measured times (seconds on a loaded run, UML 7.2): NFS_TUNER_LAB_SHARE=1, 2 or 3 keeps one
# share's lab tests.
LAB_SHARES = {
    "tests/integration/test_guided_lab.py": 2,  # calibrated: on the second kernel's lab
    "tests/integration/test_narrow_sudo_lab.py": 2,  # 230
    "tests/integration/test_recommendation_lab.py": 2,  # 60
    "tests/integration/test_host_faults_lab.py": 3,  # 550
    "tests/integration/test_full_export_lab.py": 3,  # 40
    "tests/integration/test_deadman_lab.py": 3,  # 140
    "tests/integration/test_phased_within_budget_lab.py": 3,  # 200
    "tests/integration/test_diagnosis_lab.py": 3,  # calibrated: on the second kernel's lab
    "tests/lab/test_profiles.py": 3,  # calibrated: on the second kernel's lab
}


def lab_share(path: str) -> int:
    return LAB_SHARES.get(path, 1)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    share = os.environ.get("NFS_TUNER_LAB_SHARE", "")
    # the lab's figures were measured on its default kernel (docs/lab.md): elsewhere their tests are not chosen
    other_kernel = (os.environ.get("NFS_TUNER_LAB_KERNEL") or DEFAULT_KERNEL) != DEFAULT_KERNEL
    if share not in ("1", "2", "3") and not other_kernel:
        return
    root = Path(__file__).resolve().parents[1]
    keep, drop = [], []
    for item in items:
        mine = (item.get_closest_marker("lab") is None or share not in ("1", "2", "3")
                or lab_share(item.path.relative_to(root).as_posix()) == int(share))  # fmt: skip
        if other_kernel and item.get_closest_marker("calibrated") is not None:
            mine = False
        (keep if mine else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _lab_skip_reason() -> str | None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        return None  # under CI the lab tests always run, and fail if the lab cannot start
    if os.geteuid() != 0:
        return "lab tests need root (network namespaces, tap devices): run `sudo make test`, or set CI=true"
    return None


def _lab_for(kernel: str | None) -> Lab:
    """The repo's lab; when it is up on another kernel than the one asked for, a sibling lab
    (``.lab-7.2``) that shares its kernel cache, so a running lab is neither used nor disturbed."""
    main = Lab()
    running = main.kernel_name() if main.is_up() else None
    if kernel is None or running in (None, kernel):
        return main
    return Lab(main.dir.with_name(f"{main.dir.name}-{kernel}"), kernels=main.kernels)


@pytest.fixture(scope="session")
def lab() -> Iterator[LabHandle]:
    """The running lab; started once per test run (and stopped after) unless already up.

    NFS_TUNER_LAB_KERNEL (tests/lab/kernels.py) asks for the guests' kernel; `make test` runs the
    lab's tests on UML 7.2, and those marked ``every_kernel`` or ``calibrated`` on 6.1 (tests/run-suites.sh)."""
    reason = _lab_skip_reason()
    if reason:
        pytest.skip(reason)
    kernel = os.environ.get("NFS_TUNER_LAB_KERNEL") or None
    the_lab = _lab_for(kernel)
    started_here = not the_lab.is_up()
    if started_here:
        try:
            the_lab.up(profile="gigabit", kernel=kernel or DEFAULT_KERNEL)
        except LabError as exc:
            pytest.fail(f"the lab did not start: {exc}", pytrace=False)
    else:
        try:  # a guest wedged by an earlier run is restarted, and named
            the_lab.heal(say=lambda m: print(m, flush=True))
        except LabError as exc:
            pytest.fail(f"the lab has a guest that stopped answering and could not restart it: {exc}", pytrace=False)
    try:
        yield LabHandle(the_lab)
    finally:
        if started_here:
            the_lab.down()


@pytest.fixture(scope="session")
def lab_sessions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where the lab sweep tests leave their session databases for the review tests."""
    return tmp_path_factory.mktemp("lab-sessions")


@pytest.fixture
def on_profile(lab: LabHandle) -> Iterator[Lab]:
    """The lab, put back on the profile it had after the test."""
    before = lab.lab.current_profile()
    try:
        yield lab.lab
    finally:
        lab.lab.set_profile(before.name, before.rtt_ms if before.name == "wan" else None)
