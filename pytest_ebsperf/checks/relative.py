"""Relative claims: one job on the device under test and on its reference twin.

* :func:`check_same` - the twins give the same IOPS (within 5 %) and the same median latency
  at QD 1 (REL equivalence; S2-17's terms).
* :func:`check_encrypted_twin` - S2-17 itself: the same, once the facts say which twin is
  encrypted (:mod:`pytest_ebsperf.twins`).
* :func:`check_faster_than` - REL "at least": the device runs the job at least N x as fast
  as a twin of another type (S0-08: gp2 vs Magnetic on seed 000's job, 3 x).

Each twin is measured in turn on the same job; the verdicts are judged on the runs'
per-second samples (:mod:`pytest_ebsperf.verdict`, :mod:`pytest_ebsperf.passes`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_ebsperf import passes, twins, verdict
from pytest_ebsperf.checks.core import CheckCore
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.verdict_types import Outcome, Verdict
from pytest_ebsperf.volume import Volume

if TYPE_CHECKING:
    from pytest_ebsperf.target import Target

#: Seconds a relative check measures each twin for at least, unless --ebsperf-runtime is
#: given: with ~1 % per-second noise about 20 per side narrow the ratio's interval to +-2 %
#: at the run's false-alarm level (a 5 s emulated run's 4 left it at +-12 %).
REL_MIN_RUNTIME_S = 20.0
#: Rounds a relative check may take (each REL_MIN_RUNTIME_S per twin) until it decides.
REL_MAX_ROUNDS = 3
#: Each twin's run at QD 1 for the latency term of a relative check (S2-17).
REL_LATENCY_RUNTIME_S = 8.0


def check_same(runner: CheckCore, claim: str, what: str, workload: Workload, *,
               labels: tuple[str, str] | None = None) -> list[Verdict]:
    """IOPS within 5 % (rounds of both twins until the equivalence test decides) and median
    latency at QD 1 within 10 % + 0.05 ms. An INCONCLUSIVE term does not stop the other:
    both are measured, then the check's outcome is decided."""
    with runner.as_one_check():
        return _check_same(runner, claim, what, workload, labels)


def _check_same(runner: CheckCore, claim: str, what: str, workload: Workload,
                labels: tuple[str, str] | None) -> list[Verdict]:
    reference = runner.reference
    mine_label, theirs_label = labels or (runner.target.label, reference.label)
    given_runtime = runner.settings.given("runtime")
    if not given_runtime:
        workload = workload.replace(runtime_s=max(workload.runtime_s, REL_MIN_RUNTIME_S))
    started = time.perf_counter()
    # Rounds of both twins, alternated so drift hits both alike, until the equivalence
    # test decides; the false-alarm level is split over the looks it may take.
    looks = 1 if given_runtime else REL_MAX_ROUNDS
    policy = runner.session.policy.split(looks)
    mine_before: list[float] = []
    theirs_before: list[float] = []
    for look in range(looks):
        mine = runner.run(workload)
        theirs = runner.run(workload, target=reference)
        found = verdict.judge_rel_pair(claim, what, mine_label, mine, theirs_label, theirs,
                                       policy=policy, a_before=mine_before,
                                       b_before=theirs_before)
        if found[0].outcome is not Outcome.INCONCLUSIVE or look == looks - 1:
            break
        mine_before += verdict.series_values(mine, "total_iops")
        theirs_before += verdict.series_values(theirs, "total_iops")
    verdicts = [runner.conclude(found[0], workload, mine, started)]
    # Latency at the cap is the queue's wait (QD / IOPS) on both twins alike: what one
    # I/O costs is measured with one I/O outstanding, on both twins in turn.
    single = workload.replace(iodepth=1, numjobs=1)
    if not given_runtime:
        single = single.replace(runtime_s=REL_LATENCY_RUNTIME_S)
    started = time.perf_counter()
    mine = runner.run(single)
    theirs = runner.run(single, target=reference)
    a_p50, b_p50 = verdict.median_latency_ns(mine), verdict.median_latency_ns(theirs)
    if a_p50 is not None and b_p50 is not None:
        latency = verdict.judge_rel_latency(
            claim, f"{what}, median latency at QD 1", mine_label, a_p50, theirs_label, b_p50,
            a_values=verdict.latency_values(mine), b_values=verdict.latency_values(theirs),
            policy=policy.split(2))
        verdicts.append(runner.conclude(latency, single, mine, started))
    return verdicts


