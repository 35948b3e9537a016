"""Why a volume falls short: a slow number is only the volume's fault when the test could
have gone faster.

* **load-generator bound** - fio itself used ``CPU_BOUND_PERCENT`` of a CPU per job (or of
  every CPU of the host): the volume may be fine, fio could not ask for more. INCONCLUSIVE.
* **host bound** - the host's CPUs were ``HOST_BUSY_PERCENT`` busy in all while fio ran
  (``/proc/stat``: the kernel's work for the device and other programs count too, which fio's
  own CPU figures miss): INCONCLUSIVE, unless the device held fio's queue and fio's threads
  waited so little for a CPU (``/proc/PID/task/*/schedstat``) that even without any of that
  wait the run could not have reached the claim: then the busy host is named and the
  shortfall is the volume's (a real device; an emulated volume's device is the host's work).
* **queue-depth bound** - Little's law. In a closed loop ``achieved = QD / latency`` always
  holds, so the mean latency proves nothing. What one I/O costs *without* queueing is read from
  a low percentile of completion latency (p5, else p10, else the minimum); ``QD / that`` is the
  most the run could have reached. Below the claim: INCONCLUSIVE, raise the iodepth. A device
  that paces I/O (a rate limiter, which is what an EBS volume at its cap is) makes *every* I/O
  wait about ``QD / rate``: with more than one I/O outstanding, "even the fastest I/Os waited
  a whole queue turn at the measured rate" (p5 >= ``PACED_FRACTION`` x QD / achieved) is taken
  as pacing, and the shortfall is the volume's.
* **which comes first** - load-generator bound, then the queue depth by Little's law (it holds
  on any host; a busy host is named beside it, since a closed loop at a low depth is itself
  what keeps the CPUs busy), then host bound, then a queue fio kept half empty.
* **the confirmation run** (:func:`probe_queue_depth`, :func:`judge_with_probe`): a short run
  at four times the queue depth; a volume at its limit does not go faster.

The judges (:mod:`pytest_ebsperf.verdicts.verdict`) call :func:`diagnose_shortfall` before a FAIL.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from pytest_ebsperf.fio.result import FioResult, Latency
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.units import (
    format_iops,
    format_latency,
    format_mibps,
    format_number,
    round_sig,
)
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict

#: fio at or above this share of one CPU per job (or of all CPUs together) cannot push harder.
CPU_BOUND_PERCENT = 90.0
#: The host's CPUs this busy in all (fio, the kernel's block and copy work, other programs,
#: from /proc/stat) leave no room to ask for more: a shortfall is not evidence against the
#: volume.
HOST_BUSY_PERCENT = 90.0

#: A hypervisor that took this share of the CPUs' time while fio ran is named beside a
#: verdict the host may have spoiled. On a 2-CPU cloud VM, 1 s windows of emulated runs showed
#: 0-3 % at rest and spells of 18-38 %; at 31-33 % an emulated 500 µs volume delivered about
#: half its setting at QD 1 (docs/benchmarks.md).
STEAL_NOTABLE_PERCENT = 5.0


def steal_sentence(steal_pct: float | None) -> str:
    """What the hypervisor took while fio ran, as a clause ("" below
    :data:`STEAL_NOTABLE_PERCENT` or unknown)."""
    if steal_pct is None or steal_pct < STEAL_NOTABLE_PERCENT:
        return ""
    return (f"the hypervisor took {steal_pct:.0f} % of this machine's CPU time while fio ran "
            "(steal: another guest on the same physical host, or a burstable instance out of "
            "CPU credits)")


#: Completion-latency percentiles that stand for "one I/O without queueing", best first.
SERVICE_PERCENTILES = (5.0, 10.0)
#: p5 latency >= this share of QD / achieved rate means every I/O waited a full queue turn.
PACED_FRACTION = 0.8

def service_latency(result: FioResult) -> tuple[float, str] | None:
    """What one I/O costs without queueing: a low total-latency percentile, in ns, with its
    name ("p5", "p10" or "min").

    Total latency (submission + completion), not completion alone: with libaio on a fast
    device the work happens inside io_submit, so completion latency can be under a
    microsecond while each I/O really costs tens of them. Completion latency is the
    fallback when fio reported no total-latency percentiles (fio without lat_percentiles).

    Mixed workloads weight reads and writes by their share of the I/Os, since that is what
    an average I/O of the run costs. None when fio reported no latency at all.
    """
    weighted = []
    names = []
    for stats in (result.read, result.write):
        low = _low_latency_ns(stats.lat) if stats.lat.percentiles else None
        low = low or _low_latency_ns(stats.clat)
        if low is not None and not stats.lat.percentiles and stats.lat.min_ns > low[0]:
            # no total-latency percentiles, and even the fastest I/O's total latency is
            # above completion's low percentile: the I/O happened at submission (buffered
            # libaio: slat 1.6 ms, clat 2.5 µs), and that fastest total is the bound
            low = (stats.lat.min_ns, "min total")
        if stats.iops > 0 and low is not None:
            weighted.append((stats.iops, low[0]))
            names.append(low[1])
    total = sum(iops for iops, _ in weighted)
    if not total:
        return None
    return math.fsum(iops * low for iops, low in weighted) / total, "/".join(dict.fromkeys(names))


def service_latency_ns(result: FioResult) -> float | None:
    """:func:`service_latency` without the percentile's name."""
    found = service_latency(result)
    return found[0] if found else None


