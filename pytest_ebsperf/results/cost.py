"""Cost per performance, seed 003's last tables: IOPS per $, MiB/s per $, GiB per $.

Seed 003 divided measured performance by a node's monthly cost (EC2 + EBS, 750 h). This table
divides by the *volume's* monthly cost from a dated price table (the instance is not priced:
the built-in table has volume prices only), so the ratios compare volume types, not nodes.

Units are stated in every header because the seed got them wrong: its "Storage per $1 (GB)"
column printed MB per $ with a "$" sign for four rows (6,000,000 MB / $634 = "$9,463.72") and
GB per $ for the fifth (claims.md A.4). Here capacity is GiB per $ per month, throughput MiB/s
per $ per month, both from the same monthly cost.

The price table is :mod:`pytest_ebsperf.aws.pricing`'s built-in one (each volume type's record
has its prices), with its region and date.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_ebsperf.aws.pricing import builtin_prices, monthly_cost
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.awsmodel.volume_types import is_instance_store
from pytest_ebsperf.results import records
from pytest_ebsperf.results.tables import fit_table
from pytest_ebsperf.units import MIB, format_number

_MIB = float(MIB)


@dataclass(frozen=True)
class CostRow:
    """One volume's monthly cost and what it delivered per dollar."""

    volume: str
    monthly_usd: float | None
    size_gib: float | None
    iops: float | None
    iops_workload: str
    mibps: float | None
    mibps_workload: str
    note: str = ""

    def per_dollar(self, value: float | None) -> float | None:
        if value is None or not self.monthly_usd:
            return None
        return value / self.monthly_usd

    def as_dict(self) -> dict[str, Any]:
        return {"volume": self.volume, "monthly_usd": self.monthly_usd,
                "size_gib": self.size_gib, "iops": self.iops,
                "iops_workload": self.iops_workload, "iops_per_usd": self.per_dollar(self.iops),
                "mibps": self.mibps, "mibps_workload": self.mibps_workload,
                "mibps_per_usd": self.per_dollar(self.mibps),
                "gib_per_usd": self.per_dollar(self.size_gib), "note": self.note}


@dataclass(frozen=True)
class CostTable:
    """Rows plus where the prices came from."""

    region: str
    source: str
    rows: tuple[CostRow, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"region": self.region, "price_source": self.source,
                "scope": "volume only (instance not priced); per month",
                "rows": [row.as_dict() for row in self.rows]}


def monthly_price(facts: Mapping[str, Any], region: str) -> tuple[float | None, str]:
    """USD per month of the volume described by ``facts``, and the price source."""
    vtype = str(facts.get("type"))
    table = builtin_prices(region)
    prices = table.prices.get(vtype)
    if prices is None:
        return None, table.source
    volume = Volume(vtype, size_gib=facts.get("size_gib"), iops=facts.get("iops"),
                    throughput_mibps=facts.get("throughput_mibps"))
    return monthly_cost(volume, prices), table.source


def cost_table(measurements: Sequence[Mapping[str, Any]], region: str) -> CostTable | None:
    """One row per volume measured on the device under test; None when nothing was."""
    # Grouped by the volume's facts, not its label: under xdist each worker has its own
    # emulated device of the same volume, and the price belongs to the volume.
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for m in measurements:
        if m.get("phase", "steady") != "steady":
            continue  # a run over a burst knee or a probe is not the volume's steady rate
        if m.get("role", "device") == "device" and m.get("volume_facts"):
            label = records.describe_volume_key(records.volume_key(m["volume_facts"]))
            grouped.setdefault(f"emulated {label}" if m.get("emulated") else label,
                               []).append(m)
    if not grouped:
        return None
    sources = set()
    rows = []
    for label, items in grouped.items():
        facts = items[0]["volume_facts"]
        usd, source = monthly_price(facts, region)
        sources.add(source)
        rows.append(_row(label, facts, items, usd))
    return CostTable(region, "; ".join(sorted(sources)), tuple(rows))


def _row(label: str, facts: Mapping[str, Any], items: Sequence[Mapping[str, Any]],
         usd: float | None) -> CostRow:
    random = [m for m in items if str(m.get("pattern", "")).startswith("rand")]
    best_iops = max(random or items, key=lambda m: float(m.get("iops") or 0.0))
    best_bw = max(items, key=lambda m: float(m.get("bw_bytes") or 0.0))
    note = ""
    if is_instance_store(facts.get("type")):
        note = "instance store is billed with the instance"
    elif usd is None:
        note = "no price for this volume type"
    size = facts.get("size_gib")
    return CostRow(label, usd, float(size) if size else None, float(best_iops.get("iops") or 0),
                   str(best_iops.get("workload", "")),
                   float(best_bw.get("bw_bytes") or 0) / _MIB, str(best_bw.get("workload", "")),
                   note)


def format_cost_table(table: CostTable, tablefmt: str = "simple", width: int | None = None
                      ) -> str:
    """The table as text (or HTML): units in every header, the workload behind each number."""
    lines = []
    for row in table.rows:
        lines.append([row.volume, _usd(row.monthly_usd),
                      f"{_num(row.iops)} ({row.iops_workload})", _num(row.per_dollar(row.iops)),
                      f"{_num(row.mibps)} ({row.mibps_workload})",
                      _num(row.per_dollar(row.mibps)), _num(row.per_dollar(row.size_gib)),
                      row.note])
    headers = ["Volume", "$ per month", "IOPS (workload)", "IOPS per $", "MiB/s (workload)",
               "MiB/s per $", "GiB per $", "Note"]
    if not any(row.note for row in table.rows):
        headers.pop()
        lines = [line[:-1] for line in lines]

    return fit_table(lines, headers, tablefmt=tablefmt, width=width,
                     wrap=("Volume", "IOPS (workload)", "MiB/s (workload)", "Note"),
                     drop=("Note", "GiB per $", "MiB/s per $", "MiB/s (workload)"))


def caption(table: CostTable) -> str:
    """Where the prices came from and what the numbers mean."""
    return (f"volume cost only, per month (instance not priced), laid out as seed 003's "
            f"comparison of instance store and st1/sc1 (2016); prices: {table.source}.")


def _usd(value: float | None) -> str:
    return "-" if value is None else f"${value:,.2f}"


def _num(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return format_number(value) if abs(value) >= 10 else f"{value:.2f}"

