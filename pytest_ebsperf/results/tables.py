"""The measurement tables beside the claims: the seed documents' IOPS / MiB/s grid, runs of one
check one after another, and volumes striped together (``--ebsperf-tables`` and the reports).
"""

from __future__ import annotations

import math
import statistics
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple, TypeAlias

from tabulate import tabulate

from pytest_ebsperf.awsmodel import seed_data
from pytest_ebsperf.awsmodel.seed_data import SEED001_RUNS
from pytest_ebsperf.awsmodel.volume_types import is_instance_store
from pytest_ebsperf.fio.workload import format_size
from pytest_ebsperf.units import (
    MIB,
    format_number,
)

#: Seed-table columns in the order the seed documents print them; others follow as seen.
SEED_COLUMNS = ("Seq Read", "Seq Write", "Rand Read", "Rand Write", "Rand RW 70/30")


SEED_TITLE = "ebsperf: IOPS / MiB/s by volume and access pattern"


RUNS_TITLE = "ebsperf: runs of one check, one after another"


SETS_TITLE = "ebsperf: volumes striped together"


# -- seed table ---------------------------------------------------------------------------
class Measurement(NamedTuple):
    """One fio run for the seed table: ``title`` is :attr:`Workload.title` ("Rand RW 70/30")."""

    volume: str
    title: str
    bs: int
    iops: float
    bw_bytes: float


def as_measurement(item: MeasurementLike) -> Measurement:
    """Accept a :class:`Measurement`, a 5-sequence or a dict with the same keys (the form
    measurements take in ``user_properties``)."""
    if isinstance(item, Mapping):
        return Measurement(str(item["volume"]), str(item["title"]), int(item["bs"]),
                           float(item["iops"]), float(item["bw_bytes"]))
    volume, title, bs, iops, bw_bytes = item
    return Measurement(str(volume), str(title), int(bs), float(iops), float(bw_bytes))


def steady(measurements: Iterable[MeasurementLike]) -> list[MeasurementLike]:
    """Measurements of steady runs only: a run over a burst knee or a confirmation probe is
    not what the seed tables show (its average mixes two phases)."""
    return [m for m in measurements
            if not isinstance(m, Mapping) or m.get("phase", "steady") == "steady"]


def seed_table(measurements: Iterable[MeasurementLike], tablefmt: str = "simple",
               width: int | None = None) -> str:
    """Volumes as rows, patterns as columns, cells ``IOPS / MiB/s``; repeated runs of the
    same cell are averaged (seed 001 reported the mean of its runs).

    Only measured patterns appear. With one block size (the seeds' case: seed 000 ran
    everything at 16 KiB) the table is exactly the seed's shape and the caption names the
    size. With several, a "Block size" column splits each volume into one line per size,
    which keeps the pattern columns of the seeds instead of one column per pattern and size.
    """
    kept = steady(measurements)
    hosts = {id(m): str(m.get("host")) for m in kept if isinstance(m, Mapping) and m.get("host")}
    items = [as_measurement(m)._replace(volume=f"{hosts[id(m)]}\t{as_measurement(m).volume}")
             if id(m) in hosts else as_measurement(m) for m in kept]
    if not items:
        return ""
    columns = _seed_columns(items)
    sizes = sorted({m.bs for m in items})
    cells: dict[tuple[str, int, str], list[Measurement]] = {}
    for m in items:
        cells.setdefault((m.volume, m.bs, m.title), []).append(m)
    table = []
    for volume in dict.fromkeys(m.volume for m in items):
        host, _, shown = volume.rpartition("\t")  # a fleet run's host, else ""
        label = shown  # printed on the volume's first line only, as the seeds group rows
        for bs in sizes:
            line = [_cell(cells.get((volume, bs, title), [])) for title in columns]
            if any(line):
                table.append([*([host] if hosts else []), label,
                              *([format_size(bs)] if len(sizes) > 1 else []), *line])
                label = host = ""
    headers = [*(["Host"] if hosts else []), "Volume",
               *(["Block size"] if len(sizes) > 1 else []), *columns]
    return fit_table(table, headers, tablefmt=tablefmt, width=width, wrap=("Volume", "Host"))


