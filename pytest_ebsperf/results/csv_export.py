"""``--ebsperf-csv=FILE``: every measurement of the run as one CSV row, for spreadsheets and
plotting tools (the results file has everything; this is its flat, per-run part). Each row
carries its check's claim, verdict (outcome), expected figure and unit, binding limit and
policy beside what fio measured."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any

COLUMNS = (
    "nodeid", "claim", "what", "outcome", "expected", "expected_unit", "binding", "policy",
    "phase", "role", "volume", "workload", "pattern", "bs", "iodepth", "numjobs",
    "engine", "iops", "bw_bytes", "read_iops", "write_iops", "read_clat_p50_ns",
    "read_clat_p99_ns", "read_clat_p99.9_ns", "write_clat_p50_ns", "write_clat_p99_ns",
    "write_clat_p99.9_ns", "kernel_ios", "kernel_avg_io_bytes", "wall_s", "fio_version",
    "emulated", "device",
)


def _clat(direction: Mapping[str, Any] | None, q: str) -> Any:
    return ((direction or {}).get("clat_ns") or {}).get(f"p{q}")


def row_of(m: Mapping[str, Any]) -> dict[str, Any]:
    spec = m.get("spec") or {}
    read, write, kernel = m.get("read") or {}, m.get("write") or {}, m.get("kernel") or {}
    check = m.get("check") or {}
    row = {
        "nodeid": m.get("nodeid"), "claim": m.get("claim"), "what": m.get("what"),
        "outcome": check.get("outcome"), "expected": check.get("expected"),
        "expected_unit": check.get("unit"), "binding": check.get("binding"),
        "policy": check.get("policy"),
        "phase": m.get("phase"), "role": m.get("role"),
        "volume": m.get("volume"), "workload": m.get("workload"),
        "pattern": spec.get("pattern"), "bs": spec.get("bs"), "iodepth": spec.get("iodepth"),
        "numjobs": spec.get("numjobs"), "engine": spec.get("engine"), "iops": m.get("iops"),
        "bw_bytes": m.get("bw_bytes"), "read_iops": read.get("iops"),
        "write_iops": write.get("iops"), "kernel_ios": kernel.get("ios"),
        "kernel_avg_io_bytes": kernel.get("avg_io_bytes"), "wall_s": m.get("wall_s"),
        "fio_version": m.get("fio_version"), "emulated": m.get("emulated"),
        "device": m.get("device"),
    }
    for name, direction in (("read", read), ("write", write)):
        for q in ("50", "99", "99.9"):
            row[f"{name}_clat_p{q}_ns"] = _clat(direction, q)
    return row


def to_csv(measurements: Sequence[Mapping[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, extrasaction="ignore",
                            lineterminator="\n")
    writer.writeheader()
    for m in measurements:
        writer.writerow({k: ("" if v is None else v) for k, v in row_of(m).items()})
    return out.getvalue()
