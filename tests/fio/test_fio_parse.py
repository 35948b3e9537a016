"""Parsing fio's JSON report: golden outputs from real fio 3.33 runs plus fio 2.x-shaped files."""

from __future__ import annotations

import json
import math
import statistics
from typing import Any

import pytest
from support.common import DATA

from pytest_ebsperf.errors import FioOutputError
from pytest_ebsperf.fio.parse import (
    extract_json,
    merge_latencies,
    parse_result,
    parse_version,
)
from pytest_ebsperf.fio.result import Latency

HERE = DATA / "fio"


def text(name: str) -> str:
    return (HERE / name).read_text()


def raw(name: str) -> dict[str, Any]:
    """The report as plain JSON, to compare the parser against fio's own fields."""
    return extract_json(text(name))


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("fio-3.33", (3, 33, 0)),
        ("fio-3.33\n", (3, 33, 0)),
        ("fio-2.1.4", (2, 1, 4)),
        ("fio-3.14-6-g97134", (3, 14, 0)),
        ("fio-2.18-59-g618e", (2, 18, 0)),
        ("fio-3.42-6-g219f", (3, 42, 0)),
    ],
)
def test_version_strings_of_releases_and_git_builds_parse_to_tuples(
    version: str, expected: tuple[int, int, int]
) -> None:
    assert parse_version(version) == expected


def test_a_string_that_is_not_an_fio_version_is_reported_in_a_sentence() -> None:
    with pytest.raises(FioOutputError, match=r"'bash: fio: command not found' is not a fio"):
        parse_version("bash: fio: command not found")


def test_a_random_read_report_matches_fio_own_fields_in_bytes_and_nanoseconds() -> None:
    result = parse_result(text("randread.json"))
    read = raw("randread.json")["jobs"][0]["read"]
    assert result.read.iops == pytest.approx(read["iops"])
    assert result.read.bw_bytes == read["bw_bytes"]
    assert result.read.io_bytes == read["io_bytes"] == read["io_kbytes"] * 1024
    assert result.read.total_ios == read["total_ios"]
    assert result.read.clat.mean_ns == pytest.approx(read["clat_ns"]["mean"])
    assert result.read.clat.samples == read["clat_ns"]["N"]
    assert not result.write.active
    assert (result.jobs, result.errors, result.version_tuple) == (1, (), (3, 33, 0))


def test_percentile_keys_become_floats_for_both_clat_and_lat() -> None:
    result = parse_result(text("randread.json"))
    read = raw("randread.json")["jobs"][0]["read"]
    assert sorted(result.read.clat.percentiles) == [1.0, 5.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99]
    assert result.read.clat.p(99.9) == read["clat_ns"]["percentile"]["99.900000"]
    assert result.read.lat.p(99) == read["lat_ns"]["percentile"]["99.000000"]
    assert result.read.clat.p(42) is None


def test_group_reporting_merges_numjobs_into_one_entry_but_jobs_counts_both() -> None:
    report = raw("randrw_70_30.json")
    result = parse_result(text("randrw_70_30.json"))
    assert len(report["jobs"]) == 1 and report["jobs"][0]["job options"]["numjobs"] == "2"
    assert result.jobs == 2
    assert result.read.iops == pytest.approx(report["jobs"][0]["read"]["iops"])
    assert result.job_options["rwmixread"] == "70"


def test_a_70_30_mix_reads_about_70_percent_of_its_ios() -> None:
    result = parse_result(text("randrw_70_30.json"))
    assert result.read.iops / result.total_iops == pytest.approx(0.70, abs=0.03)
    assert result.total_bw_bytes == result.read.bw_bytes + result.write.bw_bytes


def test_without_group_reporting_iops_and_bytes_are_summed_over_job_entries() -> None:
    jobs = raw("randread_numjobs2_per_job.json")["jobs"]
    result = parse_result(text("randread_numjobs2_per_job.json"))
    assert len(jobs) == 2 and result.jobs == 2
    assert result.read.iops == pytest.approx(sum(j["read"]["iops"] for j in jobs))
    assert result.read.io_bytes == sum(j["read"]["io_bytes"] for j in jobs)
    assert result.read.runtime_ms == max(j["read"]["runtime"] for j in jobs)


def test_without_group_reporting_latency_is_weighted_by_each_jobs_ios() -> None:
    jobs = [j["read"]["clat_ns"] for j in raw("randread_numjobs2_per_job.json")["jobs"]]
    clat = parse_result(text("randread_numjobs2_per_job.json")).read.clat
    weights = [j["N"] for j in jobs]
    expected_p99 = sum(j["percentile"]["99.000000"] * j["N"] for j in jobs) / sum(weights)
    assert clat.mean_ns == pytest.approx(sum(j["mean"] * j["N"] for j in jobs) / sum(weights))
    assert clat.p(99) == pytest.approx(expected_p99)
    assert (clat.min_ns, clat.max_ns) == (min(j["min"] for j in jobs), max(j["max"] for j in jobs))
    assert clat.samples == sum(weights)


