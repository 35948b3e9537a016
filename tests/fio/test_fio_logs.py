"""Per-second series from fio interval logs: golden logs from real fio 3.33 runs and edge cases."""

from __future__ import annotations

import pytest
from support.common import DATA

from pytest_ebsperf.errors import FioOutputError
from pytest_ebsperf.fio.logs import (
    LogRow,
    build_series,
    group_log_files,
    job_windows,
    parse_log,
    window_index,
)
from pytest_ebsperf.fio.parse import parse_result
from pytest_ebsperf.fio.result import SERIES_KEYS, FioResult, Series

HERE = DATA / "fio"


def golden(prefix: str, report: str) -> tuple[dict[str, Series], FioResult]:
    """Series built the way the runner builds them, and the parsed report of the same run."""
    files = group_log_files((p.name for p in HERE.iterdir()), prefix)
    texts = {kind: [(HERE / n).read_text() for n in names] for kind, names in files.items()}
    result = parse_result((HERE / report).read_text())
    runtime_ms = max(result.read.runtime_ms, result.write.runtime_ms)
    return build_series(texts, runtime_ms=runtime_ms), result


def rows_of(*times: int, ddir: int = 0) -> list[LogRow]:
    return [LogRow(t, float(10 * (i + 1)), ddir) for i, t in enumerate(times)]


def lines(*rows: tuple[int, int, int]) -> str:
    return "".join(f"{t}, {v}, {d}, 0, 0\n" for t, v, d in rows)


def test_five_four_and_six_column_rows_all_give_time_value_and_direction() -> None:
    text = "1000, 8240, 0, 0, 0\n1000, 8286, 1, 4096\n0, 1, 0, 4096, 4046848, 0x0000\n\n"
    assert parse_log(text) == [LogRow(1000, 8240, 0), LogRow(1000, 8286, 1), LogRow(0, 1, 0)]


def test_a_malformed_line_names_the_file_and_line() -> None:
    with pytest.raises(FioOutputError, match=r"Line 2 of P_iops.1.log .*'garbage'"):
        parse_log("1000, 5, 0, 0, 0\ngarbage\n", name="P_iops.1.log")


def test_log_files_are_grouped_by_kind_in_job_order() -> None:
    names = ["P_iops.10.log", "P_iops.2.log", "P_clat.1.log", "P_lat.1.log", "P_slat.1.log",
             "P_bw.log", "Q_iops.1.log", "fio.json"]  # fmt: skip
    assert group_log_files(names, "P") == {
        "iops": ["P_iops.2.log", "P_iops.10.log"],
        "bw": ["P_bw.log"],
        "clat": ["P_clat.1.log"],
    }


@pytest.mark.parametrize(("time_ms", "window"), [(999, 1), (1000, 1), (2003, 2), (2999, 3)])
def test_jittered_timestamps_round_to_their_window(time_ms: int, window: int) -> None:
    assert window_index(time_ms, 1000) == window


def test_every_series_key_is_present_even_for_a_read_only_run() -> None:
    series, _ = golden("randread", "randread.json")
    assert set(series) == set(SERIES_KEYS)
    assert len(series["write_iops"]) == 0 and len(series["write_clat"]) == 0
    assert series["total_iops"] == series["read_iops"]


def test_per_second_iops_are_the_samples_behind_fio_own_iops_mean_min_and_max() -> None:
    # With log_avg_msec set, fio computes iops_mean/min/max from the same windows it logs.
    series, result = golden("randread", "randread.json")
    stats = result.raw["jobs"][0]["read"]
    assert len(series["read_iops"]) == stats["iops_samples"]
    assert series["read_iops"].mean() == pytest.approx(stats["iops_mean"])
    assert min(series["read_iops"].values) == stats["iops_min"]
    assert max(series["read_iops"].values) == stats["iops_max"]


def test_bandwidth_logs_in_kib_become_bytes_per_second_matching_iops_times_block_size() -> None:
    series, _ = golden("randread", "randread.json")
    bw, iops = series["read_bw"].values, series["read_iops"].values
    assert len(bw) == len(iops) > 0
    for b, i in zip(bw, iops):
        assert b == pytest.approx(i * 4096, rel=0.01)


def test_the_end_of_run_latency_flush_is_dropped_and_each_window_kept_once() -> None:
    raw = parse_log((HERE / "randread_clat.1.log").read_text())
    repeated = [r for r in raw if sum(1 for o in raw if o.time_ms == r.time_ms) > 1]
    series, _ = golden("randread", "randread.json")
    assert repeated, "the golden log lost fio's trailing flush row"
    assert series["read_clat"].t_s == (1.0, 2.0, 3.0)
    assert series["read_clat"].values[-1] == repeated[0].value  # the first row, not the flush


