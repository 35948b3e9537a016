"""The device's own count of a run beside fio's (the witness): fio's sample of the device's
counters in its report (``Disk stats`` / ``disk_util``), or the kernel's counters a check read
before and after fio; and the one rule that says when fio's figure is not the device's, for a
live check and for judge alike (:func:`apply_witness`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import Workload

#: When fio reports this much more I/O than the device served, the figure is not the volume's.
WITNESS_TOLERANCE = 0.05
#: fio samples a device's counters (its Disk stats) every 250 ms, and its last sample may
#: come before the run's last I/Os completed: a count no more behind fio's than fio's rate
#: over this long is no evidence (a 0.3 s read of 128 I/Os was counted as 84 and 99).
DISK_STATS_LAG_S = 0.25


@dataclass(frozen=True)
class Witness:
    """What the device served while fio ran: fio's own sample of its counters (``Disk
    stats`` / ``disk_util``, up to :data:`DISK_STATS_LAG_S` behind), or the kernel's
    counters a check read before and after fio (``lag_s`` 0: fio had ended)."""

    device: str
    read_ios: int
    write_ios: int
    seconds: float
    read_bytes: float | None = None
    write_bytes: float | None = None
    #: How far behind fio's count the device's may be with no I/O missing.
    lag_s: float = DISK_STATS_LAG_S
    #: Whose count this is, as a sentence names it.
    source: str = "Disk stats"

    def iops(self, side: str) -> float:
        return (self.read_ios if side == "read" else self.write_ios) / self.seconds

    def record(self) -> dict[str, Any]:
        """The count as a kept verdict records it (:meth:`from_record` reads it back)."""
        return {"device": self.device, "read_ios": self.read_ios, "write_ios": self.write_ios,
                "seconds": self.seconds, "read_bytes": self.read_bytes,
                "write_bytes": self.write_bytes, "lag_s": self.lag_s, "source": self.source}

    @classmethod
    def from_record(cls, found: Any) -> Witness | None:
        """A count :meth:`record` wrote; None for anything else."""
        if not isinstance(found, Mapping):
            return None
        try:
            counts = [int(found[key]) for key in ("read_ios", "write_ios")]
            seconds, lag = float(found["seconds"]), float(found.get("lag_s") or 0.0)
            sizes = [None if found.get(key) is None else float(found[key])
                     for key in ("read_bytes", "write_bytes")]
        except (KeyError, TypeError, ValueError):
            return None
        if min(counts) < 0 or not 0 < seconds < 1e7 or not 0 <= lag < 60:
            return None
        return cls(str(found.get("device") or "the device"), counts[0], counts[1], seconds,
                   sizes[0], sizes[1], lag, str(found.get("source") or "the device's count"))


def witness_of(data: Mapping[str, Any], result: FioResult) -> Witness | None:
    """The device whose count stands beside fio's: the top of a stack (md, dm) or the one
    device listed; None when the output has no device count or its run time is unknown."""
    disks = [d for d in data.get("disk_util") or [] if isinstance(d, Mapping)]
    seconds = max(result.read.runtime_ms, result.write.runtime_ms) / 1000.0
    if not disks or seconds <= 0:
        return None
    if disks[0].get("aggregate") or "aggr_read_ios" in disks[0]:
        chosen = [disks[0]]  # a stack's top (md, dm): the device fio's job used
    else:
        # the devices the job names (--filename=/dev/a:/dev/b): all of them served its I/O,
        # as the live checks count a set; else the busiest one listed
        named = {os.path.basename(part) for part in
                 str(result.job_options.get("filename") or "").split(":") if part}
        chosen = [d for d in disks if str(d.get("name")) in named] or [max(
            disks, key=lambda d: int(d.get("read_ios") or 0) + int(d.get("write_ios") or 0))]
    reads = sum(int(d.get("read_ios") or 0) + int(d.get("read_merges") or 0) for d in chosen)
    writes = sum(int(d.get("write_ios") or 0) + int(d.get("write_merges") or 0)
                 for d in chosen)
    return Witness(" + ".join(str(d.get("name") or "?") for d in chosen), reads, writes,
                   seconds, _sectors(chosen, "read_sectors"), _sectors(chosen, "write_sectors"))


def _sectors(disks: Sequence[Mapping[str, Any]], key: str) -> float | None:
    """Bytes the ``disks`` moved by their sector counts; None when one lacks the count."""
    counts = [d.get(key) for d in disks]
    if any(count is None for count in counts):
        return None
    return float(sum(int(count) for count in counts if count is not None)) * 512.0


def apply_witness(result: FioResult, workload: Workload, seen: Witness
                  ) -> tuple[FioResult, str, bool]:
    """``result`` judged on the device's figure when fio reports more I/O than the device
    served (beyond :data:`WITNESS_TOLERANCE` and what the count may lag behind fio's,
    :attr:`Witness.lag_s`), the sentence that says what the count showed, and whether the
    device's figure replaced fio's. One rule for a live check (the kernel's counters it
    read around the run) and for judge (fio's Disk stats, or the check's kept count)."""
    changed = result
    said, lagged = [], []
    for side in ("read", "write"):
        stats = getattr(result, side)
        if stats.total_ios <= 0:
            continue
        served = seen.read_ios if side == "read" else seen.write_ios
        if stats.total_ios <= served * (1 + WITNESS_TOLERANCE):
            continue
        if seen.lag_s > 0 and stats.total_ios - served <= stats.iops * seen.lag_s:
            lagged.append(f"{seen.device} counted {served:,} of fio's {stats.total_ios:,} "
                          f"{side}s, no fewer than fio's last sample of a device's counters "
                          f"may miss (it samples every {seen.lag_s * 1000:.0f} ms: "
                          f"{stats.iops * seen.lag_s:,.0f} {side}s at fio's rate): no "
                          "evidence against fio's figure, which is judged")
            continue
        iops = seen.iops(side)
        bytes_served = seen.read_bytes if side == "read" else seen.write_bytes
        bw = (bytes_served / seen.seconds) if bytes_served else iops * workload.bs
        changed = replace(changed, **{side: replace(stats, iops=iops, bw_bytes=bw,
                                                    total_ios=served)})
        said.append(f"fio counted {stats.total_ios:,} {side}s ({stats.iops:,.0f} IOPS) but "
                    f"{seen.device} served {served:,} in the same {seen.seconds:,.0f} s "
                    f"({iops:,.0f} IOPS): the rest were answered without device I/O "
                    "(extents never written, the page cache, a sparse file), so the "
                    "device's figure is judged")
    if said:  # fio's seconds, logged or live, are not the device's either
        return replace(changed, series={}, live=None), "; ".join(said), True
    return result, "; ".join(lagged) or f"{seen.device}'s own count agrees with fio's " \
        f"({seen.source})", False
