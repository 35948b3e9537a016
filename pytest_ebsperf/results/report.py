"""Report rows and terminal tables: one row per judged claim, and the seed documents' tables.

Rows travel from each test to the terminal summary through pytest's ``user_properties``,
which xdist serialises, so :func:`row_from_verdict` returns only plain JSON types. The seed
tables reprint measurements the way the seed blog posts did: one row per volume, one column
per access pattern, cells ``IOPS / MiB/s`` (seed 000; a line per block size when there are
several), and runs A, B, C with their mean and CV for repeated checks (seed 001). Every table
takes tabulate's ``tablefmt``, so the HTML report shows the same tables.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pytest_ebsperf.config.options import OPTIONAL_TABLES
from pytest_ebsperf.results.tables import (
    RUNS_TITLE,
    SEED_TITLE,
    SETS_TITLE,
    MeasurementLike,
    _block_sizes,
    fit_table,
    runs_table,
    seed_table,
    sets_table,
    steady,
    wrap_text,
)
from pytest_ebsperf.units import (
    MIB,
    format_latency,
    format_number,
    format_quantity,
    format_seconds,
    plain_json,
)
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict

#: Section titles of the terminal summary (lines starting with "== " are separators).
CLAIMS_TITLE = "ebsperf: claims"
#: The seed documents' tables these are laid out like, by their titles (claims.md Part A).
SEED_000 = "seed 000's table \"EBS Magnetic vs SSD\" (Money Forward, 2014)"
SEED_001 = ("seed 001's runs, \"does SSD performance change with the instance type\" "
            "(2015: 4 runs, the first dropped)")
SEED_004 = "seed 004's \"EBS benchmark part 3: Provisioned IOPS\" (RAID0 of io1, 2013)"
#: Marks a latency measured on an emulated volume.
EMULATED_MARK = "*"

_MIB = float(MIB)


@dataclass(frozen=True)
class ReportRow:
    """One judged claim as the report shows it. ``expected``/``measured`` are formatted
    text; ``expected_value``/``measured_value`` the raw numbers in ``unit``."""

    claim: str
    what: str
    outcome: str
    expected: str
    measured: str
    binding: str
    reason: str
    message: str
    policy: str = ""
    unit: str = ""
    expected_value: float | None = None
    measured_value: float | None = None
    volume: str = ""
    workload: str = ""
    nodeid: str = ""
    fio: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    #: The regression gate's finding (``--ebsperf-compare``): status, summary, metrics.
    compare: dict[str, Any] | None = None
    #: The fleet host the claim was checked on (testinfra's id); "" with one host.
    host: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types only (safe for ``user_properties`` and xdist)."""
        return {f.name: plain_json(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReportRow:
        """Rebuild a row from :meth:`to_dict` output; unknown keys (``notes``) are ignored."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{key: value for key, value in data.items() if key in names})


def row_from_verdict(verdict: Verdict, *, volume_label: str, workload_label: str,
                     nodeid: str, fio_summary: Mapping[str, Any] | None) -> dict[str, Any]:
    """The report row of ``verdict`` as a JSON-serialisable dict."""
    row = ReportRow(
        claim=verdict.claim, what=verdict.what, outcome=verdict.outcome.value,
        expected=format_quantity(verdict.expected, verdict.unit),
        measured=format_quantity(verdict.measured, verdict.unit),
        binding=verdict.binding, reason=verdict.reason, message=verdict.message,
        policy=verdict.policy, unit=verdict.unit, expected_value=verdict.expected,
        measured_value=verdict.measured, volume=volume_label, workload=workload_label,
        nodeid=nodeid, fio=dict(fio_summary or {}), details=dict(verdict.details))
    return row.to_dict()


# -- claims table -------------------------------------------------------------------------
RowLike: TypeAlias = ReportRow | Mapping[str, Any]

_CLAIM_HEADERS = ("Claim", "What", "Expected", "Measured", "Verdict", "Binding limit", "Ran",
                  "Latency p50 / p99 / p99.9")


def _as_row(row: RowLike) -> ReportRow:
    return row if isinstance(row, ReportRow) else ReportRow.from_dict(row)


def claims_table(rows: Iterable[RowLike], tablefmt: str = "simple", width: int | None = None
                 ) -> str:
    """One line per claim checked: ID, what, expected, measured, verdict, binding limit.

    A Volume column is added when the rows come from more than one volume, a "vs baseline"
    column when the run was compared with a stored one (``--ebsperf-compare``), a Host
    column first in a fleet run (``--hosts``).
    ``tablefmt`` is tabulate's (``"html"`` for the HTML report).
    """
    parsed = [_as_row(row) for row in rows]
    several = len({row.volume for row in parsed}) > 1
    compared = any(row.compare for row in parsed)
    hosts = any(row.host for row in parsed)  # a fleet run: which host each claim ran on
    headers = [*(["Host"] if hosts else []), *_CLAIM_HEADERS, *(["Volume"] if several else []),
               *(["vs baseline"] if compared else [])]
    table = []
    for row in parsed:
        latency = latency_text(row.fio)
        if latency != "-" and row.volume.startswith("emulated "):
            latency += EMULATED_MARK
        cells = [*([row.host] if hosts else []), row.claim, row.what, row.expected,
                 row.measured, row.outcome.upper(), row.binding, ran_text(row.fio), latency]
        if several:
            cells.append(row.volume)
        if compared:
            cells.append(str((row.compare or {}).get("summary", "-")))
        table.append(cells)
    return fit_table(table, headers, tablefmt=tablefmt, width=width,
                     wrap=("What", "Binding limit", "Volume", "vs baseline", "Host"),
                     drop=("Latency p50 / p99 / p99.9", "Ran", "Volume", "Binding limit",
                           "Expected", "vs baseline"))


def latency_text(fio: Mapping[str, Any]) -> str:
    """Completion latency ``p50 / p99 / p99.9`` of the check's run (``-`` without fio)."""
    values = [fio.get(f"clat_p{q}_ns") for q in ("50", "99", "99.9")]
    if not any(isinstance(v, (int, float)) for v in values):
        return "-"
    return " / ".join(format_latency(v) if isinstance(v, (int, float)) else "-"
                      for v in values)


def ran_text(fio: Mapping[str, Any]) -> str:
    """How long the check's fio measured: ``2.1 of 60 s`` when its verdict was settled early,
    ``60 s`` when it ran to the end, ``-`` without fio."""
    measured, planned = fio.get("measured_s"), fio.get("planned_s")
    if not isinstance(measured, (int, float)):
        return "-"
    if fio.get("stopped_early") and isinstance(planned, (int, float)):
        return f"{format_number(round(measured, 1))} of {format_seconds(planned)}"
    return format_seconds(round(measured, 1))


def outcome_counts(rows: Iterable[RowLike]) -> str:
    """``2 pass, 1 fail, 1 inconclusive`` in the order of :class:`Outcome`."""
    outcomes = [_as_row(row).outcome for row in rows]
    parts = [f"{outcomes.count(o.value)} {o.value}" for o in Outcome if o.value in outcomes]
    return ", ".join(parts)


# -- terminal summary ---------------------------------------------------------------------
_VERDICT_STYLE = {"pass": "green", "fail": "bold red", "inconclusive": "yellow",
                  "info": "cyan"}


def claims_lines(rows: Sequence[RowLike], *, width: int | None, color: bool = False
                 ) -> list[str]:
    """The claims as a table, one line per check, sized to ``width`` (rich gives each
    column its own width: the claim, verdict and figures whole, what and the binding limit
    cut with an ellipsis; at 120 columns the time it ran, at 160 the latency and the
    volume join)."""


    parsed = [_as_row(r) for r in rows]
    room = width or 200
    several = len({row.volume for row in parsed}) > 1
    hosts = any(row.host for row in parsed)
    compared = any(row.compare for row in parsed)
    # two spaces between columns: the box's separator and one of padding on the right
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0),
                  header_style="bold" if color else "", expand=False)
    def whole(header: str, values: Iterable[str]) -> int:
        """A column shown whole: as wide as its widest cell (rich shrinks the others)."""
        return max([len(header), *(len(v) for v in values)])

    if hosts:
        table.add_column("Host", no_wrap=True, overflow="ellipsis", ratio=1)
    table.add_column("Claim", no_wrap=True, min_width=whole("Claim", (r.claim for r in parsed)))
    table.add_column("What", no_wrap=True, overflow="ellipsis", ratio=4, min_width=12)
    table.add_column("Expected", no_wrap=True, justify="right",
                     min_width=whole("Expected", (r.expected for r in parsed)))
    table.add_column("Measured", no_wrap=True, justify="right",
                     min_width=whole("Measured", (r.measured for r in parsed)))
    table.add_column("Verdict", no_wrap=True,
                     min_width=whole("Verdict", (r.outcome.upper() for r in parsed)))
    table.add_column("Binding limit", no_wrap=True, overflow="ellipsis", ratio=2, min_width=8)
    extras = []
    if room >= 120:
        extras.append("Ran")
    if room >= 160:
        extras.append("Latency p50 / p99 / p99.9")
        if several:
            extras.append("Volume")
    if compared and room >= 140:
        extras.append("vs baseline")
    for name in extras:
        table.add_column(name, no_wrap=True, overflow="ellipsis",
                         ratio=2 if name in ("Volume", "vs baseline") else None)
    for row in parsed:
        verdict = row.outcome.upper()
        cells = [*([row.host] if hosts else []), row.claim, row.what, row.expected,
                 row.measured, f"[{_VERDICT_STYLE.get(row.outcome, '')}]{verdict}[/]"
                 if color else verdict, row.binding]
        for name in extras:
            if name == "Ran":
                cells.append(ran_text(row.fio))
            elif name == "Volume":
                cells.append(row.volume)
            elif name == "vs baseline":
                cells.append(str((row.compare or {}).get("summary", "-")))
            else:
                latency = latency_text(row.fio)
                if latency != "-" and row.volume.startswith("emulated "):
                    latency += EMULATED_MARK
                cells.append(latency)
        table.add_row(*cells)
    out = io.StringIO()
    console = Console(file=out, width=room, color_system="standard" if color else None,
                      force_terminal=color, highlight=False, emoji=False, markup=True,
                      legacy_windows=False)
    # wider than the terminal: rich fits an expanded table by shrinking the columns with a
    # ratio (what, binding limit) down to their minimum (a collapsed one drops columns)
    wide = Console(file=io.StringIO(), width=100_000, color_system=None)
    table.expand = wide.measure(table).maximum > room
    console.print(table)
    return [line.rstrip() for line in out.getvalue().splitlines() if line.strip()]


