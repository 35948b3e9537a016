"""Relative claims: one job on the device under test and on its reference twin.

* :func:`check_same` - the twins give the same IOPS (within 5 %) and the same median latency
  at QD 1 (REL equivalence; S2-17's terms).
* :func:`check_encrypted_twin` - S2-17 itself: the same, once the facts say which twin is
  encrypted (:mod:`pytest_ebsperf.checks.twins`).
* :func:`check_faster_than` - REL "at least": the device runs the job at least N x as fast
  as a twin of another type (S0-08: gp2 vs Magnetic on seed 000's job, 3 x).

The twins are measured in paired alternating blocks, each a fresh fio run
(:mod:`pytest_ebsperf.checks.paired`, :mod:`pytest_ebsperf.verdicts.comparison`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pytest_ebsperf import awsmodel
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.checks import discovery, paired, twins
from pytest_ebsperf.checks.core import CheckCore, FirstRun
from pytest_ebsperf.emulate.target import SuiteMismatch
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.verdicts import comparison, verdict
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict
from pytest_ebsperf.verdicts.paired_verdicts import median_latency_ns

if TYPE_CHECKING:
    from pytest_ebsperf.emulate.target import Target

def check_same(runner: CheckCore, claim: str, what: str, workload: Workload, *,
               labels: tuple[str, str] | None = None) -> list[Verdict]:
    """IOPS within 5 % and median latency at QD 1 within 10 % + 0.05 ms, each in paired
    blocks (device, twin, device, twin ...) until the sequential design decides. An
    INCONCLUSIVE term does not stop the other: both are measured, then the check's outcome
    is decided. The check's share of the false-red budget is split over its two terms."""
    with runner.as_one_check(), paired.held(runner, runner.reference):
        return _check_same(runner, claim, what, workload, labels)


def _check_same(runner: CheckCore, claim: str, what: str, workload: Workload,
                labels: tuple[str, str] | None) -> list[Verdict]:
    reference = runner.reference
    mine_label, theirs_label = labels or (runner.target.label, reference.label)
    policy = runner.session.policy.split(2)
    block = paired.twin_block(workload, runner.settings)
    design = comparison.ratio_design(comparison.WITHIN, verdict.REL_MAX_RATIO_DEV,
                                     fail_alpha=policy.alpha, pass_alpha=policy.pass_alpha)
    runner.announce(f"{claim}: {what}, IOPS: pairs of {block.runtime_s:g} s blocks on "
                    f"{mine_label} and {theirs_label}")

    def iops_pair(index: int) -> paired.Pair:
        mine, theirs = paired.in_balanced_order(
            index, lambda: runner.run(block, phase="pair"),
            lambda: runner.run(block, target=reference, phase="pair"))
        return mine.total_iops, theirs.total_iops, mine, theirs

    started = time.perf_counter()
    seq, blocks, last = paired.measure(design, iops_pair, paired.log_ratio, block=block,
                                       again_when_spoiled=True)
    found = paired.ratio_verdict(seq, blocks, claim=claim, what=f"{what}, IOPS",
                                 a_label=mine_label, b_label=theirs_label)
    found = paired.emulator_spoiled(found, blocks, mine_label, theirs_label)
    found = paired.measured_again(found, blocks, mine_label, theirs_label)
    verdicts = [_conclude(runner, found, block, last, started)]
    # Latency at the cap is the queue's wait (QD / IOPS) on both twins alike: what one
    # I/O costs is measured with one I/O outstanding, on both twins in turn.
    single = block.replace(iodepth=1, numjobs=1)
    latency_design = comparison.Design(comparison.AT_MOST, high=0.0, fail_alpha=policy.alpha,
                                       pass_alpha=policy.pass_alpha)

    def latency_pair(index: int) -> paired.Pair:
        mine, theirs = paired.in_balanced_order(
            index, lambda: runner.run(single, phase="pair"),
            lambda: runner.run(single, target=reference, phase="pair"))
        a, b = median_latency_ns(mine), median_latency_ns(theirs)
        return a or 0.0, b or 0.0, mine, theirs

    def excess(a: float, b: float) -> float:
        return a - (verdict.REL_LATENCY_FACTOR * b + verdict.REL_LATENCY_SLACK_NS)

    started = time.perf_counter()
    # emulated twins hold fio's QD-1 median at their setting, the statistic judged here
    with runner.target.latency_following("median"), reference.latency_following("median"):
        seq, blocks, last = paired.measure(latency_design, latency_pair, excess, block=single,
                                           again_when_spoiled=True)
    latency = paired.latency_verdict(
        seq, blocks, claim=claim, what=f"{what}, median latency at QD 1", a_label=mine_label,
        b_label=theirs_label, factor=verdict.REL_LATENCY_FACTOR,
        slack_ns=verdict.REL_LATENCY_SLACK_NS)
    latency = paired.emulator_spoiled(latency, blocks, mine_label, theirs_label)
    latency = paired.measured_again(latency, blocks, mine_label, theirs_label)
    verdicts.append(_conclude(runner, latency, single, last, started))
    return verdicts