def test_cpu_is_averaged_over_job_entries() -> None:
    jobs = raw("randread_numjobs2_per_job.json")["jobs"]
    result = parse_result(text("randread_numjobs2_per_job.json"))
    assert result.usr_cpu == pytest.approx(statistics.fmean(j["usr_cpu"] for j in jobs))
    assert result.sys_cpu == pytest.approx(statistics.fmean(j["sys_cpu"] for j in jobs))


def test_json_plus_histogram_bins_are_accepted_and_not_taken_for_percentiles() -> None:
    clat_raw = raw("jsonplus_randread.json")["jobs"][0]["read"]["clat_ns"]
    clat = parse_result(text("jsonplus_randread.json")).read.clat
    assert clat_raw["bins"], "the golden file must contain json+ bins"
    assert set(clat.percentiles) == {float(k) for k in clat_raw["percentile"]}
    assert clat.samples == clat_raw["N"] == sum(clat_raw["bins"].values())


@pytest.mark.parametrize(
    ("name", "before"),
    [
        ("note_before_json.txt", "note: both iodepth"),
        ("sigterm_partial.txt", "fio: terminating on signal 15"),
        ("client_one.txt", "<vm> client: (g=0)"),
    ],
)
def test_text_fio_prints_before_the_json_is_skipped(name: str, before: str) -> None:
    output = text(name)
    assert before in output[: output.index("\n{")], "golden file lost its leading text"
    assert parse_result(output).fio_version == "fio-3.33"


def test_a_sigterm_report_still_carries_the_partial_results() -> None:
    result = parse_result(text("sigterm_partial.txt"))
    assert result.read.total_ios == raw("sigterm_partial.txt")["jobs"][0]["read"]["total_ios"] > 0


@pytest.mark.parametrize(
    ("name", "errors"),
    [("permission_denied.stdout", (13,)), ("odirect_einval.stdout", (22,))],
)
def test_job_errors_are_collected(name: str, errors: tuple[int, ...]) -> None:
    assert parse_result(text(name)).errors == errors


def test_a_refused_file_creation_has_no_job_error_and_no_io() -> None:
    # This is why the runner also checks fio's exit status: the report alone looks clean.
    result = parse_result(text("file_creation_disallowed.stdout"))
    assert result.errors == ()
    assert result.read.io_bytes == result.write.io_bytes == 0


def test_client_mode_sums_clients_and_skips_the_all_clients_aggregate() -> None:
    stats = raw("client_two.txt")["client_stats"]
    clients = [s for s in stats if s["jobname"] != "All clients"]
    aggregate = next(s for s in stats if s["jobname"] == "All clients")
    result = parse_result(text("client_two.txt"))
    assert len(clients) == 2
    assert result.read.iops == pytest.approx(sum(c["read"]["iops"] for c in clients))
    assert result.read.total_ios == aggregate["read"]["total_ios"]
    assert result.jobs == 4  # numjobs=2 on each of the two servers


def test_one_client_with_group_reporting_counts_its_numjobs() -> None:
    assert parse_result(text("client_one.txt")).jobs == 2


def test_a_report_with_no_jobs_explains_what_fio_rejected() -> None:
    with pytest.raises(FioOutputError, match="lists no jobs") as info:
        parse_result(text("client_bad_option.txt"))
    assert "Bad option <readonly>" in str(info.value)


def test_fio_2_1_microseconds_and_kib_are_converted_to_nanoseconds_and_bytes() -> None:
    jobs = raw("fio-2.1.4_two_jobs.json")["jobs"]
    result = parse_result(text("fio-2.1.4_two_jobs.json"))
    estimated_ios = [round(j["read"]["iops"] * j["read"]["runtime"] / 1000) for j in jobs]
    assert result.read.io_bytes == sum(j["read"]["io_bytes"] for j in jobs) * 1024
    assert result.read.bw_bytes == sum(j["read"]["bw"] for j in jobs) * 1024
    assert result.read.total_ios == sum(estimated_ios)
    expected_mean_us = sum(
        j["read"]["clat"]["mean"] * n for j, n in zip(jobs, estimated_ios)
    ) / sum(estimated_ios)
    assert result.read.clat.mean_ns == pytest.approx(expected_mean_us * 1000)
    assert result.read.clat.max_ns == max(j["read"]["clat"]["max"] for j in jobs) * 1000


