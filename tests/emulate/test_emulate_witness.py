"""An emulated volume witnesses itself (pytest_ebsperf/emulate/witness.py): the seconds in
which it delivered clearly less than it was set to are the host's, never the volume's
misses; a volume set to deliver less (--emulate-factor) keeps its misses."""

from __future__ import annotations

import os
from dataclasses import replace
from types import SimpleNamespace

import pytest

from pytest_ebsperf.awsmodel.types import CAP, VOLUME, Expectation, Limit
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.emulate import witness
from pytest_ebsperf.fio.result import DirectionStats, FioResult, Series
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.verdicts import evidence, stability, verdict
from pytest_ebsperf.verdicts.outcome import Outcome

T0 = 1000.0  # when fio began measuring, on the emulator's clock


def _device(*changes: tuple[float, float], latency_us: float | None = 50.0) -> SimpleNamespace:
    """An emulated volume whose throttle was set to IOPS ``rate`` at ``T0 + at`` for each
    (at, rate), with an emulated service time (50 µs: 400,000 IOPS at QD 20)."""
    return SimpleNamespace(timeline=[(T0 + at, rate, None) for at, rate in changes],
                           latency_us=latency_us)


def test_seconds_below_what_the_emulator_was_set_to_deliver_are_the_hosts() -> None:
    seen = [4000.0, 3990.0, 2900.0, 2880.0, 4010.0, 3995.0]
    found = witness.behind([_device((-5.0, 4000.0))], [1.0, 2, 3, 4, 5, 6], seen, T0,
                           bs=16384, outstanding=20)
    assert found.seconds == (2, 3)
    said = found.sentence("io1")
    assert "this host could not emulate io1 at 4,000 IOPS in 2 of 6 s" in said
    assert "fio saw 2,890" in said


def test_a_setting_made_before_the_run_started_is_not_what_it_owed() -> None:
    """S1-03's rounds: the first write's throttle at 0.7 of the rate (an emulated first-write
    cost), then the full rate set for the second write just before it starts. The second
    write owes the full rate from its start: the window's slack does not reach back to the
    first write's setting (it made a second write at the rate look 143 % of what it owed,
    and the comparison the host's)."""
    device = _device((-5.0, 27_500.0), (-1.6, 19_250.0), (-0.05, 27_500.0))
    seen = [27_473.0]
    found = witness.behind([device], [1.0], seen, T0, bs=4096, outstanding=28, run_from=T0)
    assert found.allowed == (27_500.0,) and found.share == pytest.approx(27_473 / 27_500)
    slacked = witness.behind([device], [1.0], seen, T0, bs=4096, outstanding=28)
    assert slacked.allowed == (19_250.0,)  # without the run's start: the earlier setting
    # a setting made while the run measures is still what it owed
    dip = _device((-5.0, 27_500.0), (0.5, 19_250.0), (1.5, 27_500.0))
    during = witness.behind([dip], [1.0], [19_200.0], T0, bs=4096, outstanding=28,
                            run_from=T0)
    assert during.allowed == (19_250.0,) and during.seconds == ()


def test_a_volume_set_to_deliver_less_keeps_its_misses() -> None:
    """--emulate-factor=0.75 and emulated misses lower what the throttle is set to: the
    seconds at that rate are the volume's."""
    slower = witness.behind([_device((-5.0, 3000.0))], [1.0, 2, 3], [2990.0, 3005.0, 2980.0],
                            T0, bs=16384, outstanding=20)
    assert slower.seconds == ()
    dip = _device((-5.0, 4000.0), (2.0, 2000.0), (3.0, 4000.0))  # a missed second, set
    found = witness.behind([dip], [1.0, 2, 3, 4, 5], [4000.0, 4000.0, 2000.0, 4000.0, 4000.0],
                           T0, bs=16384, outstanding=20)
    assert found.seconds == ()