def _low_latency_ns(latency: Latency) -> tuple[float, str] | None:
    for q in SERVICE_PERCENTILES:
        value = latency.p(q)
        if value:
            return value, f"p{q:g}"
    return (latency.min_ns, "min") if latency.min_ns else None


def required_queue_depth(target_iops: float, latency_s: float) -> int:
    """Little's law (claims.md B-MODEL): outstanding I/Os needed for ``target_iops``."""
    return max(1, math.ceil(target_iops * latency_s - 1e-9))


# -- diagnosis of a shortfall ------------------------------------------------------------
@dataclass(frozen=True)
class Diagnosis:
    """Why a number fell short. ``binding`` is set when the test, not the volume, was the
    limit (the verdict is then INCONCLUSIVE); ``sentences`` go into a FAIL message."""

    binding: str | None
    reason: str = ""
    sentences: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)


#: Below this share of the queue depth in the device on average, fio (not the volume) set
#: the pace: a volume that throttles holds every outstanding I/O (in flight ~= QD).
OCCUPANCY_FRACTION = 0.5


def diagnose_shortfall(result: FioResult, workload: Workload, *, need: float, expected: float,
                       unit: str, cpu_count: int | None, paces: bool = True) -> Diagnosis:
    """Was the run load-generator bound or queue-depth bound? ``need`` is the lowest
    acceptable value and ``expected`` the claimed one, both in ``unit`` ("IOPS" or "B/s").
    ``paces``: the device paces I/O at a limit (an EBS volume's cap), so I/Os that all waited
    a queue turn show the limit; an instance store's SSD has no such limit (its published
    figure is at queue-depth saturation), and there the same pattern is its service time."""
    cpu = cpu_diagnosis(result, cpu_count)
    if cpu.binding == "load generator":
        return cpu
    kept = _occupancy_diagnosis(result, workload, expected=expected, unit=unit)
    qd = _queue_depth_diagnosis(result, workload, need=need, expected=expected, unit=unit,
                                paces=paces)
    bound = kept if kept.binding else qd
    if qd.binding or (kept.binding and not cpu.binding):
        # Little's law holds on any host: when the depth alone could not reach the claim
        # even at the fastest I/Os' pace, that comes first, and a busy host is named beside
        # it (a closed loop at a low depth is what keeps the CPUs busy). A queue fio kept
        # half empty on a busy host is the host's doing.
        return Diagnosis(bound.binding, bound.reason + _also_busy(cpu), bound.sentences,
                         {**cpu.details, **qd.details, **kept.details})
    if cpu.binding:
        device_paced = _not_the_host(result, kept, need=need, unit=unit)
        if device_paced:
            return Diagnosis(None, "", (device_paced, *qd.sentences),
                             {**cpu.details, **qd.details, **kept.details})
        return Diagnosis(cpu.binding, cpu.reason, cpu.sentences, {**cpu.details, **qd.details})
    return Diagnosis(None, "", cpu.sentences + qd.sentences, {**cpu.details, **qd.details})


