"""JUnit XML properties: each report row and measurement as flat ``name = value`` pairs.

pytest's JUnit writer prints a property value with ``str()``, which turns a row dict into one
unreadable Python literal. CI systems show properties as a list of names and values, so rows
become ``ebsperf.<claim>.<field>`` (``ebsperf.S0-04.measured = 3999.2``) and measurements
``ebsperf.run<N>.<field>``. Per-second series are left out (they are in the results file).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

PREFIX = "ebsperf"
_ROW_FIELDS = (("outcome", "outcome"), ("expected", "expected_value"),
               ("measured", "measured_value"), ("unit", "unit"),
               ("expected_text", "expected"), ("measured_text", "measured"),
               ("binding", "binding"), ("policy", "policy"), ("what", "what"),
               ("volume", "volume"), ("workload", "workload"), ("reason", "reason"))


def flatten(properties: Sequence[tuple[str, Any]], *, row_key: str, measurement_key: str
            ) -> list[tuple[str, Any]]:
    """``properties`` with every row and measurement dict replaced by flat pairs; anything
    else (the user's own ``record_property`` calls) is kept as it is."""
    out: list[tuple[str, Any]] = []
    claims_seen: dict[str, int] = {}
    runs = 0
    for name, value in properties:
        if name == row_key and isinstance(value, Mapping):
            claim = str(value.get("claim") or "claim")
            claims_seen[claim] = claims_seen.get(claim, 0) + 1
            tag = claim if claims_seen[claim] == 1 else f"{claim}#{claims_seen[claim]}"
            out.extend(row_properties(value, f"{PREFIX}.{tag}"))
        elif name == measurement_key and isinstance(value, Mapping):
            runs += 1
            out.extend(measurement_properties(value, f"{PREFIX}.run{runs}"))
        else:
            out.append((name, value))
    return out


def row_properties(row: Mapping[str, Any], prefix: str) -> list[tuple[str, Any]]:
    """One judged claim: outcome, expected and measured (raw and formatted), binding limit,
    and the regression gate's finding when the run was compared."""
    out = [(f"{prefix}.{name}", _text(row.get(key))) for name, key in _ROW_FIELDS
           if row.get(key) not in (None, "")]
    compare = row.get("compare")
    if isinstance(compare, Mapping):
        out.append((f"{prefix}.compare.status", compare.get("status")))
        out.append((f"{prefix}.compare.summary", compare.get("summary")))
        out.append((f"{prefix}.compare.baseline", compare.get("baseline")))
        for check in compare.get("checks") or ():
            for metric in check.get("metrics") or ():
                name = str(metric.get("metric", "")).replace(" ", "_")
                for key in ("current", "baseline", "change_pct", "p_value", "status"):
                    if metric.get(key) is not None:
                        out.append((f"{prefix}.compare.{name}.{key}", _text(metric[key])))
    return out


def measurement_properties(measurement: Mapping[str, Any], prefix: str) -> list[tuple[str, Any]]:
    """One fio run: workload, volume, IOPS, bytes/s, latency percentiles, fio version."""
    out = [(f"{prefix}.{key}", _text(measurement.get(key)))
           for key in ("workload", "volume", "role", "iops", "bw_bytes", "fio_version")
           if measurement.get(key) is not None]
    for direction in ("read", "write"):
        data = measurement.get(direction) or {}
        if not data.get("iops"):
            continue
        for name, value in (data.get("clat_ns") or {}).items():
            if name in ("mean", "p50", "p99", "p99.9") and value is not None:
                out.append((f"{prefix}.{direction}.clat_{name}_ns", _text(value)))
    series = (measurement.get("series") or {}).get("total_iops") or {}
    if series.get("values"):
        out.append((f"{prefix}.seconds", len(series["values"])))
    return out


def _text(value: Any) -> Any:
    """Numbers stay numbers (the writer calls str()); anything else becomes text."""
    if isinstance(value, (int, float, str)) and not isinstance(value, bool):
        return value
    return str(value)