def test_a_throttle_alone_is_owed_its_rate_where_the_queue_could_carry_it() -> None:
    """No emulated service time (an instance store beyond the latency daemon's reach): the
    throttle's rate is owed wherever the queue could carry it at 1 ms an I/O in the host's
    path. A quiet main job's B-IS random write at QD 28 (27,500 IOPS set) dipped to 14,347 for
    a few seconds: the host's. At QD 1 only 1,000 IOPS are owed, so a run the loop device holds
    back there is queue-depth bound (Little's law), not an emulator that fell behind."""
    store = _device((-5.0, 27500.0), latency_us=None)
    assert witness.allowed_iops(store, T0, T0 + 1, 4096, 28) == 27500.0
    found = witness.behind([store], [1.0, 2, 3, 4], [27991.0, 14347.0, 18109.0, 27390.0], T0,
                           bs=4096, outstanding=28)
    assert found.seconds == (1, 2)
    assert "could not emulate instance-store at 27,500 IOPS in 2 of 4 s" in \
        found.sentence("instance-store")
    shallow = witness.behind([_device((-5.0, 256000.0), latency_us=None)], [1.0, 2],
                             [8680.0, 950.0], T0, bs=16384, outstanding=1)
    assert shallow.allowed == (1000.0, 1000.0)
    assert shallow.seconds == ()


def test_an_io_the_kernel_splits_counts_its_pieces() -> None:
    """io1 charges a 512 KiB read as two 256 KiB operations: a throttle of 4,000 operations
    owes 2,000 such reads a second, not 4,000."""
    device = SimpleNamespace(timeline=[(T0 - 5.0, 4000.0, None)], latency_us=None,
                             io_unit_bytes=256 * 1024)
    assert witness.allowed_iops(device, T0, T0 + 1, 512 * 1024, 16) == 2000.0
    assert witness.allowed_iops(device, T0, T0 + 1, 16384, 16) == 4000.0


def test_the_service_time_bounds_what_is_owed_at_a_shallow_queue() -> None:
    """At QD 1 and 500 µs per I/O the emulator owes 2,000 IOPS, not its throttle's 16,000."""
    device = _device((-5.0, 16000.0), latency_us=500.0)
    assert witness.allowed_iops(device, T0, T0 + 1, 4096, 1) == 2000.0
    found = witness.behind([device], [1.0, 2], [1990.0, 1500.0], T0, bs=4096, outstanding=1)
    assert found.seconds == (1,)


def test_an_emulated_set_owes_the_sum_of_its_members() -> None:
    """A set of 4 members at 2,000 IOPS and 500 µs, QD 10 spread over them (2.5 each: 5,000
    IOPS by Little's law, so each member's throttle binds): 8,000 IOPS together. A second at
    7,144 (seen when the host fell behind beside another worker) is the host's; one at 7,900
    is not."""
    members = [_device((-5.0, 2000.0), latency_us=500.0) for _ in range(4)]
    found = witness.behind(members, [1.0, 2, 3], [7900.0, 7144.0, 8010.0], T0, bs=4096,
                           outstanding=10)
    assert found.allowed == (8000.0, 8000.0, 8000.0)
    assert found.seconds == (1,)
    shallow = witness.behind(members, [1.0], [3000.0], T0, bs=4096, outstanding=2)
    assert shallow.allowed == (4000.0,)  # half an I/O each: 1 / 500 µs, each member
    assert shallow.seconds == (0,)
    remote = SimpleNamespace(latency_us=None)  # a remote host's volume keeps no timeline
    unknown = witness.behind([*members[:3], remote], [1.0], [10.0], T0, bs=4096,
                             outstanding=10)
    assert unknown.seconds == ()  # a member whose setting is unknown: nothing is owed


def _result(values: list[float], behind: tuple[int, ...] = ()) -> FioResult:
    series = Series(tuple(float(i + 1) for i in range(len(values))), tuple(values))
    return FioResult(fio_version="fio-3.33",
                     read=DirectionStats(iops=sum(values) / len(values)),
                     write=DirectionStats(), series={"total_iops": series},
                     emulator_behind=behind,
                     emulator_said="this host could not emulate io1 at 4,000 IOPS" if behind
                     else "")