def _not_the_host(result: FioResult, kept: Diagnosis, *, need: float, unit: str) -> str:
    """A busy host that cannot have set the pace: the device held fio's queue (Little's law,
    :func:`_occupancy_diagnosis`) and fio's threads waited so little for a CPU that the run
    could not have reached ``need`` even had they never waited (at most ``1 / (1 - share)``
    faster). Returns the sentence that says so, else "". Not for an emulated volume, whose
    device is this host's own work (its witness says when it fell behind)."""
    share, in_flight = result.fio_wait_share, kept.details.get("in_flight")
    achieved = result.total_bw_bytes if unit == "B/s" else result.total_iops
    if kept.binding or share is None or in_flight is None or share >= 1.0 or achieved <= 0:
        return ""
    most = achieved / (1.0 - share)
    if most >= need:
        return ""
    busy = result.host_cpu_busy_pct or 0.0
    return (f"Not host bound, though this machine's CPUs were {busy:.0f} % busy while fio ran: "
            f"the device held {in_flight:.1f} of fio's I/Os on average, and fio's threads "
            f"waited for a CPU {share:.1%} of the run, so without any wait it could have gone "
            f"at most {1 / (1 - share) - 1:.1%} faster, short of what the claim needs.")


def _also_busy(cpu: Diagnosis) -> str:
    busy = cpu.details.get("host_cpu_busy_pct")
    if not cpu.binding or busy is None:
        return ""
    return (f" (this machine's CPUs were also {busy:.0f} % busy while fio ran; if a run at "
            "the higher depth falls short too, run it on a quiet host)")


def cpu_diagnosis(result: FioResult, cpu_count: int | None) -> Diagnosis:
    per_job = result.usr_cpu + result.sys_cpu if result.cpu_reported else 0.0
    jobs = max(result.jobs, 1)
    host_share = per_job * jobs / cpu_count if cpu_count else 0.0
    details = {"cpu_per_job_pct": per_job, "cpu_host_pct": host_share, "jobs": jobs,
               "cpu_count": cpu_count}
    if per_job >= CPU_BOUND_PERCENT:
        reason = (f"inconclusive: load-generator bound (fio used {per_job:.0f} % of a CPU "
                  "per job); add --ebsperf-numjobs or a faster engine")
        return Diagnosis("load generator", reason, (), details)
    if host_share >= CPU_BOUND_PERCENT:
        reason = (f"inconclusive: load-generator bound (fio's {jobs} jobs used "
                  f"{host_share:.0f} % of all {cpu_count} CPUs); run fio from a larger host "
                  "or use a faster engine")
        return Diagnosis("load generator", reason, (), details)
    busy, steal = result.host_cpu_busy_pct, result.host_cpu_steal_pct
    if busy is not None:
        details["host_cpu_busy_pct"] = busy
    if steal is not None:
        details["host_cpu_steal_pct"] = steal
    if busy is not None and busy >= HOST_BUSY_PERCENT:
        stolen = steal_sentence(steal)
        reason = (f"inconclusive: host bound (this machine's CPUs were {busy:.0f} % busy while "
                  f"fio ran, fio itself {host_share:.0f} %: the kernel's work for the device "
                  "and other programs took the rest"
                  f"{'; ' + stolen if stolen else ''}); the host, not the volume, may have "
                  "set the pace. Run it again on a quiet host")
        return Diagnosis("host", reason, (), details)
    sentence = f"Not load-generator bound (fio used {per_job:.0f} % of a CPU per job)."
    if not result.cpu_reported:
        sentence = "Load generator not checked (fio's output holds no CPU figures)."
    return Diagnosis(None, "", (sentence,), details)