def check_encrypted_twin(runner: CheckCore, claim: str, what: str, workload: Workload
                         ) -> list[Verdict]:
    """S2-17 on the twins the facts describe: one encrypted, one plain, of one type."""
    facts = runner.session.twin_facts(runner.volume)
    pair = twins.encryption_pair(facts, claim)
    if pair.status in ("other", "contradiction"):
        runner.skip(pair.sentence)  # (a contradiction stops the run at its start)
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


def check_faster_than(runner: CheckCore, claim: str, what: str, workload: Workload, *,
                      reference_type: str, at_least: float, notes: Sequence[str] = ()
                      ) -> Verdict:
    """The device runs ``workload`` at least ``at_least`` x as fast as its
    ``reference_type`` twin: the ratio of the twins' mean IOPS, with an interval from their
    per-second samples, PASS when the whole interval is at or above ``at_least``, FAIL when
    it lies wholly below, else INCONCLUSIVE."""
    facts = runner.session.twin_facts(runner.volume, reference_type)
    pair = twins.type_pair(facts, reference_type, claim)
    if pair.status != "ok":
        runner.skip(pair.sentence)
    reference = _reference_of_type(runner, reference_type)
    given_runtime = runner.settings.given("runtime")
    if not given_runtime:
        workload = workload.replace(runtime_s=max(workload.runtime_s, REL_MIN_RUNTIME_S))
    looks = 1 if given_runtime else REL_MAX_ROUNDS
    alpha = runner.session.policy.split(looks).alpha
    started = time.perf_counter()
    mine_values: list[float] = []
    theirs_values: list[float] = []
    for look in range(looks):  # rounds of both twins until the interval decides
        mine = runner.run(workload)
        theirs = runner.run(workload, target=reference)
        mine_values += verdict.series_values(mine, "total_iops")
        theirs_values += verdict.series_values(theirs, "total_iops")
        found = passes.judge_ratio_at_least(
            claim, what, runner.target.label, mine_values, reference.label, theirs_values,
            min_ratio=at_least, alpha=alpha, notes=[pair.sentence + ".", *notes])
        if found.outcome is not Outcome.INCONCLUSIVE:
            break
    return runner.conclude(found, workload, mine, started)


def _reference_of_type(runner: CheckCore, vtype: str) -> Target:
    """The twin of another type: emulated as that type's volume of the device's size (in
    the type's range), else --reference-device with the facts discovery found."""
    from pytest_ebsperf import models
    from pytest_ebsperf.models.validation import SIZE_RANGES
    from pytest_ebsperf.target import SuiteMismatch

    session = runner.session
    found = session.reference_found
    if session.settings.emulate or found is None or found.type != vtype:
        low, high = SIZE_RANGES.get(vtype, (1, 16_384))
        size = min(max(runner.volume.size_gib or low, low), high)
        volume = models.validate(Volume(vtype, size_gib=size))
    else:
        volume = found
    try:
        return session.target_for(volume, "reference")
    except SuiteMismatch as exc:
        runner.skip(str(exc))


class RelativeChecks(CheckCore):
    """The device under test against its reference twin (REL)."""

    def check_rel(self, claim: str, what: str, workload: Workload) -> list[Verdict]:
        """Run ``workload`` on the device and on its reference twin; judge IOPS and median
        latency as relative claims (REL): the twins give the same."""
        return check_same(self, claim, what, workload)

    def check_encrypted_twin(self, claim: str, what: str, workload: Workload
                             ) -> list[Verdict]:
        """S2-17: :meth:`check_rel` on an encrypted volume and its plain twin, once the
        facts say which is which (given or discovered; emulated twins are marked).
        INCONCLUSIVE before any fio run when nothing says which twin is encrypted."""
        return check_encrypted_twin(self, claim, what, workload)

    def check_faster_than(self, claim: str, what: str, workload: Workload, *,
                          reference_type: str, at_least: float, notes: Sequence[str] = ()
                          ) -> Verdict:
        """REL "at least": ``workload`` runs at least ``at_least`` x as fast on the device as
        on a ``reference_type`` twin (S0-08: gp2 vs Magnetic, 3 x)."""
        return check_faster_than(self, claim, what, workload, reference_type=reference_type,
                                 at_least=at_least, notes=notes)