@pytest.mark.parametrize(("steal", "named"), [(31.0, True), (2.0, False), (None, False)])
def test_seconds_the_host_lost_name_what_its_hypervisor_took(steal: float | None,
                                                             named: bool) -> None:
    """On a cloud VM the host falls behind when its hypervisor runs another guest (steal in
    /proc/stat: spells of 18-38 % of a 2-CPU machine's time while the emulated twins of S2-17
    delivered 42-66 % of their setting). The run's sentence says so; a quiet VM's few percent
    are not named."""
    from pytest_ebsperf.checks.witnesses import Witnesses

    session = SimpleNamespace(runner=SimpleNamespace(last_started=T0 - 0.5))
    target = SimpleNamespace(emulated=_device((-5.0, 4000.0)), emulated_set=None, members=())
    run = replace(_result([4000.0, 2100.0, 2050.0, 3990.0]), host_cpu_steal_pct=steal)
    seen = Witnesses(session, []).emulator_seen(  # type: ignore[arg-type]
        target, Workload("randread", bs=16384, iodepth=20, ramp_s=0.5), run, "io1")
    assert seen.emulator_behind == (1, 2)
    assert seen.emulator_said.startswith("this host could not emulate io1 at 4,000 IOPS")
    assert ("; the hypervisor took 31 % of this machine's CPU time while fio ran (steal: "
            "another guest on the same physical host" in seen.emulator_said) is named
    assert ("hypervisor" in seen.emulator_said) is named


def test_the_hosts_seconds_are_no_misses_of_the_volume() -> None:
    """A healthy emulated io1 whose host fell behind in 16 of 18 s: FAIL on the count before,
    now the 2 s left cannot decide, and the verdict names the emulator (B-SLA)."""
    limit = Limit("io1 provisioned 4,000 IOPS", VOLUME, 4000.0, "B-IO1", "")
    cap = Expectation("S0-04", "io1 random read 16 KiB", CAP, 4000.0, "IOPS", limit,
                      (limit,), high=1.1, duty=0.999)
    seconds = [2887.0] * 16 + [4000.0] * 2
    workload = Workload(pattern="randread", bs=16384, iodepth=20, runtime_s=18.0)
    policy = evidence.Policy.for_run(1e-3, 53, spell=3.0)
    blind = verdict.judge_cap(cap, _result(seconds), workload, cpu_count=None, policy=policy)
    assert blind.outcome is Outcome.FAIL
    seen = verdict.judge_cap(cap, _result(seconds, tuple(range(16))), workload,
                             cpu_count=None, policy=policy)
    assert seen.outcome is Outcome.INCONCLUSIVE, seen.message
    assert seen.binding == "emulator"
    assert "This host could not emulate io1 at 4,000 IOPS" in seen.message
    assert seen.details["emulator_behind_s"] == list(range(16))
    for gone in (tuple(range(18)), tuple(range(17))):  # nothing left: no mean of the host's
        alone = verdict.judge_cap(cap, _result(seconds, gone), workload, cpu_count=None,
                                  policy=policy)
        assert alone.outcome is Outcome.INCONCLUSIVE and alone.binding == "emulator"
    assert replace(_result(seconds)).emulator_behind == ()


def test_a_check_the_emulator_spoiled_is_measured_again_alone() -> None:
    """The first run's emulator fell behind beside another worker and left the check
    undecided: it is measured once more holding the host alone, and that run decides (its
    first run's seconds are not used, and the message says so)."""
    from contextlib import contextmanager

    from pytest_ebsperf.checks.rates import RateChecks

    held: list[str] = []

    @contextmanager
    def measuring_alone(why: str = ""):
        held.append("alone")
        yield

    core = SimpleNamespace(measuring_alone=measuring_alone,
                           target=SimpleNamespace(emulated=object(), emulated_set=None))
    checks = RateChecks(core)  # type: ignore[arg-type]
    first = verdict.Verdict(Outcome.INCONCLUSIVE, "S4-04", "set", 5019.0, 8000.0, "IOPS",
                            "emulator", "inconclusive: the emulator fell behind", "first", "CAP")
    passed = replace(first, outcome=Outcome.PASS, measured=8003.0, message="8,003 IOPS")
    checks._measure = lambda *args: (passed, _result([8003.0] * 5))  # type: ignore[method-assign]
    found, _ = checks._alone_if_spoiled(first, None, Workload("randwrite"), "iops",  # type: ignore[arg-type]
                                        _result([5019.0] * 5, behind=(0, 1, 2, 3)))
    assert held == ["alone"] and found.outcome is Outcome.PASS
    assert "fell behind in 4 s (this host's seconds, not the volume's)" in found.message
    assert "a fresh run made holding the host's measuring lock alone" in found.message
    assert found.details["first_run"]["emulator_behind_s"] == 4
    # a volume that was not spoiled keeps its verdict, and nothing is measured again
    kept, _ = checks._alone_if_spoiled(first, None, Workload("randwrite"), "iops",  # type: ignore[arg-type]
                                       _result([5019.0] * 5))
    assert kept is first and held == ["alone"]
    # "host bound" on an emulated volume (the CPUs busy beside another worker's emulation):
    # measured again alone; on a device given with --device it is the verdict
    busy = replace(first, binding="host", reason="inconclusive: host bound")
    found, _ = checks._alone_if_spoiled(busy, None, Workload("randwrite"), "iops",  # type: ignore[arg-type]
                                        _result([5019.0] * 5))
    assert held == ["alone", "alone"] and found.outcome is Outcome.PASS
    assert "host's CPUs were too busy to tell" in found.message
    assert found.details["first_run"]["host_bound"] is True
    core.target = SimpleNamespace(emulated=None, emulated_set=None)
    kept, _ = checks._alone_if_spoiled(busy, None, Workload("randwrite"), "iops",  # type: ignore[arg-type]
                                       _result([5019.0] * 5))
    assert kept is busy and held == ["alone", "alone"]


