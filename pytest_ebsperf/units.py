"""Units and how numbers read: one module for every figure the plugin prints or stores.

Binary size constants (``KIB``, ``MIB``, ``GIB``), fio-style sizes (``16k`` <-> ``16KiB``), and
the formatting of verdict quantities (IOPS, bytes per second as MiB/s, latency, seconds,
percentages). Light on purpose: it imports nothing of the package.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from typing import Any

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
TIB = 1024 * GIB
_MIB = float(MIB)


def round_sig(value: float, digits: int = 2) -> float:
    """``26315.8`` -> ``26000.0``: round to significant digits for "at most" figures."""
    if value == 0 or not math.isfinite(value):
        return value
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


def format_number(value: float) -> str:
    """Thousands separators; one decimal only for small non-integers (``8.5``)."""
    if abs(value) >= 100 or float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:,.1f}"


def format_iops(iops: float) -> str:
    """``1512.4`` -> ``1,512 IOPS``."""
    return f"{format_number(iops)} IOPS"


def format_mibps(bytes_per_s: float) -> str:
    """Bytes per second as MiB/s, the unit EBS documents volume throughput in."""
    mib = bytes_per_s / _MIB
    return f"{mib:,.0f} MiB/s" if mib >= 100 else f"{mib:,.1f} MiB/s"


def format_latency(ns: float, digits: int = 2) -> str:
    """``38_000`` -> ``38 µs``; ``900_000`` -> ``0.9 ms``; ``digits`` significant digits."""
    us = ns / 1000.0
    if us < 10 ** digits:
        return f"{round_sig(us, digits):g} µs"
    ms = us / 1000.0
    return f"{ms:,.0f} ms" if ms >= 10 ** digits else f"{round_sig(ms, digits):g} ms"


def format_seconds(seconds: float) -> str:
    """``2000`` -> ``2,000 s (33 min)``; minutes only from ten minutes up; under a second
    two significant digits (``0.25`` -> ``0.25 s``, which one decimal made ``0.2 s``)."""
    if 0 < abs(seconds) < 1:
        return f"{seconds:.2g} s"
    text = f"{format_number(seconds)} s"
    return f"{text} ({seconds / 60:,.0f} min)" if seconds >= 600 else text


def format_ratio(value: float) -> str:
    """``4.712`` -> ``4.71x``; ``1.0`` -> ``1.00x``; ``150.2`` -> ``150x``."""
    return f"{value:#.3g}x" if value < 100 else f"{value:,.0f}x"


def format_bytes(value: float) -> str:
    """A byte count in binary units: ``4294966784`` -> ``4.0 GiB``; ``512`` -> ``512 B``."""
    for unit, factor in (("TiB", TIB), ("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if abs(value) >= factor:
            amount = value / factor
            return f"{amount:,.0f} {unit}" if amount >= 100 or amount.is_integer() \
                else f"{amount:,.1f} {unit}"
    return f"{value:,.0f} B"


def format_quantity(value: float | None, unit: str) -> str:
    """A value in a verdict unit ("IOPS", "B/s", "ns", "s", "ratio", "bytes", "CV") as a
    user reads it: MiB/s, binary sizes, ratios as ``4.7x``, seconds one way."""
    if value is None or not math.isfinite(value):
        return "-"
    formatters = {"IOPS": format_iops, "B/s": format_mibps, "ns": format_latency,
                  "s": format_seconds, "ratio": format_ratio, "bytes": format_bytes,
                  "CV": format_percent}
    formatter = formatters.get(unit)
    return formatter(value) if formatter else f"{format_number(value)} {unit}".strip()


def format_percent(fraction: float) -> str:
    """``0.999`` -> ``99.9 %``; never rounds a shortfall up to ``100 %``."""
    pct = fraction * 100.0
    text = f"{pct:.2f}".rstrip("0").rstrip(".")
    if text == "100" and fraction < 1.0:
        text = "99.99"
    return f"{text} %"


# -- JSON ------------------------------------------------------------------------------
def plain_json(value: Any) -> Any:
    """Recursively turn a value into JSON types; NaN/inf become None (JSON has neither)."""
    if isinstance(value, enum.Enum):
        return plain_json(value.value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(key): plain_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain_json(item) for item in value]
    return str(value)


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``1 check``, ``2 checks``: a count with its noun."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"
