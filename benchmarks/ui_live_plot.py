"""Live-plot benchmark: 16 clients × 3 series at 4 Hz plus server telemetry, for a
simulated 10 minutes, through the real EventBus → Bridge → LivePlots path.

Time is compressed (``--compress``): samples are published on the asyncio loop on a
schedule ``compress`` times faster than real, while the frame timer stays at 30 Hz,
so each frame has more new data than it would in real life (a harder test).
Prints the frame time (drain + setData + the paints that follow; idle ticks are not counted) p50/p99 and the
event-loop lag p99. Goals: frame p99 ≤ 16 ms, loop lag p99 ≤ 50 ms. The same frames are also given in
CPU time of the GUI thread: on a busy machine the wall times include waits for a core, the CPU times don't.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/ui_live_plot.py
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pyqtgraph as pg  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from qasync import QEventLoop  # noqa: E402

from app.events import EventBus, SamplesBatch, TelemetryBatch  # noqa: E402
from experiments.samples import HostTelemetry, Sample  # noqa: E402
from ui.bridge import Bridge  # noqa: E402
from ui.live_plot import LivePlots  # noqa: E402

INTERVAL = 0.25


async def feed(bus: EventBus, clients: int, seconds: float, compress: float) -> None:
    rng = np.random.default_rng(3)
    names = [f"client{i + 1:02d}" for i in range(clients)]
    ticks = int(seconds / INTERVAL)
    start = time.perf_counter()
    for k in range(1, ticks + 1):
        t = k * INTERVAL
        level = rng.normal(60e6, 3e6, clients).clip(0)
        bus.publish(SamplesBatch(1, [
            Sample(name, t, INTERVAL, bytes_written=int(level[i] * INTERVAL), ops=int(level[i] * INTERVAL / 2**20),
                   lat_p50_ms=3.0, lat_p99_ms=float(rng.uniform(8, 20)))
            for i, name in enumerate(names)]))
        if k % 4 == 0:
            total = float(level.sum())
            bus.publish(TelemetryBatch(1, [HostTelemetry("nfs-server", t, 1.0, disk_write_bps=total,
                                                         net_rx_bps=total * 1.03, cpu_busy=0.4)]))
        delay = start + t / compress - time.perf_counter()
        await asyncio.sleep(max(0.0, delay))


async def probe_lag(lags: list[float], stop: asyncio.Event, period: float = 0.01) -> None:
    while not stop.is_set():
        t0 = time.perf_counter()
        await asyncio.sleep(period)
        lags.append(time.perf_counter() - t0 - period)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=600.0, help="simulated seconds")
    parser.add_argument("--compress", type=float, default=10.0, help="simulated seconds per wall second")
    parser.add_argument("--size", default="1280x560")
    args = parser.parse_args()

    app = QApplication.instance() or QApplication(sys.argv[:1])
    loop = QEventLoop(app)
    asyncio.set_event_loop(loop)
    bus = EventBus()
    bridge = Bridge(bus)
    plots = LivePlots(bridge.live)
    w, h = (int(v) for v in args.size.split("x"))
    plots.resize(w, h)
    plots.show()

    # A frame = the timer's work (drain the queue, setData on every curve) plus the
    # paints Qt then does for it; pyqtgraph's paintEvent is Python, so it can be timed.
    frames: list[float] = []
    cpu_frames: list[float] = []
    parts: list[tuple[float, float]] = []  # (timer work, paint) per frame
    paint_time = [0.0, 0.0]  # wall, CPU
    original_paint = pg.GraphicsView.paintEvent

    def timed_paint(view: pg.GraphicsView, event: object) -> None:
        t0, c0 = time.perf_counter(), time.thread_time()
        original_paint(view, event)
        paint_time[0] += time.perf_counter() - t0
        paint_time[1] += time.thread_time() - c0

    pg.GraphicsView.paintEvent = timed_paint
    tick = [0.0, 0.0]

    def frame_start() -> None:
        if tick[0] > 0.0005 or paint_time[0] > 0:  # close the previous frame, if it did anything
            frames.append(tick[0] + paint_time[0])
            cpu_frames.append(tick[1] + paint_time[1])
            parts.append((tick[0], paint_time[0]))
        paint_time[0] = paint_time[1] = 0.0
        t0, c0 = time.perf_counter(), time.thread_time()
        bridge.flush()
        plots.refresh()  # what bridge.tick drives in the app
        tick[0], tick[1] = time.perf_counter() - t0, time.thread_time() - c0

    bridge.timer.timeout.disconnect()
    bridge.timer.timeout.connect(frame_start)

    lags: list[float] = []

    async def run() -> None:
        stop = asyncio.Event()
        prober = asyncio.ensure_future(probe_lag(lags, stop))
        wall = time.perf_counter()
        await feed(bus, args.clients, args.seconds, args.compress)
        await asyncio.sleep(0.1)
        stop.set()
        await prober
        print(f"simulated {args.seconds:.0f} s of {args.clients} clients × 3 series at 4 Hz "
              f"in {time.perf_counter() - wall:.1f} s wall (×{args.compress:g}), {len(frames)} frames")

    with loop:
        loop.run_until_complete(run())
    f = np.array(frames) * 1e3
    lag = np.array(lags) * 1e3
    points = len(next(iter(bridge.live.clients.values())).series["throughput"])
    print(f"points per client curve at the end: {points}; curves: {len(plots.trial.client_curves)} clients + sum")
    layer = getattr(plots.trial, "layer", None)
    if layer is not None:
        print(f"frames that drew every line again (range steps, new clients): {layer.full_draws}")
    print(f"frame time ms: p50 {np.percentile(f, 50):.2f}  p99 {np.percentile(f, 99):.2f}  max {f.max():.2f}"
          f"   (goal p99 ≤ 16)")
    cpu = np.array(cpu_frames) * 1e3
    print(f"frame CPU ms:  p50 {np.percentile(cpu, 50):.2f}  p99 {np.percentile(cpu, 99):.2f}  max {cpu.max():.2f}")
    work, paint = (np.array(p) * 1e3 for p in zip(*parts, strict=True))
    print(f"  of which timer work (drain + setData) p50 {np.percentile(work, 50):.2f} p99 {np.percentile(work, 99):.2f}; "
          f"paint p50 {np.percentile(paint, 50):.2f} p99 {np.percentile(paint, 99):.2f}")
    print(f"event-loop lag ms: p50 {np.percentile(lag, 50):.2f}  p99 {np.percentile(lag, 99):.2f}  "
          f"max {lag.max():.2f}   (goal p99 ≤ 50)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