def test_a_fresh_run_for_a_too_short_check_that_the_emulator_spoiled_is_measured_alone() -> None:
    """io2's random writes beside a memory-streaming neighbour: the first run (10 s) was too
    short for its count ever to FAIL, so a fresh 13 s run was made, and its emulator fell
    behind in 5 of 12 s (fio saw 2,022 of 4,000 IOPS there): INCONCLUSIVE before. That run is
    the host's as a first run would be: measured once more holding the host alone."""
    from contextlib import contextmanager

    from pytest_ebsperf.checks.rates import RateChecks

    held: list[str] = []

    @contextmanager
    def measuring_alone(why: str = ""):
        held.append("alone")
        yield

    limit = Limit("io2 provisioned 4,000 IOPS", VOLUME, 4000.0, "B-IO2", "")
    cap = Expectation("B-IO2", "io2 random write 16 KiB", CAP, 4000.0, "IOPS", limit,
                      (limit,), high=1.1, duty=0.999)
    policy = evidence.Policy.for_run(1e-3, 53, spell=3.0)
    core = SimpleNamespace(measuring_alone=measuring_alone,
                           volume=Volume("io2", size_gib=100, iops=4000),
                           settings=SimpleNamespace(given=lambda name: False),
                           session=SimpleNamespace(policy=policy, cpu_count=2),
                           target=SimpleNamespace(emulated=object(), emulated_set=None))
    checks = RateChecks(core)  # type: ignore[arg-type]
    spoiled = _result([4000.0] * 7 + [2022.0] * 5, behind=(7, 8, 9, 10, 11))
    kept = _result([4000.0] * 40)
    runs = [spoiled, kept]

    def measure(expectation, workload, metric):
        result = runs.pop(0)
        return verdict.judge_cap(expectation, result, workload, cpu_count=None,
                                 policy=policy), result

    checks._measure = measure  # type: ignore[method-assign]
    checks._confirm_shortfall = lambda found, e, w, m, r: (found, w, r)  # type: ignore[method-assign]
    checks._kept_as_part = lambda *args, **kwargs: None  # type: ignore[method-assign]
    first_run = _result([4000.0] * 10)
    workload = Workload("randwrite", bs=16384, iodepth=8, runtime_s=10.0)
    first = verdict.judge_cap(cap, first_run, workload, cpu_count=None, policy=policy)
    assert first.outcome is Outcome.INCONCLUSIVE, first.message  # too short ever to FAIL
    found, longer, _ = checks._too_short(first, cap, workload, "iops", None, first_run)
    assert held == ["alone"], found.message
    assert found.outcome is Outcome.PASS, found.message
    assert "a fresh run made holding the host's measuring lock alone" in found.message
    assert longer.runtime_s > workload.runtime_s and runs == []


