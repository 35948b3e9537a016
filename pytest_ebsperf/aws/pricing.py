"""What a provisioned run costs: a dated built-in price table and the estimate built on it.

Prices are per month in USD (claims.md B-PRICE). They change; :class:`PriceListClient` in
:mod:`.pricelist` fetches the live ones when the Price List API is reachable, and the
estimate always says which source it used. Billing follows the EBS pricing page: gp2/gp3
storage, IOPS and throughput are billed per second with a 60-second minimum, prorated over
a 30-day month ("$0.10 per GB-month * 2000 GB * 43,200 seconds / (86,400 seconds/day * 30
day-month)", https://aws.amazon.com/ebs/pricing/). claims.md verifies per-second billing for
gp2/gp3 only, so other types are rounded up to whole hours: an estimate that guards a spending
limit should err high.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pytest_ebsperf.awsmodel import volume_types
from pytest_ebsperf.awsmodel.types import VolumePrices
from pytest_ebsperf.awsmodel.volume import Volume

#: When the built-in numbers were collected (claims.md B-PRICE, catalogue of 2025-2026).
PRICE_TABLE_AS_OF = "2025"
MONTH_S = 30 * 86_400  # AWS's proration month in the pricing examples
MINIMUM_S = 60
#: Magnetic volumes also bill per I/O; a run is assumed to average this many (B-STD: "about
#: 100 IOPS on average with burst to hundreds").
STANDARD_ASSUMED_IOPS = 200


def builtin_table() -> Mapping[str, Mapping[str, VolumePrices]]:
    """Built-in prices per region and volume type (claims.md B-PRICE), from each volume
    type's record. Several Tokyo numbers are marked "unverified" or seed-era there; they are
    used as given and the live Price List wins."""
    table: dict[str, dict[str, VolumePrices]] = {}
    for name in volume_types.ebs_names():
        for region, prices in volume_types.volume_type(name).prices.items():
            table.setdefault(region, {})[name] = prices
    return table


@dataclass(frozen=True)
class PriceTable:
    """Prices for one region and where they came from (said in every estimate)."""

    region: str
    prices: Mapping[str, VolumePrices]
    source: str


def builtin_prices(region: str) -> PriceTable:
    """The built-in table for ``region``; unknown regions get the highest known price."""
    table = builtin_table()
    if region in table:
        return PriceTable(
            region,
            table[region],
            f"built-in price table ({region}, as of {PRICE_TABLE_AS_OF})",
        )
    highest = {
        kind: max((prices[kind] for prices in table.values() if kind in prices),
                  key=lambda p: p.gb_month)
        for kind in {kind for prices in table.values() for kind in prices}
    }
    known = ", ".join(table)
    return PriceTable(
        region,
        highest,
        f"built-in price table as of {PRICE_TABLE_AS_OF} (no prices for {region}; used the "
        f"highest of {known}; the real price may differ)",
    )


def monthly_cost(spec: Volume, prices: VolumePrices) -> float:
    """USD per month for a volume held a whole month (B-PRICE ``monthly_cost``)."""
    cost = (spec.size_gib or 0) * prices.gb_month
    iops = spec.iops or 0
    if prices.iops_tiers:
        lower = 0.0
        for upper, rate in prices.iops_tiers:
            cost += max(0.0, min(iops, upper) - lower) * rate
            lower = upper
    else:
        cost += max(0, iops - prices.included_iops) * prices.iops_month
    cost += max(0.0, (spec.throughput_mibps or 0.0) - prices.included_mibps) * prices.mibps_month
    return cost


def billed_seconds(duration_s: float, prices: VolumePrices) -> float:
    """Seconds AWS bills for holding a volume ``duration_s`` seconds."""
    if prices.per_second:
        return float(max(MINIMUM_S, math.ceil(duration_s)))
    return float(max(1, math.ceil(duration_s / 3600)) * 3600)


@dataclass(frozen=True)
class CostLine:
    """One volume's share of an estimate."""

    label: str
    billed_s: float
    usd: float


@dataclass(frozen=True)
class CostEstimate:
    """The estimated cost of holding ``lines`` for ``duration_s``, with its price source."""

    region: str
    duration_s: float
    source: str
    lines: tuple[CostLine, ...] = field(default=())

    @property
    def total_usd(self) -> float:
        return sum(line.usd for line in self.lines)

    def sentence(self) -> str:
        """``2 volumes (gp3 100 GiB, io1 ... billed 1 h) for 10 min in us-east-1: about $...``."""
        labels = ", ".join(
            line.label
            if line.billed_s <= max(self.duration_s, MINIMUM_S)
            else f"{line.label}, billed {duration(line.billed_s)}"
            for line in self.lines
        )
        count = len(self.lines)
        return (
            f"{count} volume{'s' if count != 1 else ''} ({labels}) for "
            f"{duration(self.duration_s)} in {self.region}: about ${self.total_usd:.4f} "
            f"(snapshots, data transfer and the instance not included; prices from the "
            f"{self.source})"
        )


def duration(seconds: float) -> str:
    """``45 s``, ``10 min``, ``1 h``, ``2.5 h``."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.3g} h"


def estimate_cost(specs: Iterable[Volume], duration_s: float, table: PriceTable) -> CostEstimate:
    """Estimate holding every volume in ``specs`` for ``duration_s`` seconds."""
    lines = []
    for spec in specs:
        prices = table.prices.get(spec.type)
        if prices is None:
            raise ValueError(f"no price for volume type {spec.type!r} in {table.source}")
        billed = billed_seconds(duration_s, prices)
        usd = monthly_cost(spec, prices) * billed / MONTH_S
        usd += STANDARD_ASSUMED_IOPS * duration_s / 1e6 * prices.per_million_io
        lines.append(CostLine(spec.label(), billed, usd))
    return CostEstimate(table.region, duration_s, table.source, tuple(lines))