def paragraph(text: str, width: int | None, *, color: str = "", markup: bool = False
              ) -> list[str]:
    """``text`` wrapped to ``width`` (rich's wrapping: long words such as URLs folded)."""
    if width is None:
        return [text]


    out = io.StringIO()
    console = Console(file=out, width=width, color_system="standard" if markup else None,
                      force_terminal=markup, highlight=False, emoji=False)
    console.print(Text(text, style=color if markup else "", overflow="fold"))
    return [line.rstrip() for line in out.getvalue().splitlines()]


def terminal_sections(rows: Sequence[RowLike], measurements: Sequence[MeasurementLike], *,
                      width: int | None = None, color: bool = False,
                      tables: Sequence[str] = (), counts: str = ""
                      ) -> list[tuple[str, list[str]]]:
    """(title, lines) pairs for the terminal summary, each line within ``width`` (None: as
    long as it is); empty sections are left out. The claims come first, one line each, then
    a paragraph per INCONCLUSIVE (a FAIL's finding is printed once, by pytest, with the
    failed test) and ``counts`` (pytest's own counts). ``tables`` names the further tables
    to show (:data:`OPTIONAL_TABLES`)."""
    sections: list[tuple[str, list[str]]] = []
    if rows:
        parsed = [_as_row(r) for r in rows]
        lines = claims_lines(rows, width=width, color=color)
        if any(row.volume.startswith("emulated ") and latency_text(row.fio) != "-"
               for row in parsed) and width is not None and width >= 160:
            lines += paragraph(f"{EMULATED_MARK} latency of an emulated volume: the "
                               "emulator's (a loop device in memory, or --emulate-latency's "
                               "service time), not EBS's.", width)
        for row in parsed:
            if row.outcome == Outcome.INCONCLUSIVE.value:
                where = f" on {row.host}" if row.host else ""
                lines += paragraph(f"INCONCLUSIVE {row.claim}{where}: {row.message}", width,
                                   color="yellow", markup=color)
        for row in parsed:
            found = row.compare or {}
            if found.get("status") == "regression":
                lines += paragraph(f"REGRESSION {row.claim}: {row.what}: "
                                   f"{found.get('headline')} against {found.get('baseline')}",
                                   width, color="red", markup=color)
        if counts:
            lines.append(counts)
        hidden = [name for name in OPTIONAL_TABLES if name not in tables]
        if hidden:
            lines += paragraph(f"more: --ebsperf-tables={','.join(hidden)} (or all); the "
                               "results file, --ebsperf-markdown and --html have them all",
                               width)
        sections.append((CLAIMS_TITLE, lines))
    if steady(measurements):
        if "seed" in tables:
            lines = wrap_text(f"cells: IOPS / MiB/s at {_block_sizes(measurements)}, one row "
                              f"per volume and a column per access pattern, as {SEED_000}",
                              width)
            lines.extend(seed_table(measurements, width=width).splitlines())
            sections.append((SEED_TITLE, lines))
        runs = runs_table(measurements, width=width) if "runs" in tables else ""
        if runs:
            lines = wrap_text(f"cells: IOPS of each run of one check, their mean and "
                              f"coefficient of variation, as {SEED_001}", width)
            sections.append((RUNS_TITLE, lines + runs.splitlines()))
        sets = sets_table(measurements, width=width) if "sets" in tables else ""
        if sets:
            lines = wrap_text(f"cells: IOPS / MiB/s by the number of volumes measured "
                              f"together, as {SEED_004}", width)
            sections.append((SETS_TITLE, lines + sets.splitlines()))
    return sections


