"""An emulated volume witnesses itself: the seconds in which it fell behind what it was set
to deliver are the host's, not the volume's.

The emulator knows what it was asked to deliver each second: its throttle's IOPS and bytes/s
(:attr:`EmulatedDevice.timeline`, every change recorded with its time) and its service time
(queue depth / service time, Little's law). A second in which fio saw clearly less than
that (below :data:`BEHIND_SHARE` of it) is a second in which this host could not carry the
emulation: its CPUs, wake-ups or memory bandwidth went to something else, and the I/Os waited
in the host's own I/O path (the loop device, the FUSE daemon). Such a second says nothing
about the volume: the verdict leaves it out (:attr:`FioResult.emulator_behind`), and a check
left with too few seconds is INCONCLUSIVE naming the emulator. A volume emulated slower
(``--emulate-factor=0.75``) is *set* to deliver less, delivers it, and its misses count.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_ebsperf.awsmodel import instances, volume_types
from pytest_ebsperf.verdicts.stability import HELD_BACK_SHARE

#: A second below this share of what the emulator was set to deliver was the host's (the one
#: rule for a held-back emulated volume, seconds, runs and pairs alike).
BEHIND_SHARE = HELD_BACK_SHARE
#: A volume emulated by its throttle alone (no service time: beyond the latency daemon's
#: reach, or ``--emulate-latency=none``) is owed its throttle's rate wherever the queue could
#: carry it with each I/O taking this long in the host's own path (the loop device and
#: tmpfs take 20-100 µs here): below that rate Little's law, not the throttle, bounds it.
PATH_BOUND_US = 1000.0
#: How far a second of fio's log may sit from the emulator's clock (fio's start-up before
#: its ramp, a report's delay): the rate set anywhere in the window, widened by this much
#: before and after, is the least the second was owed.
SLACK_BEFORE_S = 1.5
SLACK_AFTER_S = 0.5


@dataclass(frozen=True)
class Behind:
    """The seconds (indices into the run's per-second series) in which the emulator fell
    behind, what it was set to deliver in each second (IOPS, None: unknown) and what fio
    saw."""

    seconds: tuple[int, ...]
    allowed: tuple[float | None, ...]
    seen: tuple[float, ...]

    @property
    def share(self) -> float | None:
        """What fio saw over what the emulator was set to deliver, over the seconds whose
        setting is known (None: none is)."""
        pairs = [(seen, owed) for seen, owed in zip(self.seen, self.allowed) if owed]
        owed_total = sum(owed for _, owed in pairs)
        return sum(seen for seen, _ in pairs) / owed_total if owed_total > 0 else None

    def sentence(self, what: str) -> str:
        """``this host could not emulate io1 at 4,000 IOPS in 12 of 18 s: ...``."""
        if not self.seconds:
            return ""
        owed = [self.allowed[i] or 0.0 for i in self.seconds]
        got = [self.seen[i] for i in self.seconds]
        rate = max(owed)
        return (f"this host could not emulate {what} at {rate:,.0f} IOPS in "
                f"{len(self.seconds):,} of {len(self.seen):,} s: the emulated volume was set to "
                f"deliver {sum(owed) / len(owed):,.0f} IOPS there (its throttle and service "
                f"time) and fio saw {sum(got) / len(got):,.0f}, so the I/Os waited in this "
                "host's own I/O path; those seconds are the host's, not the volume's, and are "
                "left out of the verdict")


def allowed_iops(device: Any, start: float, end: float, bs: int, outstanding: float
                 ) -> float | None:
    """The least IOPS ``device`` was set to deliver between ``start`` and ``end``
    (``time.monotonic()``) for I/Os of ``bs`` bytes with ``outstanding`` in flight: its
    throttle's IOPS (an I/O larger than the device's unit counting as the pieces the kernel
    splits it into) and bytes/s, and its service time (without one, :data:`PATH_BOUND_US`);
    None when nothing limited it."""
    timeline = list(getattr(device, "timeline", ()))  # a remote host's volume keeps none
    before = [entry for entry in timeline if entry[0] <= start][-1:]
    during = [entry for entry in timeline if start < entry[0] <= end]
    latency_us = getattr(device, "latency_us", None)
    unit = getattr(device, "io_unit_bytes", 0) or bs
    pieces = max(1, -(-bs // unit))
    rates = []
    for _, iops, bps in before + during:
        found = [rate for rate in (iops / pieces if iops else None, bps / bs if bps else None)
                 if rate]
        if latency_us or found:  # the service time, or the host path's bound on a throttle
            found.append(max(1, outstanding) / ((latency_us or PATH_BOUND_US) * 1e-6))
        if found:
            rates.append(min(found))
    return min(rates) if rates else None


def behind(devices: Sequence[Any], t_s: Sequence[float], iops: Sequence[float],
           measuring_from: float, *, bs: int, outstanding: int,
           run_from: float | None = None) -> Behind:
    """Which of fio's seconds (``t_s[i]``: the end of window ``i`` after the ramp, ``iops[i]``
    what fio saw) fell below :data:`BEHIND_SHARE` of what ``devices`` were set to deliver
    together (one device, or the members of an emulated set, each with its share of the
    I/Os in flight: a stripe spreads them evenly, so it owes as many times its slowest
    member's rate as it has members); ``measuring_from``: when fio's measuring
    began on the emulator's clock.

    A volume with an emulated service time (``--emulate-latency``) knows what each I/O should
    take, its path's own time included (calibrated). One emulated by its throttle alone owes
    its throttle's rate wherever its queue could carry it at :data:`PATH_BOUND_US` an I/O: a
    loop device on tmpfs that takes longer is this host's path falling behind, while a run
    held back at a queue too shallow for that is queue-depth bound (Little's law), which the
    verdict's diagnosis says.

    ``run_from`` (when fio started): a setting made before it was replaced by the one the
    run started with, so a window's slack reaches no further back (a first write's throttle
    at 0.7 of the rate, set 1.5 s before the second write began, made that run look 143 %
    of what it owed)."""
    if not devices:
        return Behind((), (), tuple(iops))
    share = outstanding / len(devices)
    # the whole queue bounds the set as one (a member owes at least one I/O's worth alone)
    latency_s = sum(getattr(device, "latency_us", None) or PATH_BOUND_US
                    for device in devices) / len(devices) * 1e-6
    little = max(1, outstanding) / latency_s
    allowed: list[float | None] = []
    late: list[int] = []
    for index, (end, seen) in enumerate(zip(t_s, iops)):
        at = measuring_from + end
        since = at - 1.0 - SLACK_BEFORE_S if run_from is None else \
            max(at - 1.0 - SLACK_BEFORE_S, run_from)
        each = [allowed_iops(device, since, at + SLACK_AFTER_S, bs, share)
                for device in devices]
        # a stripe spreads its I/Os evenly, so it runs at the pace of its slowest member
        known = [one for one in each if one is not None]
        owed = None if len(known) < len(each) else min(len(known) * min(known), little)
        allowed.append(owed)
        if owed is not None and seen < BEHIND_SHARE * owed:
            late.append(index)
    return Behind(tuple(late), tuple(allowed), tuple(iops[:len(allowed)]))


#: Host CPU an emulated I/O costs (docs/emulation.md, "What an emulated volume costs"): the
#: loop device and throttle 13-41 µs, the latency daemon's wake-ups and copies 65-90 µs on
#: top; the upper figures.
LOOP_CPU_US = 41.0
LATENCY_CPU_US = 90.0
#: A volume (or set) whose emulation needs more than this share of the host's CPUs measures
#: holding the host alone: two such beside each other outran a 2-CPU host (two 4-member io1
#: sets at 8,000 IOPS each, 8 daemons at 15-33 % of a CPU, the host 96-100 % busy, one of
#: them behind in 11 of 12 s).
HOST_SHARE = 0.5


def host_share(iops: float | None, latency_us: float | None,
               cpus: int | None = None) -> str | None:
    """Why a volume emulated at ``iops`` (with a service time or not) measures holding the
    host alone (its emulation needs more than :data:`HOST_SHARE` of this host's CPUs), or
    None: the main job sized to the host it runs on."""
    cpus = cpus or os.cpu_count() or 1
    if not iops:
        return None
    per_io = LOOP_CPU_US + (LATENCY_CPU_US if latency_us else 0.0)
    needs = iops * per_io * 1e-6
    if needs <= HOST_SHARE * cpus:
        return None
    return (f"emulating {iops:,.0f} IOPS takes about {needs:.1f} of this host's {cpus} CPUs "
            f"({per_io:.0f} µs an I/O); its runs hold the host alone")


#: An emulated instance store measures beside other workers when its throttle needs at most
#: this share of the host's CPUs at its published read IOPS (:data:`LOOP_CPU_US` an I/O):
#: i4i.large's 50,000 on a 2-CPU host took the host alone in 5 checks, 97 of the main job's
#: 389 s with no other worker measuring.
SHARED_STORE_SHARE = 0.25


def store_record() -> str:
    """The instance type instance store's record emulates (B-IS: i4i.large)."""
    record = volume_types.volume_type(volume_types.INSTANCE_STORE).emulated
    return str(record.get("instance_type", ""))


def store_stand_in(record_type: str, cpus: int | None = None) -> tuple[str, str]:
    """The instance whose instance store an emulated one stands for, and the sentence that
    says why when it is not the type's record (``record_type``, i4i.large): the record's when
    this host carries its read IOPS beside other work, otherwise the fastest published
    single-device one it does (on 2 CPUs g4ad.xlarge, 10,417 / 8,333 IOPS). The claims are
    the same claims at any published figure: the main job sized to the host it runs on."""
    cpus = cpus or os.cpu_count() or 1
    budget = SHARED_STORE_SHARE * cpus / (LOOP_CPU_US * 1e-6)
    published = instances.instance_store_iops(record_type)
    if published is None or published[0] <= budget:
        return record_type, ""
    fitting = [(rates[0], name) for name, rates in instances.store_types().items()
               if rates[0] <= budget and instances.instance_store_devices(name) == 1]
    if not fitting:
        return record_type, ""
    read, name = max(fitting)
    write = (instances.instance_store_iops(name) or (read, read))[1]
    return name, (f"emulated as {name}'s instance store ({read:,} read / {write:,} write "
                  f"IOPS, B-IS): this host's {cpus} CPUs carry {record_type}'s "
                  f"{published[0]:,} only holding the host alone, and a store at up to "
                  f"{budget:,.0f} IOPS measures beside the other checks")


def sizing_header(cpus: int | None = None) -> str:
    """The session header's line for emulated volumes: how this host's CPUs size them."""
    cpus = cpus or os.cpu_count() or 1
    record = store_record()
    name, _ = store_stand_in(record, cpus)
    read, write = instances.instance_store_iops(name) or (0, 0)
    store = (f"the instance store as {name}'s ({read:,} / {write:,} IOPS"
             + (f"; {record}'s would hold the host alone)" if name != record else ")"))
    return (f"ebsperf: emulated volumes sized to this host's {cpus} CPU"
            f"{'s' if cpus != 1 else ''}: {store}; a volume or set whose emulation needs "
            f"more than {HOST_SHARE * cpus:g} CPU ({LOOP_CPU_US:.0f} µs an I/O, "
            f"{LOOP_CPU_US + LATENCY_CPU_US:.0f} µs with a service time) measures holding "
            "the host alone (docs/emulation.md)")
