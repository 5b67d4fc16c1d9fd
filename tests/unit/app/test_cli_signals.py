"""SIGTERM and SIGHUP (a service stop, a closed terminal) end a headless run as Ctrl-C does: the session is
cancelled, every change put back by the controller itself, and the exit status says which signal it was."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from app.cli import main
from app.store import SessionState, Store
from tests.unit.app.session.study_hosts import simulated_study_hosts
from tests.unit.app.session.test_ladder_study import ladder_args


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_cancels_the_study_and_puts_every_change_back(
    signum: signal.Signals, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    simulated_study_hosts(monkeypatch)
    db = tmp_path / "s.db"
    # a ladder long enough to be mid-trial when the signal comes: a thread sends it to this process once
    # the run's handler is in place (before that it would end pytest itself: a slow start must not race it)
    stop = threading.Event()

    def send() -> None:
        deadline = time.monotonic() + 60
        while signal.getsignal(signum) is signal.SIG_DFL and time.monotonic() < deadline:
            if stop.wait(0.05):
                return
        if not stop.wait(1.0):
            os.kill(os.getpid(), signum)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    try:
        code = main(ladder_args(db, "--knob", "nfsd_threads=2", "--max-streams", "128", "--duration", "600"))
    finally:
        stop.set()
        sender.join()
    err = capsys.readouterr().err
    assert code == 128 + signum
    assert f"cancelled ({signum.name}); every change was put back" in err
    with Store(db, readonly=True) as store:
        (session,) = store.list_sessions()
        assert session.state is SessionState.CANCELLED
        journal = store.journal(session.id)
        assert journal and not store.unreverted_journal()  # nfsd_threads was changed, and it was put back
    # the handlers were the run's alone: the process's own dispositions are back
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL and signal.getsignal(signal.SIGHUP) is signal.SIG_DFL
