"""A progress line for checks that run for minutes: elapsed time, rate, credits, time to knee.

fio writes its per-second logs only when a run ends (fio's own maintainers: logs are held in
memory), and ``--status-interval`` appends a whole JSON report per interval to the output the
runner parses once at the end. The kernel already counts every completed I/O of a device in
``/sys/class/block/<dev>/stat``, live and without touching fio, so the line is fed from
there: :class:`ProgressMonitor` samples a counter once a second in a thread and hands a
:class:`Forecast` the rate; the forecast keeps the model's credit estimate up to date.

Where the line goes is the caller's business (a
:class:`~pytest_ebsperf.config.session_inputs.ProgressWriter`); the pytest layer
passes pytest's terminal writer, or nothing under ``-q``, xdist workers and non-terminals.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from pytest_ebsperf.config.session_inputs import ProgressWriter
from pytest_ebsperf.units import MIB

if TYPE_CHECKING:
    from typing import Self

_MIB = float(MIB)
#: /sys/block/<dev>/stat fields: reads completed, sectors read, writes completed, sectors
#: written (Documentation/block/stat.rst); a sector is 512 bytes whatever the device.
_READS, _READ_SECTORS, _WRITES, _WRITE_SECTORS = 0, 2, 4, 6

Counter = Callable[[], tuple[int, int]]


def parse_block_stat(text: str) -> tuple[int, int]:
    """(I/Os completed, bytes) from a ``/sys/class/block/<dev>/stat`` line."""
    fields = [int(word) for word in text.split()]
    if len(fields) < 7:
        raise ValueError(f"not a block stat line: {text[:80]!r}")
    ops = fields[_READS] + fields[_WRITES]
    return ops, 512 * (fields[_READ_SECTORS] + fields[_WRITE_SECTORS])


def block_stat_path(device: str) -> Path:
    """Where the kernel counts ``device``'s I/O (works for partitions and loop devices)."""
    return Path("/sys/class/block") / Path(device).name / "stat"


def device_counter(device: str, host: Any = None) -> Counter:
    """(I/Os, bytes) of ``device`` so far, read here or on ``host`` (its ``read_text``)."""
    if host is None:
        path = block_stat_path(os.path.realpath(device))
        return lambda: parse_block_stat(path.read_text())
    remote = str(block_stat_path(device))
    return lambda: parse_block_stat(host.read_text(remote))


@dataclass
class Forecast:
    """The model's credit estimate, brought forward as the line learns the delivered rate.

    ``balance`` and ``earn`` in credits (per second); ``cost`` credits per fio I/O of ``bs``
    bytes; ``total_s`` the planned length of this phase. ``throughput`` shows MiB/s instead
    of IOPS (st1/sc1); ``idle`` lines show the refill and the burst it buys.
    """

    phase: str
    total_s: float
    balance: float
    earn: float
    capacity: float
    cost: float
    bs: int
    unit: str
    throughput: bool = False
    idle: bool = False
    #: Credits per second a burst spends above the baseline (idle lines predict the burst).
    burst_drain: float = math.nan

    def line(self, elapsed: float, dt: float, bytes_per_s: float) -> str:
        """The progress text after ``elapsed`` seconds, ``dt`` since the last update."""
        ios = bytes_per_s / self.bs
        spend = 0.0 if self.idle else ios * self.cost
        self.balance = min(self.capacity, max(0.0, self.balance + (self.earn - spend) * dt))
        head = f"ebsperf {self.phase}: {elapsed:,.0f} s of {self.total_s:,.0f} s"
        if self.idle:
            after = self.balance / max(1e-9, self._drain_at_burst())
            return (f"{head} idle | ~{self.balance:,.0f} {self.unit} earned | next burst "
                    f"~{after:,.1f} s")
        rate = f"{bytes_per_s / _MIB:,.0f} MiB/s" if self.throughput else f"{ios:,.0f} IOPS"
        net = spend - self.earn
        if net <= 0.05 * max(self.earn, 1e-9) or self.balance <= 0:
            knee = "at baseline"
        else:
            knee = f"knee in ~{self.balance / net:,.0f} s"
        return f"{head} | {rate} | ~{self.balance:,.0f} {self.unit} left | {knee}"

    def _drain_at_burst(self) -> float:
        return self.burst_drain if math.isfinite(self.burst_drain) else self.earn


class ProgressMonitor:
    """Samples ``counter`` every ``interval_s`` in a thread and writes ``forecast``'s line.

    A context manager; the thread is a daemon and is joined on exit, whatever happened.
    A counter that cannot be read (the device vanished) ends the line quietly.
    """

    def __init__(self, writer: ProgressWriter, counter: Counter, forecast: Forecast, *,
                 interval_s: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.writer, self.counter, self.forecast = writer, counter, forecast
        self.interval_s, self.clock = interval_s, clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.lines = 0

    def __enter__(self) -> Self:
        self._start = self.clock()
        self._last_t, self._last = self._start, self._read()
        self._thread = threading.Thread(target=self._loop, name="ebsperf-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        if self.lines:
            self.writer.finish()

    def _read(self) -> tuple[int, int] | None:
        try:
            return self.counter()
        except (OSError, ValueError):
            return None

    def sample(self) -> None:
        """Take one sample and write one line (the thread does this every ``interval_s``)."""
        now, counts = self.clock(), self._read()
        dt = now - self._last_t
        if counts is None or self._last is None or dt <= 0:
            return
        rate = max(0, counts[1] - self._last[1]) / dt
        self.writer.update(self.forecast.line(now - self._start, dt, rate))
        self.lines += 1
        self._last_t, self._last = now, counts

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()