def _occupancy_diagnosis(result: FioResult, workload: Workload, *, expected: float,
                         unit: str) -> Diagnosis:
    """Did the device see the whole queue? Little's law on the device side: I/Os in flight
    = IOPS x mean total latency. A volume that paces I/O holds every outstanding I/O, so this
    is close to the configured queue depth; when it is well below, fio spent the time between
    I/Os itself (submission, completion handling) and more outstanding I/O would go faster.
    At QD 1 on a fast device that is the usual case: each round trip is fio's, not the disk's.
    """
    qd = workload.queue_depth
    achieved = result.total_iops
    mean_ns = _mean_total_latency_ns(result)
    if achieved <= 0 or mean_ns is None:
        return Diagnosis(None, "", (), {})
    in_flight = achieved * mean_ns / 1e9
    details = {"in_flight": in_flight, "mean_latency_ns": mean_ns}
    if in_flight >= OCCUPANCY_FRACTION * qd:
        return Diagnosis(None, "", (), details)
    per_io = workload.bs if unit == "B/s" else 1.0
    round_trip_ns = qd / achieved * 1e9
    needed_qd = max(qd + 1, math.ceil(qd * (expected / per_io) / achieved))
    reason = (f"inconclusive: queue-depth bound: fio kept {in_flight:.2f} of QD {qd} I/Os in "
              f"the device on average (a round trip took {format_latency(round_trip_ns)}, "
              f"{format_latency(mean_ns)} of it in the device), so QD {qd} allows about "
              f"{format_iops(round_sig(achieved, 3))}; the claim needs about {needed_qd} "
              "outstanding I/Os - raise --ebsperf-iodepth")
    return Diagnosis("queue depth", reason, (), {**details, "needed_qd": needed_qd})


def _mean_total_latency_ns(result: FioResult) -> float | None:
    parts = [(d.iops, d.lat.mean_ns or d.clat.mean_ns) for d in (result.read, result.write)
             if d.iops > 0 and (d.lat.mean_ns or d.clat.mean_ns)]
    total = sum(iops for iops, _ in parts)
    return math.fsum(i * m for i, m in parts) / total if total else None


def _queue_depth_diagnosis(result: FioResult, workload: Workload, *, need: float,
                           expected: float, unit: str, paces: bool = True) -> Diagnosis:
    service = service_latency(result)
    qd = workload.queue_depth
    if service is None:
        sentence = "Queue depth not checked (fio reported no completion latency)."
        if _mean_total_latency_ns(result):  # a part of a run: fio's percentiles are the run's
            sentence = ("Queue depth not checked by percentiles (fio reports them for a whole "
                        "run, not for the part judged).")
        return Diagnosis(None, "", (sentence,), {"qd": qd})
    service_ns, stat = service
    per_io = workload.bs if unit == "B/s" else 1.0
    possible_iops = qd / (service_ns / 1e9)
    achieved = result.total_iops
    paced = paces and qd > 1 and achieved > 0 and \
        service_ns / 1e9 >= PACED_FRACTION * qd / achieved
    details = {"qd": qd, "service_latency_ns": service_ns, "service_latency_stat": stat,
               "possible_iops": possible_iops, "paced": paced}
    latency = format_latency(service_ns)
    if possible_iops * per_io < need and not paced:
        needed_qd = required_queue_depth(expected / per_io, service_ns / 1e9)
        reason = (f"inconclusive: queue-depth bound: QD {qd} x {latency} allows at most "
                  f"{format_iops(round_sig(possible_iops))}; the claim needs >= "
                  f"{format_number(round_sig(expected / per_io, 3))} x {latency} ≈ "
                  f"{needed_qd} outstanding I/Os - raise --ebsperf-iodepth")
        return Diagnosis("queue depth", reason, (), {**details, "needed_qd": needed_qd})
    if possible_iops * per_io < need:
        sentence = (f"Not queue-depth bound: even the fastest I/Os waited a whole queue turn "
                    f"({stat} {latency} ≈ QD {qd} / {format_iops(round_sig(achieved, 3))}), as "
                    "when the volume paces I/O at a limit; more outstanding I/O would only "
                    "wait longer (a run with a higher --ebsperf-iodepth confirms it).")
        return Diagnosis(None, "", (sentence,), details)
    sentence = (f"Not queue-depth bound (QD {qd} x {latency} = "
                f"{format_iops(round_sig(possible_iops))} possible).")
    return Diagnosis(None, "", (sentence,), details)


