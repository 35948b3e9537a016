"""The emulated volumes of a run: made as checks need them (here, or on the host fio runs
on), each paced like the volume it stands for, sets of them sharing their instance's limit.

What makes a device behave like a volume is :meth:`EmulatedVolumes.rates`: the kernel
throttle's IOPS and bytes/s for the volume's documented limits and its instance's
EBS-optimized ones, EBS's accounting of I/O sizes (sequential I/O below the unit merged, HDD
I/O paced by bytes), scaled by ``--emulate-factor``; Magnetic volumes at their documented
maxima. The session owns one (``EbsperfSession.emulation``) and hands it what it needs to know
of the run: the host, the instance's limits, the credit book and where facts are recorded.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, cast

from pytest_ebsperf import awsmodel
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.awsmodel.volume_types import is_hdd, is_instance_store
from pytest_ebsperf.config.emulation import parse_latency, parse_misses
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.emulate import misses, service_time, witness
from pytest_ebsperf.emulate.device import EmulatedDevice
from pytest_ebsperf.emulate.on_host import RemoteEmulatedDevice
from pytest_ebsperf.emulate.stripe import EmulatedSet
from pytest_ebsperf.emulate.target import SuiteMismatch, Target
from pytest_ebsperf.emulate.throttle import HDD_SPLIT_HEADROOM

if TYPE_CHECKING:
    from pytest_ebsperf.fio.host import FioHost
    from pytest_ebsperf.fio.workload import Workload

#: Size of the emulated device's backing file (the model uses the nominal size).
EMULATED_DEVICE_BYTES = 512 * 1024**2
#: An emulated instance store is larger: seed 001's write passes need a region that a pass
#: at i4i.large's 27,500 write IOPS cannot cover in 5 s (about 540 MiB).
EMULATED_INSTANCE_STORE_BYTES = 2 * 1024**3
#: Documented Magnetic maxima (B-STD), used to pace an emulated ``standard`` volume.
STANDARD_EMULATED_IOPS = 200
STANDARD_EMULATED_BPS = 90 * 1024**2


class Buckets(Protocol):
    """The run's burst buckets (:class:`pytest_ebsperf.credits.book.CreditBook`): one starts
    beside each freshly started emulated device of a bursting type."""

    def attach(self, volume: Volume, device: EmulatedDevice,
               rates: Callable[..., tuple[float | None, float | None, int]]) -> None: ...


class EmulatedVolumes:
    """The emulated devices and sets of one run (see the module's doc)."""

    def __init__(self, settings: Settings, *, host: Callable[[], FioHost],
                 limits: Callable[[], awsmodel.EbsLimits | None],
                 credits: Callable[[], Buckets], record: Callable[..., None],
                 set_size: Callable[[], int]) -> None:
        self.settings = settings
        self.host = host
        self.limits = limits
        self.credits = credits
        self.record = record
        self.set_size = set_size
        self._sets: dict[Volume, EmulatedSet] = {}

    def close(self) -> None:
        """Remove every emulated set (single devices are closed with their targets)."""
        for pool in list(self._sets.values()):
            pool.close()
        self._sets.clear()

    def start(self, volume: Volume, role: str = "device") -> EmulatedDevice:
        """An emulated volume for ``volume`` (``role`` "device": the one under test, which
        --emulate-device-latency makes slower), here or on the host fio runs on."""
        if not self.host().is_local:
            return self._start_remote(volume)

        iops, bps, unit = self.rates(volume)
        injected: list[str] = []
        factor = self.settings.emulate_device_factor
        if role == "device" and factor is not None and factor != 1.0:
            # testing aid: the twin under test alone runs at this share (S2-17's encrypted
            # twin made slower) of every rate set on it later too (each run's pacing)
            injected.append(f"--emulate-device-factor: runs at {factor:g} x its rates "
                            "(its twin does not)")
        size = (EMULATED_INSTANCE_STORE_BYTES if is_instance_store(volume.type)
                 else EMULATED_DEVICE_BYTES)

        chosen = self.settings.emulate_latency
        if role == "device" and self.settings.emulate_device_latency is not None:
            chosen = self.settings.emulate_device_latency  # the twin under test only
        mean_us = service_time.for_volume(parse_latency(chosen), volume.type)
        # auto leaves volumes beyond the daemon's reach without latency; a mean given is kept
        auto = parse_latency(chosen) == "auto"
        too_fast = service_time.beyond_reach(iops, bps) if mean_us is not None and auto else None
        if too_fast:
            mean_us = None
        device = EmulatedDevice(size_bytes=size, iops=iops, bps=bps,
                                io_unit_bytes=unit, name=f"ebsperf-{volume.type}",
                                latency_us=mean_us)
        if role == "device" and factor is not None:
            device.rate_factor = factor
        device.start()
        first = self.settings.emulate_first_write_factor
        if role == "device" and first is not None:
            device.first_write_factor = first
            device.make_cold()
            injected.append(f"--emulate-first-write-factor: writes into blocks not written "
                            f"since made or TRIMmed run at {first:g} x its rates")
        if is_instance_store(volume.type):  # sized to this host (said once, in its notes)
            name, said = witness.store_stand_in(witness.store_record())
            if said and volume.instance_type == name:
                injected.append(said)
        if injected:
            self.record(device.path, volume, injected, emulated=True)
        risk = device.swap_risk()
        if risk:  # said once, with the volume's facts (fidelity at risk, not a verdict)
            self.record(device.path, volume, [risk], emulated=True, noswap=False)
        if mean_us is not None:
            said = (f"emulated latency: {mean_us / 1000:g} ms mean per I/O (log-normal, p99 "
                    f"about {1.7 * mean_us / 1000:.2g} ms; the path's own "
                    f"{device.overhead_us:.0f} us taken off)")
            self.record(device.path, volume, [said], emulated=True)
        elif too_fast:
            device.beyond_reach = too_fast
            said = f"emulated without latency: {too_fast}; its runs hold the host alone"
            self.record(device.path, volume, [said], emulated=True)
        heavy = "" if too_fast else witness.host_share(iops, mean_us)
        if heavy:
            device.heavy = heavy
            self.record(device.path, volume, [heavy], emulated=True)
        try:
            self.credits().attach(volume, device, self.rates)  # gp2/st1/sc1 bucket
        except BaseException:
            device.close()
            raise
        self._add_misses(device, volume)
        return device

    def _start_remote(self, volume: Volume) -> EmulatedDevice:
        """An emulated volume made on the host fio runs on, through its host object."""

        if parse_latency(self.settings.emulate_latency) is not None:
            raise SuiteMismatch(
                "emulated latency (--emulate-latency) is made only where pytest runs: its FUSE "
                f"daemon would have to be built and run on {self.host()}. Pass "
                "--emulate-latency=none for remote emulated volumes.")
        if self.settings.emulate_misses:
            raise SuiteMismatch(
                "emulated misses (--emulate-misses) are made only where pytest runs (a thread "
                f"sets the throttle every second); on {self.host()} leave the option out.")
        if awsmodel.has_burst(volume):
            raise SuiteMismatch(
                f"an emulated {volume.label()} has a burst bucket, and buckets are emulated only "
                f"where pytest runs (their controller reads the throttle's counters several "
                f"times a second); on {self.host()} emulate volumes without one "
                f"({awsmodel.bursting_names(False)}), or give a real device.")
        iops, bps, unit = self.rates(volume)
        size = (EMULATED_INSTANCE_STORE_BYTES if is_instance_store(volume.type)
                else EMULATED_DEVICE_BYTES)
        device = RemoteEmulatedDevice(self.host(), size_bytes=size, iops=iops, bps=bps,
                                      io_unit_bytes=unit, name=f"ebsperf-{volume.type}")
        device.start()
        risk = device.swap_risk()
        if risk:
            self.record(device.path, volume, [risk], emulated=True, noswap=False)
        # the interface of EmulatedDevice that a volume without a bucket uses
        return cast("EmulatedDevice", device)

    def emulated_set(self, volume: Volume) -> EmulatedSet:
        """The set's emulated volumes (made once per volume, as many as --volume-count)."""
        if volume in self._sets:
            return self._sets[volume]
        if not self.host().is_local:
            raise SuiteMismatch(f"sets of emulated volumes are made only where pytest runs, "
                                f"not on {self.host()}: give the host's devices "
                                "(--device=A,B,...).")

        count = self.set_size()
        factors = self.settings.member_factors or (1.0,) * count
        iops, bps, unit = self.rates(volume.replace(instance_type=None))
        rates = [(None if iops is None else iops * f, None if bps is None else bps * f, unit)
                 for f in factors]

        mean_us = service_time.for_volume(parse_latency(self.settings.emulate_latency), volume.type)
        total_iops = sum(r[0] or 0 for r in rates) or None
        total_bps = sum(r[1] or 0 for r in rates) or None
        auto = parse_latency(self.settings.emulate_latency) == "auto"
        too_fast = (service_time.beyond_reach(total_iops, total_bps)
                    if mean_us is not None and auto else None)
        if too_fast:
            mean_us = None  # said in the set's notes below
        pool = EmulatedSet(rates, size_bytes=EMULATED_DEVICE_BYTES, name=f"ebsperf-{volume.type}",
                           latency_us=mean_us).start()
        self._sets[volume] = pool
        for member in pool.members:
            self._add_misses(member, volume)
        risk = pool.swap_risk()
        notes = [risk] if risk else []
        if awsmodel.has_burst(volume):
            notes.append("members of an emulated set run at their burst rates: their credit "
                         "buckets are not emulated")
        slow = [f"member {i + 1} x {f:g}" for i, f in enumerate(factors) if f != 1.0]
        if slow:
            notes.append("--emulate-member-factors: " + ", ".join(slow))
        if mean_us is not None:
            notes.append(f"emulated latency: {mean_us / 1000:g} ms mean per I/O on each member")
        elif too_fast:
            pool.beyond_reach = too_fast
            notes.append(f"emulated without latency: the set's {too_fast}; its runs hold the "
                         "host alone")
        self.record(", ".join(pool.paths), volume, notes, emulated=True,
                           spec=f"set of {count}")
        return pool

    def pace_set(self, target: Target, workload: Workload | None = None) -> None:
        """Give each active member of an emulated set its share of the instance's limit: a
        set's I/O is spread evenly, so ``count`` members share it equally."""
        pool, count = target.emulated_set, len(target.members)
        if pool is None:
            return
        volume = target.volume
        limits = self.limits() or (
            awsmodel.ebs_limits(volume.instance_type) if volume.instance_type else None)
        factors = self.settings.member_factors or (1.0,) * len(pool.members)
        iops, bps, _ = self.rates(volume.replace(instance_type=None))
        scale = self.settings.emulate_factor
        for member, factor in zip(pool.members, factors):
            m_iops = None if iops is None else iops * factor
            m_bps = None if bps is None else bps * factor
            if limits is not None:
                m_iops = min(m_iops or math.inf, limits.max_iops * scale / count)
                m_bps = min(m_bps or math.inf, limits.max_mbps * 1e6 * scale / count)
            member.set_rates(m_iops, m_bps)

    def _add_misses(self, device: Any, volume: Volume) -> None:
        """--emulate-misses: the device's missed seconds (its own chain per device)."""

        plan = parse_misses(self.settings.emulate_misses)
        if plan is None:
            return
        seed = os.environ.get("EBSPERF_EMULATE_MISSES_SEED", "").strip()
        if seed and not (seed.isascii() and seed.isdigit()):
            raise SuiteMismatch(f"EBSPERF_EMULATE_MISSES_SEED={seed!r} is not a whole number; "
                                "give one (e.g. 7) to repeat a run's emulated misses, or unset it.")
        device.misses = misses.MissDriver(device, plan, int(seed) if seed else None)
        self.record(device.path, volume, [plan.describe()], emulated=True)

    def rates(self, volume: Volume, workload: Workload | None = None,
                       exact_io_bytes: int | None = None
                       ) -> tuple[float | None, float | None, int]:
        """Kernel throttle settings (IOPS, bytes/s, I/O unit) that make a device behave like
        ``volume`` (and its instance's EBS-optimized limits), scaled by --emulate-factor.

        ``exact_io_bytes`` is the size up to which the emulated device charges one kernel
        operation per I/O (see EmulatedDevice); larger HDD I/Os are paced through bytes/s.
        """
        factor = self.settings.emulate_factor
        family = awsmodel.volume_type(volume.type).family
        if family == awsmodel.STORE:
            iops = awsmodel.instance_store_rate(volume, workload)
            return iops * factor, None, 256 * 1024
        if family == awsmodel.MAGNETIC:
            return STANDARD_EMULATED_IOPS * factor, STANDARD_EMULATED_BPS * factor, 256 * 1024
        credits = volume.credits_assumed
        caps = awsmodel.volume_caps(volume, credits=credits, era=self.settings.era)
        iops, bps = caps.iops, caps.throughput_bps  # bps infinite: no ceiling in that era
        limits = self.limits() or (
            awsmodel.ebs_limits(volume.instance_type) if volume.instance_type else None)
        if limits is not None:
            iops = min(iops, limits.max_iops)
            bps = min(bps, limits.max_mbps * 1e6)
        if is_hdd(volume.type) and workload is not None and exact_io_bytes:
            iops, bps = self._hdd_rates(volume, workload, exact_io_bytes, credits)
        elif workload is not None and awsmodel.merges(volume, workload, self.settings.era):
            # EBS merges sequential I/O smaller than its unit and counts the merged
            # operation once (B-IOACCT); blk-throttle counts every bio: a 4 KiB sequential
            # I/O costs EBS 1/64 of an operation, so the kernel may pass 64 for one.
            per_io = awsmodel.ebs_ops_per_io(volume.type, workload.bs, sequential=True,
                                           era=self.settings.era)
            iops = iops / per_io if per_io > 0 else iops
        return iops * factor, (bps * factor if math.isfinite(bps) else None), caps.io_unit_bytes

    def _hdd_rates(self, volume: Volume, workload: Workload, exact_io_bytes: int,
                   credits: bool) -> tuple[float, float]:
        # EBS charges every HDD I/O of up to 1 MiB a full MiB of credit (B-IOACCT), but the
        # loop device splits an I/O above exact_io_bytes into a number of bios that depends
        # on buffer layout, and blk-throttle charges each bio. So pace by bytes: the I/O rate
        # EBS allows at this block size times the block size; the IOPS limit leaves room for
        # the worst-case split and only binds if the split is worse than that.
        rate = awsmodel.cap_expectation("", "", volume, workload, credits=credits,
                                      instance_limits=self.limits()).value
        pieces = -(-workload.bs // exact_io_bytes)

        return rate * pieces * HDD_SPLIT_HEADROOM, rate * workload.bs