def test_fio_2_duplicate_zero_percentile_keys_are_dropped() -> None:
    clat = parse_result(text("fio-2.1.4_two_jobs.json")).read.clat
    assert '"0.00" : 0' in text("fio-2.1.4_two_jobs.json")
    assert 0.0 not in clat.percentiles
    assert len(clat.percentiles) == 8


def test_fio_2_18_git_build_with_group_reporting_keeps_kib_io_bytes_and_counts_numjobs() -> None:
    read = raw("fio-2.18-git_group_reporting.json")["jobs"][0]["read"]
    result = parse_result(text("fio-2.18-git_group_reporting.json"))
    assert result.version_tuple == (2, 18, 0)
    assert result.jobs == 4
    assert result.read.io_bytes == read["io_bytes"] * 1024  # no io_kbytes before 2.21
    assert result.read.total_ios == read["total_ios"]
    assert result.read.clat.p(99.9) == read["clat"]["percentile"]["99.900000"] * 1000


def test_empty_output_says_fio_printed_nothing_and_what_to_do() -> None:
    with pytest.raises(FioOutputError, match="fio printed nothing.*by hand"):
        parse_result("  \n")


def test_garbage_output_is_quoted_up_to_200_characters() -> None:
    garbage = "fio: unknown terminal type " + "x" * 1000
    with pytest.raises(FioOutputError) as info:
        parse_result(garbage)
    message = str(info.value)
    assert "fio: unknown terminal type xxx" in message
    assert "x" * 300 not in message
    assert "--output-format=json" in message


def test_a_brace_line_that_is_not_json_is_skipped_for_the_real_report() -> None:
    output = "{not json}\n" + text("randread.json")
    assert parse_result(output).read.iops == pytest.approx(
        raw("randread.json")["jobs"][0]["read"]["iops"]
    )


def test_text_after_the_json_as_with_json_normal_output_is_ignored() -> None:
    output = text("randread.json") + "\nrandread: (groupid=0, jobs=1): err= 0\n  read: IOPS=1\n"
    assert parse_result(output).jobs == 1


def test_json_that_is_not_an_fio_report_is_refused() -> None:
    with pytest.raises(FioOutputError, match="no JSON report"):
        parse_result(json.dumps({"hello": "world"}))


def test_merging_latencies_pools_the_standard_deviation_like_the_combined_samples() -> None:
    a, b = [100.0, 120.0, 140.0], [300.0, 320.0, 340.0, 360.0, 380.0]

    def latency(values: list[float]) -> Latency:
        return Latency(
            mean_ns=statistics.fmean(values),
            min_ns=min(values),
            max_ns=max(values),
            stddev_ns=statistics.pstdev(values),
            samples=len(values),
        )

    merged = merge_latencies([latency(a), latency(b)])
    assert merged.mean_ns == pytest.approx(statistics.fmean(a + b))
    assert merged.stddev_ns == pytest.approx(statistics.pstdev(a + b))
    assert (merged.min_ns, merged.max_ns, merged.samples) == (100.0, 380.0, 8)


def test_merging_ignores_jobs_without_samples_and_keeps_a_single_job_unchanged() -> None:
    only = Latency(mean_ns=5.0, samples=3, percentiles={99.0: 9.0})
    assert merge_latencies([Latency(), only, Latency()]) == only
    assert merge_latencies([]) == Latency()
    assert math.isclose(merge_latencies([only, only]).p(99) or 0, 9.0)


def test_unified_rw_reporting_counts_the_mixed_direction_in_the_totals() -> None:
    raw = json.loads(text("fio-3.33-unified-rw-reporting.json"))
    result = parse_result(text("fio-3.33-unified-rw-reporting.json"))
    mixed = raw["jobs"][0]["mixed"]
    assert result.read.iops == 0 and result.write.iops == 0
    assert result.total_iops == pytest.approx(mixed["iops"]) and result.total_iops > 0
    assert result.total_bw_bytes == pytest.approx(mixed["bw_bytes"])


def test_a_file_of_status_reports_yields_the_last_final_report() -> None:
    report = text("fio-3.33-status-interval.json")
    assert report.count('"fio version"') >= 3
    result = parse_result(report)
    last = json.loads(report[report.rindex("\n{") + 1:])
    assert result.read.total_ios == last["jobs"][0]["read"]["total_ios"]
    first = json.JSONDecoder().raw_decode(report[report.index("{"):])[0]
    assert result.read.total_ios > first["jobs"][0]["read"]["total_ios"]


def test_the_hosts_cpu_times_count_iowait_as_idle() -> None:
    from pytest_ebsperf.device.kernelstat import CpuTimes

    before = CpuTimes.parse("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\n")
    after = CpuTimes.parse("cpu  250 0 100 850 100 0 0 0 0 0\n")
    assert (before.busy, before.total) == (150, 1000)
    # 200 busy ticks of 300: iowait (50 more) counts as idle
    assert after.busy_pct_since(before) == pytest.approx(200 / 300 * 100)
    with pytest.raises(ValueError):
        CpuTimes.parse("intr 1 2 3")


