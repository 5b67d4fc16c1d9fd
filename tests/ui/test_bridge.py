from __future__ import annotations

import threading

from app.events import EventBus, Level, Message, SamplesBatch, TelemetryBatch
from experiments.samples import HostTelemetry, Sample
from ui.bridge import Bridge
from app.store.states import JournalState
from app.store.records import JournalEntry
from app.sweep.events import JournalChanged, Progress, SweepFinished, TrialStarted


def _batch(trial: int, t: float, clients: int = 3) -> SamplesBatch:
    return SamplesBatch(trial, [Sample(f"c{i}", t, 0.25, bytes_written=250_000 * (i + 1)) for i in range(clients)])


def test_samples_wait_for_the_frame_then_land_in_the_buffers(qtbot) -> None:  # type: ignore[no-untyped-def]
    bus = EventBus()
    bridge = Bridge(bus)
    bus.publish(_batch(1, 0.25))
    bus.publish(_batch(1, 0.5))
    assert bridge.pending() == 2 and not bridge.live.clients  # nothing done per sample on publish
    with qtbot.waitSignal(bridge.frame):
        pass  # the frame timer drains
    assert bridge.pending() == 0
    t, y = bridge.live.clients["c1"].series["throughput"].view()
    assert t.tolist() == [0.25, 0.5]
    assert y.tolist() == [2_000_000.0, 2_000_000.0]
    st, sy = bridge.live.total_series()
    assert sy.tolist() == [6_000_000.0, 6_000_000.0]
    bridge.close()


def test_one_frame_for_many_batches(qtbot) -> None:  # type: ignore[no-untyped-def]
    bus = EventBus()
    bridge = Bridge(bus)
    frames: list[int] = []
    bridge.frame.connect(lambda: frames.append(1))
    for i in range(100):
        bus.publish(_batch(1, (i + 1) * 0.25))
    bridge.flush()
    assert frames == [1]
    assert len(bridge.live.clients["c0"].series["throughput"]) == 100
    bridge.close()


def test_a_new_trial_starts_with_empty_buffers(qtbot) -> None:  # type: ignore[no-untyped-def]
    bus = EventBus()
    bridge = Bridge(bus)
    bus.publish(_batch(1, 0.25))
    bus.publish(TelemetryBatch(1, [HostTelemetry("srv", 1.0, 1.0, disk_write_bps=5.0)]))
    bridge.flush()
    bus.publish(_batch(2, 0.25, clients=1))
    bridge.flush()
    assert len(bridge.live.clients["c0"].series["throughput"]) == 1
    assert len(bridge.live.clients["c2"].series["throughput"]) == 0
    assert len(bridge.live.hosts["srv"].series["disk_write"]) == 0
    bridge.close()


def test_other_events_become_signals(qtbot) -> None:  # type: ignore[no-untyped-def]
    bus = EventBus()
    bridge = Bridge(bus)
    with qtbot.waitSignal(bridge.message) as msg:
        bus.publish(Message(Level.ERROR, "nfsd did not restart"))
    assert msg.args[0].text == "nfsd did not restart"
    with qtbot.waitSignal(bridge.trialStarted) as started:
        bus.publish(TrialStarted(1, 3, {"rsize": 1048576}, "seq_write", 0))
    assert started.args[0].trial_id == 3
    entry = JournalEntry(1, 1, "srv", "nfsd_threads", "/proc/fs/nfsd/threads", 8, 64, 0.0, 0.0,
                         JournalState.APPLIED, "")
    with qtbot.waitSignal(bridge.journalChanged) as journal:
        bus.publish(JournalChanged(1, (entry,)))
    assert journal.args[0].entries[0].new_value == 64
    with qtbot.waitSignal(bridge.progress) as progress:
        bus.publish(Progress(1, 4, None))
    assert progress.args[0].eta_s is None
    with qtbot.waitSignal(bridge.runFinished) as finished:
        bus.publish(SweepFinished(1, "cancelled", 1))
    assert finished.args[0].state == "cancelled"
    bridge.close()


def test_events_from_another_thread_arrive_on_the_gui_thread(qtbot) -> None:  # type: ignore[no-untyped-def]
    bus = EventBus()
    bridge = Bridge(bus)
    seen: list[object] = []
    bridge.message.connect(lambda m: seen.append(threading.current_thread()))
    worker = threading.Thread(target=lambda: bus.publish(Message(Level.INFO, "hi")))
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: bool(seen))
    assert seen == [threading.main_thread()]
    bridge.close()


def test_close_unsubscribes(qtbot) -> None:  # type: ignore[no-untyped-def]
    bus = EventBus()
    bridge = Bridge(bus)
    bridge.close()
    bus.publish(_batch(1, 0.25))
    assert bridge.pending() == 0


def test_a_bridge_whose_window_is_gone_stops_listening(qtbot) -> None:  # type: ignore[no-untyped-def]
    import shiboken6
    from PySide6.QtCore import QObject

    bus = EventBus()
    parent = QObject()
    Bridge(bus, parent=parent)
    shiboken6.delete(parent)  # the window closed while the run's thread still publishes
    bus.publish(Progress(1, 2, 10.0))  # would log "Signal source has been deleted" on every event
    assert bus._subscribers == []
