"""Measurements and report rows as plain data: what travels on ``user_properties``.

A measurement is one fio run. :func:`measurement_facts` adds to the summary the checks
fixture records (volume label, pattern, IOPS, bytes/s) everything the results file, the
regression gate, the history and the pictures need: the workload, the volume facts with their
provenance, per-direction latency percentiles and the per-second series. Only JSON types, so
xdist can carry them from a worker to the controller.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_ebsperf.awsmodel.volume import Volume
    from pytest_ebsperf.fio.result import DirectionStats, FioResult
    from pytest_ebsperf.fio.workload import Workload

#: Completion-latency percentiles kept per direction (the ones fio is asked for).
KEPT_PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)
#: Fields of a volume that identify "the same volume" across runs (the gate's key).
VOLUME_KEY_FIELDS = ("type", "size_gib", "iops", "throughput_mibps", "instance_type")


def measurement_facts(workload: Workload, result: FioResult, volume: Volume, *, role: str,
                      device: str, emulated: bool, nodeid: str) -> dict[str, Any]:
    """The extra keys of a measurement dict (see the module docstring)."""
    return {
        "nodeid": nodeid,
        "role": role,
        "device": device,
        "emulated": emulated,
        "volume_facts": _plain_volume(volume),
        "spec": {
            "pattern": workload.pattern, "bs": workload.bs, "iodepth": workload.iodepth,
            "numjobs": workload.numjobs, "runtime_s": workload.runtime_s,
            "ramp_s": workload.ramp_s, "rwmixread": workload.rwmixread,
            "engine": workload.engine, "direct": workload.direct, "size": workload.size,
        },
        "fio_version": result.fio_version,
        "fio_jobs": result.jobs,
        "cpu_pct": {"usr": _num(result.usr_cpu), "sys": _num(result.sys_cpu)},
        "read": direction_summary(result.read),
        "write": direction_summary(result.write),
        "series": {key: {"t_s": [_num(t) for t in s.t_s], "values": [_num(v) for v in s.values]}
                   for key, s in result.series.items() if len(s)},
    }


def direction_summary(stats: DirectionStats) -> dict[str, Any]:
    """IOPS, bytes/s and completion-latency mean and percentiles (ns) of one direction."""
    clat = stats.clat
    return {
        "iops": _num(stats.iops), "bw_bytes": _num(stats.bw_bytes),
        "total_ios": stats.total_ios,
        "clat_ns": {"mean": _num(clat.mean_ns), "min": _num(clat.min_ns),
                    "max": _num(clat.max_ns),
                    **{f"p{q:g}": _num(v) for q in KEPT_PERCENTILES
                       if (v := clat.p(q)) is not None}},
    }


def _plain_volume(volume: Volume) -> dict[str, Any]:
    data = volume.as_dict()
    return {key: value for key, value in data.items() if _is_plain(value)}


def _is_plain(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str, dict))


def _num(value: float) -> float | None:
    """Round to keep files small; NaN and infinity become None (JSON has neither)."""
    if not math.isfinite(value):
        return None
    return round(value, 4)


# -- reading measurements back -------------------------------------------------------------
def series_values(measurement: Mapping[str, Any], key: str) -> list[float]:
    """The values of one per-second series (``total_iops``, ``total_bw``...), or []."""
    series = measurement.get("series") or {}
    found = series.get(key) or {}
    return [float(v) for v in found.get("values") or () if v is not None]


def latency_samples(measurement: Mapping[str, Any]) -> list[float]:
    """Per-second mean completion latency (ns), reads and writes weighted by their IOPS."""
    read, write = series_values(measurement, "read_clat"), series_values(measurement, "write_clat")
    if not read or not write:
        return read or write
    r_iops = series_values(measurement, "read_iops")
    w_iops = series_values(measurement, "write_iops")
    n = min(len(read), len(write), len(r_iops), len(w_iops))
    out = []
    for i in range(n):
        total = r_iops[i] + w_iops[i]
        if total > 0:
            out.append((read[i] * r_iops[i] + write[i] * w_iops[i]) / total)
    return out


def latency_percentile(measurement: Mapping[str, Any], name: str) -> float | None:
    """A completion-latency percentile (``p99``) over both directions, weighted by IOPS."""
    pairs = []
    for direction in ("read", "write"):
        data = measurement.get(direction) or {}
        value = (data.get("clat_ns") or {}).get(name)
        iops = data.get("iops") or 0.0
        if value and iops > 0:
            pairs.append((float(iops), float(value)))
    total = sum(iops for iops, _ in pairs)
    return math.fsum(i * v for i, v in pairs) / total if total else None


def volume_key(facts: Mapping[str, Any]) -> tuple[Any, ...]:
    """What makes two volumes "the same" for the gate: type, size, provisioned values and
    instance type (not the volume id or device path, which change between runs)."""
    return tuple(facts.get(name) for name in VOLUME_KEY_FIELDS)


def describe_volume_key(key: Sequence[Any]) -> str:
    """``io1 100 GiB 4,000 IOPS`` for a :func:`volume_key`."""
    vtype, size, iops, tput, instance = key
    parts = [str(vtype)]
    if size is not None:
        parts.append(f"{size:,} GiB")
    if iops is not None:
        parts.append(f"{iops:,} IOPS")
    if tput is not None:
        parts.append(f"{tput:g} MiB/s")
    if instance:
        parts.append(f"on {instance}")
    return " ".join(parts)


def workload_shape(label: str) -> str:
    """A workload label without its queue depth (``randread 16KiB``): the automatic queue
    depth follows the CPU count, so a baseline from another host may differ only there."""
    return " ".join(part for part in label.split() if not part.startswith("QD"))


def workload_queue(label: str) -> str:
    """The queue-depth part of a workload label (``QD20x1``), empty when it has none."""
    return " ".join(part for part in label.split() if part.startswith("QD"))


def by_nodeid(items: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """Group rows or measurements by their test's node id, in order."""
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for item in items:
        grouped.setdefault(str(item.get("nodeid", "")), []).append(item)
    return grouped