def _seed_columns(items: Sequence[Measurement]) -> list[str]:
    titles = list(dict.fromkeys(m.title for m in items))
    return [t for t in SEED_COLUMNS if t in titles] + [t for t in titles if t not in SEED_COLUMNS]


def _cell(runs: Sequence[Measurement]) -> str:
    if not runs:
        return ""
    iops = math.fsum(m.iops for m in runs) / len(runs)
    mib = math.fsum(m.bw_bytes for m in runs) / len(runs) / MIB
    return f"{format_number(iops)} / {format_number(mib)}"


# -- repeated runs (seed 001) ---------------------------------------------------------------
def runs_table(measurements: Sequence[MeasurementLike], tablefmt: str = "simple",
               width: int | None = None) -> str:
    """The runs of one check that measured the same workload on the same volume more than
    once (S1-09's runs, a relative check's rounds), as seed 001 printed its runs: run A, B,
    C..., mean and coefficient of variation of the IOPS, one line per check, volume and
    workload. Different checks are never runs of one another. Empty when nothing repeated."""
    groups: dict[tuple[str, str, str, int], list[Measurement]] = {}
    for raw in steady(measurements):
        m = as_measurement(raw)
        check = str(raw.get("nodeid") or "") if isinstance(raw, Mapping) else ""
        groups.setdefault((check, m.volume, m.title, m.bs), []).append(m)
    repeated = {key: runs for key, runs in groups.items() if len(runs) > 1}
    if not repeated:
        return ""
    count = max(len(runs) for runs in repeated.values())
    table = []
    for (check, volume, title, bs), runs in repeated.items():
        table.append(_runs_row(check.rsplit("::", 1)[-1] or "-", volume,
                               f"{title} {format_size(bs)}", [m.iops for m in runs], count))
    if any(isinstance(m, Mapping) and is_instance_store((m.get("volume_facts") or {}).get("type")) for m in measurements):
        # Seed 001's runs (16 KiB random writes, runs 2-4 of 4) on the retired instance types
        # beside the instance store measured here (S1-01, S1-07, S1-09).

        count = max(count, max(len(r) for r in SEED001_RUNS.values()))
        table = [row[:3] + row[3:-2] + [""] * (count + 5 - len(row)) + row[-2:]
                 for row in table]
        for instance, seed_runs in SEED001_RUNS.items():
            table.append(_runs_row("seed 001 (2015)", instance, "Rand Write 16KiB",
                                   list(seed_runs), count))
    headers = ["Check", "Volume", "Workload", *(f"run {_run_name(i)}" for i in range(count)),
               "mean", "CV"]
    return fit_table(table, headers, tablefmt=tablefmt, width=width,
                     wrap=("Check", "Volume", "Workload"), drop=("Volume",))


def _runs_row(check: str, volume: str, workload: str, iops: Sequence[float], count: int
              ) -> list[str]:
    mean = math.fsum(iops) / len(iops)
    cv = statistics.stdev(iops) / mean if mean and len(iops) > 1 else 0.0
    cells = [format_number(v) for v in iops] + [""] * (count - len(iops))
    return [check, volume, workload, *cells, format_number(mean), f"{cv:.1%}"]


