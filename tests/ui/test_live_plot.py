from __future__ import annotations

import numpy as np

from app.events import EventBus, SamplesBatch, TelemetryBatch
from experiments.samples import HostTelemetry, Sample
from ui.bridge import Bridge
from ui.live_plot import LivePlots, rolling_mean_std


def _feed(bus: EventBus, n: int, clients: int, trial: int = 1) -> None:
    for i in range(n):
        t = (i + 1) * 0.25
        bus.publish(SamplesBatch(trial, [Sample(f"c{c}", t, 0.25, bytes_read=1_000_000 * (c + 1), ops=10,
                                                lat_p99_ms=5.0 + c) for c in range(clients)]))
        if i % 4 == 3:
            bus.publish(TelemetryBatch(trial, [HostTelemetry("srv", t, 1.0, disk_read_bps=7e6, net_tx_bps=9e6)]))


def test_curves_get_the_data_that_arrived(qtbot) -> None:  # type: ignore[no-untyped-def]
    bus = EventBus()
    bridge = Bridge(bus)
    plots = LivePlots(bridge.live)
    qtbot.addWidget(plots)
    plots.show()
    bridge.tick.connect(plots.refresh)
    _feed(bus, 40, clients=3)
    with qtbot.waitSignal(bridge.tick):
        pass
    curves = plots.trial.client_curves
    assert sorted(curves) == ["c0", "c1", "c2"]
    x, y = curves["c2"].getData()
    assert len(x) == 40 and np.allclose(y, 12_000_000.0)  # 3 MB per 0.25 s
    sx, sy = plots.trial.sum_curve.getData()
    assert np.allclose(sy, 24_000_000.0)
    mx, my = plots.trial.mean_curve.getData()
    assert np.allclose(my, 24_000_000.0)
    assert plots.trial.stability.text().startswith("stable")
    dx, dy = plots.server.curves["disk_read"].getData()
    assert len(dx) == 10 and np.allclose(dy, 7e6)
    bridge.close()


def test_metric_switch_shows_latency_without_a_sum(qtbot) -> None:  # type: ignore[no-untyped-def]
    bus = EventBus()
    bridge = Bridge(bus)
    plots = LivePlots(bridge.live)
    qtbot.addWidget(plots)
    plots.show()
    _feed(bus, 8, clients=2)
    bridge.flush()
    plots.metric_box.setCurrentIndex(plots.metric_box.findData("lat_p99"))
    assert np.allclose(plots.trial.client_curves["c1"].getData()[1], 6.0)
    assert not plots.trial.sum_curve.isVisible()
    bridge.close()


def test_unstable_throughput_is_called_settling(qtbot) -> None:  # type: ignore[no-untyped-def]
    bus = EventBus()
    bridge = Bridge(bus)
    plots = LivePlots(bridge.live)
    qtbot.addWidget(plots)
    plots.show()
    rng = np.random.default_rng(1)
    for i in range(40):
        bus.publish(SamplesBatch(1, [Sample("c", (i + 1) * 0.25, 0.25, bytes_read=int(rng.uniform(1e5, 1e6)))]))
    bridge.flush()
    plots.refresh()
    assert plots.trial.stability.text().startswith("settling")
    bridge.close()


def test_rolling_mean_and_std() -> None:
    mean, std = rolling_mean_std(np.array([1.0, 3.0, 5.0, 7.0]), window=2)
    assert mean.tolist() == [1.0, 2.0, 4.0, 6.0]
    assert np.allclose(std, [0.0, 1.0, 1.0, 1.0])


def test_client_curves_are_spread_over_frames_but_all_get_drawn(qtbot) -> None:  # type: ignore[no-untyped-def]
    bus = EventBus()
    bridge = Bridge(bus)
    plots = LivePlots(bridge.live)
    qtbot.addWidget(plots)
    plots.show()
    _feed(bus, 4, clients=10)
    bridge.flush()
    plots.refresh()
    assert len(plots.trial.client_curves) == plots.trial.clients_per_frame  # a frame's budget, not all ten
    assert len(plots.trial.sum_curve.getData()[0]) == 4  # the sum is drawn every frame
    for _ in range(3):
        plots.refresh()  # following frames catch up with no new data
    assert all(len(c.getData()[0]) == 4 for c in plots.trial.client_curves.values())
    assert len(plots.trial.client_curves) == 10
    bridge.close()


def test_a_hidden_plot_draws_nothing_until_shown(qtbot) -> None:  # type: ignore[no-untyped-def]
    bus = EventBus()
    bridge = Bridge(bus)
    plots = LivePlots(bridge.live)
    qtbot.addWidget(plots)
    _feed(bus, 4, clients=2)
    bridge.flush()
    plots.refresh()
    assert not plots.trial.client_curves
    plots.show()
    plots.refresh()
    assert len(plots.trial.client_curves) == 2
    bridge.close()


def test_plots_follow_a_switch_to_a_dark_palette(qtbot, qapp) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QColor, QPalette

    bus = EventBus()
    bridge = Bridge(bus)
    plots = LivePlots(bridge.live)
    qtbot.addWidget(plots)
    plots.show()
    light = qapp.palette()
    dark = QPalette(light)
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#e6e6e6"))
    try:
        qapp.setPalette(dark)
        qtbot.waitUntil(lambda: plots.trial.plot.backgroundBrush().color().name() == "#1e1e1e")
        assert plots.server.plot.backgroundBrush().color().name() == "#1e1e1e"
        assert plots.trial.sum_curve.opts["pen"].color().name() == "#e6e6e6"
    finally:
        qapp.setPalette(light)
    bridge.close()
