"""A dry run: what each selected check would do, without starting fio (``--ebsperf-plan``,
``ebsperf plan``; fio's own ``--showcmd`` is the model).

For every check the plan names its claim, the first fio command line it would run (against
the device it would run on), the figure the model expects of the volume, and how long the
check takes: typically (a healthy volume, decided at the first look) and at the longest (every
look, a confirming stage, a deeper-queue confirmation). The estimate adds, per fio run, its
ramp, its measuring seconds and fio's start (:data:`FIO_START_S`), and the idle time a credit
check spends on purpose.

    ebsperf plan suites/io1 --device=/dev/nvme1n1 --volume-type=io1 --volume-size=200 \\
        --volume-iops=2000
"""

from __future__ import annotations

import math
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_ebsperf import awsmodel
from pytest_ebsperf.awsmodel.init_rate import init_rate_expectation
from pytest_ebsperf.awsmodel.volume_types import is_instance_store
from pytest_ebsperf.checks import paired
from pytest_ebsperf.checks.restored import init_rate_of
from pytest_ebsperf.credits import checks as credit
from pytest_ebsperf.fio.jobs import fio_argv
from pytest_ebsperf.units import format_quantity
from pytest_ebsperf.verdicts.diagnosis import probe_queue_depth
from pytest_ebsperf.verdicts.evidence import MAX_DECIDING_WAIT_S

#: Seconds fio takes to start and stop around a run (measured on this machine: 0.4-0.5 s for
#: an emulated volume; a real device's first open and layout can take longer).
FIO_START_S = 0.45
#: Pairs a comparison usually needs on a healthy volume (its first look).
TYPICAL_PAIRS = 4


@dataclass(frozen=True)
class PlanEntry:
    """One check of the plan."""

    nodeid: str
    claim: str
    what: str
    command: str
    expected: str
    typical_s: float
    longest_s: float
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"nodeid": self.nodeid, "claim": self.claim, "what": self.what,
                "fio": self.command, "expected": self.expected,
                "typical_s": round(self.typical_s, 1), "longest_s": round(self.longest_s, 1),
                "note": self.note}


def entry(runner: Any, method: str, first: Any, args: Sequence[Any],
          kwargs: Mapping[str, Any]) -> PlanEntry:
    """The plan's entry for check ``method`` called with ``args`` and ``kwargs``, which would
    run ``first`` first (a (workload, target) pair, or the sentence saying why no fio runs).
    A write the run would refuse without ``--ebsperf-destructive`` skips: the plan leaves
    it out."""
    claim, what = (str(args[0]) if args else ""), (str(args[1]) if len(args) > 1 else "")
    nodeid = getattr(runner, "nodeid", "")
    if isinstance(first, str):
        return PlanEntry(nodeid, claim, what, f"(no fio: {first})", "-", 0.0, 0.0)
    workload, target = first
    s = runner.settings  # volumes this run makes (emulated, provisioned) take writes
    if workload.writes and not (target.emulated_any or s.emulate or s.provision
                                or s.destructive):
        runner.skip(f"writes to {target.path} need --ebsperf-destructive: this check would "
                    "skip, so the plan leaves it out")
    typical, longest, note = estimate(method, runner, workload, args, kwargs)
    return PlanEntry(nodeid, claim, what, fio_command(runner, workload, target),
                     expected_text(runner, workload, method, kwargs), typical, longest, note)


def fio_command(runner: Any, workload: Any, target: Any) -> str:
    """The fio command line a run of ``workload`` on ``target`` would be (paths of its
    output and logs shown as fio's defaults would name them)."""

    engine = workload.engine if workload.engine != "auto" else "libaio"
    try:
        argv = fio_argv(workload, target.fio_filename, output_path="fio.json",
                        log_prefix="fio", readonly=not workload.writes, engine=engine,
                        fio=runner.settings.fio)
    except Exception as exc:  # noqa: BLE001 - a plan says what it cannot show
        return f"(not shown: {exc})"
    return shlex.join(argv)


def _run_s(workload: Any) -> float:
    return float(workload.ramp_s + workload.runtime_s + FIO_START_S)


def estimate(method: str, runner: Any, workload: Any, args: Sequence[Any],
             kwargs: Mapping[str, Any]) -> tuple[float, float, str]:
    """(typical, longest, note) seconds of ``method`` whose first fio run is ``workload``."""

    one = _run_s(workload)
    if method in ("check_faster_than", "check_rel", "check_encrypted_twin"):
        block = paired.twin_block(workload, runner.settings)
        pair = 2 * _run_s(block)
        terms = 1 if method == "check_faster_than" else 2  # S2-17: IOPS and latency
        return (terms * TYPICAL_PAIRS * pair, terms * 64 * pair,
                f"{TYPICAL_PAIRS} pairs of {block.runtime_s:g} s blocks per term, up to 64")
    if method in ("check_first_write", "check_write_after_trim"):
        trim = 0.5 + FIO_START_S
        round_s = trim + 2 * _run_s(workload)
        fill = 0.0
        if method == "check_write_after_trim":
            fill = one  # the fill's planned time (what ran first)
            round_s = _run_s(paired.block_workload(workload, runner.settings)) * 2 + trim
        return fill + TYPICAL_PAIRS * round_s, fill + 64 * round_s, "rounds of TRIM + 2 writes"
    if method == "check_stability":
        return runner.settings.runs * one, runner.settings.runs * one, \
            f"{runner.settings.runs} runs"
    if method == "check_sweep":
        sizes = runner.settings.sweep_sizes_bytes or (args[3] if len(args) > 3 else ())
        count = len(sizes) if sizes else 1
        return count * one, count * (one + _run_s(workload) * 2), f"{count} block sizes"
    if method in ("check_burst_duration", "check_baseline_after_knee", "check_refill",
                  "check_no_knee"):
        return _credit_estimate(method, runner, workload)
    # a rate: one run (stopped once settled), a deeper-queue confirmation and a rerun at most

    longest = 2 * one + _run_s(probe_queue_depth(workload))
    # a duty cycle planned longer than the runtime so that its test can FAIL at all stops,
    # on a healthy volume, within the runtime (docs/verdicts.md)
    settled = min(float(workload.runtime_s), float(runner.settings.runtime_s))
    typical = _run_s(workload.replace(runtime_s=settled))
    note = (f"planned {workload.runtime_s:g} s so a miss can be judged; a healthy volume "
            f"stops within {settled:g} s" if settled < workload.runtime_s else "")

    if awsmodel.has_burst(runner.volume) and not runner.settings.given("runtime"):
        # a burst bucket too low for a run that can decide: after a miss, an idle wait for
        # the credits and a fresh run (RateChecks._too_short)

        longest += MAX_DECIDING_WAIT_S + one
        wait = (f"at most {MAX_DECIDING_WAIT_S:g} s idle and a fresh run when the bucket is "
                "too low to decide")
        note = f"{note}; {wait}" if note else wait
    return typical, longest, note


