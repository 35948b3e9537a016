"""The credit bucket of an emulated gp2, st1 or sc1 volume, run beside its kernel throttle.

A :class:`CreditController` is a thread that reads how much I/O the device's cgroup has
done (cgroup v1 ``blkio.throttle.io_serviced`` / ``io_service_bytes``, v2 ``io.stat``),
charges it to a :class:`Bucket` and earns credits at the baseline rate, and switches the
device between its burst and its baseline limits when the bucket runs dry or has credit
again. It writes limits only on such a state change, never periodically: blk-throttle
restarts its time slice on every write and hands out a fresh allowance, so rewriting limits
would let the volume run faster than its rate.

gp2 spends one I/O credit per operation of up to 256 KiB: the device's queue limit splits
larger I/Os into 256 KiB pieces and the cgroup counts each piece, as EBS does (B-IOACCT).
st1/sc1 spend a MiB of throughput credit per I/O of up to 1 MiB (bytes for sequential I/O,
which EBS merges); the loop device may split an I/O above ``exact_io_bytes`` into pieces the
cgroup counts separately, so for such I/Os the count comes from bytes / block size.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pytest_ebsperf.emulate import cleanup

KIB = 1024
MIB = 1024 * KIB
SSD_UNIT = 256 * KIB
#: Seconds between two looks at the counters: the knee comes at most this late.
TICK_S = 0.05
#: Once empty, the bucket must hold this many seconds of burst before bursting again, so
#: credits earned at the baseline rate and spent at the baseline rate under load (a balance
#: that hovers at 0) do not flip the limits back and forth.
RESUME_BURST_S = 1.0

BURST = "burst"
BASELINE = "baseline"

if TYPE_CHECKING:
    Rates = tuple[float | None, float | None]
    RatesFor = Callable[[bool], Rates]
    CostFn = Callable[[int, int, "IoHint | None", int], float]


class Throttled(Protocol):
    """What the controller needs from an emulated device."""

    def set_rates(self, iops: float | None, bps: float | None) -> None:
        """Change the combined limits (writes only what changed)."""


@dataclass(frozen=True)
class IoHint:
    """The block size and pattern of the running workload (to cost split HDD I/Os)."""

    bs: int
    sequential: bool


def parse_v1(text: str, major_minor: str) -> int:
    """The ``Total`` of ``major_minor`` in a v1 ``blkio.throttle.io_serviced``-style file."""
    for line in text.splitlines():
        words = line.split()
        if len(words) == 3 and words[0] == major_minor and words[1] == "Total":
            return int(words[2])
    return 0


def parse_v2(text: str, major_minor: str) -> tuple[int, int]:
    """(operations, bytes) of ``major_minor`` in a v2 ``io.stat`` (reads + writes + discards)."""
    for line in text.splitlines():
        words = line.split()
        if words and words[0] == major_minor:
            fields = dict(w.split("=", 1) for w in words[1:] if "=" in w)
            ops = sum(int(fields.get(k, 0)) for k in ("rios", "wios", "dios"))
            nbytes = sum(int(fields.get(k, 0)) for k in ("rbytes", "wbytes", "dbytes"))
            return ops, nbytes
    return 0, 0


class CgroupCounter:
    """Cumulative (operations, bytes) one device did inside one throttle cgroup."""

    def __init__(self, cgroup: Path, version: int, major_minor: str) -> None:
        self.cgroup, self.version, self.major_minor = cgroup, version, major_minor

    def read(self) -> tuple[int, int]:
        """Read the counters now; raises OSError once the cgroup is gone."""
        if self.version == 2:
            return parse_v2((self.cgroup / "io.stat").read_text(), self.major_minor)
        ops = parse_v1((self.cgroup / "blkio.throttle.io_serviced").read_text(), self.major_minor)
        nbytes = parse_v1((self.cgroup / "blkio.throttle.io_service_bytes").read_text(),
                          self.major_minor)
        return ops, nbytes


def ssd_cost(ops: int, nbytes: int, hint: IoHint | None, exact_io_bytes: int) -> float:
    """gp2 I/O credits for counted operations: one per operation of up to 256 KiB."""
    return max(float(ops), nbytes / SSD_UNIT)


def hdd_cost(ops: int, nbytes: int, hint: IoHint | None, exact_io_bytes: int) -> float:
    """st1/sc1 MiB of throughput credit: an I/O of up to 1 MiB costs 1 MiB; sequential I/O
    (merged by EBS into 1 MiB units) and larger I/Os cost their bytes."""
    if hint is None:
        return max(float(ops), nbytes / MIB)
    ios = float(ops) if hint.bs <= exact_io_bytes else nbytes / hint.bs
    if hint.sequential:
        return nbytes / MIB
    return ios * max(1.0, hint.bs / MIB)



class Bucket:
    """Credit arithmetic and the burst/baseline state; no threads, no I/O.

    ``capacity`` and ``balance`` in credits, ``earn_rate`` in credits per second. The state
    turns to baseline when the balance reaches 0 and back to burst once it holds
    ``resume_credits`` (see :data:`RESUME_BURST_S`).
    """

    def __init__(self, capacity: float, balance: float, earn_rate: float,
                 resume_credits: float) -> None:
        if capacity <= 0 or earn_rate < 0 or not 0 <= balance <= capacity:
            raise ValueError(f"bad bucket: capacity {capacity}, balance {balance}, "
                             f"earn rate {earn_rate}")
        self.capacity, self.balance, self.earn_rate = capacity, balance, earn_rate
        self.resume_credits = min(resume_credits, capacity)
        self.state = BURST if balance > 0 and balance >= self.resume_credits else BASELINE
        self.spent = 0.0

    def step(self, dt: float, spent: float) -> bool:
        """Earn for ``dt`` seconds, charge ``spent`` credits; True when the state changed."""
        self.spent += spent
        self.balance = min(self.capacity, max(0.0, self.balance + self.earn_rate * dt - spent))
        before = self.state
        if self.state == BURST and self.balance <= 0.0:
            self.state = BASELINE
        elif self.state == BASELINE and self.balance >= self.resume_credits:
            self.state = BURST
        return self.state != before


@dataclass(frozen=True)
class Transition:
    """One state change: when (controller clock, and wall clock for comparing with other
    processes' timestamps), to which state, the balance then."""

    t: float
    state: str
    balance: float
    wall: float = 0.0


class CreditController:
    """Runs a :class:`Bucket` for one emulated device in a daemon thread.

    ``rates_for(credits)`` gives the (IOPS, bytes/s) limits for the burst (True) or baseline
    (False) state; :meth:`use_rates` replaces it before each fio run (the limits depend on
    the workload). ``counter`` is read every ``tick_s``; ``cost`` turns counted operations
    and bytes into credits. Start with :meth:`start`, end with :meth:`close` (idempotent;
    also called at interpreter exit and on SIGTERM through the emulation's clean-up registry).
    """

    def __init__(self, device: Throttled, counter: CgroupCounter, bucket: Bucket,
                 rates_for: RatesFor, *, cost: CostFn, exact_io_bytes: int = 0,
                 unit: str = "credits", tick_s: float = TICK_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.device, self.counter, self.bucket = device, counter, bucket
        self.unit, self.tick_s, self.clock = unit, tick_s, clock
        self._cost, self._exact = cost, exact_io_bytes
        self._rates_for = rates_for
        self._hint: IoHint | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last: tuple[int, int] = (0, 0)
        self._last_t = 0.0
        #: Every state the bucket was in, the first one included.
        self.transitions: list[Transition] = []
        #: Why the thread stopped early (a sentence), or None.
        self.error: str | None = None

    def __repr__(self) -> str:
        return (f"CreditController({self.bucket.state}, {self.bucket.balance:,.0f} of "
                f"{self.bucket.capacity:,.0f} {self.unit})")

    @property
    def state(self) -> str:
        """``burst`` or ``baseline``."""
        return self.bucket.state

    @property
    def balance(self) -> float:
        """Credits in the emulated bucket now (as of the last tick)."""
        with self._lock:
            return self.bucket.balance

    @property
    def running(self) -> bool:
        """True while the thread runs."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> CreditController:
        """Apply the current state's limits and start counting."""
        if self._thread is not None:
            raise RuntimeError(f"{self!r} was started already.")
        with self._lock:
            self._last, self._last_t = self.counter.read(), self.clock()
            self._apply()
            self.transitions.append(Transition(self._last_t, self.bucket.state,
                                               self.bucket.balance, time.time()))
        self._thread = threading.Thread(target=self._loop, name="ebsperf-credits", daemon=True)
        cleanup.register(self)
        self._thread.start()
        return self

    def use_rates(self, rates_for: RatesFor, hint: IoHint | None = None) -> None:
        """Limits for the next workload; written now only where they differ."""
        if self.error:
            raise RuntimeError(f"The emulated credit bucket stopped: {self.error}")
        with self._lock:
            self._rates_for, self._hint = rates_for, hint
            self._apply()

    def _apply(self) -> None:
        iops, bps = self._rates_for(self.bucket.state == BURST)
        self.device.set_rates(iops, bps)

    def tick(self) -> None:
        """One look at the counters (the thread calls this every ``tick_s``)."""
        with self._lock:
            now, counts = self.clock(), self.counter.read()
            ops, nbytes = counts[0] - self._last[0], counts[1] - self._last[1]
            spent = self._cost(max(0, ops), max(0, nbytes), self._hint, self._exact)
            if self.bucket.step(now - self._last_t, spent):
                self._apply()
                self.transitions.append(Transition(now, self.bucket.state, self.bucket.balance,
                                                   time.time()))
            self._last, self._last_t = counts, now

    def _loop(self) -> None:
        while not self._stop.wait(self.tick_s):
            try:
                self.tick()
            except Exception as exc:  # noqa: BLE001 - the thread must end with a sentence
                if not self._stop.is_set():
                    self.error = f"{type(exc).__name__}: {exc}"
                return

    def close(self) -> None:
        """Stop the thread and wait for it; safe to call twice and from any thread."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5.0)
        cleanup.unregister(self)
