"""Credit state of one pytest run: a ledger per volume, a bucket controller per emulated device.

The session owns one :class:`CreditBook`. It decides the time scale of emulated volumes,
starts and stops their :class:`~pytest_ebsperf.emulate.bucket.CreditController`, sets
their limits before each fio run, books every run in the volume's
:class:`~pytest_ebsperf.credits.ledger.CreditLedger`, and answers "are there credits for a
burst-level check?" from that ledger rather than from the starting balance alone.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ebsperf.awsmodel.burst import burst_shortfall, has_burst
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.awsmodel.volume_types import spends_mib, volume_type
from pytest_ebsperf.config.consistency import parse_timescale
from pytest_ebsperf.config.session_inputs import ProgressWriter
from pytest_ebsperf.credits.ledger import (
    CreditLedger,
    balance_origin,
    run_credit_rates,
    scaled_plan,
)
from pytest_ebsperf.emulate.bucket import (
    RESUME_BURST_S,
    Bucket,
    CgroupCounter,
    CreditController,
    IoHint,
    hdd_cost,
    ssd_cost,
)

if TYPE_CHECKING:
    from pytest_ebsperf.config.settings import Settings
    from pytest_ebsperf.emulate import EmulatedDevice
    from pytest_ebsperf.emulate.target import Target
    from pytest_ebsperf.fio.result import FioResult
    from pytest_ebsperf.fio.workload import Workload

#: ``--emulate-timescale=auto`` shrinks a full bucket so its burst lasts about this long: long
#: enough that a volume type's burst-level checks (each planned for about 20 s, most deciding
#: in 3 to 8) run one after another on what the bucket holds, with no idling between them.
AUTO_BURST_S = 30.0

if TYPE_CHECKING:
    EmulatedRates = Callable[..., tuple[float | None, float | None, int]]


def auto_timescale(volume: Volume) -> float:
    """The scale that makes a full bucket's burst last :data:`AUTO_BURST_S` (1 without one).

    A volume that never drains (gp2 of 1,000 GiB or more) is scaled by the time its full
    bucket would last if it paid for every I/O, which is how long its no-knee check watches.
    """
    plan = scaled_plan(volume, balance_pct=100.0)
    if plan is None:
        return 1.0
    full = plan.burst_s if math.isfinite(plan.burst_s) else (
        plan.capacity / max(plan.burst_rate, plan.earn_rate))
    return max(1.0, full / AUTO_BURST_S)


class CreditBook:
    """Ledgers and controllers of one run; ``clock`` is injectable for tests."""

    def __init__(self, settings: Settings, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings, self.clock = settings, clock
        self.timescale_setting = parse_timescale(settings.emulate_timescale)
        #: Testing aid: the emulated bucket holds this share of what the model says.
        self.bucket_factor = 1.0
        #: Testing aid: the emulated bucket's starting balance (default: --burst-balance).
        self.emulated_start_pct: float | None = None
        self._plots: Callable[[], Path | None] | None = None
        #: Where progress lines go (None: nowhere).
        self.progress: ProgressWriter | None = None
        self._ledgers: dict[tuple[Volume, str], CreditLedger] = {}
        self._controllers: dict[int, CreditController] = {}

    def configure(self, *, bucket_factor: float | None = None, start_pct: float | None = None,
                  plots: Callable[[], Path | None] | None = None,
                  progress: ProgressWriter | None = None) -> None:
        """Apply the emulated bucket's testing aids, the picture directory and progress.

        ``plots`` gives the picture directory when the first picture is drawn (so a run that
        draws none creates no directory); ``progress`` receives progress lines.
        """
        # the values were checked with the other settings (settings.validate)
        if bucket_factor is not None:
            self.bucket_factor = bucket_factor
        if start_pct is not None:
            self.emulated_start_pct = start_pct
        self._plots, self.progress = plots, progress

    def plots_dir(self) -> Path | None:
        """Where time-based checks save their PNG (None: no pictures)."""
        return self._plots() if self._plots is not None else None

    # -- time scale and ledgers ----------------------------------------------------------
    def timescale(self, volume: Volume) -> float:
        """1 on a real volume; on an emulated one the given or automatic scale."""
        if not self.settings.emulate:
            return 1.0
        if self.timescale_setting is not None:
            return self.timescale_setting
        return auto_timescale(volume)

    def ledger(self, volume: Volume, role: str = "device") -> CreditLedger | None:
        """The volume's ledger (made on first use), or None for types without a bucket."""
        key = (volume, role)
        if key not in self._ledgers:
            plan = scaled_plan(volume, self.timescale(volume))
            if plan is None or not volume_type(volume.type).bursts:
                return None
            self._ledgers[key] = CreditLedger.start(plan, self.clock(), balance_origin(volume))
        return self._ledgers[key]

    def credit_wait_s(self, volume: Volume, seconds: float) -> float:
        """Idle seconds the bucket needs before it can carry a burst-level check of
        ``seconds`` (0 when it can now; inf when it never can, being too small)."""
        ledger = self.ledger(volume)
        if ledger is None or ledger.plan.drain_rate == 0:
            return 0.0
        if ledger.runs == 0 and self.timescale(volume) == 1.0:
            return 0.0 if burst_shortfall(volume, seconds) is None else math.inf
        need, left = ledger.plan.credits_needed(seconds), ledger.at(self.clock())
        if need <= left:
            return 0.0
        if need > ledger.plan.capacity or ledger.plan.earn_rate <= 0:
            return math.inf
        return (need - left) / ledger.plan.earn_rate

    def burst_shortfall(self, volume: Volume, seconds: float) -> str | None:
        """Like :func:`pytest_ebsperf.awsmodel.burst_shortfall`, from the credits left *now*
        (earlier checks spent some, idle time earned some) in the emulated bucket's scale."""
        ledger = self.ledger(volume)
        if ledger is None or ledger.plan.drain_rate == 0:
            return None
        if ledger.runs == 0 and self.timescale(volume) == 1.0:
            return burst_shortfall(volume, seconds)
        now = self.clock()
        need, left = ledger.plan.credits_needed(seconds), ledger.at(now)
        if need <= left:
            return None
        wait = (need - left) / ledger.plan.earn_rate
        return (f"a {seconds:,.0f} s check at burst level needs {need:,.0f} "
                f"{ledger.plan.unit} but this {volume.label()} has about "
                f"{ledger.describe(now)}; leave it idle for about {wait:,.0f} s to earn the "
                "rest.")

    # -- emulated devices ----------------------------------------------------------------
    def attach(self, volume: Volume, device: EmulatedDevice, rates: EmulatedRates) -> None:
        """Start the bucket of a freshly started emulated ``device`` (no-op for volumes
        without one). ``rates`` is the session's ``emulated_rates``."""
        ledger = self.ledger(volume)
        if ledger is None or not has_burst(volume):
            return
        if ledger.runs == 0:
            ledger.updated_at = self.clock()  # the emulated bucket is born with the device
        controller = self._make_controller(volume, device, rates, ledger.plan.unit)
        self._controllers[id(device)] = controller
        controller.start()

    def _make_controller(self, volume: Volume, device: EmulatedDevice, rates: EmulatedRates,
                         unit: str) -> CreditController:
        plan = scaled_plan(volume, self.timescale(volume), balance_pct=100.0)
        assert plan is not None  # attach() checked the volume has a bucket
        factor = self.settings.emulate_factor
        capacity = plan.capacity * self.bucket_factor
        pct = self.emulated_start_pct
        if pct is None:
            pct = volume.balance_pct
        bucket = Bucket(capacity, capacity * pct / 100.0, plan.earn_rate * factor,
                        resume_credits=plan.drain_rate * factor * RESUME_BURST_S)
        counter = CgroupCounter(device.cgroup_path, device.cgroup_version, device.major_minor)

        def default_rates(credits: bool) -> tuple[float | None, float | None]:
            iops, bps, _ = rates(volume.replace(burst_balance_pct=100.0 if credits else 0.0))
            return iops, bps

        return CreditController(device, counter, bucket, default_rates,
                                cost=hdd_cost if spends_mib(volume.type) else ssd_cost,
                                exact_io_bytes=device.exact_io_bytes, unit=unit)

    def controller(self, device: EmulatedDevice | None) -> CreditController | None:
        """The bucket controller of ``device``, if it has one."""
        return None if device is None else self._controllers.get(id(device))

    def pace(self, target: Target, workload: Workload, rates: EmulatedRates) -> None:
        """Set an emulated target's kernel limits for ``workload``: the controller's burst
        or baseline limits when its volume has a bucket, the volume's own otherwise."""
        device = target.emulated
        if device is None:
            return
        exact = device.exact_io_bytes
        controller = self.controller(device)
        if controller is None:
            iops, bps, _ = rates(target.volume, workload, exact)
            device.set_rates(iops, bps)
            return

        def for_state(credits: bool) -> tuple[float | None, float | None]:
            # the session's rates carry the HDD split headroom already (applied once there)
            volume = target.volume.replace(burst_balance_pct=100.0 if credits else 0.0)
            iops, bps, _ = rates(volume, workload, exact)
            return iops, bps

        controller.use_rates(for_state, IoHint(workload.bs, sequential=not workload.is_random))

    @contextlib.contextmanager
    def track(self, target: Target, workload: Workload) -> Iterator[Callable[[FioResult], None]]:
        """Book the run inside the ``with`` in the volume's ledger; call the yielded function
        with the result. A run that raised leaves a note: its credits are unknown."""
        ledger = self.ledger(target.volume, target.role)
        start = self.clock()
        done = False

        def finished(result: FioResult) -> None:
            nonlocal done
            done = True
            if ledger is not None:
                series = result.series.get("total_iops")
                values = series.values if series is not None else ()
                total = result.read.total_ios + result.write.total_ios
                # a run stopped once its verdict was settled ran fewer seconds than planned:
                # book the seconds it ran (fio's own runtime), or the ledger would earn the
                # unrun ones on top of the next run's
                ran_ms = max(result.read.runtime_ms, result.write.runtime_ms)
                ran = workload.replace(runtime_s=min(workload.runtime_s, ran_ms / 1000.0)) \
                    if 0 < ran_ms < workload.runtime_s * 1000.0 else workload
                ledger.charge(start, run_credit_rates(target.volume, ran, values, total), 1.0)

        try:
            yield finished
        finally:
            if ledger is not None and not done:
                ledger.notes.append("a fio run failed part-way: the credits it spent are "
                                    "unknown, so the balance estimate is too high")

    def close(self) -> None:
        """Stop every controller (before their devices go away); safe to call twice."""
        for controller in list(self._controllers.values()):
            controller.close()
        self._controllers.clear()
