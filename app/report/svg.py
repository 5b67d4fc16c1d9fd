"""Small inline SVG charts drawn in Python: no script, no external resource, any browser shows them.

Long series are reduced to min/max pairs per pixel column, so a dip survives the
reduction and a trial of 10 000 samples costs a few kilobytes of SVG.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

import numpy as np

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
           "#7f7f7f", "#bcbd22")
W, H = 980, 300
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 30, 44
LEGEND_W = 250  # line charts keep a column right of the plot for the legend


@dataclass(frozen=True, slots=True)
class Series:
    label: str
    x: np.ndarray
    y: np.ndarray
    colour: str = ""


@dataclass(frozen=True, slots=True)
class CiPoint:
    label: str  # the category on the x axis (a knob value)
    mean: float
    low: float | None  # None: one run, no bar
    high: float | None
    n: int


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering [lo, hi] (1, 2, 5 × 10^k steps)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def _fmt(v: float) -> str:
    return f"{v:.0f}" if abs(v) >= 10 or v == 0 else f"{v:.2g}"


def reduce_minmax(x: np.ndarray, y: np.ndarray, buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """At most 2 × buckets points: each bucket's min and max in time order (keeps the dips)."""
    n = len(x)
    if n <= 2 * buckets:
        return x, y
    edges = np.linspace(0, n, buckets + 1).astype(int)
    xs, ys = [], []
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        if b <= a:
            continue
        seg = y[a:b]
        i, j = int(np.argmin(seg)), int(np.argmax(seg))
        for k in sorted({i, j}):
            xs.append(x[a + k])
            ys.append(seg[k])
    return np.asarray(xs), np.asarray(ys)


def _frame(title: str, x_label: str, y_label: str, xt: list[tuple[float, str]], yt: list[tuple[float, str]],
           body: list[str], legend: Sequence[tuple[str, str]], right: int = RIGHT) -> str:
    pw, ph = W - LEFT - right, H - TOP - BOTTOM
    out = [f'<svg class="chart" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" '
           f'aria-label="{escape(title)}">',
           f'<title>{escape(title)}</title>',
           f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="#fff" stroke="#999"/>',
           f'<text x="{W / 2:.0f}" y="18" text-anchor="middle" font-weight="bold">{escape(title)}</text>']
    for py, text in yt:
        out.append(f'<line x1="{LEFT}" x2="{LEFT + pw}" y1="{py:.1f}" y2="{py:.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{LEFT - 6}" y="{py + 4:.1f}" text-anchor="end">{escape(text)}</text>')
    for px, text in xt:
        out.append(f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{TOP + ph}" y2="{TOP + ph + 4}" stroke="#999"/>')
        out.append(f'<text x="{px:.1f}" y="{TOP + ph + 17}" text-anchor="middle">{escape(text)}</text>')
    out.append(f'<text x="{LEFT + pw / 2:.0f}" y="{H - 6}" text-anchor="middle">{escape(x_label)}</text>')
    out.append(f'<text transform="translate(14 {TOP + ph / 2:.0f}) rotate(-90)" text-anchor="middle">'
               f'{escape(y_label)}</text>')
    out.extend(body)
    lx = LEFT + pw + 12
    for i, (c, label) in enumerate(legend):
        y = TOP + 10 + 15 * i
        out.append(f'<rect x="{lx}" y="{y - 9}" width="10" height="10" fill="{c}"/>'
                   f'<text x="{lx + 14}" y="{y}" class="legend">{escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def line_chart(series: Sequence[Series], *, title: str, x_label: str, y_label: str,
               y_scale: float = 1.0, legend_limit: int = 12) -> str:
    """Lines of y/y_scale against x; the legend lists one entry per distinct label."""
    drawn = [s for s in series if len(s.x)]
    if not drawn:
        return _frame(title, x_label, y_label, [], [], [f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle">'
                                                       "no samples</text>"], [], right=LEGEND_W)
    x0 = min(float(np.nanmin(s.x)) for s in drawn)
    x1 = max(float(np.nanmax(s.x)) for s in drawn)
    y1 = max(float(np.nanmax(s.y)) for s in drawn) / y_scale * 1.05 or 1.0
    x1 = x1 if x1 > x0 else x0 + 1
    pw, ph = W - LEFT - LEGEND_W, H - TOP - BOTTOM

    def px(v: float) -> float:
        return LEFT + (v - x0) / (x1 - x0) * pw

    def py(v: float) -> float:
        return TOP + ph - v / y1 * ph

    body = []
    legend: dict[str, str] = {}
    for i, s in enumerate(drawn):
        c = s.colour or colour(i)
        legend.setdefault(s.label, c)
        x, y = reduce_minmax(s.x, s.y / y_scale, pw // 2)
        pts = " ".join(f"{px(float(a)):.1f},{py(float(b)):.1f}" for a, b in zip(x, y, strict=True))
        body.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.2" points="{pts}">'
                    f'<title>{escape(s.label)}</title></polyline>')
    xt = [(px(v), _fmt(v)) for v in nice_ticks(x0, x1)]
    yt = [(py(v), _fmt(v)) for v in nice_ticks(0.0, y1)]
    items = list(legend.items())[:legend_limit]
    if len(legend) > legend_limit:
        items.append((f"… and {len(legend) - legend_limit} more", "#ffffff"))
    return _frame(title, x_label, y_label, xt, yt, body, [(c, label) for label, c in items], right=LEGEND_W)


def ci_chart(points: Sequence[CiPoint], *, title: str, x_label: str, y_label: str, y_scale: float = 1.0,
             line_colour: str = PALETTE[0]) -> str:
    """Means with confidence bars over categories (knob values), joined by a line."""
    if not points:
        return _frame(title, x_label, y_label, [], [], [], [])
    top = max((p.high if p.high is not None else p.mean) for p in points) / y_scale * 1.1 or 1.0
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM
    step = pw / len(points)

    def px(i: int) -> float:
        return LEFT + step * (i + 0.5)

    def py(v: float) -> float:
        return TOP + ph - max(v, 0.0) / y_scale / top * ph

    body = [f'<polyline fill="none" stroke="{line_colour}" stroke-width="1.5" points="'
            + " ".join(f"{px(i):.1f},{py(p.mean):.1f}" for i, p in enumerate(points)) + '"/>']
    for i, p in enumerate(points):
        x = px(i)
        if p.low is not None and p.high is not None:
            body.append(f'<line class="ci" x1="{x:.1f}" x2="{x:.1f}" y1="{py(p.low):.1f}" y2="{py(p.high):.1f}" '
                        f'stroke="#333"/>')
            for v in (p.low, p.high):
                body.append(f'<line x1="{x - 6:.1f}" x2="{x + 6:.1f}" y1="{py(v):.1f}" y2="{py(v):.1f}" stroke="#333"/>')
        tip = f"{p.label}: {p.mean / y_scale:.1f}" + (
            f" [{p.low / y_scale:.1f}, {p.high / y_scale:.1f}]" if p.low is not None and p.high is not None else "")
        body.append(f'<circle cx="{x:.1f}" cy="{py(p.mean):.1f}" r="4" fill="{line_colour}">'
                    f'<title>{escape(tip)} (n={p.n})</title></circle>')
    xt = [(px(i), p.label) for i, p in enumerate(points)]
    yt = [(py(v * y_scale), _fmt(v)) for v in nice_ticks(0.0, top)]
    return _frame(title, x_label, y_label, xt, yt, body, [])
