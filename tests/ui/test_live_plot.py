from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from app.events import EventBus, SamplesBatch, TelemetryBatch
from experiments.samples import HostTelemetry, Sample
from ui.bridge import Bridge
from ui.live_plot import LivePlots, rolling_mean_std


def _feed(bus: EventBus, n: int, clients: int, trial: int = 1, start: int = 0) -> None:
    for i in range(start, start + n):
        t = (i + 1) * 0.25
        bus.publish(SamplesBatch(trial, [Sample(f"c{c}", t, 0.25, bytes_read=1_000_000 * (c + 1), ops=10,
                                                lat_p99_ms=5.0 + c) for c in range(clients)]))
        if i % 4 == 3:
            bus.publish(TelemetryBatch(trial, [HostTelemetry("srv", t, 1.0, disk_read_bps=7e6, net_tx_bps=9e6)]))


def _shown_plots(qtbot) -> tuple[EventBus, Bridge, LivePlots]:  # type: ignore[no-untyped-def]
    """A bus, its bridge and the live plots on screen (the cached picture needs real paints)."""
    bus = EventBus()
    bridge = Bridge(bus)
    plots = LivePlots(bridge.live)
    qtbot.addWidget(plots)
    with qtbot.waitExposed(plots):
        plots.show()
    return bus, bridge, plots


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


def test_a_frame_adds_only_the_new_points_and_looks_like_a_full_draw(qtbot) -> None:  # type: ignore[no-untyped-def]
    bus, bridge, plots = _shown_plots(qtbot)
    _feed(bus, 4, clients=10)
    bridge.flush()
    plots.refresh()
    trial = plots.trial
    assert len(trial.client_curves) == 10  # every client in the first frame
    viewport = trial.plot.viewport()
    viewport.repaint()
    drawn = trial.layer.full_draws
    for start in range(4, 12):  # eight more frames, one new sample per client each
        _feed(bus, 1, clients=10, start=start)
        bridge.flush()
        plots.refresh()
        viewport.repaint()
    assert trial.layer.full_draws == drawn  # the picture grew; nothing was drawn again
    assert all(len(c.getData()[0]) == 12 and c.drawn == 12 for c in trial.client_curves.values())
    grown = trial.plot.grab().toImage()
    trial.layer.invalidate()
    assert trial.plot.grab().toImage() == grown  # the same pixels as every line drawn at once
    bridge.close()


def test_a_range_step_is_drawn_over_several_frames(qtbot) -> None:  # type: ignore[no-untyped-def]
    bus, bridge, plots = _shown_plots(qtbot)
    _feed(bus, 40, clients=3)
    bridge.flush()
    plots.refresh()
    trial = plots.trial
    viewport = trial.plot.viewport()
    viewport.repaint()
    trial.layer.budget_s = 0.0  # one line a paint
    trial.plot.getPlotItem().setXRange(0, 60, padding=0)
    viewport.repaint()
    paints = 1
    while not trial.layer.settled():
        viewport.repaint()  # meanwhile the old picture is shown stretched onto the new range
        paints += 1
    assert paints == len(trial.layer.lines) == 3 + 3  # the clients, the band, the sum and its mean
    stepped = trial.plot.grab().toImage()
    trial.layer.invalidate()
    assert trial.plot.grab().toImage() == stepped
    bridge.close()


def test_a_click_on_a_legend_sample_hides_that_client(qtbot) -> None:  # type: ignore[no-untyped-def]
    bus = EventBus()
    bridge = Bridge(bus)
    plots = LivePlots(bridge.live)
    qtbot.addWidget(plots)
    plots.show()
    _feed(bus, 8, clients=2)
    bridge.flush()
    plots.refresh()
    trial = plots.trial
    both = trial.plot.grab().toImage()
    trial.legend.entry("c1").setCheckState(Qt.CheckState.Unchecked)  # what a click on its check box does
    assert not trial.client_curves["c1"].isVisible()
    assert trial.plot.grab().toImage() != both
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
