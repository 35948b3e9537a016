"""One verdict path: a run the suites kept (``--ebsperf-keep-fio``) judged again by
``ebsperf judge`` gets the verdict the live check gave (issue: judge on unseen outputs).

Real fio on kernel-throttled emulated gp3 volumes (root); each check below is one fio run
judged as a CAP (B-GP3), or a block-size sweep's points judged as one curve (S2-10), at the
volume's rate (PASS, stopped early once settled) and at 75 % of it (FAIL). The kept ``STEM.ebsperf.json`` gives judge the check's claim, level,
planned seconds and the reason fio was stopped; fio's interval logs kept beside the report
give it the seconds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.common import SUITES, ebsperf_cli, needs_fio, needs_root

from pytest_ebsperf.fio.kept import KEPT_SUFFIX
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.verdicts.outcome import Verdict

pytestmark = [needs_root, needs_fio]

GP3 = f"{SUITES}/gp3/test_gp3.py"
CHECKS = ("test_random_read_holds_provisioned_iops_99_percent_of_seconds",
          "test_random_write_holds_provisioned_iops",
          "test_block_size_sweep_is_iops_bound_then_throughput_bound")


def _kept_and_live(pytester: pytest.Pytester, *extra: str
                   ) -> tuple[Path, dict[str, dict[str, object]]]:
    keep, report = pytester.path / "kept", pytester.path / "results.json"
    # on three workers, its checks side by side as the main job measures them
    pytester.runpytest_subprocess(*(f"{GP3}::{name}" for name in CHECKS), "--emulate",
                                  f"--ebsperf-keep-fio={keep}", f"--ebsperf-report={report}",
                                  "-p", "no:cacheprovider", "-n", "3", *extra)
    checks = json.loads(report.read_text())["checks"]
    return keep, {c["nodeid"]: c for c in checks}


def _judged_again(keep: Path) -> tuple[dict[str, dict[str, object]], list[dict[str, object]]]:
    done = ebsperf_cli("judge", str(keep), "--volume-type", "gp3", "--volume-size", "100",
                       "--json")
    verdicts = json.loads(done.stdout)["verdicts"]
    by_check, parts = {}, []
    for found in verdicts:
        path = Path(str(found["path"]))
        side = path.with_name(path.name[:-len(".json")] + KEPT_SUFFIX)
        record = json.loads(side.read_text()) if side.exists() else {}
        if record.get("outcome"):
            by_check[record["check"]] = found
        else:  # a probe or another part of a check, which judge names as such
            parts.append(found)
    return by_check, parts


# Alone (conftest): beside three other workers' fio an emulated volume's seconds dip and the
# live check is rightly undecided, or measured again alone (a kept run without a verdict)
@pytest.mark.alone
@pytest.mark.parametrize("factor, outcome", [("1.0", "pass"), ("0.75", "fail")])
def test_judge_of_a_kept_run_gives_the_live_check_s_verdict(
        pytester: pytest.Pytester, factor: str, outcome: str) -> None:
    keep, live = _kept_and_live(pytester, f"--emulate-factor={factor}")
    again, parts = _judged_again(keep)
    decided = {nodeid: c for nodeid, c in live.items() if c["outcome"] in ("pass", "fail")}
    # the emulator's own lag (a busy host) can leave a live check undecided; those are the
    # host's, not the verdict path's: every check the live run decided is compared
    assert decided, f"no live check decided: {[c['message'] for c in live.values()]}"
    for nodeid, check in decided.items():
        assert check["outcome"] == outcome, check["message"]
        found = again[nodeid]
        assert found["outcome"] == check["outcome"], (found["message"], check["message"])
        assert found["claim"] == check["claim"] == ("S2-10" if "sweep" in nodeid else "B-GP3")
        measured = check["measured"]["value"]  # type: ignore[index]
        assert found["measured"] == pytest.approx(measured, rel=1e-9), found["message"]
        notes = " ".join(found["notes"])  # type: ignore[arg-type]
        if "sweep" in nodeid:  # its points judged together, each as its check saw it
            assert "judged again from their kept runs, as one curve" in notes, notes
        elif check["fio"]["stopped_early"]:  # type: ignore[index]
            assert "kept with the verdict of the check" in notes, notes
    if outcome == "fail":  # a FAIL is probed at a deeper queue: kept, and named as a probe
        assert any(any("kept as a probe run of" in n for n in p["notes"])  # type: ignore[union-attr]
                   for p in parts), [p["notes"] for p in parts]


ENCRYPTION = f"{SUITES}/encryption/test_encryption.py"


# Alone (conftest): as above, a live check beside other workers' fio may be undecided for the
# host's sake (its CPUs' busy time, which a report does not hold)
@pytest.mark.alone
def test_every_kept_run_of_two_suites_is_judged_with_no_volume_facts_given(
        pytester: pytest.Pytester) -> None:
    # gp3 and io2 on emulated volumes, every run kept; `ebsperf judge DIR` with nothing but
    # the folder: each check of one run gets the live verdict against the expectation the
    # check used, a latency check by its own test on its kept logs; nothing refused (a
    # sweep's points judged together: the test above, on gp3)
    keep, report = pytester.path / "kept", pytester.path / "results.json"
    pytester.runpytest_subprocess(f"{SUITES}/gp3/test_gp3.py", f"{SUITES}/io2/test_io2.py",
                                  "--emulate", f"--ebsperf-keep-fio={keep}", "-k", "not sweep",
                                  f"--ebsperf-report={report}", "-p", "no:cacheprovider",
                                  "-n", "3")
    live = {c["nodeid"]: c for c in json.loads(report.read_text())["checks"]}
    done = ebsperf_cli("judge", str(keep), "--json")
    judged = json.loads(done.stdout)
    assert judged["refused"] == [], judged["refused"]
    # a run a check measured again (the host's run of a check that then ran alone, a first
    # part it went on from) is a part, skipped with no volume facts given
    by_check: dict[str, dict[str, object]] = {}
    for found in judged["verdicts"]:
        path = Path(str(found["path"]))
        record = json.loads(path.with_name(path.name[:-len(".json")] + KEPT_SUFFIX)
                            .read_text())
        if record.get("outcome"):  # the run a check's verdict came from
            by_check[record["check"]] = found
    assert set(by_check) == set(live), (sorted(by_check), sorted(live))
    single = 0
    for nodeid, check in live.items():
        found = by_check[nodeid]
        notes = " ".join(found["notes"])  # type: ignore[arg-type]
        if check["policy"] == "CAP":
            single += 1
            assert (found["claim"], found["outcome"]) == (check["claim"], check["outcome"]), \
                (found, check["message"])
            assert str(found["what"]).startswith(f"{check['what']} (from "), found["what"]
            assert found["measured"] == pytest.approx(check["measured"]["value"], rel=1e-9)
            assert found["expected"] == pytest.approx(check["expected"]["value"], rel=1e-9)
        else:  # a latency check: judged again by its own test, on its kept logs
            assert check["policy"] == "LATENCY"
            assert "judged again by its own test" in notes, notes
            assert (found["claim"], found["outcome"]) == (check["claim"], check["outcome"])
            assert found["measured"] == pytest.approx(check["measured"]["value"], rel=1e-9)
            live_said = str(check["message"]).split(": ", 1)[1]
            assert str(found["message"]).split(": ", 1)[1] == live_said, found["message"]
    assert single >= 5


# not `early` (conftest): begun with the pass, beside every worker's start, its pairs took
# 135 s against 69-83 s later in the pass
def test_judge_of_a_kept_comparison_judges_its_pairs_again_as_the_check_did(
        pytester: pytest.Pytester) -> None:
    # S2-17 on emulated io1 twins in 1 s blocks: whatever the live check decided (a busy
    # host may slow a twin), judge reads every block's kept report and decides the same,
    # on the same figures; the blocks are judged as the comparison, not one by one
    keep, report = pytester.path / "kept", pytester.path / "results.json"
    pytester.runpytest_subprocess(ENCRYPTION, "--emulate", "--volume-type=io1",
                                  "--volume-size=100", "--volume-iops=2000",
                                  "--ebsperf-block=1", "--ebsperf-ramp=0.25",
                                  f"--ebsperf-keep-fio={keep}", f"--ebsperf-report={report}",
                                  "-p", "no:cacheprovider")
    live = json.loads(report.read_text())["checks"]
    # no volume facts given: the kept verdict names the twins' volume
    done = ebsperf_cli("judge", str(keep), "--json")
    judged = json.loads(done.stdout)
    assert judged["refused"] == [] and len(judged["verdicts"]) == len(live) >= 1, done.stdout
    for check, again in zip(live, judged["verdicts"]):
        assert (again["claim"], again["outcome"], again["what"]) == \
            (check["claim"], check["outcome"], check["what"]), again
        assert again["measured"] == pytest.approx(check["measured"]["value"], rel=1e-9)
        assert " pairs of 1 s blocks" in again["message"]
        assert "judged again from their kept reports" in " ".join(again["notes"])
    kept_runs = [p for p in keep.rglob("*.json") if not p.name.endswith(KEPT_SUFFIX)]
    assert len(kept_runs) >= 2 * 4 * len(live)  # every block kept, none judged on its own
    # judge names the host as the check would: the same kept blocks, their encrypted sides
    # said to have kept up 10 % less of their emulators' settings than their plain ones
    # (twins without a service time keep each block's share of their throttle, their
    # witness: emulate/witness.py), are not a FAIL of the twins but INCONCLUSIVE naming the
    # emulator
    for found in judged["verdicts"]:
        side = Path(str(found["path"])[:-len(".json")] + KEPT_SUFFIX)
        record = json.loads(side.read_text())
        pairs = len(record["paired"]["runs"])
        shares = record["paired"]["emulator_shares"]
        assert len(shares) == pairs and all(len(pair) == 2 for pair in shares), record["paired"]
        assert any(share for pair in shares for share in pair), record["paired"]
        record["paired"]["emulator_shares"] = [[0.9, 1.0]] * pairs
        side.write_text(json.dumps(record))
    for before, found in zip(judged["verdicts"], _judge(keep)["verdicts"]):
        if before["outcome"] == "pass":  # a PASS needs no excuse and keeps its verdict
            assert found["outcome"] == "pass" and found["message"] == before["message"]
        elif found["outcome"] != "fail":  # a FAIL 10 % could not explain stands
            assert found["outcome"] == "inconclusive", found
            assert "this host could not emulate the twins evenly" in str(found["message"])
            assert "delivered 90.0 % of what" in str(found["message"]), found["message"]


def test_a_kept_burst_check_is_not_judged_as_its_claim(tmp_path: Path) -> None:
    # a knee's time rests on the bucket's balance before the run: the kept claim (S0-10,
    # TIME) is said, the run is judged as a run of its own (B-SLA), not as that claim
    data = Path(__file__).resolve().parents[1] / "data" / "fio"
    (tmp_path / "randread.json").write_text((data / "randread.json").read_text())
    (tmp_path / f"randread{KEPT_SUFFIX}").write_text(json.dumps({
        "format": "pytest-ebsperf kept verdict", "check": "suites/gp2/x.py::knee",
        "claim": "S0-10", "policy": "TIME", "outcome": "pass", "stop_reason": None}))
    done = ebsperf_cli("judge", str(tmp_path / "randread.json"), "--volume-type", "gp2",
                       "--volume-size", "100", "--json")
    (found,) = json.loads(done.stdout)["verdicts"]
    assert found["claim"] == "B-SLA", found
    assert any("(S0-10, TIME: pass)" in note and "burst bucket's balance" in note
               for note in found["notes"]), found["notes"]


def _judged_and_kept(report: Path, result: FioResult, workload: Workload) -> Verdict:
    """A gp3 4 KiB read check's verdict on ``result``, kept beside ``report`` as a live
    check keeps it (B-GP3 at the run's level)."""
    from pytest_ebsperf.awsmodel import cap_expectation
    from pytest_ebsperf.awsmodel.volume import Volume
    from pytest_ebsperf.fio.kept import keep_verdict
    from pytest_ebsperf.verdicts import evidence, verdict

    expectation = cap_expectation("B-GP3", "gp3 random read 4 KiB", Volume("gp3", 100),
                                  workload)
    found = verdict.judge(expectation, result, workload, cpu_count=None,
                          policy=evidence.Policy())
    keep_verdict(report.with_suffix(""), claim=found.claim, policy=found.policy,
                 outcome=found.outcome.value, measured=found.measured,
                 expected=found.expected, unit=found.unit, planned_s=14.0,
                 stop_reason=result.stop_reason, details=dict(found.details),
                 level=evidence.Policy(), check="suites/gp3/x.py::read", what=found.what,
                 volume={"type": "gp3", "size_gib": 100}, binding=found.binding,
                 result=result)
    return found


def _judged_alone(report: Path) -> dict[str, object]:
    """``ebsperf judge REPORT --json``: its one verdict."""
    done = ebsperf_cli("judge", str(report), "--json")
    (again,) = json.loads(done.stdout)["verdicts"]
    return again  # type: ignore[no-any-return]


def _stopped_run(folder: Path) -> tuple[Path, str]:
    """A gp3 4 KiB random read that a check stopped after 3 s of 14: fio's report and its
    logs of 2 s at 3,000 IOPS (the logs leave out the window the stop cut short)."""
    data = json.loads((Path(__file__).resolve().parents[1] / "data" / "fio" /
                       "randread.json").read_text())
    data.pop("disk_util")
    job = data["jobs"][0]
    job["job options"].update(runtime="14000ms", write_iops_log=str(folder / "randread"),
                              write_bw_log=str(folder / "randread"),
                              write_lat_log=str(folder / "randread"))
    job["read"].update(io_bytes=2 * 3000 * 4096, bw_bytes=3000 * 4096, bw=3000 * 4,
                       iops=3000.0, runtime=2000, total_ios=6000)
    for kind, values in (("iops", (3010, 2990)), ("bw", (12040, 11960)),
                         ("clat", (52734, 58594))):
        (folder / f"randread_{kind}.1.log").write_text(
            "".join(f"{1000 * (i + 1)}, {v}, 0, 0, 0\n" for i, v in enumerate(values)))
    report = folder / "randread.json"
    text = json.dumps(data)
    report.write_text(text)
    return report, text


@pytest.mark.parametrize("behind", [(), (1,)])
def test_judge_of_a_stopped_run_judges_the_windows_the_check_decided_on(
        tmp_path: Path, behind: tuple[int, ...]) -> None:
    # the live check judged fio's 2 logged seconds and the status reports' third window
    # (which no log holds: a window of 1,800 IOPS), and left out a second in which its
    # emulated volume fell behind; the kept record holds both, and judge gets the check's
    # figure and verdict from them, not the logs' 3,000 IOPS
    from dataclasses import replace

    from pytest_ebsperf.fio.live import LiveSeries
    from pytest_ebsperf.fio.logs import build_series
    from pytest_ebsperf.fio.parse import parse_result

    report, text = _stopped_run(tmp_path)
    logs = {kind: [(tmp_path / f"randread_{kind}.1.log").read_text()]
            for kind in ("iops", "bw", "clat")}
    live = LiveSeries(iops=[3010.0, 2990.0, 1800.0], bw=[3010.0 * 4096, 2990.0 * 4096,
                                                          1800.0 * 4096],
                      read_iops=[3010.0, 2990.0, 1800.0], write_iops=[0.0] * 3,
                      window_s=[1.0, 1.0, 1.0])
    result = replace(parse_result(text).with_series(build_series(logs)),
                     stop_reason="settled at 3 s", live=live, emulator_behind=behind)
    workload = Workload(pattern="randread", bs=4096, iodepth=8, runtime_s=14.0, ramp_s=1.0)
    found = _judged_and_kept(report, result, workload)
    assert found.measured == pytest.approx((3010 + 2990 + 1800) / 3)

    again = _judged_alone(report)
    assert (again["outcome"], again["claim"]) == (found.outcome.value, "B-GP3"), again
    assert again["measured"] == pytest.approx(found.measured, rel=1e-9)
    notes = " ".join(again["notes"])  # type: ignore[arg-type]
    assert "3 windows of fio's status reports the check decided on" in notes, notes
    assert ("fell behind" in notes) == bool(behind), notes
    # the record's windows are what made the figures agree: without them, the logs' 3,000
    side = tmp_path / f"randread{KEPT_SUFFIX}"
    record = json.loads(side.read_text())
    del record["judged_on"]
    side.write_text(json.dumps(record))
    assert _judged_alone(report)["measured"] == pytest.approx(3000.0)


def test_judge_of_a_stopped_run_weighs_fio_against_the_count_its_check_read(
        tmp_path: Path) -> None:
    # fio stopped at 2 s: its own sample of the device's counters (Disk stats) was taken a
    # second before the end, well beyond the 250 ms it may lag, so on its own it says fio
    # counted twice what the device served; the check read the kernel's counters after fio
    # ended, they agreed, and it judged fio's seconds. judge weighs fio against the count
    # the check read (kept with its verdict): the check's figure and verdict, not the half
    from dataclasses import replace

    from pytest_ebsperf.fio.counted import Witness, apply_witness
    from pytest_ebsperf.fio.logs import build_series
    from pytest_ebsperf.fio.parse import parse_result
    from pytest_ebsperf.fio.workload import Workload

    report, text = _stopped_run(tmp_path)
    data = json.loads(text)
    data["disk_util"] = [{"name": "loop3", "read_ios": 3000, "write_ios": 0,
                          "read_merges": 0, "write_merges": 0, "read_sectors": 3000 * 8,
                          "write_sectors": 0, "util": 90.0}]
    text = json.dumps(data)
    report.write_text(text)
    logs = {kind: [(tmp_path / f"randread_{kind}.1.log").read_text()]
            for kind in ("iops", "bw", "clat")}
    workload = Workload(pattern="randread", bs=4096, iodepth=8, runtime_s=14.0, ramp_s=1.0)
    kernel = Witness("/dev/loop3", 6000 + 3010, 0, 2.0, (6000 + 3010) * 4096.0, 0.0,
                     lag_s=0.0, source="the kernel's counters, read before and after fio")
    result, _, replaced = apply_witness(parse_result(text).with_series(build_series(logs)),
                                        workload, kernel)
    assert not replaced  # the ramp's second adds to the kernel's count, never subtracts
    result = replace(result, stop_reason="settled at 2 s", counted=kernel.record())
    found = _judged_and_kept(report, result, workload)
    assert found.measured == pytest.approx(3000.0)

    again = _judged_alone(report)
    assert (again["outcome"], again["measured"]) == (found.outcome.value, pytest.approx(
        found.measured, rel=1e-9)), again
    assert "(the kernel's counters, read before and after fio)" in " ".join(again["notes"])
    # without the check's count, fio's lagging sample makes the device's figure judged
    side = tmp_path / f"randread{KEPT_SUFFIX}"
    record = json.loads(side.read_text())
    del record["judged_on"]["counted"]
    side.write_text(json.dumps(record))
    alone = _judged_alone(report)
    assert alone["measured"] == pytest.approx(1500.0), alone
    assert "answered without device I/O" in " ".join(alone["notes"])  # type: ignore[arg-type]


def test_a_kept_check_of_bytes_at_a_small_block_is_judged_in_bytes(tmp_path: Path) -> None:
    # RAID0's bandwidth claim (S4-06) is judged in B/s on 16 KiB reads: judge had taken IOPS
    # for a block under 256 KiB and refused the kept run ("metric 'iops' measures IOPS, but
    # the expectation is in B/s") in the main job's kept folder
    data = Path(__file__).resolve().parents[1] / "data" / "fio"
    report = tmp_path / "randread.json"
    report.write_text((data / "randread.json").read_text())
    fio = json.loads(report.read_text())["jobs"][0]["read"]
    bw = float(fio["bw_bytes"])
    (tmp_path / f"randread{KEPT_SUFFIX}").write_text(json.dumps({
        "format": "pytest-ebsperf kept verdict", "check": "suites/raid0/x.py::bandwidth",
        "claim": "S4-06", "policy": "CAP", "outcome": "pass", "stop_reason": None,
        "planned_s": 10.0, "volume": {"type": "gp3", "size_gib": 100, "count": 1},
        "expectation": {"what": "RAID0 bandwidth", "value": bw, "unit": "B/s",
                        "policy": "CAP", "low": 0.9, "high": 1.1, "duty": 0.99,
                        "binding": "", "limits": []}}))
    done = ebsperf_cli("judge", str(report), "--json")
    judged = json.loads(done.stdout)
    assert judged["refused"] == [], judged["refused"]
    (found,) = judged["verdicts"]
    assert (found["claim"], found["unit_of_measure"]) == ("S4-06", "B/s"), found
    assert found["measured"] == pytest.approx(bw, rel=0.02), found["message"]


def test_judge_of_a_kept_stability_check_judges_its_runs_again_as_one_series(
        pytester: pytest.Pytester) -> None:
    # S1-09 on an emulated instance store, 5 runs kept: judge reads every run's report and
    # gives the check's CV and outcome, whatever the host made of the runs; the runs are
    # judged as the series, never one by one; a series with a run missing is refused
    keep, report = pytester.path / "kept", pytester.path / "results.json"
    pytester.runpytest_subprocess(
        f"{SUITES}/instance_store/test_instance_store.py::test_run_to_run_variation_is_small",
        "--emulate", "--ebsperf-destructive", "--ebsperf-runs=5", f"--ebsperf-keep-fio={keep}",
        f"--ebsperf-report={report}", "-p", "no:cacheprovider")
    [check] = json.loads(report.read_text())["checks"]
    judged = _judge(keep)
    # a run the host held back was measured again (beside other tests' fio, an emulated
    # instance store's run can come at half its setting): kept as a part, which judge skips
    # saying what it was; every other run is the series'
    again = (check.get("details") or {}).get("measured_again") or []
    assert judged["refused"] == [], judged
    part = ("a stability run (measured again: the host held it back) run of "
            f"{check['nodeid']}, not a check: give --volume-type (and the volume's size, IOPS "
            "...) to judge it as a run of its own")
    assert [s["reason"] for s in judged["skipped"]] == [part] * len(again), judged["skipped"]
    [found] = judged["verdicts"]
    assert (found["claim"], found["outcome"]) == ("S1-09", check["outcome"]), found
    assert found["measured"] == pytest.approx(check["measured"]["value"], rel=1e-9)
    assert "the 5 runs of" in " ".join(found["notes"]), found["notes"]
    assert "judged again from their kept reports, as one series" in " ".join(found["notes"])
    # judge names the file it read ("(from randwrite-28-1.json)") after the check's words,
    # also where the message quotes them (an INCONCLUSIVE naming the host quotes what the
    # runs showed): the rest is the check's, word for word
    suffix = str(found["what"])[len(str(check["what"])):]
    assert str(found["what"]).startswith(str(check["what"])) and suffix.startswith(" (from ")
    live_runs = str(check["message"]).split(": ", 1)[1]
    said = str(found["message"]).replace(suffix, "").split(": ", 1)[1]
    assert said == live_runs, (found["message"], live_runs)
    record = json.loads(Path(str(found["path"])[:-len(".json")] + KEPT_SUFFIX).read_text())
    first = Path(found["path"]).parent / f"{record['stability']['runs'][0]}.json"
    first.unlink()
    refused = _judge(keep)["refused"]
    assert [r["reason"] for r in refused if "is not beside it" in r["reason"]], refused


def _judge(keep: Path) -> dict[str, list[dict[str, object]]]:
    done = ebsperf_cli("judge", str(keep), "--json")
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_a_stopped_run_whose_last_log_row_came_late_is_judged_on_the_job_s_windows() -> None:
    # recorded in a run of the test above on a busy host: gp3 stopped after 3 s, its log's
    # two rows stamped 1,001 and 2,100 ms (fio's second sample 0.1 s late), the third window
    # only in the status reports. The check judged the 2 logged seconds and the reports'
    # third (2,916 IOPS); judge took the rows' step for the window (1.1 s, not the job's
    # log_avg_msec=1000), found it 10 % off the reports' and judged the reports alone
    # (3,014 IOPS). It reads the job's own window from fio's report now.
    data = Path(__file__).resolve().parents[1] / "data" / "fio" / "kept_late_log_row"
    kept = json.loads((data / f"randread-15-1{KEPT_SUFFIX}").read_text())
    done = ebsperf_cli("judge", str(data / "randread-15-1.json"), "--json")
    (found,) = json.loads(done.stdout)["verdicts"]
    assert (found["claim"], found["outcome"]) == (kept["claim"], kept["outcome"]), found
    assert found["measured"] == pytest.approx(kept["measured"], rel=1e-9)
    assert not any("1.1 s" in note for note in found["notes"]), found["notes"]