def test_runs_of_an_instance_store_set_alike_that_kept_up_unevenly_name_the_host() -> None:
    """S1-09 beside a memory-streaming neighbour: ten runs of an emulated instance store set
    to 27,500 IOPS gave 22,756-27,474 (CV 7.7 %, undecided); the runs' shares of their
    setting say the spread was the host's. A quiet host's runs (99-101 %) and a volume whose
    runs were set apart (each at its own setting) say nothing."""
    seen = [23_596, 22_756, 23_715, 23_690, 26_968, 27_445, 27_309, 27_474, 27_474, 27_456]
    said = stability.uneven_runs([s / 27_500 for s in seen[1:]], "instance-store")
    assert said.startswith("this host could not emulate instance-store evenly")
    assert "delivered 83-100 % of it" in said
    quiet = [27_234, 27_822, 27_500, 27_410]
    assert stability.uneven_runs([s / 27_500 for s in quiet], "instance-store") == ""
    assert stability.uneven_runs([1.0, 0.99, 1.0], "io1") == ""
    # one run's setting unknown (a real volume's, or a set's): nothing is said
    assert stability.uneven_runs([0.83, None, 1.0], "instance-store") == ""
    # a device whose throttle was set lower for one run owes less there: its share is full
    device = _device((-5.0, 27_500.0), (100.0, 20_000.0), latency_us=None)
    assert witness.allowed_iops(device, T0 + 101, T0 + 102, 16384, 32) == 20_000.0


def test_an_uneven_series_is_inconclusive_naming_the_host_for_the_check_and_judge_alike() -> None:
    """The one rule the live S1-09 and ``ebsperf judge`` of its kept runs both apply: a
    series that did not PASS, run unevenly, is the host's; a PASS stays a PASS."""
    runs = [23_596, 22_756, 23_715, 23_690, 26_968, 27_445, 27_309, 27_474, 27_474, 27_456]
    shares = [r / 27_500 for r in runs[1:]]
    found = stability.judge_stability("S1-09", "run to run", runs, alpha=1e-3)
    assert found.outcome is not Outcome.PASS
    said = stability.emulator_uneven(found, shares, "instance-store")
    assert said.outcome is Outcome.INCONCLUSIVE and said.binding == "emulator"
    assert said.reason == "inconclusive: this host could not emulate the runs evenly"
    assert found.message in said.message
    steady = stability.judge_stability("S1-09", "run to run", [27_500.0] * 10, alpha=1e-3)
    assert stability.emulator_uneven(steady, shares, "instance-store") is steady


def test_a_sweep_point_the_emulator_spoiled_is_measured_again_alone() -> None:
    """S2-08's io1 sweep on a quiet host: its 32 KiB point's emulator fell behind in 2 of 15 s
    (fio saw 1,432 IOPS there) and the 13 s left could not decide, so the whole sweep was
    INCONCLUSIVE. The point is measured once more holding the host alone, that run is the
    point, the sweep goes on, and the message says why; a point that kept up is measured once."""
    from contextlib import contextmanager

    from pytest_ebsperf.checks.rates import RateChecks

    held: list[str] = []
    runs: list[Workload] = []

    @contextmanager
    def measuring_alone(why: str = ""):
        held.append("alone")
        yield

    def expect_cap(claim: str, what: str, workload: Workload) -> Expectation:
        iops = min(4000.0, 500 * 1024 * 1024 / workload.bs)
        limit = Limit(f"io1 {iops:,.0f} IOPS", VOLUME, iops, "B-IO1", "")
        return Expectation(claim, what, CAP, iops, "IOPS", limit, (limit,), high=1.1,
                           duty=0.999)

    spoiled = [4000.0] * 5 + [1432.0, 1432.0] + [4000.0] * 8

    def run(workload: Workload, monitor=None):
        runs.append(workload)
        expected = expect_cap("", "", workload).value
        if workload.bs == 32768 and len(runs) == 2:  # the point's first run
            return _result(spoiled, behind=(5, 6))
        return _result([expected] * 40)

    policy = evidence.Policy.for_run(1e-3, 53, spell=3.0)
    core = SimpleNamespace(
        measuring_alone=measuring_alone, settings=SimpleNamespace(sweep_sizes_bytes=()),
        session=SimpleNamespace(policy=policy, cpu_count=2),
        workload=lambda pattern, size: Workload(pattern, bs=size, iodepth=16, runtime_s=15.0),
        expect_cap=expect_cap, run=run, conclude=lambda found, *args: found,
        _plain_progress=lambda workload: None)
    checks = RateChecks(core)  # type: ignore[arg-type]
    checks._decidable = lambda expectation, workload, **kw: workload  # type: ignore[method-assign]
    found = checks.check_sweep("S2-08", "io1 block-size sweep, random read", "randread",
                               [16384, 32768, 131072])
    assert held == ["alone"], held
    assert [w.bs for w in runs] == [16384, 32768, 32768, 131072]
    assert found.outcome is Outcome.PASS, found.message
    assert "The 32KiB point's first run was left undecided by 2 s the emulator fell behind " \
        "in (this host's): it was measured again holding the host's measuring lock alone" \
        in found.message
    # the same first run judged as it was: the point, and so the sweep, could not decide
    from pytest_ebsperf.verdicts import block_sizes
    workload = Workload("randread", bs=32768, iodepth=16, runtime_s=15.0)
    alone = block_sizes.judge_sweep("S2-08", "sweep", [(32768, expect_cap("", "", workload),
                                                        _result(spoiled, behind=(5, 6)),
                                                        workload)],
                                    policy=policy.split(3), cpu_count=2)
    assert alone.outcome is Outcome.INCONCLUSIVE and alone.binding == "emulator"


