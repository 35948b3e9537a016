"""Seconds an emulated volume misses its 90 % line, alone or in spells (``--emulate-misses``).

Real volumes have slow stretches: AWS's duty cycle ("at least 90 % of provisioned IOPS 99.9 %
of the time", B-SLA) allows them, and they seldom last one second only. An emulated volume
with misses runs a two-state chain second by second (the same chain the verdict's spell
model assumes, :func:`pytest_ebsperf.verdicts.evidence.miss_tail`): in a missed second its throttle is
set to ``MISS_LOW``-``MISS_HIGH`` of its rates, drawn per second; the chain's stationary share
of missed seconds is ``rate`` and its spells last ``spell`` seconds on average.

``--emulate-misses=RATE[,SPELL_S]`` (``0.001,3``: the SLA's 0.1 % budget in 3 s spells).
``--emulate-misses=dip:START-END[,START-END...]``: missed seconds at fixed times (seconds
after the volume's first I/O), to reproduce one stretch exactly.

The chain's clock starts with the first I/O the kernel counts on the device after the first
workload was prepared (fio's start on a busy host can take seconds, which a clock started at
the preparation would have spent), so ``dip:`` times and the chain's first seconds fall into
measured time.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Callable, Protocol

from pytest_ebsperf.config.emulation import MISS_HIGH, MISS_LOW, MissPlan
from pytest_ebsperf.device import kernelstat

#: The driver re-checks the clock this often (seconds).
TICK_S = 0.05


def ios_counted(device: str) -> int | None:
    """The I/Os the kernel has counted on ``device`` (None when it cannot be read)."""
    seen = kernelstat.read(device)
    return None if seen is None else seen.ios


class _Scaled(Protocol):
    def set_scale(self, scale: float) -> None: ...


class MissDriver:
    """Sets ``device``'s scale once per second of the plan, from the first :meth:`begin`."""

    def __init__(self, device: _Scaled, plan: MissPlan, seed: int | None = None) -> None:
        self.device, self.plan = device, plan
        self.random = random.Random(seed)
        self.started: float | None = None
        self.missed: list[int] = []  # the seconds (since the start) that were missed
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._in_spell = False
        self._io_count: Callable[[], int | None] | None = None

    def begin(self, device: str | None = None) -> None:
        """Start the clock (idempotent): the first fio run on the device is about to run. With
        ``device``, the clock starts only when the I/Os the kernel counts on it first move:
        the first I/O, not fio's start-up, is second 0."""
        if self._thread is not None:
            return
        if device is not None:
            self._io_count = lambda: ios_counted(device)
        self._thread = threading.Thread(target=self._loop, name="ebsperf-misses", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def missing(self, second: int) -> bool:
        """Whether ``second`` (counted from the start) is a missed one; advances the chain
        one second at a time, in order."""
        if self.plan.dips:
            return any(a <= second < b for a, b in self.plan.dips)
        rate, spell = self.plan.rate, self.plan.spell
        if spell <= 1.0:
            return self.random.random() < rate
        stay = 1.0 - 1.0 / spell
        start = rate * (1.0 - stay) / (1.0 - rate)
        if second == 0:
            self._in_spell = self.random.random() < rate
        else:
            self._in_spell = self.random.random() < (stay if self._in_spell else start)
        return self._in_spell

    def _wait_for_first_io(self) -> None:
        io_count = self._io_count
        counted = io_count() if io_count is not None else None
        while io_count is not None and counted is not None and not self._stop.is_set():
            now = io_count()
            if now is None or now != counted:
                break
            self._stop.wait(TICK_S / 5)
        self.started = time.monotonic()

    def _loop(self) -> None:
        self._wait_for_first_io()
        assert self.started is not None
        second = -1
        while not self._stop.is_set():
            now = int(time.monotonic() - self.started)
            while second < now:
                second += 1
                missed = self.missing(second)
                if missed:
                    self.missed.append(second)
                scale = self.random.uniform(MISS_LOW, MISS_HIGH) if missed else 1.0
                if second == now:
                    self.device.set_scale(scale)
            self._stop.wait(TICK_S)
        self.device.set_scale(1.0)
