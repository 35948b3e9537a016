"""The history as one HTML page: a chart per check, drawn as inline SVG (no library, no
network, one file a CI can archive).

Each chart shows every run's measured figure with the interval of its per-second samples,
the expected figure with its band (90-110 % of a cap, as the checks judge it), the change
points (a dashed line and the move), and where a facet changed (AMI, kernel, instance type,
fio version). Elements carry classes (``point``, ``interval``, ``expected``, ``band``,
``change-point``, ``annotation``) for styling and tests; a script marks each chart
``data-drawn`` once the browser has laid it out.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

from pytest_ebsperf.trends.analysis import Trend, describe, describe_assumption
from pytest_ebsperf.units import counted, format_quantity

WIDTH, HEIGHT = 760, 240
LEFT, RIGHT, TOP, BOTTOM = 70, 16, 16, 34
STYLE = """
body{font-family:sans-serif;margin:1.5em;color:#222}
h1{font-size:20px} h2{font-size:15px;margin:1.4em 0 0.2em 0}
p.what{color:#555;font-size:12px;margin:0}
.worse{color:#b00020;font-weight:bold}
svg.chart{border:1px solid #ddd;background:#fff}
.point{fill:#1f5fa8} .interval{stroke:#1f5fa8;stroke-width:1.2}
.line{fill:none;stroke:#1f5fa8;stroke-width:1;opacity:.5}
.expected{stroke:#2a8a3e;stroke-width:1.2;stroke-dasharray:6 4}
.band{fill:#2a8a3e;opacity:.08}
.change-point{stroke:#b00020;stroke-width:1.5;stroke-dasharray:4 3}
.change-label{fill:#b00020;font-size:11px}
.annotation{stroke:#8a5a00;stroke-width:1} .annotation-label{fill:#8a5a00;font-size:10px}
.axis{stroke:#888} .tick{fill:#555;font-size:10px}
"""
SCRIPT = """
for (const svg of document.querySelectorAll('svg.chart')) {
  const box = svg.querySelector('g.plot').getBBox();
  svg.dataset.drawn = (box.width > 0 && box.height > 0) ? 'yes' : 'no';
}
document.body.dataset.charts = document.querySelectorAll('svg.chart[data-drawn=yes]').length;
"""


def render(trends: Sequence[Trend], *, title: str, since: int, alpha: float) -> str:
    worse = sum(1 for t in trends if t.worse)
    parts = [(f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
             f"</title><style>{STYLE}</style></head><body>"),
             f"<h1>{html.escape(title)}</h1>",
             (f"<p>{counted(len(trends), 'check')}; {worse} changed for the worse within the "
             f"last {counted(since, 'run')}. Change points: permutation test of the best split (E-divisive means), "
             f"false-alarm level {alpha:g} per check.</p>")]
    for index, trend in enumerate(trends):
        ident = trend.identity
        said = describe(trend)
        cls = " class='worse'" if trend.worse else ""
        parts.append(f"<h2 id='check-{index}'>{html.escape(ident.claim)} "
                     f"{html.escape(ident.what)} <span{cls}>{html.escape(said)}</span></h2>")
        parts.append(f"<p class='what'>{html.escape(ident.host)} | {html.escape(ident.volume)}"
                     f" | {counted(len(trend.points), 'run')}</p>")
        if trend.worse:
            parts.append(f"<p class='what'>{html.escape(describe_assumption(trend))}</p>")
        parts.append(chart(trend))
    parts.append(f"<script>{SCRIPT}</script></body></html>")
    return "\n".join(parts)


def chart(trend: Trend) -> str:
    """One check's runs as an SVG chart."""
    points = trend.points
    unit = trend.identity.unit
    expected = next((p.expected for p in reversed(points) if p.expected), None)
    lows = [p.low if p.low is not None else p.measured for p in points]
    highs = [p.high if p.high is not None else p.measured for p in points]
    floor = min([*lows, *([0.9 * expected] if expected else [])])
    top = max([*highs, *([1.1 * expected] if expected else [])])
    if not math.isfinite(floor) or not math.isfinite(top):
        floor, top = 0.0, 1.0
    pad = (top - floor) * 0.08 or abs(top) * 0.05 or 1.0
    floor, top = floor - pad, top + pad
    n = len(points)

    def x(i: float) -> float:
        return LEFT + (WIDTH - LEFT - RIGHT) * ((i + 0.5) / max(n, 1))

    def y(v: float) -> float:
        return TOP + (HEIGHT - TOP - BOTTOM) * (1 - (v - floor) / (top - floor))

    out = [(f"<svg class='chart' xmlns='http://www.w3.org/2000/svg' width='{WIDTH}' "
           f"height='{HEIGHT}' viewBox='0 0 {WIDTH} {HEIGHT}' role='img'><g class='plot'>")]
    if expected:
        out.append(f"<rect class='band' x='{LEFT}' y='{y(1.1 * expected):.1f}' "
                   f"width='{WIDTH - LEFT - RIGHT}' "
                   f"height='{y(0.9 * expected) - y(1.1 * expected):.1f}'/>")
        out.append(f"<line class='expected' x1='{LEFT}' x2='{WIDTH - RIGHT}' "
                   f"y1='{y(expected):.1f}' y2='{y(expected):.1f}'><title>expected "
                   f"{html.escape(format_quantity(expected, unit))}</title></line>")
    out.append(f"<line class='axis' x1='{LEFT}' x2='{LEFT}' y1='{TOP}' "
               f"y2='{HEIGHT - BOTTOM}'/><line class='axis' x1='{LEFT}' x2='{WIDTH - RIGHT}' "
               f"y1='{HEIGHT - BOTTOM}' y2='{HEIGHT - BOTTOM}'/>")
    for value in (floor + pad, (floor + top) / 2, top - pad):
        out.append(f"<text class='tick' x='{LEFT - 4}' y='{y(value) + 3:.1f}' "
                   f"text-anchor='end'>{html.escape(format_quantity(value, unit))}</text>")
    step = max(1, n // 10)
    for i in range(0, n, step):
        out.append(f"<text class='tick' x='{x(i):.1f}' y='{HEIGHT - BOTTOM + 14}' "
                   f"text-anchor='middle'>{points[i].run_id}</text>")
    out.append("<polyline class='line' points='"
               + " ".join(f"{x(i):.1f},{y(p.measured):.1f}" for i, p in enumerate(points))
               + "'/>")
    for i, p in enumerate(points):
        if p.low is not None and p.high is not None:
            out.append(f"<line class='interval' x1='{x(i):.1f}' x2='{x(i):.1f}' "
                       f"y1='{y(p.low):.1f}' y2='{y(p.high):.1f}'/>")
        tip = (f"run {p.run_id} ({p.created}): {format_quantity(p.measured, unit)}, "
               f"{p.outcome.upper()}")
        out.append(f"<circle class='point' cx='{x(i):.1f}' cy='{y(p.measured):.1f}' r='2.8'>"
                   f"<title>{html.escape(tip)}</title></circle>")
    for index, said in trend.facet_changes():
        at = (x(index - 1) + x(index)) / 2
        out.append(f"<line class='annotation' x1='{at:.1f}' x2='{at:.1f}' y1='{TOP}' "
                   f"y2='{HEIGHT - BOTTOM}'><title>{html.escape(said)}</title></line>"
                   f"<text class='annotation-label' x='{at + 3:.1f}' y='{TOP + 10}'>"
                   f"{html.escape(said.split(' ')[0])}</text>")
    for change in trend.changes:
        at = (x(change.index - 1) + x(change.index)) / 2
        said = (f"{change.relative * 100:+.1f} %: {format_quantity(change.before, unit)} -> "
                f"{format_quantity(change.after, unit)} (p {change.p_value:.1g})")
        out.append(f"<line class='change-point' x1='{at:.1f}' x2='{at:.1f}' y1='{TOP}' "
                   f"y2='{HEIGHT - BOTTOM}'><title>{html.escape(said)}</title></line>"
                   f"<text class='change-label' x='{at + 3:.1f}' y='{HEIGHT - BOTTOM - 6}'>"
                   f"{change.relative * 100:+.1f} %</text>")
    out.append("</g></svg>")
    return "".join(out)
