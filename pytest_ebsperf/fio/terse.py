"""fio's terse output (``--output-format=terse``, versions 2 to 5 of its semicolon format), read into the
same dictionary as fio's JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pytest_ebsperf.errors import FioOutputError
from pytest_ebsperf.fio.text import _clean, _is_number, _pct, command_options


def looks_like_terse(text: str) -> bool:
    """True when ``text`` holds fio terse lines (``3;fio-3.33;job;0;0;...``)."""
    return any(_terse_fields(line) for line in text.splitlines())


# -- terse output ---------------------------------------------------------------------------------
def _terse_fields(line: str) -> list[str] | None:
    fields = _clean(line).strip().split(";")
    if len(fields) < 50 or fields[0] not in ("2", "3", "4", "5"):
        return None
    if fields[0] != "2" and not fields[1].startswith("fio"):
        return None
    return fields


def terse_to_data(text: str) -> dict[str, Any]:
    """fio's terse output (versions 2-5) as the dictionary its JSON report would be."""
    jobs: list[dict[str, Any]] = []
    disks: list[dict[str, Any]] = []
    version = ""
    for line in text.splitlines():
        fields = _terse_fields(line)
        if fields is None:
            continue
        entry, found_version, disk = _terse_entry(fields)
        version = version or found_version
        jobs.append(entry)
        disks.extend(disk)
    if not jobs:
        raise FioOutputError("the text holds no fio terse line ('3;fio-3.33;NAME;0;0;...').")
    data: dict[str, Any] = {"fio version": version, "jobs": jobs, "format": "terse"}
    options = command_options(text)
    if options:
        data["global options"] = {k: v for k, v in options.items() if k != "name"}
    if disks:
        data["disk_util"] = disks
    return data


def _terse_entry(fields: Sequence[str]) -> tuple[dict[str, Any], str, list[dict[str, Any]]]:
    terse = int(fields[0])
    if terse == 2:
        version, rest = "", list(fields[1:])
    else:
        version, rest = fields[1], list(fields[2:])
    name, group, error = rest[0], int(rest[1] or 0), int(rest[2] or 0)
    position = 3
    entry: dict[str, Any] = {"jobname": name, "groupid": group, "error": error,
                             "job options": {}}
    sides = ("read", "write") if terse == 3 else ("read", "write", "trim")
    for side in sides:
        block, position = _terse_side(rest, position, bw_samples=terse == 5,
                                      iops_block=terse == 5)
        entry[side] = block
    entry["usr_cpu"] = _pct(rest[position])
    entry["sys_cpu"] = _pct(rest[position + 1])
    position += 5 + 7 + 10 + 12  # cpu, io depths, latency buckets (us, ms)
    entry["job_runtime"] = max(int(float(entry[s].get("runtime") or 0)) for s in sides)
    disks: list[dict[str, Any]] = []
    while position + 9 <= len(rest) and rest[position] and not _is_number(rest[position]):
        values = rest[position:position + 9]
        try:
            disks.append({"name": values[0], "read_ios": int(values[1]),
                          "write_ios": int(values[2]), "read_merges": int(values[3]),
                          "write_merges": int(values[4]), "read_ticks": int(values[5]),
                          "write_ticks": int(values[6]), "in_queue": int(values[7]),
                          "util": _pct(values[8]), "aggregate": False})
        except ValueError:
            break
        position += 9
    return entry, version, disks


def _terse_side(rest: Sequence[str], at: int, *, bw_samples: bool, iops_block: bool
                ) -> tuple[dict[str, Any], int]:
    kib, bw_kib, iops, runtime = (float(rest[at]), float(rest[at + 1]), float(rest[at + 2]),
                                  float(rest[at + 3]))
    at += 4
    slat = _terse_lat(rest[at:at + 4])
    clat = _terse_lat(rest[at + 4:at + 8])
    at += 8
    percentiles: dict[str, float] = {}
    for field in rest[at:at + 20]:
        pct, _, value = field.partition("%=")
        try:
            q, v = float(pct), float(value)
        except ValueError:
            continue
        if q > 0:
            percentiles[f"{q:f}"] = v * 1000.0
    at += 20
    clat["percentile"] = percentiles
    lat = _terse_lat(rest[at:at + 4])
    at += 4 + 5 + (1 if bw_samples else 0)  # bw min, max, agg %, mean, dev [, samples]
    if iops_block:
        at += 5
    total = round(iops * runtime / 1000)
    for block in (slat, clat, lat):
        block["N"] = total
    return {"io_bytes": int(kib * 1024), "io_kbytes": int(kib), "bw_bytes": bw_kib * 1024,
            "bw": bw_kib, "iops": iops, "runtime": runtime, "total_ios": total,
            "slat_ns": slat, "clat_ns": clat, "lat_ns": lat}, at


def _terse_lat(values: Iterable[str]) -> dict[str, Any]:
    numbers = [float(v) if _is_number(v) else 0.0 for v in values]
    numbers += [0.0] * (4 - len(numbers))
    return {"min": numbers[0] * 1000, "max": numbers[1] * 1000, "mean": numbers[2] * 1000,
            "stddev": numbers[3] * 1000}
