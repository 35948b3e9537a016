"""Report rows and terminal tables: one row per judged claim, and the seed documents' table.

Rows travel from each test to the terminal summary through pytest's ``user_properties``,
which xdist serialises, so :func:`row_from_verdict` returns only plain JSON types. The seed
table reprints measurements the way the seed blog posts did: one row per volume, one column
per access pattern, cells ``IOPS / MiB/s``.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeAlias

from tabulate import tabulate

from pytest_ebsperf.fio.workload import format_size
from pytest_ebsperf.verdict import format_number, format_quantity
from pytest_ebsperf.verdict_types import Outcome, Verdict

#: Seed-table columns in the order the seed documents print them; others follow as seen.
SEED_COLUMNS = ("Seq Read", "Seq Write", "Rand Read", "Rand Write", "Rand RW 70/30")
#: Section titles of the terminal summary (lines starting with "== " are separators).
CLAIMS_TITLE = "ebsperf: claims"
SEED_TITLE = "ebsperf: measured (seed table shape)"

_MIB = 1024.0 * 1024.0


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

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types only (safe for ``user_properties`` and xdist)."""
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

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


def _plain(value: Any) -> Any:
    """Recursively turn a value into JSON types; NaN/inf become None (JSON has neither)."""
    if isinstance(value, enum.Enum):
        return _plain(value.value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(item) for item in value]
    return str(value)


# -- claims table -------------------------------------------------------------------------
RowLike: TypeAlias = ReportRow | Mapping[str, Any]

_CLAIM_HEADERS = ("Claim", "What", "Expected", "Measured", "Verdict", "Binding limit")


def _as_row(row: RowLike) -> ReportRow:
    return row if isinstance(row, ReportRow) else ReportRow.from_dict(row)


def claims_table(rows: Iterable[RowLike]) -> str:
    """One line per claim checked: ID, what, expected, measured, verdict, binding limit.

    A Volume column is added when the rows come from more than one volume.
    """
    parsed = [_as_row(row) for row in rows]
    several = len({row.volume for row in parsed}) > 1
    headers = (*_CLAIM_HEADERS, "Volume") if several else _CLAIM_HEADERS
    table = []
    for row in parsed:
        cells = [row.claim, row.what, row.expected, row.measured, row.outcome.upper(),
                 row.binding]
        table.append([*cells, row.volume] if several else cells)
    return tabulate(table, headers=list(headers), tablefmt="simple", disable_numparse=True)


def outcome_counts(rows: Iterable[RowLike]) -> str:
    """``2 pass, 1 fail, 1 inconclusive`` in the order of :class:`Outcome`."""
    outcomes = [_as_row(row).outcome for row in rows]
    parts = [f"{outcomes.count(o.value)} {o.value}" for o in Outcome if o.value in outcomes]
    return ", ".join(parts)


# -- seed table ---------------------------------------------------------------------------
class Measurement(NamedTuple):
    """One fio run for the seed table: ``title`` is :attr:`Workload.title` ("Rand RW 70/30")."""

    volume: str
    title: str
    bs: int
    iops: float
    bw_bytes: float


MeasurementLike: TypeAlias = Measurement | Sequence[Any] | Mapping[str, Any]


def as_measurement(item: MeasurementLike) -> Measurement:
    """Accept a :class:`Measurement`, a 5-sequence or a dict with the same keys (the form
    measurements take in ``user_properties``)."""
    if isinstance(item, Mapping):
        return Measurement(str(item["volume"]), str(item["title"]), int(item["bs"]),
                           float(item["iops"]), float(item["bw_bytes"]))
    volume, title, bs, iops, bw_bytes = item
    return Measurement(str(volume), str(title), int(bs), float(iops), float(bw_bytes))


def seed_table(measurements: Iterable[MeasurementLike]) -> str:
    """Volumes as rows, patterns as columns, cells ``IOPS / MiB/s``; repeated runs of the
    same cell are averaged (seed 001 reported the mean of its runs).

    A pattern measured at several block sizes gets one column per size ("Rand Read 4KiB");
    only measured patterns appear.
    """
    items = [as_measurement(m) for m in measurements]
    if not items:
        return ""
    columns = _seed_columns(items)
    volumes = list(dict.fromkeys(m.volume for m in items))
    cells: dict[tuple[str, str], list[Measurement]] = {}
    for m in items:
        cells.setdefault((m.volume, _column_of(m, columns)), []).append(m)
    table = [[volume, *(_cell(cells.get((volume, column), [])) for column in columns)]
             for volume in volumes]
    return tabulate(table, headers=["Volume", *columns], tablefmt="simple",
                    disable_numparse=True)


def _seed_columns(items: Sequence[Measurement]) -> list[str]:
    sizes: dict[str, list[int]] = {}
    for m in items:
        sizes.setdefault(m.title, [])
        if m.bs not in sizes[m.title]:
            sizes[m.title].append(m.bs)
    order = [t for t in SEED_COLUMNS if t in sizes] + [t for t in sizes if t not in SEED_COLUMNS]
    columns = []
    for title in order:
        if len(sizes[title]) == 1:
            columns.append(title)
        else:
            columns.extend(f"{title} {format_size(bs)}" for bs in sorted(sizes[title]))
    return columns


def _column_of(m: Measurement, columns: Sequence[str]) -> str:
    return m.title if m.title in columns else f"{m.title} {format_size(m.bs)}"


def _cell(runs: Sequence[Measurement]) -> str:
    if not runs:
        return ""
    iops = math.fsum(m.iops for m in runs) / len(runs)
    mib = math.fsum(m.bw_bytes for m in runs) / len(runs) / _MIB
    return f"{format_number(iops)} / {format_number(mib)}"


def _block_sizes(measurements: Iterable[MeasurementLike]) -> str:
    sizes = sorted({as_measurement(m).bs for m in measurements})
    return ", ".join(format_size(bs) for bs in sizes)


# -- terminal summary ---------------------------------------------------------------------
def terminal_sections(rows: Sequence[RowLike], measurements: Sequence[MeasurementLike]
                      ) -> list[tuple[str, list[str]]]:
    """(title, lines) pairs for the terminal summary; empty sections are left out."""
    sections: list[tuple[str, list[str]]] = []
    if rows:
        lines = claims_table(rows).splitlines()
        lines.append(outcome_counts(rows))
        findings = [_as_row(r) for r in rows
                    if _as_row(r).outcome in (Outcome.FAIL.value, Outcome.INCONCLUSIVE.value)]
        for row in findings:
            lines.append(f"{row.outcome.upper()} {row.claim}: {row.message}")
        sections.append((CLAIMS_TITLE, lines))
    if measurements:
        lines = [f"cells: IOPS / MiB/s; block size {_block_sizes(measurements)}"]
        lines.extend(seed_table(measurements).splitlines())
        sections.append((SEED_TITLE, lines))
    return sections


def terminal_lines(rows: Sequence[RowLike], measurements: Sequence[MeasurementLike]
                   ) -> list[str]:
    """The summary as lines; a section title is a line ``== title ==``."""
    lines: list[str] = []
    for title, body in terminal_sections(rows, measurements):
        lines.append(f"== {title} ==")
        lines.extend(body)
    return lines
