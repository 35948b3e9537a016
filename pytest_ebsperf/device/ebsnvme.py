"""The EBS volume's own word on Nitro: the NVMe vendor log page 0xD0.

An EBS volume attached to a Nitro instance (an NVMe device whose model is "Amazon Elastic Block
Store") keeps detailed performance statistics in log page 0xD0, the source of the CloudWatch
agent's ``diskio_ebs_*`` metrics. All fields are little-endian 64-bit counters since the
volume was attached; times are microseconds::

    offset  field
         0  magic (0x3C23B510)
         8  read ops, 16 write ops, 24 read bytes, 32 write bytes
        40  total read time, 48 total write time
        56  time the application asked for more than the volume's provisioned IOPS
        64  ... more than the volume's provisioned throughput
        72  ... more than the instance's EBS IOPS limit, 80 ... its EBS throughput limit
        88  volume queue length
        96  reserved (416 bytes)
       512  read latency histogram: bin count, then 64 bins of (lower, upper, count)
      2056  write latency histogram, same layout (ends at 3600 of the 4,096-byte page)

Read before and after a check, the difference says which limit bound: "the volume reports
59.7 s of 60 s above its provisioned IOPS". It is read with ``nvme get-log`` (nvme-cli) when
installed, else with the NVMe admin ioctl; on any other device the feature says so once and
stays out of the way.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import shutil
import struct
import subprocess
from dataclasses import dataclass, fields
from pathlib import Path

LOG_ID = 0xD0
PAGE_BYTES = 4096
MAGIC = 0x3C23B510
EBS_MODEL = "Amazon Elastic Block Store"
_COUNTERS = "<12Q"
_HISTOGRAM_AT = (512, 2056)
_COUNTER_NAMES = ("read_ops", "write_ops", "read_bytes", "write_bytes", "read_time_us",
                  "write_time_us", "volume_exceeded_iops_us", "volume_exceeded_tp_us",
                  "instance_exceeded_iops_us", "instance_exceeded_tp_us", "queue_length")
_BINS = 64
#: NVME_IOCTL_ADMIN_CMD from <linux/nvme_ioctl.h>.
_NVME_IOCTL_ADMIN_CMD = 0xC0484E41


@dataclass(frozen=True)
class EbsNvmeStats:
    """Counters of log page 0xD0 (times in microseconds) and both latency histograms as
    ``(lower_us, upper_us, count)`` bins."""

    read_ops: int
    write_ops: int
    read_bytes: int
    write_bytes: int
    read_time_us: int
    write_time_us: int
    volume_exceeded_iops_us: int
    volume_exceeded_tp_us: int
    instance_exceeded_iops_us: int
    instance_exceeded_tp_us: int
    queue_length: int
    read_latency: tuple[tuple[int, int, int], ...] = ()
    write_latency: tuple[tuple[int, int, int], ...] = ()

    def __sub__(self, before: EbsNvmeStats) -> EbsNvmeStats:
        counters = {f.name: getattr(self, f.name) - getattr(before, f.name)
                    for f in fields(self) if f.name not in ("queue_length", "read_latency",
                                                             "write_latency")}
        return EbsNvmeStats(**counters, queue_length=self.queue_length,
                            read_latency=_minus(self.read_latency, before.read_latency),
                            write_latency=_minus(self.write_latency, before.write_latency))

    def facts(self) -> dict[str, int]:
        """For the results file (counters only)."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name not in ("read_latency", "write_latency")}


def _minus(after: tuple[tuple[int, int, int], ...], before: tuple[tuple[int, int, int], ...]
           ) -> tuple[tuple[int, int, int], ...]:
    if len(after) != len(before):
        return after
    return tuple((lo, hi, n - m) for (lo, hi, n), (_, _, m) in zip(after, before))