def test_two_jobs_are_summed_per_window_and_totals_add_read_and_write() -> None:
    series, _ = golden("randrw_70_30", "randrw_70_30.json")
    job_rows = [parse_log((HERE / f"randrw_70_30_iops.{n}.log").read_text()) for n in (1, 2)]
    first_second = sum(
        r.value for rows in job_rows for r in rows if r.ddir == 0 and r.time_ms <= 1000
    )
    assert series["read_iops"].values[0] == first_second
    for total, read, write in zip(
        series["total_iops"].values, series["read_iops"].values, series["write_iops"].values
    ):
        assert total == read + write


def test_latency_of_two_jobs_lies_between_the_jobs_values() -> None:
    series, _ = golden("randrw_70_30", "randrw_70_30.json")
    jobs = [parse_log((HERE / f"randrw_70_30_clat.{n}.log").read_text()) for n in (1, 2)]
    first = [next(r.value for r in rows if r.ddir == 1) for rows in jobs]
    assert min(first) <= series["write_clat"].values[0] <= max(first)


def test_without_group_reporting_the_series_sums_every_jobs_log() -> None:
    series, result = golden("perjob", "randread_numjobs2_per_job.json")
    jobs = result.raw["jobs"]
    assert len(jobs) == 2
    assert series["read_iops"].mean() == pytest.approx(sum(j["read"]["iops_mean"] for j in jobs))


def test_fio_restarts_the_log_clock_after_ramp_so_series_cover_only_the_measured_run() -> None:
    # ramp.json ran 3 s of ramp then 3 s measured; had fio logged the ramp, rows would reach 6 s.
    raw = parse_log((HERE / "ramp_iops.1.log").read_text())
    series, result = golden("ramp", "ramp.json")
    assert max(r.time_ms for r in raw) <= result.read.runtime_ms + 100
    assert max(series["read_clat"].t_s) <= 3.0
    assert series["read_iops"].mean() == pytest.approx(result.raw["jobs"][0]["read"]["iops_mean"])


def test_a_log_whose_clock_goes_back_keeps_only_the_rows_after_the_restart() -> None:
    windows = job_windows(rows_of(1000, 2000, 3000, 1000, 2000), 1000, None)
    assert windows == {0: {1: 40.0, 2: 50.0}}


def test_windows_past_the_measured_runtime_are_cut() -> None:
    assert job_windows(rows_of(1000, 2000, 2700), 1000, 2000) == {0: {1: 10.0, 2: 20.0}}
    assert job_windows(rows_of(1000, 2000, 2700), 1000, None) == {0: {1: 10.0, 2: 20.0, 3: 30.0}}


def test_a_trailing_window_shorter_than_half_an_interval_is_dropped() -> None:
    # 2460 repeats window 2 (a flush); 2540 would open window 3 only 80 ms later.
    assert job_windows(rows_of(1000, 2000, 2460, 2540), 1000, None) == {0: {1: 10.0, 2: 20.0}}


def test_a_window_one_job_did_not_log_is_dropped_rather_than_undercounted() -> None:
    logs = {
        "iops": [lines((1000, 5, 0), (2000, 6, 0), (3000, 7, 0)), lines((999, 1, 0), (2001, 2, 0))]
    }
    series = build_series(logs)
    assert series["read_iops"].t_s == (1.0, 2.0)
    assert series["read_iops"].values == (6.0, 8.0)


def test_latency_is_weighted_by_each_jobs_iops_in_the_window() -> None:
    logs = {
        "iops": [lines((1000, 300, 0)), lines((1000, 100, 0))],
        "clat": [lines((1000, 1000, 0)), lines((1000, 2000, 0))],
    }
    (value,) = build_series(logs)["read_clat"].values
    assert value == pytest.approx(1250.0)  # (300 x 1000 + 100 x 2000) / 400


def test_latency_without_iops_logs_is_the_plain_mean_over_jobs() -> None:
    logs = {"clat": [lines((1000, 1000, 0)), lines((1000, 2000, 0))]}
    assert build_series(logs)["read_clat"].values == (1500.0,)


def test_no_logs_give_empty_series_for_every_key() -> None:
    series = build_series({})
    assert set(series) == set(SERIES_KEYS) and all(len(s) == 0 for s in series.values())