def test_a_baseline_hold_the_emulator_spoiled_is_held_again_alone(monkeypatch) -> None:
    """S0-12 on a quiet host: gp2's emulator fell behind in 1 of the 18 s its baseline hold
    needs to be able to FAIL, and the 17 s left could not decide. The hold is made again
    holding the host alone (draining what the bucket earned meanwhile), and that hold decides;
    a hold that kept up is made once."""
    from contextlib import contextmanager

    from pytest_ebsperf.credits import checks as credit_checks

    held: list[bool] = []

    @contextmanager
    def measuring(*, alone: bool = False, whole_check: bool = True):
        held.append(alone)
        yield False

    monkeypatch.setattr(credit_checks, "measuring", measuring)
    handle = SimpleNamespace(session=SimpleNamespace(credits=SimpleNamespace(clock=lambda: 0.0)),
                             settings=SimpleNamespace(runtime_s=5.0), nodeid="gp2::baseline",
                             conclude=lambda found, *args: found)
    checks = credit_checks.CreditChecks(handle)  # type: ignore[arg-type]
    for name, value in (("_setup", lambda workload, hold: (None, None)),
                        ("_require_knee", lambda levels: None),
                        ("_drain_s", lambda ledger, levels: 0.0),
                        ("_baseline_job", lambda workload, ledger, levels, hold_s: (
                            workload, 0.0, None, hold_s)),
                        ("_require_time", lambda seconds, doing: None),
                        ("_note_start", lambda ledger: None),
                        ("_can_fail_s", lambda: 18.0), ("_window_s", lambda: 1.0)):
        monkeypatch.setattr(checks, name, value)
    spoiled = verdict.Verdict(Outcome.INCONCLUSIVE, "S0-12", "gp2 baseline", 300.0, 301.0,
                              "IOPS", "emulator", "inconclusive: the emulator fell behind",
                              "301 IOPS - inconclusive", "CAP")
    passed = replace(spoiled, outcome=Outcome.PASS, binding="gp2 baseline", message="300 IOPS")
    holds = [(spoiled, _result([300.0] * 17 + [269.0], behind=(17,))),
             (passed, _result([300.0] * 18))]
    asked: list[float] = []

    def hold_baseline(claim, what, workload, ledger, levels, hold):
        asked.append(hold)
        found, result = holds.pop(0)
        return found, workload, result, 0.0

    monkeypatch.setattr(checks, "_hold_baseline", hold_baseline)
    found = checks.baseline_after_knee("S0-12", "gp2 baseline", Workload("randread"))
    assert found.outcome is Outcome.PASS and held == [True] and asked == [18.0, 18.0]
    assert "The first run's emulator fell behind in 1 s (this host's seconds, not the " \
        "volume's)" in found.message
    assert found.details["first_run"]["emulator_behind_s"] == 1
    holds[:] = [(passed, _result([300.0] * 18))]
    assert checks.baseline_after_knee("S0-12", "gp2 baseline", Workload("randread")) is passed
    assert held == [True]


