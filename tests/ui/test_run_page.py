"""The Run page read from across the room: a legend beside the data, not on it; colours
that stay apart for 16 clients; lines that widen with the screen; the band named with
its rule; a Paused state that shows; a time left that ticks and then says how the run
ended; tiles that say what ran, and whose clients differed beyond the noise; and Back to
Plan after a cancelled run.

The wizard pages run on the real application layer over the demo's simulated hosts."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QLineF, QPoint, QRect
from PySide6.QtGui import QColor, QImage, QPainter, QPalette, QPen
from PySide6.QtWidgets import QMessageBox, QWidget

from app.events import EventBus, SamplesBatch, TelemetryBatch
from app.simulated import SimulatedHosts
from app.store import JournalState, SessionState
from app.sweep.events import TrialFinished
from app.vocabulary import config_text, fairness_note, latency_text
from experiments.fairness import Fairness, fairness
from experiments.latency import Latency
from experiments.samples import HostTelemetry, Sample
from ui import theme
from ui.bridge import Bridge
from ui.curve_layer import CurveLayer
from ui.live_plot import LivePlots
from ui.pages.plan import PlanPage
from ui.pages.run import PAUSED_BETWEEN, PAUSED_IN_TRIAL, RunPage
from ui.plot_legend import PlotLegend
from ui.trial_strip import LINES, TrialStrip, trial_figures

from .colour_difference import ciede2000, contrast
from .wizard_driver import go_next, small_plan, start_slow_run, to_plan

ROOT = Path(__file__).resolve().parents[2]
MIN_DELTA_E = 15.0  # CIEDE2000: about 2 is a just-noticeable difference; 15 is plainly another colour
LIGHT_BASE, DARK_BASE = "#ffffff", "#1e1e1e"
SELECTION_BLUES = ("#308cc6", "#2a82da", "#3daee9", "#3584e4")  # Highlight of Fusion light and dark, Breeze, Adwaita


def _sixteen_clients(qtbot) -> tuple[Bridge, LivePlots]:  # type: ignore[no-untyped-def]
    bus = EventBus()
    bridge = Bridge(bus)
    plots = LivePlots(bridge.live)
    qtbot.addWidget(plots)
    plots.resize(850, 480)  # what the Run page gives them in a 1024 × 700 window
    with qtbot.waitExposed(plots):
        plots.show()
    rng = np.random.default_rng(2)
    for i in range(60):
        t = (i + 1) * 0.25
        bus.publish(SamplesBatch(1, [Sample(f"client{c + 1:02d}", t, 0.25, bytes_read=int(rng.normal(1e6 * (c + 2), 5e4)))
                                     for c in range(16)]))  # fmt: skip
        if i % 4 == 3:
            bus.publish(TelemetryBatch(1, [HostTelemetry("srv", t, 1.0, disk_read_bps=7e6, net_tx_bps=9e6)]))
    bridge.flush()
    plots.draw_all()
    return bridge, plots


def _global_rect(widget: QWidget, rect: QRect) -> QRect:
    return QRect(widget.mapToGlobal(rect.topLeft()), rect.size())


def test_legends_sit_under_the_data_and_show_sixteen_clients_whole(qtbot) -> None:  # type: ignore[no-untyped-def]
    bridge, plots = _sixteen_clients(qtbot)
    qtbot.waitUntil(lambda: plots.trial.legend.height() > 0)
    for owner in (plots.trial, plots.server):
        plot, legend = owner.plot, owner.legend
        view_box = plot.getPlotItem().getViewBox()
        data = _global_rect(plot, plot.mapFromScene(view_box.sceneBoundingRect()).boundingRect())
        assert data.height() > 100 and data.width() > 200
        shown = _global_rect(legend, legend.rect())
        assert not shown.intersects(data), (shown, data)
        assert legend.isVisible()
        for i in range(legend.count()):  # every entry in view, none behind a scroll
            assert legend.viewport().rect().contains(legend.visualItemRect(legend.item(i))), legend.item(i).text()
    names = [plots.trial.legend.item(i).text() for i in range(plots.trial.legend.count())]
    assert names[:3] == ["sum of clients", "rolling mean (10 s)", "band: mean ± 1 sd (10 s)"]
    assert names[3:] == [f"client{c:02d}" for c in range(1, 17)]
    bridge.close()


def test_the_band_is_named_with_the_engines_rule(qtbot) -> None:  # type: ignore[no-untyped-def]
    bridge, plots = _sixteen_clients(qtbot)
    trial = plots.trial
    rule = trial.band_entry.toolTip()
    assert rule == trial.stability.toolTip()
    assert "mean ± one standard deviation over the last 10 s" in rule
    assert "drifts by at most 5.0 %" in rule and "range (max − min) is at most 20 %" in rule
    readout = trial.stability.text()  # 15 s of samples: judged by the rule, with its limits
    assert readout.startswith(("stable:", "settling:")) and "(≤ 5.0 %)" in readout and "(≤ 20 %)" in readout
    bridge.close()


def test_sixteen_client_colours_stay_apart_on_light_and_dark() -> None:
    for colours, base in ((theme.CLIENT_COLOURS_LIGHT, LIGHT_BASE), (theme.CLIENT_COLOURS_DARK, DARK_BASE)):
        assert len(set(colours)) == 16
        closest = min(ciede2000(a, b) for a, b in itertools.combinations(colours, 2))
        assert closest >= MIN_DELTA_E, closest
        assert all(contrast(c, base) >= 3.0 for c in colours)  # WCAG's minimum for graphics
        assert min(ciede2000(c, blue) for c in colours for blue in SELECTION_BLUES) >= 18  # the mean's colour
    neighbours = [ciede2000(theme.CLIENT_COLOURS_LIGHT[i], theme.CLIENT_COLOURS_LIGHT[i + 1]) for i in range(15)]
    assert min(neighbours) >= MIN_DELTA_E  # clients 3 and 4 no longer get two greens


def test_the_plot_gives_clients_the_palette_of_its_background(qtbot, qapp) -> None:  # type: ignore[no-untyped-def]
    bridge, plots = _sixteen_clients(qtbot)

    def pens() -> list[str]:
        return [c.opts["pen"].color().name() for c in plots.trial.client_curves.values()]

    assert pens() == list(theme.CLIENT_COLOURS_LIGHT)
    light = qapp.palette()
    dark = QPalette(light)
    for role, colour in ((QPalette.ColorRole.Window, "#2b2b2b"), (QPalette.ColorRole.Base, DARK_BASE),
                         (QPalette.ColorRole.Text, "#e6e6e6")):  # fmt: skip
        dark.setColor(role, QColor(colour))
    try:
        qapp.setPalette(dark)
        qtbot.waitUntil(lambda: pens() == list(theme.CLIENT_COLOURS_DARK))
    finally:
        qapp.setPalette(light)
    bridge.close()


def test_line_widths_grow_with_the_pixel_ratio_and_the_font() -> None:
    assert theme.line_width(1, 1.0, 12) == 1 and theme.line_width(2, 1.0, 12) == 2
    assert theme.line_width(1, 2.0, 12) == 2 and theme.line_width(2, 2.0, 12) == 4  # not hairlines at 2×
    assert theme.line_width(1, 1.0, 26) == 2  # a large desktop font: wider lines too
    assert theme.line_width(1, 1.5, 12) == 2


def test_a_client_line_at_twice_the_pixels_is_two_pixels_thick(qtbot) -> None:  # type: ignore[no-untyped-def]
    """What the layer paints: a cosmetic pen of line_width(1, 2×) into a 2× picture."""
    layer = CurveLayer()
    width = theme.line_width(1, 2.0, 12)
    t, y = np.array([1.0, 39.0]), np.array([20.0, 20.0])
    line = layer.add_line("c", lambda: (t, y, 2), pg.mkPen("#1e78b4", width=width))
    image = QImage(80, 80, QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(2.0)
    image.fill(0)
    painter = QPainter(image)
    line.render(painter, t, y)
    painter.end()
    column = [image.pixelColor(40, row).alpha() for row in range(image.height())]
    assert sum(1 for a in column if a) == 2
    hairline = QImage(image)
    hairline.fill(0)
    painter = QPainter(hairline)
    painter.setPen(pg.mkPen("#1e78b4", width=1))
    painter.drawLine(QLineF(1, 20, 39, 20))
    painter.end()
    assert sum(1 for row in range(80) if hairline.pixelColor(40, row).alpha()) == 1  # what it was before


def test_at_scale_factor_two_the_plot_pens_are_twice_as_wide() -> None:
    """QT_SCALE_FACTOR=2 as the tester ran it, in a process of its own (it must be set before Qt starts)."""
    code = ("from ui.theme import application; app = application()\n"
            "from ui.bridge import Bridge; from app.events import EventBus; from ui.live_plot import LivePlots\n"
            "p = LivePlots(Bridge(EventBus()).live); p.show(); app.processEvents()\n"
            "t = p.trial; print(t.devicePixelRatioF(), t.sum_curve.opts['pen'].width(), "
            "t.mean_curve.opts['pen'].width(), p.server.curves['disk_read'].opts['pen'].width())\n")  # fmt: skip
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "QT_SCALE_FACTOR": "2"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    ratio, total, mean, server = out.stdout.split()
    assert float(ratio) == 2.0
    assert (int(total), int(mean), int(server)) == (4, 2, 2)


# --- the page over the demo's hosts -------------------------------------------------------------


def _run_page(window) -> RunPage:  # type: ignore[no-untyped-def]
    page = window.wizard.currentPage()
    assert isinstance(page, RunPage)
    return page


def test_pause_shows_what_goes_on_and_resume_clears_it(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    run = _run_page(start_slow_run(qtbot, session, tmp_path))
    engine = session._engine
    assert engine is not None
    qtbot.waitUntil(lambda: run.in_trial)
    running_bar = run.progress.palette().color(QPalette.ColorRole.Highlight)
    run.pause_button.click()
    assert not engine.go_on.is_set()
    assert run.paused_banner.isVisible() and run.paused_banner.text() == PAUSED_IN_TRIAL
    assert run.pause_button.text() == "&Resume"
    assert run.progress.format().endswith("paused") and "paused" in run.progress.text()
    assert run.progress.palette().color(QPalette.ColorRole.Highlight) != running_bar
    frozen = run.eta_label.text()
    assert frozen.startswith("paused: about") and "left once resumed" in frozen
    qtbot.wait(1300)
    assert run.eta_label.text() == frozen  # the clock stands still while paused
    assert isinstance(session.hosts, SimulatedHosts)
    session.hosts.speed = 200.0  # the current trial runs to its end…
    qtbot.waitUntil(lambda: run.strip.count() == 1, timeout=20_000)
    assert run.paused_banner.text() == PAUSED_BETWEEN
    assert engine.session_id is not None
    trials = len(session.store.trials(engine.session_id))
    qtbot.wait(500)
    assert len(session.store.trials(engine.session_id)) == trials and not run.in_trial  # …and no next one starts
    run.pause_button.click()
    assert engine.go_on.is_set()
    assert not run.paused_banner.isVisible() and run.pause_button.text() == "&Pause"
    assert "paused" not in run.progress.format() and "paused" not in run.eta_label.text()
    assert run.progress.palette().color(QPalette.ColorRole.Highlight) == running_bar
    qtbot.waitUntil(lambda: run.in_trial, timeout=20_000)  # the next trial starts


def test_the_time_left_ticks_and_then_says_the_run_was_cancelled(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = to_plan(qtbot, session, tmp_path)
    plan = window.wizard.currentPage()
    assert isinstance(plan, PlanPage) and isinstance(session.hosts, SimulatedHosts)
    small_plan(plan)  # minutes, written to the second (hours are written to the minute)
    session.hosts.speed = 4.0
    go_next(qtbot, window.wizard)
    run = _run_page(window)
    first = run.eta_label.text()
    assert first.startswith("about ") and first.endswith(" s left (the demo runs 4× faster than real hosts)")
    qtbot.waitUntil(lambda: run.eta_label.text() != first, timeout=2500)  # a second later, a second less
    run.cancel_button.click()
    qtbot.waitUntil(lambda: run.cancel_question is not None and run.cancel_question.isVisible())
    assert run.cancel_question is not None
    run.cancel_question.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: not session.running and run.task is None, timeout=20_000)
    assert run.eta_label.text() == "cancelled"
    qtbot.wait(1200)
    assert run.eta_label.text() == "cancelled"  # no tick brings a time back
    readout = run.plots.trial.stability.text()
    assert readout.startswith("Run cancelled") and "settling" not in readout


def test_tiles_say_which_configuration_ran_and_the_readout_agrees(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = to_plan(qtbot, session, tmp_path)
    plan = window.wizard.currentPage()
    assert isinstance(plan, PlanPage)
    small_plan(plan)
    go_next(qtbot, window.wizard)
    run = _run_page(window)
    spec = window.wizard.state.spec
    assert spec is not None
    qtbot.waitUntil(run.isComplete, timeout=30_000)
    assert run.strip.count() == len(run.finished_trials) == 4
    for i, ev in enumerate(run.finished_trials):
        head, config, figures, latency = run.strip.item(i).text().split("\n")
        assert head.startswith(f"#{i + 1} {ev.workload}")
        assert config in ("nfsd_threads=8", "nfsd_threads=64") and config == config_text(dict(ev.config))
        assert figures == trial_figures(ev) and "MB/s, CV " in figures
        assert ev.latency is not None and latency == f"p99 {latency_text(ev.latency.p99_ms)}"  # merged over clients
        assert 0 < ev.latency.p50_ms <= ev.latency.p99_ms <= ev.latency.p999_ms
        assert config_text(dict(ev.config)) in run.strip.item(i).toolTip()
        assert f"p50 {latency_text(ev.latency.p50_ms)}, {latency}, p99.9 {latency_text(ev.latency.p999_ms)}" \
            in run.strip.item(i).toolTip()  # fmt: skip
    assert run.eta_label.text() == "finished"
    last = run.strip.item(3).text().split("\n")[2]
    assert run.plots.trial.stability.text().endswith(f": {last}")  # what the last tile says, not a stale check
    window_s = spec.criteria().window * spec.interval_s
    assert run.plots.trial.band_entry.text() == f"band: mean ± 1 sd ({window_s:g} s)"
    assert f"over the last {window_s:g} s" in run.plots.trial.stability.toolTip()


def _finished(trial_id: int, fair: Fairness | None) -> TrialFinished:
    return TrialFinished(1, trial_id, {"nfsd_threads": 64}, "seq_read", "ok", 112.3e6, cv=0.028, stable=True,
                         latency=Latency(1000, 1.0, 4.0, 9.0, 12.0, {}), fairness=fair)  # fmt: skip


def test_a_tile_says_clients_beyond_the_noise_in_the_reports_words(qtbot) -> None:  # type: ignore[no-untyped-def]
    strip = TrialStrip()
    qtbot.addWidget(strip)
    even_height = strip.gridSize().height()
    uneven = fairness({"client1": 200.0, "client2": 100.0}, 0.05)
    late = fairness({"client1": 1000, "client2": 1000}, 0.05, "ops", {"client1": 10.0, "client2": 21.0})
    assert uneven is not None and uneven.uneven and late is not None and late.late and not late.uneven
    tile = strip.add(_finished(1, uneven))
    lines = tile.text().split("\n")
    assert len(lines) == LINES + 1 and lines[-1] == "clients 2.0×, Jain 0.90"
    assert lines[-1] == f"clients {fairness_note(uneven)}"  # the review's and the report's Fairness cell
    tip = tile.toolTip()
    assert "Clients' shares of the total: client1 67 %, client2 33 %, client2 lowest: beyond the noise (rule: " in tip
    assert tip.endswith(", pooled CV 5.0 %).") and "last done" not in tip
    late_tile = strip.add(_finished(2, late))
    assert late_tile.text().split("\n")[-1] == "clients 1.0×, Jain 1.00, last done 2.1× after first"
    assert "Fixed-size work: the last client was done 2.1× after the first (21.0 s against 10.0 s): beyond the noise" \
        in late_tile.toolTip() and "Clients' shares" not in late_tile.toolTip()  # fmt: skip
    assert strip.gridSize().height() > even_height  # every tile has room for the fifth line
    strip.clear()
    assert strip.gridSize().height() == even_height  # the next run starts with four-line tiles


def test_even_clients_add_nothing_to_a_tile(qtbot) -> None:  # type: ignore[no-untyped-def]
    even = fairness({"client1": 100.0, "client2": 103.0}, 0.05, "ops", {"client1": 10.0, "client2": 10.4})
    assert even is not None and not even.uneven and not even.late
    strips = [TrialStrip(), TrialStrip()]
    for strip in strips:
        qtbot.addWidget(strip)
    (plain, plain_grid), (evened, even_grid) = ((strip.add(_finished(1, fair)), strip.gridSize())
                                                for strip, fair in zip(strips, (None, even), strict=True))  # fmt: skip
    assert evened.text() == plain.text() and len(evened.text().split("\n")) == LINES
    assert evened.toolTip() == plain.toolTip() and "client" not in evened.toolTip()
    assert even_grid == plain_grid


def test_a_tile_says_its_figure_is_the_rate_of_what_completed(qtbot) -> None:  # type: ignore[no-untyped-def]
    strip = TrialStrip()
    qtbot.addWidget(strip)
    cut = TrialFinished(1, 1, {"export_sync": "sync"}, "small_files", "ok", 12.0, unit="ops/s", limited=("create",),
                        time_limit_s=65.0)  # fmt: skip
    whole = TrialFinished(1, 2, {"export_sync": "async"}, "small_files", "ok", 1234.0, unit="ops/s")
    tile, plain = strip.add(cut), strip.add(whole)
    assert tile.text().split("\n")[2] == "12 ops/s (time-limited)" and plain.text().split("\n")[2] == "1,234 ops/s"
    assert "create ended at its share of the 1 min 05 s limit: the rate of what it completed" in tile.toolTip()
    assert "limit" not in plain.toolTip()


def test_back_to_plan_after_a_cancel_and_run_again(qtbot, session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = start_slow_run(qtbot, session, tmp_path)
    wizard = window.wizard
    run = _run_page(window)
    assert run.back_button.isHidden()  # not while changes are on the hosts
    run.cancel()
    qtbot.waitUntil(lambda: not session.running and run.task is None, timeout=20_000)
    cancelled = wizard.state.finished
    assert cancelled is not None and cancelled.state == SessionState.CANCELLED.value
    assert run.back_button.isVisible() and run.back_button.isEnabled()
    run.back_button.click()
    plan = wizard.currentPage()
    assert isinstance(plan, PlanPage)
    small_plan(plan)  # a changed plan
    assert isinstance(session.hosts, SimulatedHosts)
    session.hosts.speed = 200.0
    go_next(qtbot, wizard)
    assert wizard.currentPage() is run
    assert run.task is not None and run.back_button.isHidden()
    qtbot.waitUntil(run.isComplete, timeout=30_000)
    again = wizard.state.finished
    assert again is not None and again.state == SessionState.COMPLETE.value
    assert again.session_id != cancelled.session_id
    assert run.strip.count() == len(run.finished_trials) == 4  # the cancelled run's cut-short trial is gone
    assert all(e.state is JournalState.REVERTED for e in session.store.journal())


@pytest.mark.parametrize("clients", [4, 16])
def test_the_legend_grows_by_rows_not_over_the_plot(qtbot, clients: int) -> None:  # type: ignore[no-untyped-def]
    legend = PlotLegend("test")
    qtbot.addWidget(legend)
    legend.resize(480, 10)
    legend.show()
    layer = CurveLayer()
    for c in range(clients):
        legend.add(layer.add_line(f"client{c}", lambda: (np.zeros(0), np.zeros(0), 0), QPen(QColor("red"))), f"client{c}")
    qtbot.waitUntil(lambda: legend.height() > 0)
    rows = {legend.visualItemRect(legend.item(i)).top() for i in range(legend.count())}
    row = legend.visualItemRect(legend.item(0)).height()
    assert legend.height() == pytest.approx(len(rows) * row, abs=2 * row // 3)
    assert legend.viewport().rect().contains(QRect(QPoint(0, 0), legend.visualItemRect(legend.item(clients - 1)).bottomRight()))
