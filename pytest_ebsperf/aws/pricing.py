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

from pytest_ebsperf.volume import Volume

#: When the built-in numbers were collected (claims.md B-PRICE, catalogue of 2025-2026).
PRICE_TABLE_AS_OF = "2025"
MONTH_S = 30 * 86_400  # AWS's proration month in the pricing examples
MINIMUM_S = 60
#: Magnetic volumes also bill per I/O; a run is assumed to average this many (B-STD: "about
#: 100 IOPS on average with burst to hundreds").
STANDARD_ASSUMED_IOPS = 200


@dataclass(frozen=True)
class VolumePrices:
    """Monthly USD prices of one volume type in one region."""

    gb_month: float
    iops_month: float = 0.0  # per provisioned IOPS above ``included_iops``
    included_iops: int = 0
    iops_tiers: tuple[tuple[float, float], ...] = ()  # io2: (upper IOPS bound, rate)
    mibps_month: float = 0.0  # per MiB/s above ``included_mibps``
    included_mibps: float = 0.0
    per_million_io: float = 0.0
    per_second: bool = False  # per-second billing with a 60 s minimum


def _gp3(gb: float, iops: float, mibps: float) -> VolumePrices:
    return VolumePrices(gb, iops, 3000, (), mibps, 125.0, 0.0, True)


def _io2(gb: float, tiers: tuple[float, float, float]) -> VolumePrices:
    return VolumePrices(
        gb, iops_tiers=((32_000, tiers[0]), (64_000, tiers[1]), (math.inf, tiers[2]))
    )


#: Built-in prices per region (claims.md B-PRICE). Several Tokyo numbers are marked
#: "unverified" or seed-era there; they are used as given and the live Price List wins.
BUILTIN_PRICES: Mapping[str, Mapping[str, VolumePrices]] = {
    "us-east-1": {
        "gp3": _gp3(0.08, 0.005, 0.040),
        "gp2": VolumePrices(0.10, per_second=True),
        "io1": VolumePrices(0.125, iops_month=0.065),
        "io2": _io2(0.125, (0.065, 0.0455, 0.032)),
        "st1": VolumePrices(0.045),
        "sc1": VolumePrices(0.015),
        "standard": VolumePrices(0.05, per_million_io=0.05),
    },
    "ap-northeast-1": {
        "gp3": _gp3(0.096, 0.006, 0.048),
        "gp2": VolumePrices(0.12, per_second=True),
        "io1": VolumePrices(0.142, iops_month=0.074),
        # Not in claims.md: io1's Tokyo rate with us-east-1's io2 tier ratios (B-OPEN 2).
        "io2": _io2(0.142, (0.074, 0.074 * 0.0455 / 0.065, 0.074 * 0.032 / 0.065)),
        "st1": VolumePrices(0.054),
        "sc1": VolumePrices(0.03),
        "standard": VolumePrices(0.08, per_million_io=0.08),
    },
}


@dataclass(frozen=True)
class PriceTable:
    """Prices for one region and where they came from (said in every estimate)."""

    region: str
    prices: Mapping[str, VolumePrices]
    source: str


def builtin_prices(region: str) -> PriceTable:
    """The built-in table for ``region``; unknown regions get the highest known price."""
    if region in BUILTIN_PRICES:
        return PriceTable(
            region,
            BUILTIN_PRICES[region],
            f"built-in price table ({region}, as of {PRICE_TABLE_AS_OF})",
        )
    highest = {
        kind: max((table[kind] for table in BUILTIN_PRICES.values()), key=lambda p: p.gb_month)
        for kind in BUILTIN_PRICES["us-east-1"]
    }
    known = ", ".join(BUILTIN_PRICES)
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