# -- sets of volumes (seed 004) --------------------------------------------------------------
def sets_table(measurements: Iterable[MeasurementLike], tablefmt: str = "simple",
               width: int | None = None) -> str:
    """Seed 004's shape for sets of volumes measured together: patterns as rows, the number
    of volumes as columns, cells ``IOPS / MiB/s`` (runs of one cell averaged), then seed
    004's own figures (io1 200 GB / 2,000 PIOPS on c1.xlarge, 2013: IOPS, and MB/s for its
    bandwidth rows) in the same shape. Empty
    unless some measurement drove more than one volume."""
    found = [m for m in steady(measurements) if isinstance(m, Mapping) and m.get("volumes")]
    if not any(int(m["volumes"]) > 1 for m in found):
        return ""
    counts = sorted({int(m["volumes"]) for m in found})
    cells: dict[tuple[str, int], list[Measurement]] = {}
    for m in found:
        item = as_measurement(m)
        cells.setdefault((f"{item.title} {format_size(item.bs)}", int(m["volumes"])),
                         []).append(item)
    rows = list(dict.fromkeys(key for key, _ in cells))
    table = [[row, *(_cell(cells.get((row, n), [])) for n in counts)] for row in rows]

    for title, figures in seed_data.SEED004_IOPS.items():
        by_n = dict(zip(seed_data.SEED004_VOLUMES, figures))
        table.append([f"seed 004: {title} 4KiB", *(format_number(by_n[n]) if n in by_n else "-"
                                            for n in counts)])
    for direction, figures in seed_data.SEED004_MBPS.items():
        by_n = dict(zip(seed_data.SEED004_VOLUMES, figures))
        table.append([f"seed 004: bandwidth {direction}", *(f"{by_n[n]:g} MB/s" if n in by_n else "-"
                                                     for n in counts)])
    headers = ["Pattern", *(f"{n} volume{'s' if n > 1 else ''}" for n in counts)]
    return fit_table(table, headers, tablefmt=tablefmt, width=width, wrap=("Pattern",))


def _run_name(index: int) -> str:
    return chr(ord("A") + index) if index < 26 else str(index + 1)


def _block_sizes(measurements: Iterable[MeasurementLike]) -> str:
    sizes = sorted({as_measurement(m).bs for m in steady(measurements)})
    return ", ".join(format_size(bs) for bs in sizes)


#: Narrowest a wrapped column gets before columns are left out.
MIN_WRAP = 14


#: Headings are wrapped at this width before columns are left out.
HEADING_WRAP = 10


def fit_table(table: Sequence[Sequence[str]], headers: Sequence[str], *, tablefmt: str,
              width: int | None, wrap: Sequence[str] = (), drop: Sequence[str] = ()
              ) -> str:
    """tabulate ``table`` within ``width`` characters (None: as wide as it is): the ``wrap``
    columns are wrapped, narrower and narrower, then every heading is wrapped, then the
    ``drop`` columns are left out in that order, and a last line says which (the results
    file keeps every figure)."""

    def draw(columns: Sequence[int], limit: int | None, headings: int | None = None) -> str:
        cells = [limit if limit and headers[i] in wrap else None for i in columns]
        heads = [headings if headings else (limit if limit and headers[i] in wrap else 999)
                 for i in columns]
        return tabulate([[row[i] for i in columns] for row in table],
                        headers=[headers[i] for i in columns], tablefmt=tablefmt,
                        disable_numparse=True, maxcolwidths=cells if limit else None,
                        maxheadercolwidths=heads if (limit or headings) else None)

    def fits(text: str) -> bool:
        return width is None or max((len(line) for line in text.splitlines()), default=0) \
            <= width

    columns = list(range(len(headers)))
    text = draw(columns, None)
    if fits(text) or tablefmt != "simple":
        return text
    longest = max((len(str(row[i])) for row in table for i in columns
                   if headers[i] in wrap), default=0)
    for limit in (48, 40, 32, 26, 20, MIN_WRAP):
        if limit < longest:
            text = draw(columns, limit)
            if fits(text):
                return text
    text = draw(columns, MIN_WRAP, HEADING_WRAP)
    if fits(text):
        return text
    left_out: list[str] = []
    for name in drop:
        if name in headers and headers.index(name) in columns:
            columns.remove(headers.index(name))
            left_out.append(name)
            text = draw(columns, MIN_WRAP, HEADING_WRAP)
            if fits(text):
                break
    if not left_out:
        return text
    note = f"(left out to fit {width} columns: {', '.join(left_out)}; in the results file)"
    return "\n".join([text, *wrap_text(note, width)])


MeasurementLike: TypeAlias = Measurement | Sequence[Any] | Mapping[str, Any]


def wrap_text(text: str, width: int | None, indent: str = "  ") -> list[str]:
    """A paragraph as lines of at most ``width`` characters (the later ones indented)."""
    if width is None or len(text) <= width:
        return [text]

    return textwrap.wrap(text, width=width, subsequent_indent=indent,
                         break_long_words=True, break_on_hyphens=False)