def _conclude(runner: CheckCore, found: Verdict, workload: Workload,
              result: FioResult | None, started: float) -> Verdict:
    if result is None:
        return runner.conclude_plain(found)
    return runner.conclude(found, workload, result, started)


def check_encrypted_twin(runner: CheckCore, claim: str, what: str, workload: Workload
                         ) -> list[Verdict]:
    """S2-17 on the twins the facts describe: one encrypted, one plain, of one type."""
    facts, pair = _encryption_pair(runner, claim)
    if pair.status == "unknown":
        return [runner.conclude_plain(Verdict(
            Outcome.INCONCLUSIVE, claim, what, None, None, "ratio", "encryption unknown",
            "inconclusive: which twin is encrypted is unknown", f"{what}: {pair.sentence} "
            f"Nothing was measured. Claim {claim}", "REL",
            {"device_encrypted": facts.device_encrypted.value,
             "reference_encrypted": facts.reference_encrypted.value}))]
    runner.notes.append(pair.sentence)
    mine, theirs = runner.target.label, runner.reference.label
    labels = ((f"encrypted {mine}", f"plain {theirs}") if pair.encrypted == "device"
              else (f"plain {mine}", f"encrypted {theirs}"))
    return check_same(runner, claim, what, workload, labels=labels)


def _encryption_pair(runner: CheckCore, claim: str) -> tuple[Any, Any]:
    """The twins' facts and which is encrypted (a skip when they are not such twins)."""
    facts = discovery.twin_facts(runner.session, runner.volume)
    pair = twins.encryption_pair(facts, claim)
    if pair.status in ("other", "contradiction"):
        runner.skip(pair.sentence)  # (a contradiction stops the run at its start)
    return facts, pair


def check_faster_than(runner: CheckCore, claim: str, what: str, workload: Workload, *,
                      reference_type: str, at_least: float, notes: Sequence[str] = ()
                      ) -> Verdict:
    """The device runs ``workload`` at least ``at_least`` x as fast as its
    ``reference_type`` twin: the ratio of their IOPS in paired blocks (device, twin, device,
    twin ...), PASS when its lower bound clears ``at_least``, FAIL when a first stage and a
    fresh confirming stage both put it below, else INCONCLUSIVE. A device that bursts on
    credits is measured only while its bucket can carry a block, and a block in which the
    burst ended stops the pairs (a claim about the burst is not judged on the baseline)."""
    pair, reference = _typed_twin(runner, claim, reference_type)
    block = paired.twin_block(workload, runner.settings)
    policy = runner.session.policy
    design = comparison.ratio_design(comparison.AT_LEAST, at_least, fail_alpha=policy.alpha,
                                     pass_alpha=policy.pass_alpha)
    burst = _burst_levels(runner, block)
    said: list[str] = []
    runner.announce(f"{claim}: pairs of {block.runtime_s:g} s blocks on "
                    f"{runner.target.label} and {reference.label}")

    def one_pair(index: int) -> paired.Pair:
        if burst is not None:
            problem = runner.session.credits.burst_shortfall(
                runner.volume, block.runtime_s + block.ramp_s)
            if problem:
                raise paired.PairsStopped(f"before pair {index + 1}: {problem}")
        mine, theirs = paired.in_balanced_order(
            index, lambda: runner.run(block, phase="pair"),
            lambda: runner.run(block, target=reference, phase="pair"))
        if burst is not None:
            stop, contradiction = _burst_ended(runner, mine, burst, index)
            if stop:
                raise paired.PairsStopped(stop)
            if contradiction and not said:
                said.append(contradiction)  # the volume, not its bucket: judged, and said
        return mine.total_iops, theirs.total_iops, mine, theirs

    started = time.perf_counter()
    with paired.held(runner, reference):
        seq, blocks, last = paired.measure(design, one_pair, paired.log_ratio, block=block)
    found = paired.ratio_verdict(seq, blocks, claim=claim, what=what,
                                 a_label=runner.target.label, b_label=reference.label,
                                 notes=[*said, pair.sentence + ".", *notes])
    found = paired.emulator_spoiled(found, blocks, runner.target.label, reference.label)
    return _conclude(runner, found, block, last, started)


def _burst_levels(runner: CheckCore, block: Workload) -> tuple[float, float] | None:
    """(burst, baseline) IOPS of a device that bursts on credits for ``block``; None when it
    has no bucket (or its baseline reaches the burst)."""

    volume = runner.volume
    if not awsmodel.has_burst(volume):
        return None
    burst = runner.expect_cap("", "", block, credits=True).value
    baseline = runner.expect_cap("", "", block, credits=False).value
    if not (burst > baseline > 0):
        return None
    return burst, baseline


