"""The time-based credit checks behind ``ebsperf.check_burst_duration`` and friends.

Each check asks the model, before it starts, how long it will take on this volume (from
the credits the ledger says are left), skips with that duration unless ``--ebsperf-long``
when that is more than a few minutes, runs one time-based fio job whose runtime comes from
the model plus a margin, finds the knee in the per-second series, judges it, draws it and
books what it learned about the bucket (empty after a knee) in the ledger.

This module does not import pytest: a check that does not apply raises
:class:`NotApplicable` (the caller skips), and verdicts go through the handle's ``conclude``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

from pytest_ebsperf import awsmodel
from pytest_ebsperf.awsmodel.volume_types import spends_mib
from pytest_ebsperf.credits.book import CreditBook
from pytest_ebsperf.credits.handle import Handle
from pytest_ebsperf.credits.ledger import CreditLedger, credit_cost_per_io
from pytest_ebsperf.credits.plot import draw_knee
from pytest_ebsperf.credits.progress import Forecast, ProgressMonitor, device_counter
from pytest_ebsperf.device.lock import hold_now, measuring, set_aside
from pytest_ebsperf.fio.kept import keep_part
from pytest_ebsperf.fio.live import LiveSeries
from pytest_ebsperf.fio.result import FioResult, Series
from pytest_ebsperf.fio.runner import Monitor
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.units import format_seconds
from pytest_ebsperf.verdicts import evidence, plain, verdict
from pytest_ebsperf.verdicts.burst_time import (
    Levels,
    Timing,
    _no_knee_sizes,
    _span,
    burst_end,
    consumed_credits,
    first_settled_s,
    judge_knee_time,
    knee_facts,
    knee_held_back,
    knee_of,
    model_curve,
    trim_result,
    unexpected_knee,
)
from pytest_ebsperf.verdicts.knee import Knee, find_knee
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict, measured_alone

#: "More than a few minutes": checks longer than this on this volume need --ebsperf-long.
LONG_CHECK_S = 300.0
#: Windows seen after the model's latest knee (the lower level seen, not guessed), and a
#: baseline is held for at least (the duty cycle needs samples).
POST_WINDOWS, HOLD_WINDOWS = 5, 10
#: A refill check idles until the next burst should last this share of a full bucket's, or
#: this many log windows, whichever is shorter: per-second logs resolve a burst of 20 s to a
#: window, so idling for a longer one (2,700 s on a 100 GiB gp2) buys no evidence.
REFILL_SHARE, REFILL_BURST_WINDOWS = 0.15, 20
#: The refill starts from an empty bucket this check saw run dry, so its time is known to a
#: few windows (no CloudWatch minute to allow for): the TIME tolerance's floor.
REFILL_FLOOR_WINDOWS = 3
#: A balance worth less than this many seconds of burst counts as empty.
EMPTY_BURST_S = 0.5


class NotApplicable(Exception):
    """The check does not apply here or needs ``--ebsperf-long``; ``str``: the skip reason."""


class CreditChecks:
    """The four credit checks for the volume under test of one ``ebsperf`` handle."""

    def __init__(self, handle: Handle) -> None:
        self.h = handle
        self.book: CreditBook = handle.session.credits
        self.clock = self.book.clock
        self._io_end = 0.0

    # -- the checks ----------------------------------------------------------------------
    def burst_duration(self, claim: str, what: str, workload: Workload) -> Verdict:
        """TIME: a burst-level load lasts balance / (burst − baseline) before the knee."""
        ledger, levels, _ = self._burst_duration_ready(workload)
        self._note_start(ledger)
        return self._time_knee(claim, what, workload, ledger, levels, "burst")

    def _burst_duration_ready(self, workload: Workload, *, hold: bool = True
                              ) -> tuple[CreditLedger, Levels, Workload]:
        ledger, levels = self._setup(workload, hold=hold)
        self._require_knee(levels)
        expected = ledger.at(self.clock()) / levels.drain
        if expected < EMPTY_BURST_S:
            raise NotApplicable(self._no_credits(ledger))
        self._require_time(self._knee_run_s(expected), "timing the burst")
        return ledger, levels, self._knee_job(workload, expected, levels)[0]

    def baseline_after_knee(self, claim: str, what: str, workload: Workload) -> Verdict:
        """CAP at the baseline once the bucket is empty: >= 90 % of it in 99 % of seconds,
        <= 110 % on average. Drains the bucket first when the ledger says it holds credits.
        A hold the emulator left undecided (its seconds fell behind: the host's) is measured
        again holding the host alone, as a plain check is."""
        ledger, levels, hold, _ = self._baseline_after_knee_ready(workload)
        self._note_start(ledger)
        found, job, result, started = self._hold_baseline(claim, what, workload, ledger,
                                                          levels, hold)
        if found.outcome is Outcome.INCONCLUSIVE and found.binding == "emulator":
            with measuring(alone=True):  # the bucket earns while this waits: drained again
                again, job, again_result, _ = self._hold_baseline(claim, what, workload,
                                                                  ledger, levels, hold)
            if result.kept_as:
                keep_part(Path(result.kept_as), check=self.h.nodeid, phase="host-spoiled")
            found = measured_alone(again, found, len(result.emulator_behind))
            result = again_result
        return self.h.conclude(found, job, result, started)

    def _baseline_after_knee_ready(self, workload: Workload, *, hold: bool = True
                                   ) -> tuple[CreditLedger, Levels, float, Workload]:
        ledger, levels = self._setup(workload, hold=hold)
        self._require_knee(levels)
        hold_s = max(self.h.settings.runtime_s, HOLD_WINDOWS * self._window_s(),
                     self._can_fail_s())
        job, _, _, runtime = self._baseline_job(workload, ledger, levels, hold_s)
        self._require_time(runtime, "draining the bucket and holding the baseline")
        return ledger, levels, hold_s, job

    def _baseline_job(self, workload: Workload, ledger: CreditLedger, levels: Levels,
                      hold_s: float) -> tuple[Workload, float, Timing, float]:
        """Drain what the ledger says the bucket holds, then hold the baseline ``hold_s``:
        the job, the drain's seconds, their timing and the job's runtime."""
        lead = self._drain_s(ledger, levels)
        timing = self._timing(lead)
        runtime = (lead + timing.slack_s if lead else 0.0) + hold_s
        return self._timed(workload, runtime, levels), lead, timing, runtime

    def _hold_baseline(self, claim: str, what: str, workload: Workload, ledger: CreditLedger,
                       levels: Levels, hold: float
                       ) -> tuple[Verdict, Workload, FioResult, float]:
        """Drain what the ledger says the bucket holds, hold the baseline ``hold`` s, judge
        the seconds after the knee (CAP), book the empty bucket and draw the run."""
        job, lead, timing, runtime = self._baseline_job(workload, ledger, levels, hold)
        self._plan_note("baseline", lead, runtime)
        result, started = self._run(job, self._forecast("baseline", runtime, ledger, levels, job))
        knee, series = self._knee(result, levels)
        timing = dataclasses.replace(timing, observed_s=_span(series))
        found = self._judge_baseline(claim, what, job, result, knee, levels, timing,
                                     ledger.origin)
        found = dataclasses.replace(found, details={**found.details, "knee_facts": knee_facts(
            levels, timing, modelled=0.0, origin=ledger.origin, context="",
            window_s=self._window_s(), credit_per_unit=self._credit_per_unit(levels, job))})
        self._learn(ledger, knee, series, levels)
        draw_knee(self.h, self.book, what, result, levels, knee, timing,
                  model_curve(levels, lead if lead else None, runtime))
        return found, job, result, started

    def refill(self, claim: str, what: str, workload: Workload) -> Verdict:
        """TIME: after N idle seconds an empty bucket bursts N x baseline / (burst − baseline)."""
        ledger, levels, idle, drain_run, _ = self._refill_ready(workload)
        self._note_start(ledger)
        if drain_run:
            self._empty_bucket(claim, what, workload, ledger, levels, drain_run)

        with set_aside():  # idle: a comparison waiting on another worker may measure now
            self._idle(idle, ledger, levels)
        # (waiting to measure again idles longer: the ledger counts every idle second, and
        # the burst is timed against the balance it holds when the run starts)
        idled = self.clock() - (ledger.empty_at if ledger.empty_at is not None
                                else ledger.updated_at)
        context = (f"Idle {format_seconds(idled)} after the bucket ran dry earned "
                   f"{levels.earn * idled:,.0f} {levels.credit_unit} at the baseline rate.")
        return self._time_knee(claim, what, workload, ledger, levels, "refill", context,
                               floor_s=self._refill_floor_s())

    def _refill_ready(self, workload: Workload, *, hold: bool = True
                      ) -> tuple[CreditLedger, Levels, float, float, Workload]:
        """The ledger, levels, idle seconds, the drain run's seconds (0: already empty) and
        the first job (the drain, else the burst the idle time buys)."""
        ledger, levels = self._setup(workload, idles_first=True, hold=hold)
        self._require_knee(levels)
        # Idle until the next burst should last REFILL_SHARE of a full bucket's, or
        # REFILL_BURST_WINDOWS windows when that is shorter (all the logs can resolve).
        full_burst_s = ledger.plan.capacity / levels.drain
        burst_s = min(REFILL_SHARE * full_burst_s, REFILL_BURST_WINDOWS * self._window_s())
        idle = burst_s * levels.drain / levels.earn
        lead = self._drain_s(ledger, levels)
        drain_run = self._knee_run_s(lead) if lead else 0.0
        bought = idle * levels.earn / levels.drain
        self._require_time(drain_run + idle + self._knee_run_s(bought), "emptying the bucket, "
                           "idling and timing the burst the idle time bought")
        first = (self._timed(workload, drain_run, levels) if drain_run else
                 self._knee_job(workload, bought, levels, self._refill_floor_s())[0])
        return ledger, levels, idle, drain_run, first

    def _refill_floor_s(self) -> float:
        scale = self.book.timescale(self.h.volume)
        return min(REFILL_FLOOR_WINDOWS * self._window_s(), plain.TIME_MIN_ABS_S / scale)

    def _time_knee(self, claim: str, what: str, workload: Workload, ledger: CreditLedger,
                   levels: Levels, phase: str, context: str = "",
                   floor_s: float | None = None) -> Verdict:
        """Run at burst level from the ledger's balance until the knee and a few windows
        after it are seen (at most past the model's knee and its tolerance); judge when the
        knee came (TIME), book the empty bucket, draw it."""
        balance = ledger.at(self.clock())
        expected = balance / levels.drain
        job, timing, runtime = self._knee_job(workload, expected, levels, floor_s)
        self._plan_note(phase, expected, runtime)
        result, started = self._run(job, self._forecast(phase, runtime, ledger, levels, job),
                                    knee_monitor(levels, self._post_s(expected),
                                                 self._window_s()))
        knee, series = self._knee(result, levels)
        timing = dataclasses.replace(timing, observed_s=_span(series))
        per_unit = self._credit_per_unit(levels, job)
        found = judge_knee_time(claim, what, knee, levels, timing, consumed=consumed_credits(
            series, levels, per_unit, self._window_s()), modelled=balance,
            origin=ledger.origin, context=context, source=awsmodel.source_url(claim, ""))
        # what fio's output cannot hold (the balance before the run, the model's levels):
        # kept beside the run so that judge times its knee again
        found = dataclasses.replace(found, details={**found.details, "knee_facts": knee_facts(
            levels, timing, modelled=balance, origin=ledger.origin, context=context,
            window_s=self._window_s(), credit_per_unit=per_unit)})
        found = knee_held_back(found, result)
        self._learn(ledger, knee, series, levels)
        draw_knee(self.h, self.book, what, result, levels, knee, timing,
                  model_curve(levels, expected, runtime))
        return self.h.conclude(found, job, result, started)

    def no_knee(self, claim: str, what: str, workload: Workload) -> Verdict:
        """A volume whose baseline reaches its burst level holds it with no knee."""
        volume = self.h.volume
        levels, watch, job = self._no_knee_ready(workload)
        result, started = self._run(job, None)
        knee, series = self._knee(result, levels)
        timing = Timing(math.inf, 0.0, _span(series), self.book.timescale(volume))
        if knee.found:
            found = unexpected_knee(claim, what, knee, levels, self.h.volume)
        else:
            found = self._judge_cap(claim, what, job, result)
        draw_knee(self.h, self.book, what, result, levels, knee, timing,
                  model_curve(levels, None, watch))
        return self.h.conclude(found, job, result, started)

    def _no_knee_ready(self, workload: Workload, *, hold: bool = True
                       ) -> tuple[Levels, float, Workload]:
        volume = self.h.volume
        if awsmodel.has_burst(volume):
            raise NotApplicable(
                f"this {volume.label()} bursts above its baseline, so it has a knee (timed by "
                f"the burst-duration check); this claim is about {_no_knee_sizes(volume)}.")
        ledger, levels = self._setup(workload, hold=hold)
        watch = max(ledger.plan.capacity / max(levels.burst_credits, 1e-9), self._can_fail_s())
        self._require_time(watch, "watching for a knee")
        return levels, watch, self._timed(workload, watch, levels)

    # -- setup ---------------------------------------------------------------------------
    def first_job(self, name: str, workload: Workload) -> Workload:
        """The first fio job check ``name`` would run (the dry run asks): its preconditions
        are checked (NotApplicable), nothing runs, waits or holds the host."""
        ready = getattr(self, f"_{name}_ready")
        return ready(workload, hold=False)[-1]  # type: ignore[no-any-return]

    def _setup(self, workload: Workload, *, idles_first: bool = False, hold: bool = True
               ) -> tuple[CreditLedger, Levels]:
        """Ledger and levels; the measuring hold is taken before a balance is read (not
        with ``hold`` False: a dry run)."""
        volume = self.h.volume
        ledger = self.book.ledger(volume)  # checks run on the device, never the twin
        if ledger is None:
            raise NotApplicable(f"{volume.type} volumes have no burst bucket; credit checks "
                                f"apply to {awsmodel.bursting_names()}.")
        full = volume.replace(burst_balance_pct=100.0)
        metric = "throughput" if spends_mib(volume.type) else "iops"
        burst = awsmodel.cap_expectation("", "", full, workload, credits=True, metric=metric)
        base = awsmodel.cap_expectation("", "", volume.replace(burst_balance_pct=0.0), workload,
                                    credits=False, metric=metric)
        ios_per_value = 1.0 / workload.bs if metric == "throughput" else 1.0
        cost = credit_cost_per_io(volume, workload)
        levels = Levels(burst.unit, burst.value, base.value,
                        burst.value * ios_per_value * cost, ledger.plan.earn_rate,
                        ledger.plan.unit)
        if hold and (not idles_first or levels.drain <= 0 or self._drain_s(ledger, levels)):
            hold_now()
        return ledger, levels

    def _require_knee(self, levels: Levels) -> None:
        if levels.drain <= 0:
            volume = self.h.volume
            raise NotApplicable(
                f"this {volume.label()} runs at {levels.q(levels.baseline)} with or without "
                "credits (its baseline reaches the burst level): it has no knee to time; "
                "the no-knee check covers it.")

    def _no_credits(self, ledger: CreditLedger) -> str:
        now = self.clock()
        return (f"no credits to time: the model puts this {self.h.volume.label()}'s bucket at "
                f"{ledger.describe(now)}. Let it refill (the refill check times that) or pass "
                "--burst-balance once CloudWatch BurstBalance shows credits.")

    def _note_start(self, ledger: CreditLedger) -> None:
        """The report row says what the model assumed at the start (assumed full, given...)."""
        self.h.notes.append(f"credits at start: {ledger.describe(self.clock())}")
        self.h.notes.extend(ledger.notes)
        scale = self.book.timescale(self.h.volume)
        if scale != 1.0:
            self.h.notes.append(f"emulated bucket at time scale {scale:,.4g} (times x "
                                f"{scale:,.4g} on a real volume)")

    def _timing(self, expected_s: float, floor_s: float | None = None) -> Timing:
        scale = self.book.timescale(self.h.volume)
        # The TIME policy's 120 s floor is the granularity of what AWS reports (CloudWatch
        # minutes). A scaled bucket shrinks it alike, but never below one log window: fio
        # reports nothing finer, so a tighter tolerance would judge noise. A start this
        # check observed itself (``floor_s``) needs no CloudWatch minute.
        floor = max(plain.TIME_MIN_ABS_S / scale if floor_s is None else floor_s,
                    self._window_s())
        return Timing(expected_s, floor, 0.0, scale)

    def _plan_note(self, phase: str, expected_s: float, runtime_s: float) -> None:
        """Say before the run how long it will take and what ends it early."""
        self.h.notes.append(
            f"{phase} run: at most {format_seconds(runtime_s)} (model's knee at "
            f"{format_seconds(expected_s)} plus its tolerance); it stops once the knee "
            f"and {format_seconds(self._post_s(expected_s))} after it are seen")


    def _can_fail_s(self) -> float:
        """The seconds a CAP's count needs to FAIL at all at the run's level."""
        policy, duty = self.h.session.policy, awsmodel.volume_type(self.h.volume.type).duty
        return self._window_s() * evidence.decidable_runtime_s(evidence.windows_to_fail(duty, policy))

    def _window_s(self) -> float:
        return getattr(self.h.session.runner, "log_interval_ms", 1000) / 1000.0

    def _post_s(self, expected_s: float) -> float:
        return max(POST_WINDOWS * self._window_s(), 0.05 * expected_s)

    def _knee_run_s(self, expected_s: float) -> float:
        """A run long enough to see a knee the model puts at ``expected_s``: the model's
        time, its TIME tolerance (a late knee is still judged) and a few windows after."""
        return expected_s + self._timing(expected_s).slack_s + self._post_s(expected_s)

    def _drain_s(self, ledger: CreditLedger, levels: Levels) -> float:
        seconds = ledger.at(self.clock()) / levels.drain
        return seconds if seconds >= EMPTY_BURST_S else 0.0

    def _require_time(self, seconds: float, doing: str) -> None:
        if seconds <= LONG_CHECK_S or self.h.settings.long:
            return
        volume = self.h.volume
        where = f"this {volume.label()}"
        hint = "pass --ebsperf-long"
        if self.h.settings.emulate:
            scale = self.book.timescale(volume)
            where = f"this emulated {volume.label()} (time scale {scale:,.4g})"
            hint += " or a larger --emulate-timescale"
        raise NotApplicable(f"{doing} needs about {seconds:,.0f} s on {where}; {hint}.")

    def _knee_job(self, workload: Workload, expected_s: float, levels: Levels,
                  floor_s: float | None = None) -> tuple[Workload, Timing, float]:
        """A burst-level job that sees a knee the model puts at ``expected_s``, its timing
        and runtime (the model's time, the TIME tolerance and a few windows after)."""
        timing = self._timing(expected_s, floor_s)
        runtime = expected_s + timing.slack_s + self._post_s(expected_s)
        return self._timed(workload, runtime, levels), timing, runtime

    def _timed(self, workload: Workload, runtime_s: float, levels: Levels) -> Workload:
        """A time-based job of ``runtime_s`` with no ramp (the ramp would hide the start of
        the burst) and a queue depth for the burst level, not the level credits allow now."""
        s = self.h.settings
        iops = levels.burst / workload.bs if levels.unit == "B/s" else levels.burst
        planned = awsmodel.plan_queue(self.h.volume, workload, iops,
                                  cpu_count=self.h.session.cpu_count, iodepth=s.iodepth,
                                  numjobs=s.numjobs, at_least=True)
        return planned.replace(runtime_s=math.ceil(runtime_s * 10) / 10, ramp_s=0.0)

    # -- running -------------------------------------------------------------------------
    def _run(self, job: Workload, forecast: Forecast | None,
             monitor: Monitor | None = None) -> tuple[FioResult, float]:
        started = time.perf_counter()
        self._io_end = self.clock() + job.runtime_s  # when fio stops issuing I/O
        with self._progress(forecast):
            result = self.h.run(job, phase="time-series", monitor=monitor)
        if result.stop_reason:  # stopped once settled: the load ended then
            self._io_end = min(self._io_end, self.clock())
        return result, started

    @contextlib.contextmanager
    def _progress(self, forecast: Forecast | None) -> Iterator[None]:
        writer = self.book.progress
        if writer is None or forecast is None:
            yield
            return
        local = self.h.settings.host in ("", "local://")
        counter = device_counter(self.h.target.path,
                                 None if local else self.h.session.runner.host)
        with ProgressMonitor(writer, counter, forecast):
            yield

    def _forecast(self, phase: str, total_s: float, ledger: CreditLedger, levels: Levels,
                  job: Workload) -> Forecast:
        return Forecast(phase, total_s, ledger.at(self.clock()), levels.earn,
                        ledger.plan.capacity, credit_cost_per_io(self.h.volume, job), job.bs,
                        levels.credit_unit, throughput=levels.unit == "B/s",
                        burst_drain=levels.drain)

    def _idle(self, seconds: float, ledger: CreditLedger, levels: Levels) -> None:
        with self._progress(dataclasses.replace(self._forecast(
                "refill", seconds, ledger, levels, Workload("randread")), idle=True)):
            time.sleep(seconds)

    def _empty_bucket(self, claim: str, what: str, workload: Workload, ledger: CreditLedger,
                      levels: Levels, runtime: float) -> None:
        job = self._timed(workload, runtime, levels)
        lead = self._drain_s(ledger, levels)
        self._plan_note("drain", lead, runtime)
        result, started = self._run(job, self._forecast("drain", runtime, ledger, levels, job),
                                    knee_monitor(levels, self._post_s(lead), self._window_s()))
        knee, series = self._knee(result, levels)
        if not self._learn(ledger, knee, series, levels):
            reason = (f"inconclusive: the bucket did not run dry within "
                      f"{format_seconds(_span(series))} (still at "
                      f"{levels.q(knee.before)}), so the refill could not be timed; the "
                      "burst-duration check says by how much the bucket outlasted the model")
            self.h.conclude(Verdict(Outcome.INCONCLUSIVE, claim, what, None, None, "s",
                                    "burst credits", reason, f"{what}: {reason}.", "TIME"),
                            job, result, started)

    # -- analysis ------------------------------------------------------------------------
    def _knee(self, result: FioResult, levels: Levels) -> tuple[Knee, Series]:
        series = result.series.get(levels.key) or Series()
        if not len(series):
            raise NotApplicable("fio logged no per-second series for this run, so no knee "
                                "can be found (is write_iops_log supported by this fio?).")
        return knee_of(series, levels, self._window_s()), series

    def _credit_per_unit(self, levels: Levels, job: Workload) -> float:
        """Credits one unit of the series (an I/O, or a byte) costs."""
        return (1.0 / job.bs if levels.unit == "B/s" else 1.0) * credit_cost_per_io(
            self.h.volume, job)

    def _learn(self, ledger: CreditLedger, knee: Knee, series: Series, levels: Levels) -> bool:
        """After a run that ended at the baseline under load, the bucket is empty."""
        tail = series.values[-min(3, len(series)):]
        if not tail or statistics.median(tail) >= levels.middle:
            return False
        why = f"knee at {knee.t_s:,.1f} s" if knee.t_s is not None else "ran at baseline"
        # The bucket refills from the moment the load stopped, not from when fio's report
        # and logs were read back.
        ledger.observe_empty(min(self.clock(), self._io_end), why)
        return True

    def _judge_baseline(self, claim: str, what: str, job: Workload, result: FioResult,
                        knee: Knee, levels: Levels, timing: Timing, origin: str) -> Verdict:
        if not knee.found and knee.before >= levels.middle:
            # Still bursting at the end: the level after the knee was never seen.
            return knee_held_back(judge_knee_time(
                claim, what, knee, levels, timing, consumed=0.0, modelled=0.0, origin=origin,
                source=awsmodel.source_url(claim, "")), result)
        settled = trim_result(result, first_settled_s(knee)) if knee.found else result
        return self._judge_cap(claim, what, job, settled)

    def _judge_cap(self, claim: str, what: str, job: Workload, result: FioResult) -> Verdict:
        volume = self.h.volume
        metric = "throughput" if spends_mib(volume.type) else "iops"
        expectation = awsmodel.cap_expectation(claim, what, volume.replace(burst_balance_pct=0.0),
                                             job, credits=False, metric=metric)
        return verdict.judge_cap(expectation, result, job, metric=metric,
                                 cpu_count=self.h.session.cpu_count, policy=self.h.session.policy)


def knee_monitor(levels: Levels, post_s: float, window: float) -> Monitor:
    """Stop a knee run once the knee is found and the level after it held ``post_s``."""

    def monitor(series: LiveSeries) -> str | None:
        values = series.values(levels.key)
        count = len(values)
        # find_knee is linear: every window at first, then about fifty looks per run
        if count < 4 or (count > 100 and count % (count // 50)):
            return None
        ends = list(itertools.accumulate(series.window_s))
        knee = burst_end(find_knee(values, ends, window_s=window, describe=levels.q),
                         values, levels)
        if knee.found and knee.t_s is not None and ends[-1] - knee.t_s >= post_s:
            return (f"the knee came at {format_seconds(knee.t_s)} and the lower "
                    f"level held {format_seconds(ends[-1] - knee.t_s)} after it")
        return None

    return monitor