def test_a_run_to_run_series_measures_again_the_runs_the_host_held_back(monkeypatch) -> None:
    """S1-09 in a main job on a host busy for a moment: an emulated instance store set to
    27,500 IOPS gave 13,992, 16,966, 17,885 and 21,447 IOPS (its emulator delivering 51-78 %
    of its setting), then six runs at 27,336-27,731: INCONCLUSIVE naming the host before.
    Each run the host held back is measured again (at most 10), so the ten runs judged are
    the volume's."""
    from contextlib import contextmanager

    from pytest_ebsperf.checks import passes

    recorded = [13_992, 16_966, 17_885, 21_447, 27_731, 27_336, 27_473, 27_420, 27_457,
                27_446, 27_390, 27_512, 27_480, 27_455]
    shares = {value: value / 27_500 for value in recorded}
    phases: list[str] = []

    @contextmanager
    def measuring_alone(why: str = ""):
        yield

    def run(workload: Workload, phase: str) -> FioResult:
        phases.append(phase)
        return replace(_result([float(recorded[len(phases) - 1])] * 2),
                       kept_as=f"/kept/run-{len(phases)}")

    monkeypatch.setattr(passes, "_emulator_share",
                        lambda runner, workload, result: shares[round(result.total_iops)])
    kept: list[str] = []
    monkeypatch.setattr(passes, "keep_part", lambda stem, **kw: kept.append(kw["phase"]))
    runner = SimpleNamespace(
        settings=SimpleNamespace(runs=10, emulate=True, given=lambda name: False, block=None),
        measuring_alone=measuring_alone, run=run, nodeid="suites/instance_store::S1-09",
        target=SimpleNamespace(emulated=object(), emulated_any=True),
        volume=Volume("instance-store"),
        session=SimpleNamespace(policy=SimpleNamespace(alpha=1e-3)),
        conclude=lambda found, workload, result, started: found)
    found = passes.check_stability(runner, "S1-09", "instance store random write 16 KiB, "  # type: ignore[arg-type]
                                   "run to run", Workload("randwrite", bs=16384, iodepth=32))
    assert len(phases) == 14  # ten runs judged, four measured again
    assert found.outcome is Outcome.PASS, found.message
    assert found.details["measured_again"] == [shares[v] for v in recorded[:4]]
    assert "4 runs measured again: the emulator delivered 51 %, 62 %, 65 %, 78 % of its " \
           "setting there, this host's doing, not the volume's." in found.message
    assert found.details["emulator_shares"] == [shares[v] for v in recorded[5:]]
    # each run kept (--ebsperf-keep-fio) is a part of the check, named as what it was: judge
    # of the folder judges the ten as the series and skips the four
    assert kept.count("stability run (measured again: the host held it back)") == 4
    assert kept.count("stability run (dropped)") == 1 and kept.count("stability run") == 8
    assert found.details["stability"]["runs"] == [f"/kept/run-{i}" for i in range(5, 15)]
    # and the series kept for judge says which were measured again, so that judge of the
    # folder gives the live message word for word (verdicts/judge_sweep.py)
    assert found.details["stability"]["measured_again"] == [shares[v] for v in recorded[:4]]
    again = stability.measured_again(stability.judge_stability(
        "S1-09", "instance store random write 16 KiB, run to run",
        [float(v) for v in recorded[4:]], alpha=1e-3), found.details["stability"]["measured_again"])
    assert again.message == found.message
    # a host that holds back every run: ten measured again, then the rule of uneven runs
    phases.clear()
    recorded[:] = [13_992] * 3 + [27_500] * 4 + [14_000] * 13
    shares.update({13_992: 0.5088, 27_500: 1.0, 14_000: 0.509})
    found = passes.check_stability(runner, "S1-09", "run to run",  # type: ignore[arg-type]
                                   Workload("randwrite", bs=16384, iodepth=32))
    assert len(phases) == 20 and len(found.details["measured_again"]) == 10
    assert found.outcome is Outcome.INCONCLUSIVE, found.message
    assert "could not emulate instance-store evenly" in found.message