# -- confirming a shortfall with more outstanding I/O ------------------------------------
#: A probe at a higher queue depth that delivers this much more shows the first run was held
#: back by its own queue depth (a volume at its limit gives the same rate at any depth).
PROBE_GAIN = 1.20


def probe_queue_depth(workload: Workload) -> Workload:
    """The confirmation run for a shortfall: 4x the outstanding I/O, at most 256 per job, for
    a third of the check's runtime (1 s to 2 s) after half its ramp (at most 0.5 s) - enough
    samples to tell a 20 % gain from noise, and short, since every failing check pays for it.
    On an emulated volume (3 s after 0.5 s) that is 1 s after 0.25 s; on a device (60 s after
    2 s), 2 s after 0.5 s."""
    runtime = min(workload.runtime_s, max(1.0, min(2.0, workload.runtime_s / 3)))
    return workload.replace(iodepth=min(256, max(workload.iodepth * 4, workload.iodepth + 3)),
                            runtime_s=runtime, ramp_s=min(workload.ramp_s / 2, 0.5))


def judge_with_probe(found: Verdict, workload: Workload, probe: Workload,
                     probe_result: FioResult, *, metric: str = "iops") -> Verdict:
    """Re-judge a FAIL given a run at a higher queue depth.

    If more outstanding I/O reached the claim's threshold, the failed run was not the
    volume's fault: INCONCLUSIVE with both figures and ``details["probe_reached"]`` set, so
    the caller re-runs the check at the probe's depth. If it raised the rate clearly but not
    to the threshold, the first run was still held back by its queue depth: INCONCLUSIVE.
    Otherwise the volume was the limit and the FAIL stands, with the probe's figure added.
    """
    if found.outcome is not Outcome.FAIL or not found.measured or found.expected is None \
            or found.measured >= found.expected:
        return found  # only a shortfall is worth probing (not "far above its cap")
    value = probe_result.total_bw_bytes if metric == "throughput" else probe_result.total_iops
    fmt = format_mibps if metric == "throughput" else format_iops
    gain = value / found.measured
    need = float(found.details.get("threshold") or 0.0)
    reached = need > 0 and value >= need
    details = {**found.details, "probe_qd": probe.queue_depth, "probe_value": value,
               "probe_gain": gain, "probe_reached": reached}
    sentence = (f"QD {workload.queue_depth} gave {fmt(found.measured)}; a {probe.runtime_s:g} s "
                f"run at QD {probe.queue_depth} gave {fmt(value)} ({gain - 1:+.0%})")
    if reached or gain >= PROBE_GAIN:
        what_it_did = (f"reached the claim's {fmt(need)}" if reached else
                       "went clearly faster")
        reason = (f"inconclusive: queue-depth bound: {sentence}, which {what_it_did}, so the "
                  "first run was held back by its own queue depth, not by the volume - raise "
                  "--ebsperf-iodepth (or leave it to the plugin's default)")
        message = f"{found.what}: {reason}. Claim {found.claim}."
        return replace(found, outcome=Outcome.INCONCLUSIVE, binding="queue depth",
                       reason=reason, message=message, details=details)
    message = found.message.rstrip() + f" More outstanding I/O did not help: {sentence}."
    return replace(found, message=message, details=details)