def _burst_ended(runner: CheckCore, result: FioResult, levels: tuple[float, float],
                 index: int) -> tuple[str, str]:
    """(why the pairs stop, what the volume contradicts) when the device's block ran at
    about its baseline: a bucket the credit ledger says is spent ends the pairs (a claim
    about the burst is not judged on the baseline); a bucket the ledger (from
    --burst-balance, or a full one assumed) says holds credits is the volume's own doing,
    judged, and named as a contradiction of the balance. ("", "") when it burst."""
    burst, baseline = levels
    middle = (burst + baseline) / 2.0
    values = verdict.series_values(result, "total_iops")
    below = sum(1 for v in values if v < middle)
    if not values or (below * 2 < len(values) and result.total_iops >= middle):
        return "", ""
    seen = (f"in pair {index + 1} {runner.target.label} ran at about its baseline "
            f"({result.total_iops:,.0f} IOPS, below the middle between its burst "
            f"{burst:,.0f} and baseline {baseline:,.0f})")
    ledger = runner.session.credits.ledger(runner.volume)
    if ledger is None:
        return f"{seen}: its burst credits ran out", ""
    left = ledger.at(runner.session.credits.clock())
    block_s = (result.read.runtime_ms or result.write.runtime_ms) / 1000.0 or 1.0
    if left < ledger.plan.credits_needed(block_s):
        return f"{seen}: its burst credits ran out", ""
    given = runner.volume.burst_balance_pct
    origin = (f"--burst-balance={given:g}" if given is not None
              else "an assumed full bucket (BurstBalance unknown)")
    return "", (f"No burst where the balance says there must be one: {seen}, although "
                f"{origin} and the runs since leave it about {left:,.0f} {ledger.plan.unit}. "
                "Is the balance current, and the bucket the size the model says?")


def _typed_twin(runner: CheckCore, claim: str, reference_type: str) -> tuple[Any, Target]:
    """The twins as the facts pair them and the ``reference_type`` twin (a skip when they
    are not such twins)."""
    facts = discovery.twin_facts(runner.session, runner.volume, reference_type)
    pair = twins.type_pair(facts, reference_type, claim)
    if pair.status != "ok":
        runner.skip(pair.sentence)
    return pair, _reference_of_type(runner, reference_type)


def _reference_of_type(runner: CheckCore, vtype: str) -> Target:
    """The twin of another type: emulated as that type's volume of the device's size (in
    the type's range), else --reference-device with the facts discovery found."""

    session = runner.session
    found = session.reference_found
    if session.settings.emulate or found is None or found.type != vtype:
        low, high = awsmodel.volume_type(vtype).size_gib or (1, 16_384)
        size = min(max(runner.volume.size_gib or low, low), high)
        volume = awsmodel.validate(Volume(vtype, size_gib=size))
    else:
        volume = found
    try:
        return session.target_for(volume, "reference")
    except SuiteMismatch as exc:
        runner.skip(str(exc))


class RelativeChecks:
    """The device under test against its reference twin (REL)."""

    def __init__(self, core: CheckCore) -> None:
        #: The runner's core: the volume, its devices, one fio run, concluding.
        self.core = core

    def check_rel(self, claim: str, what: str, workload: Workload) -> list[Verdict]:
        """Run ``workload`` on the device and on its reference twin; judge IOPS and median
        latency as relative claims (REL): the twins give the same."""
        return check_same(self.core, claim, what, workload)

    def check_encrypted_twin(self, claim: str, what: str, workload: Workload
                             ) -> list[Verdict]:
        """S2-17: :meth:`check_rel` on an encrypted volume and its plain twin, once the
        facts say which is which (given or discovered; emulated twins are marked).
        INCONCLUSIVE before any fio run when nothing says which twin is encrypted."""
        return check_encrypted_twin(self.core, claim, what, workload)

    def check_faster_than(self, claim: str, what: str, workload: Workload, *,
                          reference_type: str, at_least: float, notes: Sequence[str] = ()
                          ) -> Verdict:
        """REL "at least": ``workload`` runs at least ``at_least`` x as fast on the device as
        on a ``reference_type`` twin (S0-08: gp2 vs Magnetic, 3 x)."""
        return check_faster_than(self.core, claim, what, workload, reference_type=reference_type,
                                 at_least=at_least, notes=notes)

    # what each would run first (the dry run asks; Check.first_run): the device's first block
    def first_check_rel(self, claim: str, what: str, workload: Workload) -> FirstRun:
        self.core.reference  # noqa: B018 - the twin, taken as the check takes it (or skipped)
        return paired.twin_block(workload, self.core.settings), self.core.target

    def first_check_encrypted_twin(self, claim: str, what: str, workload: Workload
                                   ) -> FirstRun:
        pair = _encryption_pair(self.core, claim)[1]
        if pair.status == "unknown":
            return f"which twin is encrypted is unknown: {pair.sentence}"
        return self.first_check_rel(claim, what, workload)

    def first_check_faster_than(self, claim: str, what: str, workload: Workload, *,
                                reference_type: str, at_least: float,
                                notes: Sequence[str] = ()) -> FirstRun:
        _typed_twin(self.core, claim, reference_type)
        return paired.twin_block(workload, self.core.settings), self.core.target