def test_a_volume_whose_emulation_needs_half_the_host_measures_alone() -> None:
    """Sized to the host: a 4-member io1 set at 2,000 IOPS each with its service time needs
    about 1.0 of 2 CPUs (131 µs an I/O), so its runs hold the host alone (two such sets side
    by side outran a 2-CPU host); two of its members, or the same set on 4 CPUs, share it."""
    from pytest_ebsperf.emulate.target import Target

    assert witness.host_share(4000.0, 500.0, cpus=2) is None
    said = witness.host_share(8000.0, 500.0, cpus=2)
    assert said and "about 1.0 of this host's 2 CPUs (131 µs an I/O)" in said
    assert witness.host_share(8000.0, 500.0, cpus=4) is None
    assert witness.host_share(8000.0, None, cpus=2) is None  # 41 µs an I/O: 0.3 of a CPU
    members = [SimpleNamespace(path=f"/dev/loop{i}", iops=2000.0) for i in range(4)]
    pool = SimpleNamespace(members=members, latency_us=500.0, beyond_reach="")

    def target(driven: int) -> Target:
        return Target(path=members[0].path, volume=Volume("io1"),
                      emulated_set=pool,  # type: ignore[arg-type]
                      members=tuple(m.path for m in members[:driven]))

    cpus = os.cpu_count() or 1
    assert target(4).measures_alone is (8000 * 131e-6 > 0.5 * cpus)
    assert target(2).measures_alone is (4000 * 131e-6 > 0.5 * cpus)
    assert not target(1).measures_alone


def test_a_set_with_a_slow_member_owes_the_pace_of_that_member() -> None:
    """--emulate-member-factors=1,1,0.75,1: the third member's throttle is set at 1,500 of
    2,000 IOPS, and a stripe that spreads its I/Os evenly runs at 4 x 1,500 = 6,000. A set
    seen at 5,998 IOPS kept up with what it was set to deliver (its FAIL is the volume's,
    the slow member named); at 4,000 it did not."""
    members = [_device((-5.0, rate), latency_us=None) for rate in (2000.0, 2000.0, 1500.0,
                                                                     2000.0)]
    found = witness.behind(members, [1.0, 2, 3], [5998.0, 6010.0, 4000.0], T0, bs=4096,
                           outstanding=16)
    assert found.allowed == (6000.0, 6000.0, 6000.0)
    assert found.seconds == (2,)


def test_an_emulated_instance_store_is_one_this_host_carries_beside_other_checks() -> None:
    """Sized to the host (B-IS): i4i.large's 50,000 read IOPS take 2.05 CPUs at 41 µs an I/O,
    so on 2 CPUs its runs held the host alone; the emulated store stands for the fastest
    published single-device store within a quarter of the host's CPUs (g4ad.xlarge, 10,417 /
    8,333), said in its notes; a host with 16 CPUs, or one with too few for any, keeps the
    record's i4i.large."""
    from pytest_ebsperf.awsmodel.ebs import NOW
    from pytest_ebsperf.emulate.target import emulated_default

    name, said = witness.store_stand_in("i4i.large", cpus=2)
    assert name == "g4ad.xlarge"
    assert "10,417 read / 8,333 write IOPS" in said and "2 CPUs carry i4i.large's 50,000" in said
    assert witness.host_share(10_417, None, cpus=2) is None  # it measures beside the others
    assert witness.host_share(50_000, None, cpus=2)  # the record's would hold the host alone
    assert witness.store_stand_in("i4i.large", cpus=4)[0] == "g4ad.2xlarge"
    assert witness.store_stand_in("i4i.large", cpus=16) == ("i4i.large", "")
    assert witness.store_stand_in("i4i.large", cpus=1) == ("i4i.large", "")  # none fits
    volume = emulated_default("instance-store", NOW)
    assert volume.instance_type == witness.store_stand_in("i4i.large")[0]


def test_an_emulated_run_s_header_says_how_this_host_sizes_its_volumes(
        pytester: pytest.Pytester) -> None:
    """The session header of an emulated run names the host's CPUs, the instance store it
    stands in and the share past which a volume holds the host alone; a run on a device
    says nothing of it."""
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    emulated = pytester.runpytest_subprocess("--emulate", "-p", "no:cacheprovider")
    cpus = os.cpu_count() or 1
    stand_in = witness.store_stand_in("i4i.large")[0]
    line = (f"ebsperf: emulated volumes sized to this host's {cpus} CPU*: the instance store "
            f"as {stand_in}'s *")
    emulated.stdout.fnmatch_lines([line])
    assert "g4ad.xlarge's (10,417 / 8,333 IOPS; i4i.large's would hold the host alone)" in \
        witness.sizing_header(2)
    assert "i4i.large's (50,000 / 27,500 IOPS)" in witness.sizing_header(16)
    plain = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert "sized to this host" not in plain.stdout.str()