def parse_log_page(data: bytes) -> EbsNvmeStats:
    """Parse log page 0xD0; ValueError with a sentence when it is not one."""
    if len(data) < _HISTOGRAM_AT[1] + 8 + _BINS * 24:
        raise ValueError(f"the EBS statistics log page has {len(data)} bytes, fewer than the "
                         f"{PAGE_BYTES} of log page 0xD0")
    values = struct.unpack_from(_COUNTERS, data, 0)
    if values[0] != MAGIC:
        raise ValueError(f"log page 0xD0 starts with {values[0]:#x}, not the EBS magic "
                         f"{MAGIC:#x}: the device is not an EBS volume")
    histograms = []
    for at in _HISTOGRAM_AT:
        (count,) = struct.unpack_from("<Q", data, at)
        bins = [struct.unpack_from("<3Q", data, at + 8 + 24 * i)
                for i in range(min(count, _BINS))]
        histograms.append(tuple((int(lo), int(hi), int(n)) for lo, hi, n in bins))
    counters = dict(zip(_COUNTER_NAMES, (int(v) for v in values[1:12]), strict=True))
    return EbsNvmeStats(**counters, read_latency=histograms[0], write_latency=histograms[1])


def build_log_page(stats: EbsNvmeStats) -> bytes:
    """The byte layout of log page 0xD0 for ``stats`` (the published structure)."""
    page = bytearray(PAGE_BYTES)
    counters = [MAGIC] + [getattr(stats, name) for name in _COUNTER_NAMES]
    struct.pack_into(_COUNTERS, page, 0, *counters)
    for at, bins in zip(_HISTOGRAM_AT, (stats.read_latency, stats.write_latency)):
        struct.pack_into("<Q", page, at, len(bins))
        for i, (lo, hi, n) in enumerate(bins[:_BINS]):
            struct.pack_into("<3Q", page, at + 8 + 24 * i, lo, hi, n)
    return bytes(page)


def is_ebs_nvme(device: str, sys_root: Path = Path("/sys")) -> bool:
    """True for an NVMe namespace of an EBS volume (its controller's model says so)."""
    name = os.path.basename(os.path.realpath(device))
    model = sys_root / "block" / name / "device" / "model"
    try:
        return model.read_text().strip() == EBS_MODEL
    except OSError:
        return False


def read_log_page(device: str) -> bytes:
    """Log page 0xD0 of ``device``: ``nvme get-log`` when nvme-cli is installed, else the
    NVMe admin ioctl. OSError when neither works."""
    if shutil.which("nvme"):
        done = subprocess.run(["nvme", "get-log", device, f"--log-id={LOG_ID:#x}",
                               f"--log-len={PAGE_BYTES}", "--raw-binary"],
                              capture_output=True, check=False, timeout=10)
        if done.returncode == 0 and len(done.stdout) >= PAGE_BYTES:
            return bytes(done.stdout[:PAGE_BYTES])
    return _ioctl_log_page(device)


def _ioctl_log_page(device: str) -> bytes:

    buffer = ctypes.create_string_buffer(PAGE_BYTES)
    # struct nvme_passthru_cmd: opcode 0x02 (Get Log Page), nsid 1, the buffer and its
    # length, cdw10 = log id | (dwords - 1) << 16
    command = struct.pack("<BBHIIIQQIIIIIIIIII", 0x02, 0, 0, 1, 0, 0, 0,
                          ctypes.addressof(buffer), 0, PAGE_BYTES,
                          LOG_ID | ((PAGE_BYTES // 4 - 1) << 16), 0, 0, 0, 0, 0, 0, 0)
    request = bytearray(command)
    fd = os.open(device, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.ioctl(fd, _NVME_IOCTL_ADMIN_CMD, request)
    finally:
        os.close(fd)
    return buffer.raw


def bound_sentence(delta: EbsNvmeStats, seconds: float) -> str | None:
    """What the volume says bound the run, or None when it saw no limit exceeded."""
    total_us = max(seconds, 0.0) * 1e6
    if total_us <= 0:
        return None
    named = [
        (delta.volume_exceeded_iops_us,
         "above its provisioned IOPS: the volume's IOPS cap bound"),
        (delta.volume_exceeded_tp_us,
         "above its provisioned throughput: the volume's throughput cap bound"),
        (delta.instance_exceeded_iops_us,
         "above the instance's EBS IOPS limit: the instance's EBS limit bound"),
        (delta.instance_exceeded_tp_us,
         "above the instance's EBS throughput limit: the instance's EBS limit bound"),
    ]
    us, what = max(named, key=lambda item: item[0])
    if us <= 0.05 * total_us:
        return None
    return (f"the volume reports {us / 1e6:,.1f} s of {seconds:,.1f} s {what} (NVMe log page "
            "0xD0)")