def _credit_estimate(method: str, runner: Any, workload: Any) -> tuple[float, float, str]:

    cc = credit.CreditChecks(runner)
    ledger, levels = cc._setup(workload, hold=False)
    if levels.drain <= 0:
        return 0.0, 0.0, "no knee to time"
    lead = cc._drain_s(ledger, levels)
    if method == "check_burst_duration":
        expected = ledger.at(cc.clock()) / levels.drain
        return expected + FIO_START_S + workload.ramp_s + cc._post_s(expected), \
            cc._knee_run_s(expected) + FIO_START_S + workload.ramp_s, "until the knee"
    if method == "check_baseline_after_knee":
        hold = max(runner.settings.runtime_s, credit.HOLD_WINDOWS * cc._window_s())
        return lead + hold + FIO_START_S, cc._knee_run_s(lead) + hold + FIO_START_S, \
            "drain, then the baseline"
    if method == "check_refill":
        full_burst = ledger.plan.capacity / levels.drain
        burst = min(credit.REFILL_SHARE * full_burst, credit.REFILL_BURST_WINDOWS *
                    cc._window_s())
        idle = burst * levels.drain / levels.earn
        drain = cc._knee_run_s(lead) if lead else 0.0
        typical = (lead if lead else 0.0) + idle + burst + 2 * FIO_START_S
        return typical, drain + idle + cc._knee_run_s(burst) + 2 * FIO_START_S, \
            f"drain, {idle:,.0f} s idle, the burst it bought"
    watch = ledger.plan.capacity / max(levels.burst_credits, 1e-9)
    return watch + FIO_START_S, watch + FIO_START_S, "watching for a knee"


def expected_text(runner: Any, workload: Any, method: str,
                  kwargs: Mapping[str, Any] | None = None) -> str:
    """The figure the model expects of this volume for ``workload``."""

    metric = (kwargs or {}).get("metric", "iops")
    try:
        if method == "check_initialization_rate":
            rate, _ = init_rate_of(runner)
            caps = awsmodel.limits(runner.volume, workload,
                               instance_limits=runner.session.instance_limits)
            found = init_rate_expectation("", "", runner.volume, workload, rate or 0.0,
                                          caps=caps)
            return f"{format_quantity(found.value, found.unit)} (B-INIT first-read floor)"
        if is_instance_store(runner.volume.type):

            return format_quantity(awsmodel.instance_store_rate(runner.volume, workload), "IOPS")
        # the baseline after the knee is judged on an empty bucket's level
        found = runner.expect_cap("", "", workload, metric=metric, credits=(
            False if method == "check_baseline_after_knee" else None))
    except Exception:  # noqa: BLE001 - best effort volumes, sets without facts
        return "-"
    if not math.isfinite(found.value):
        return "recorded (best effort)"
    shown = format_quantity(found.value, found.unit)
    return shown if found.binding is None else f"{shown} ({found.binding.name})"


def table(entries: Sequence[PlanEntry], width: int | None) -> list[str]:
    """The plan as lines: a check per entry, its fio command beneath, then the total."""
    lines = []
    for entry in entries:
        lines.append(f"{entry.claim:<8} {entry.what[:60]:<60} {entry.expected} | about "
                     f"{entry.typical_s:,.0f} s, at most {entry.longest_s:,.0f} s"
                     + (f" ({entry.note})" if entry.note else ""))
        lines.append(f"  $ {entry.command}")
    typical = sum(e.typical_s for e in entries)
    longest = sum(e.longest_s for e in entries)
    lines.append(f"{len(entries)} check(s): about {typical:,.0f} s of measuring one after "
                 f"another, at most {longest:,.0f} s. No fio was started.")
    return lines


def plan_main(argv: Sequence[str]) -> int:
    """``ebsperf plan [PYTEST ARGS]``: pytest's collection with ``--ebsperf-plan``."""

    if any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        return 0
    # a pytest of its own (this process imported the plugin before pytest could)
    code = subprocess.call([sys.executable, "-m", "pytest", "--ebsperf-plan", "-q", "-p",
                            "no:cacheprovider", *argv])
    return 0 if code in (0, 5) else code


if __name__ == "__main__":
    sys.exit(plan_main(sys.argv[1:]))
