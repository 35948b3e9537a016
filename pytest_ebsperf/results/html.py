"""HTML for pytest-html's report: the terminal summary's tables and the run's pictures.

Tables are tabulate's ``html`` format, which escapes cell text; pictures are embedded as
``data:`` URIs so the report stays one file that can be archived by CI as it is.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_ebsperf.results import report, tables
from pytest_ebsperf.results.cost import CostTable, caption, format_cost_table

STYLE = ("<style>.ebsperf table{border-collapse:collapse;margin:0.5em 0 1em 0}"
         ".ebsperf th,.ebsperf td{border:1px solid #ccc;padding:2px 8px;text-align:left;"
         "font-size:13px}.ebsperf th{background:#eee}.ebsperf img{max-width:820px;"
         "border:1px solid #ddd;margin:4px}.ebsperf p.caption{color:#555;font-size:12px}"
         "</style>")


def summary_fragments(rows: Sequence[Mapping[str, Any]],
                      measurements: Sequence[Mapping[str, Any]], *,
                      cost: CostTable | None, notes: Sequence[str],
                      pictures: Sequence[Path]) -> list[str]:
    """HTML snippets for ``pytest_html_results_summary``'s ``prefix`` list."""
    parts = [STYLE, '<div class="ebsperf">', "<h2>ebsperf: claims</h2>"]
    if rows:
        parts.append(report.claims_table(rows, tablefmt="html"))
        parts.append(_caption(report.outcome_counts(rows)))
    for note in notes:
        parts.append(_caption(note))
    if measurements:
        parts.append(f"<h2>{tables.SEED_TITLE}</h2>")
        parts.append(_caption(f"cells: IOPS / MiB/s, laid out as {report.SEED_000}"))
        parts.append(tables.seed_table(measurements, tablefmt="html"))
        runs = tables.runs_table(measurements, tablefmt="html")
        if runs:
            parts.append(f"<h2>{tables.RUNS_TITLE}</h2>")
            parts.append(_caption(f"as {report.SEED_001}"))
            parts.append(runs)
        sets = tables.sets_table(measurements, tablefmt="html")
        if sets:
            parts.append(f"<h2>{tables.SETS_TITLE}</h2>")
            parts.append(_caption("cells: IOPS / MiB/s by the number of volumes measured "
                                  "together"))
            parts.append(sets)
    if cost is not None:
        parts.append("<h2>ebsperf: cost per performance</h2>")
        parts.append(format_cost_table(cost, tablefmt="html"))
        parts.append(_caption(caption(cost)))
    if pictures:
        parts.append("<h2>ebsperf: pictures</h2>")
        parts.extend(image_tag(path) for path in pictures)
    parts.append("</div>")
    return parts


def image_tag(path: Path) -> str:
    """An ``<img>`` with the PNG inlined."""
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    title = html.escape(path.stem)
    return f'<img src="data:image/png;base64,{data}" alt="{title}" title="{title}"/>'


def _caption(text: str) -> str:
    return f'<p class="caption">{html.escape(text)}</p>'
