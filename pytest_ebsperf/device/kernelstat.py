"""The kernel's own count of a device's I/O, beside fio's: a second witness.

``/sys/class/block/<dev>/stat`` (Documentation/block/stat.rst) counts, per device, the I/Os
completed, merged, sectors moved and the time they spent queued. Read before and after a
check, the difference says what the device itself saw. When it served clearly fewer I/Os
than fio reports, fio measured something else (the page cache, a file, another device), and
the device's figure is judged (:func:`pytest_ebsperf.fio.counted.apply_witness`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_ebsperf.errors import FioRunError

SECTOR = 512


@dataclass(frozen=True)
class BlockStat:
    """Counters of one ``stat`` line: reads/writes completed and merged, sectors, queue ms."""

    reads: int
    read_merges: int
    read_sectors: int
    writes: int
    write_merges: int
    write_sectors: int
    in_queue_ms: int

    @classmethod
    def parse(cls, text: str) -> BlockStat:
        f = [int(word) for word in text.split()]
        if len(f) < 11:
            raise ValueError(f"not a block stat line: {text[:80]!r}")
        return cls(f[0], f[1], f[2], f[4], f[5], f[6], f[10])

    def __add__(self, other: BlockStat) -> BlockStat:
        return BlockStat(*(a + b for a, b in zip(self.as_tuple(), other.as_tuple())))

    def __sub__(self, other: BlockStat) -> BlockStat:
        return BlockStat(*(a - b for a, b in zip(self.as_tuple(), other.as_tuple())))

    def as_tuple(self) -> tuple[int, ...]:
        return (self.reads, self.read_merges, self.read_sectors, self.writes,
                self.write_merges, self.write_sectors, self.in_queue_ms)

    @property
    def ios(self) -> int:
        return self.reads + self.writes

    @property
    def bytes(self) -> int:
        return (self.read_sectors + self.write_sectors) * SECTOR

    def facts(self) -> dict[str, float]:
        """For the results file: what the device saw during the check."""
        return {"ios": self.ios, "read_ios": self.reads, "write_ios": self.writes,
                "merges": self.read_merges + self.write_merges, "bytes": self.bytes,
                "avg_io_bytes": self.bytes / self.ios if self.ios else 0.0,
                "in_queue_ms": self.in_queue_ms}


def stat_path(device: str) -> Path:
    """Where the kernel counts ``device``'s I/O (partitions and loop devices included)."""
    return Path("/sys/class/block") / Path(device).resolve().name / "stat"


def read(device: str) -> BlockStat | None:
    try:
        return BlockStat.parse(stat_path(device).read_text())
    except (OSError, ValueError):
        return None


def read_on(host: Any, name: str) -> BlockStat | None:
    """The counters of block device ``name`` (``nvme1n1``) on a remote ``FioHost``."""

    try:
        return BlockStat.parse(host.read_text(f"/sys/class/block/{name}/stat"))
    except (FioRunError, ValueError):
        return None


def merge_note(seen: BlockStat, bs: int, device: str) -> str | None:
    """A sentence when the kernel merged fio's I/Os into clearly larger ones: the device (and
    EBS, which counts a merged sequential I/O of up to 256 KiB as one) saw fewer, larger
    operations than fio reports, which is how sequential 16 KiB reads run above an IOPS cap
    (seed 002)."""
    merges = seen.read_merges + seen.write_merges
    if not seen.ios or not merges or bs <= 0:
        return None
    size = seen.bytes / seen.ios
    if size < 1.5 * bs:
        return None
    return (f"the kernel merged I/Os on {device}: it completed {seen.ios:,} operations of "
            f"{size / 1024:,.0f} KiB on average for fio's {bs // 1024:,} KiB requests "
            f"({merges:,} merges); a volume counts what it receives, so fio's IOPS can run "
            "above an IOPS cap that the merged operations respect")


# -- the host's CPUs -------------------------------------------------------------------------
@dataclass(frozen=True)
class CpuTimes:
    """The first line of ``/proc/stat``: time all CPUs spent busy and in total (clock ticks).
    Waiting for I/O (``iowait``) counts as idle: a CPU waiting on the volume could run fio.
    ``steal`` (part of ``busy``) is the time a virtual machine's hypervisor ran something else
    while this guest wanted its CPUs: zero on bare metal and on kernels that do not count it."""

    busy: int
    total: int
    steal: int = 0

    @classmethod
    def parse(cls, text: str) -> CpuTimes:
        line = next((ln for ln in text.splitlines() if ln.startswith("cpu ")), "")
        ticks = [int(word) for word in line.split()[1:9]]
        if len(ticks) < 5:
            raise ValueError(f"not a /proc/stat cpu line: {line[:80]!r}")
        idle = ticks[3] + ticks[4]
        steal = ticks[7] if len(ticks) > 7 else 0
        return cls(busy=sum(ticks) - idle, total=sum(ticks), steal=steal)

    def busy_pct_since(self, before: CpuTimes) -> float | None:
        """Share of all CPUs' time that was busy between ``before`` and this reading."""
        total = self.total - before.total
        return 100.0 * (self.busy - before.busy) / total if total > 0 else None

    def steal_pct_since(self, before: CpuTimes) -> float | None:
        """Share of all CPUs' time the hypervisor took between ``before`` and this reading."""
        total = self.total - before.total
        return 100.0 * (self.steal - before.steal) / total if total > 0 else None


def read_cpu(host: Any = None) -> CpuTimes | None:
    """``/proc/stat`` here, or on a remote ``FioHost``; None when it cannot be read."""

    try:
        text = Path("/proc/stat").read_text() if host is None or host.is_local \
            else host.read_text("/proc/stat")
        return CpuTimes.parse(text)
    except (OSError, ValueError, FioRunError):
        return None