def test_the_hosts_cpu_times_count_what_the_hypervisor_took() -> None:
    from pytest_ebsperf.device.kernelstat import CpuTimes

    # user nice system idle iowait irq softirq steal: a VM's hypervisor ran another guest
    # for 60 of 250 ticks while this one wanted its CPUs; steal is part of the busy time
    before = CpuTimes.parse("cpu  100 0 50 800 50 0 0 40 0 0\n")
    after = CpuTimes.parse("cpu  200 0 80 850 60 0 0 100 0 0\n")
    assert after.steal_pct_since(before) == pytest.approx(60 / 250 * 100)
    assert after.busy_pct_since(before) == pytest.approx(190 / 250 * 100)
    # kernels and hosts that count no steal (fewer fields) read as none taken
    old = CpuTimes.parse("cpu  100 0 50 800 50\n")
    assert old.steal == 0 and old.total == 1000


# -- output other tools and modes produce (real fio 3.33 output, made here) -----------------
def _golden(name: str) -> str:
    return (HERE / name).read_text()


def test_stonewalled_groups_are_never_blended_into_one_figure() -> None:
    from pytest_ebsperf.errors import FioOutputError
    from pytest_ebsperf.fio.parse import parse_groups

    text = _golden("fio-3.33-stonewall-two-groups.json")  # randread QD4, then randwrite QD1
    with pytest.raises(FioOutputError, match=r"holds 2 groups \(0, 1\) that ran one after "
                                             "another"):
        parse_result(text)
    reads = parse_result(text, group=0)
    assert reads.read.iops > 0 and reads.write.iops == 0
    groups = parse_groups(text)
    assert sorted(groups) == [0, 1]
    assert groups[1].write.iops > 0 and groups[1].read.iops == 0
    with pytest.raises(FioOutputError, match="no group 7"):
        parse_result(text, group=7)


def test_client_server_output_sums_the_clients_and_keeps_the_global_options() -> None:
    import json

    text = _golden("fio-3.33-client-server-two-clients.json")
    raw = json.loads(text[text.find("{"):])
    clients = [e for e in raw["client_stats"] if e["jobname"] != "All clients"]
    result = parse_result(text)
    assert result.read.iops == pytest.approx(sum(c["read"]["iops"] for c in clients))
    assert result.job_options["rw"] == "randread"  # from "global options"


def test_global_options_given_as_a_list_are_merged() -> None:
    from pytest_ebsperf.fio.parse import _string_map

    assert _string_map([{"rw": "randread"}, {"bs": "4k"}]) == {"rw": "randread", "bs": "4k"}


def test_a_histogram_log_is_refused_not_read_as_rates() -> None:
    from pytest_ebsperf.errors import FioOutputError
    from pytest_ebsperf.fio.logs import build_series

    hist = _golden("fio-3.33-clat-hist.1.log")  # --write_hist_log: time, ddir, bs, 1856 bins
    with pytest.raises(FioOutputError, match="is a latency histogram log"):
        build_series({"iops": [hist]})


def test_fio_2_latency_logs_are_microseconds() -> None:
    from pytest_ebsperf.fio.logs import build_series

    log = "1000, 250, 0, 4096\n2000, 250, 0, 4096\n"
    assert build_series({"clat": [log]}, fio_version="fio-2.18")["read_clat"].values == (
        250_000.0, 250_000.0)
    assert build_series({"clat": [log]}, fio_version="fio-3.33")["read_clat"].values == (
        250.0, 250.0)


def test_gtod_reduce_reports_no_latency_rather_than_zeros() -> None:
    import json

    # fio 3.33 with gtod_reduce=1: clat_ns all zero with N 0 (real output, made here)
    modern = parse_result(_golden("fio-3.33-gtod-reduce.json"))
    assert modern.read.iops > 0 and modern.read.clat.percentiles == {}
    assert modern.read.clat.mean_ns == 0 and modern.read.clat.p(99.0) is None
    # fio 2.x printed zeros with a full percentile table: the same report in 2.x's shape
    old = json.loads(_golden("fio-2.1.4_two_jobs.json"))
    for job in old["jobs"]:
        job["read"]["clat"] = {"min": 0, "max": 0, "mean": 0.0, "stdev": 0.0,
                               "percentile": {"50.000000": 0, "99.000000": 0}}
    result = parse_result(json.dumps(old))
    assert result.read.clat.percentiles == {} and result.read.clat.p(99.0) is None
