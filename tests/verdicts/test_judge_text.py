"""``judge`` on what people already have: fio's normal and terse output, the 24 fio outputs
measured on real AWS volumes (tests/data/realebs, as published, with the facts their authors
gave), sets of volumes, the device's own count, the job's own limits, directories.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support import realebs
from support.common import DATA, ebsperf_cli
from support.realebs import options

from pytest_ebsperf.fio import terse as fio_terse
from pytest_ebsperf.fio import text as fio_text
from pytest_ebsperf.fio.parse import extract_json, result_from_data
from pytest_ebsperf.fio.reports import read_reports

REAL = DATA / "realebs"
FORMS = DATA / "fio" / "formats"


def judge(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return ebsperf_cli("judge", *args, cwd=cwd)


def facts() -> list[dict[str, str]]:
    return realebs.facts("realebs")


#: What a careful engineer concludes from each file (docs/judge.md says why, row by row).
EXPECTED = {
    "miztiik_gp3_201g_4000iops_1000mibs_randwrite4k_qd16x16.json": "pass",
    "miztiik_gp3_201g_4000iops_1000mibs_randwrite256k_qd16x16.json": "pass",
    "miztiik_gp3_255g_16000iops_1000mibs_randwrite4k_qd16x16.json": "pass",
    "miztiik_gp3_255g_16000iops_1000mibs_randwrite128k_qd16x16.json": "pass",
    "miztiik_io2_54g_16000iops_randwrite4k_qd16x16.json": "pass",
    # 1.38 GB/s through an r5b.large documented at 1.25 GB/s: 11 % over, one mean
    "miztiik_io2_54g_16000iops_randwrite128k_qd16x16.json": "inconclusive",
    "miztiik_gp3raid0_2x202g_4000iops_1000mibs_each_randwrite256k_qd16x16.json": "inconclusive",
    "liangruibupt_gp2_100g_randwrite16k_qd32x16_c4.xlarge_EXTRACTED.txt": "pass",
    # 24,959 IOPS from fio, 3,074 from the device: the gp2 burst, judged on the device
    "liangruibupt_gp2_100g_randread4k_qd32x16_c4.xlarge_EXTRACTED.txt": "pass",
    "liangruibupt_gp2_100g_randwrite1m_qd32x16_c4.xlarge_EXTRACTED.txt": "pass",
    "liangruibupt_io1_100g_600iops_randwrite16k_qd32x16_c4.xlarge_EXTRACTED.txt": "pass",
    "liangruibupt_io1_2048g_40000iops_randwrite16k_qd32x16_m5.8xlarge_EXTRACTED.txt": "pass",
    "liangruibupt_io1_2048g_40000iops_randwrite16k_psync_qd1x16_m5.8xlarge_EXTRACTED.txt":
        "pass",
    "liangruibupt_io1_2048g_40000iops_randread16k_qd32x16_m5.12xlarge_EXTRACTED.txt": "pass",
    "liangruibupt_gp2raid0_4x3000g_randwrite16k_qd32x16_m5.12xlarge_EXTRACTED.txt": "pass",
    "liangruibupt_instancestore_2x1900g_raid0_randread4k_qd32x16_i3.4xlarge_EXTRACTED.txt":
        "pass",
    "liangruibupt_instancestore_2x1900g_raid0_randwrite4k_qd32x16_i3.4xlarge_EXTRACTED.txt":
        "pass",
    # m5d.8xlarge: 466,666 read IOPS over its 2 devices, at queue-depth saturation (AWS's
    # general purpose table). psync at 16 jobs x 1 I/O: 16 x 83 µs allows 190,000 at most
    "liangruibupt_instancestore_2x600g_raid0_randread4k_psync_qd1x16_m5d.8xlarge_EXTRACTED.txt":
        "inconclusive",
    "liangruibupt_instancestore_2x600g_raid0_randread4k_qd32x16_m5d.8xlarge_EXTRACTED.txt":
        "pass",
    "awssamples_io2_100g_40000iops_randread16k_psync_qd1x16_c6a.xlarge_EXTRACTED.txt": "pass",
    "awssamples_io2_100g_40000iops_randwrite16k_psync_qd1x16_r6a.xlarge_EXTRACTED.txt": "pass",
    # the m5a.xlarge carries 16,000 IOPS: the instance binds, at its limit
    "awssamples_io2_100g_40000iops_randwrite16k_psync_qd1x16_m5a.xlarge_EXTRACTED.txt": "pass",
    # Magnetic is best effort: each of the 12 groups recorded
    "terryma_standard_2g_12groups_qd8_m1.large_fio1.55.txt": "info",
    "ekspr1171_gp3_20g_3000iops_125mibs_randrw75_4k_qd64_c6id.4xlarge_TRANSCRIBED_TRUNCATED.txt":
        "pass",
}


def test_every_published_output_has_an_expected_verdict() -> None:
    assert {row["file"] for row in facts()} == set(EXPECTED)
    assert len(EXPECTED) == 24


@pytest.mark.parametrize("row", facts(), ids=lambda row: row["file"][:60])
def test_every_published_output_is_read_and_judged(row: dict[str, str]) -> None:
    reports = read_reports(str(REAL / row["file"]))
    assert reports and all(r.data["jobs"] for r in reports)
    done = judge(str(REAL / row["file"]), *options(row), "--json")
    assert "Traceback" not in done.stderr, done.stderr
    found = json.loads(done.stdout)
    assert not found["refused"], found["refused"]
    outcomes = {v["outcome"] for v in found["verdicts"]}
    assert outcomes == {EXPECTED[row["file"]]}, [v["message"] for v in found["verdicts"]]


def _figures(name: str, side: str = "read") -> dict[str, float]:
    (report,) = read_reports(str(REAL / name))
    result = result_from_data(report.data)
    stats = getattr(result, side)
    return {"iops": stats.iops, "bw": stats.bw_bytes, "runtime": stats.runtime_ms,
            "ios": stats.total_ios, "p99": stats.clat.p(99.0) or 0.0,
            "clat_mean": stats.clat.mean_ns, "jobs": result.jobs}


def test_fio_2_figures_equal_the_text() -> None:
    # read : io=17555MB, bw=99839KB/s, iops=24959, runt=180053msec
    # clat (usec): min=1, max=387476, avg=20022.82; 99.00th=[177152]; total=r=4494079
    found = _figures("liangruibupt_gp2_100g_randread4k_qd32x16_c4.xlarge_EXTRACTED.txt")
    assert found["iops"] == pytest.approx(24959, abs=1)  # fio 2 printed it cut to the I/O
    assert found["bw"] == 99839 * 1024
    assert found["runtime"] == 180053 and found["ios"] == 4494079
    assert found["clat_mean"] == pytest.approx(20022.82e3)
    assert found["p99"] == 177152e3 and found["jobs"] == 16


def test_fio_3_figures_equal_the_text_to_the_printed_precision() -> None:
    # read: IOPS=37.1k, BW=580MiB/s (608MB/s)(102GiB/180001msec); clat avg=430.56 usec
    found = _figures(
        "awssamples_io2_100g_40000iops_randread16k_psync_qd1x16_c6a.xlarge_EXTRACTED.txt")
    assert found["iops"] == pytest.approx(37.1e3, rel=0.0015)
    assert found["bw"] == 580 * 2**20 and found["runtime"] == 180001
    assert found["clat_mean"] == pytest.approx(430.56e3)


def test_fio_1_55_figures_equal_the_text() -> None:
    (report,) = read_reports(str(REAL / "terryma_standard_2g_12groups_qd8_m1.large_fio1.55.txt"))
    first = report.data["jobs"][0]
    assert report.data["fio version"] == "fio-1.55" and len(report.data["jobs"]) == 12
    # read : io=131072KB, bw=53718KB/s, iops=13429 , runt=  2440msec
    assert first["read"]["iops"] == pytest.approx(13429, abs=1)  # 32768 I/Os in 2.44 s
    assert first["read"]["runtime"] == 2440
    assert first["read"]["io_bytes"] == 131072 * 1024 and first["read"]["total_ios"] == 32768
    assert first["job options"] == {"rw": "read", "bs": "4096", "ioengine": "libaio",
                                    "iodepth": "8"}


def test_a_markdown_bold_line_and_a_command_line_are_read() -> None:
    # **write: IOPS=40.1k**, ... published in a README; the job came from the command line
    (report,) = read_reports(str(
        REAL / "awssamples_io2_100g_40000iops_randwrite16k_psync_qd1x16_r6a.xlarge_EXTRACTED.txt"))
    result = result_from_data(report.data)
    assert result.write.iops == pytest.approx(40.1e3, rel=0.0015)
    assert result.job_options["runtime"] == "180" and result.job_options["numjobs"] == "16"


# -- the same run in three forms -----------------------------------------------------------------
def _three_forms(path: Path) -> tuple[str, str, str]:
    """(normal, terse, json) of a file fio wrote with --output-format=normal,terse,json."""
    text = path.read_text()
    start = text.index("\n{") + 1
    data = extract_json(text)
    end = start + len(json.dumps(data)) * 0  # the report object ends where decoding stops
    end = json.JSONDecoder().raw_decode(text, start)[1]
    headers = "".join(line for line in text[:start].splitlines(keepends=True)
                      if not line.startswith("3;"))
    terse = "".join(line for line in text.splitlines(keepends=True) if line.startswith("3;"))
    return headers + text[end:], terse, text[start:end]


@pytest.mark.parametrize("name", ["randrw_gr", "randread_jobs", "seqwrite_rate", "randread_bits"])
def test_normal_terse_and_json_of_one_run_give_the_same_figures(name: str) -> None:
    normal, terse, raw = _three_forms(FORMS / f"{name}.txt")
    results = {form: result_from_data(data) for form, data in (
        ("normal", fio_text.normal_to_data(normal)), ("terse", fio_terse.terse_to_data(terse)),
        ("json", json.loads(raw)))}
    exact = results["json"]
    for form, found in results.items():
        for side in ("read", "write"):
            want, got = getattr(exact, side), getattr(found, side)
            # to the printed precision (terse prints whole IOPS)
            assert got.iops == pytest.approx(want.iops, rel=0.006, abs=1.0), (form, side)
            assert got.bw_bytes == pytest.approx(want.bw_bytes, rel=0.006, abs=1024), (form, side)
            assert got.runtime_ms == want.runtime_ms, (form, side)
            assert got.clat.mean_ns == pytest.approx(want.clat.mean_ns, rel=0.001, abs=1000)
            if want.clat.p(99.0):
                # normal and terse print microseconds: within one of them
                assert got.clat.p(99.0) == pytest.approx(want.clat.p(99.0), abs=1000)
        assert found.usr_cpu == pytest.approx(exact.usr_cpu, abs=0.01)
    assert [d["read_ios"] for d in fio_text.normal_to_data(normal)["disk_util"]] == \
        [d["read_ios"] for d in json.loads(raw)["disk_util"]]


# -- what the output says beyond its figures -----------------------------------------------------
def test_a_figure_the_device_never_served_is_judged_on_the_devices_count() -> None:
    done = judge(str(REAL / "liangruibupt_gp2_100g_randread4k_qd32x16_c4.xlarge_EXTRACTED.txt"),
                 "--volume-type=gp2", "--volume-size=100", "--instance-type=c4.xlarge")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fio counted 4,494,079 reads (24,960 IOPS) but xvdb served 553,560" in done.stdout
    assert "3,074 IOPS measured, 3,000 IOPS expected (gp2 burst" in done.stdout


def test_the_jobs_own_rate_limit_is_the_binding_limit(tmp_path: Path) -> None:
    # as people publish it: the command line, then fio's normal output
    normal, _, raw = _three_forms(FORMS / "seqwrite_rate.txt")
    path = tmp_path / "rate.txt"
    path.write_text("$ fio --name=seqwrite_rate --rw=write --bs=1m --iodepth=2 --rate_iops=40 "
                    "--runtime=3 --time_based\n" + normal)
    (tmp_path / "rate.json").write_text(raw)
    for name in ("rate.txt", "rate.json"):
        done = judge(str(tmp_path / name), "--volume-type=io1", "--volume-size=100",
                     "--volume-iops=4000")
        assert done.returncode == 2, done.stdout + done.stderr
        assert "the job's own rate_iops=40" in done.stdout
        assert "iodepth" not in done.stdout.split("note:")[0]  # not "raise the queue depth"


def test_fios_error_is_said_as_fio_said_it() -> None:
    done = judge(str(DATA / "fio" / "permission_denied.stdout"), "--volume-type=io1",
                 "--volume-size=100", "--volume-iops=4000")
    assert done.returncode == 4, done.stdout + done.stderr
    assert "fio reported error 13" in done.stdout and "Permission denied" in done.stdout
    assert "runtime must be positive" not in done.stdout + done.stderr


def test_a_set_is_judged_against_the_sum_of_its_members_then_the_instance() -> None:
    raid = REAL / "liangruibupt_gp2raid0_4x3000g_randwrite16k_qd32x16_m5.12xlarge_EXTRACTED.txt"
    done = judge(str(raid), "--volume-type=gp2", "--volume-size=3000",
                 "--instance-type=m5.12xlarge", "--volume-count=4")
    assert done.returncode == 0, done.stdout
    assert "36,000 IOPS expected (4 x gp2 baseline 9,000 IOPS" in done.stdout
    alone = judge(str(raid), "--volume-type=gp2", "--volume-size=3000",
                  "--instance-type=m5.12xlarge")
    assert alone.returncode == 2 and "far above" not in alone.stdout.split("note")[0] or \
        alone.returncode == 1
    members = judge(str(raid), "--member=gp2:3000", "--member=gp2:3000", "--member=gp2:3000",
                    "--member=gp2:3000", "--volume-type=gp2", "--instance-type=m5.12xlarge")
    assert members.returncode == 0 and "4 x gp2 baseline" in members.stdout


def test_a_directory_is_judged_file_by_file_and_as_json(tmp_path: Path) -> None:
    layout = tmp_path / "bench" / "nvme1n1" / "randread" / "16k"
    layout.mkdir(parents=True)
    for name in ("awssamples_io2_100g_40000iops_randread16k_psync_qd1x16_c6a.xlarge_EXTRACTED.txt",
                 "liangruibupt_io1_2048g_40000iops_randread16k_qd32x16_m5.12xlarge_EXTRACTED.txt"):
        (layout / name).write_text((REAL / name).read_text())
    (layout / "randread-16k_iops.1.log").write_text("1000, 5, 0, 0, 0\n")
    (layout / "notes.md").write_text("# what we measured\n")
    args = ("--volume-type=io2", "--volume-size=2048", "--volume-iops=40000",
            "--instance-type=m5.12xlarge")
    done = judge(str(tmp_path / "bench"), *args)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert len(lines) == 2 and all("EXTRACTED.txt]" in line for line in lines)
    found = json.loads(judge(str(tmp_path / "bench"), *args, "--json").stdout)
    assert [v["outcome"] for v in found["verdicts"]] == ["pass", "pass"]


@pytest.mark.parametrize("args, said", [
    (("--volume-type=io1", "--volume-count=x"), "invalid int value"),
    (("--volume-type=io1", "--bogus"), "unrecognized arguments"),
    (("--volume-type=io1", "--member=io1:100:2000"), "--volume-count"),
])
def test_usage_errors_exit_4_with_a_sentence(args: tuple[str, ...], said: str) -> None:
    target = str(REAL / "liangruibupt_io1_100g_600iops_randwrite16k_qd32x16_c4.xlarge_EXTRACTED.txt")
    extra = ("--volume-count=3",) if any(a.startswith("--member") for a in args) else ()
    done = judge(target, *args, *extra)
    assert done.returncode == 4, done.stdout + done.stderr
    assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr
    assert said in done.stderr


def test_a_file_that_is_not_fio_output_is_refused_with_a_sentence(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("we ran fio and it was fast\n")
    done = judge(str(path), "--volume-type=gp3", "--volume-size=100")
    assert done.returncode == 4 and "holds no fio output" in done.stderr


# -- the instance table ---------------------------------------------------------------------------
def test_every_row_of_the_instance_table_is_its_source_record() -> None:
    import gzip

    moto = pytest.importorskip("moto")
    from pytest_ebsperf.awsmodel import instance_data

    source = Path(moto.__file__).parent / "ec2" / "resources" / "instance_types.json.gz"
    with gzip.open(source) as handle:
        records = json.load(handle)
    table = json.loads((Path(instance_data.__file__).parent.parent / "data" /
                        "instance_types.json").read_text())
    assert table["source"].startswith(f"moto {moto.__version__}")
    assert len(table["types"]) == len(records) >= 1200
    for name, record in records.items():
        info = (record.get("EbsInfo") or {}).get("EbsOptimizedInfo")
        row = instance_data.EBS_OPTIMIZED[name]
        if info is None:
            assert row is None, name
            continue
        assert row == (info["BaselineIops"], info["BaselineThroughputInMBps"],
                       info["MaximumIops"], info["MaximumThroughputInMBps"]), name


def test_the_published_instance_types_are_known() -> None:
    from pytest_ebsperf import awsmodel
    for name in ("r5b.large", "c6a.xlarge", "r6a.xlarge", "c6id.4xlarge", "m1.large"):
        assert awsmodel.ebs_limits(name) is not None, name
    assert awsmodel.ebs_limits("r5b.large").max_iops == 43_333


def test_status_interval_reports_are_one_run_each_read_from_its_prompted_command_line() -> None:
    """Five fio runs pasted with a shell prompt before each command (fio 3.1, buffered libaio
    at QD 1, ``--status-interval=1``: two or three cumulative reports of the same pid per
    run). Each run is its last report, not one run per report (12 before), and its pattern
    comes from its own command line (the prompt hid it: all five were refused without --rw,
    and with --rw=randwrite the reads were judged as writes)."""
    text = (FORMS / "status_interval_5_runs.txt").read_text()
    runs = fio_text.split_runs(text)
    patterns = [fio_text.command_options(run).get("rw") for run in runs]
    assert patterns == ["randwrite", "randread", "write", "read", "randrw"]
    first = fio_text.normal_to_data(runs[0])
    assert first["status_reports"] == 2 and len(first["jobs"]) == 1
    # the last report's cumulative count (13,808 writes at the first report)
    assert first["jobs"][0]["write"]["total_ios"] == 14509
    assert [d["name"] for d in first["disk_util"]] == ["dm-0", "sda"]


def test_buffered_libaio_at_qd_1_is_queue_depth_bound_by_its_total_latency() -> None:
    """Buffered libaio does its I/O at submission: slat 1.6 ms, clat p5 2.3 µs. Little's law
    needs the whole time per I/O, so QD 1 allows about 1,000 IOPS, not 440,000: a QD-1 run
    cannot show gp2's 3,000 IOPS, and is not the volume's FAIL (B-SLA)."""
    done = judge(str(FORMS / "status_interval_5_runs.txt"), "--volume-type=gp2",
                 "--volume-size=100")
    verdicts = [line for line in done.stdout.splitlines() if "B-SLA" in line and
                not line.startswith(" ")]
    assert len(verdicts) == 5, done.stdout + done.stderr
    assert "randread 4KiB QD1x1" in verdicts[1]
    assert verdicts[1].startswith("INCONCLUSIVE") and "QD 1 x 1 ms allows at most 1,000 IOPS" \
        in verdicts[1]
    assert not any(line.startswith("FAIL") for line in verdicts), done.stdout


#: The second set (tests/data/realebs2, with FACTS.tsv): what a careful engineer concludes.
#: None: refused with a sentence (a gp2 of unknown size: its size sets its cap).
EXPECTED2 = {
    "vpscomparison_gp2_8g_randwrite4k_libaioqd4x1_t2.micro_EXTRACTED.txt": "pass",
    "vpscomparison_gp2_8g_randread4k_libaioqd4x1_t2.micro_EXTRACTED.txt": "pass",
    "vpscomparison_gp2_8g_write4k_libaioqd4x1_t2.micro_EXTRACTED.txt": "info",
    "vpscomparison_gp2_8g_read4k_libaioqd4x1_t2.micro_EXTRACTED.txt": "info",
    "vpscomparison_gp2_8g_write4k_posixaioqd4x1_t2.micro_EXTRACTED.txt": "info",
    "vpscomparison_gp2_8g_read4k_posixaioqd4x1_t2.micro_EXTRACTED.txt": "info",
    "vpscomparison_gp2_8g_randrw40_4k_libaioqd4x1_t2.micro_EXTRACTED.txt": "pass",
    "bitofsky_gp2_1000g_randread16k_psyncqd1x16_r5.large_EXTRACTED.txt": "pass",
    "bitofsky_gp3_1000g_3000iops_250mibs_randread16k_psyncqd1x16_r5.large_EXTRACTED.txt": "pass",
    "bitofsky_gp2_1000g_randwrite16k_psyncqd1x16_r5.large_EXTRACTED.txt": "pass",
    "bitofsky_gp3_1000g_3000iops_250mibs_randwrite16k_psyncqd1x16_r5.large_EXTRACTED.txt": "pass",
    "s3bfg_io1raid0_6xunknowng_6x2500iops_randwrite64k_psyncqd1x16_m5d.4xlarge_EXTRACTED.txt":
        "pass",
    "s3bfg_gp2_unknowng_randwrite64k_psyncqd1x16_m5d.4xlarge_EXTRACTED.txt": None,
    "s3bfg_gp2_unknowng_randwrite64k_psyncqd8x16_m5d.4xlarge_EXTRACTED.txt": None,
    "s3bfg_io1raid0_6xunknowng_6x2500iops_randwrite64k_psyncqd8x32_m5d.4xlarge_EXTRACTED.txt":
        "pass",
    "s3bfg_instancestore_600g_randwrite4m_psyncqd1x32_m5d.8xlarge_EXTRACTED.txt": "info",
    "s3bfg_instancestore_300g_randwrite64k_psyncqd8x32_m5d.4xlarge_EXTRACTED.txt": "info",
    "s3bfg_io1_300g_15000iops_randwrite32k_psyncqd1xunknown_m5d.8xlarge_EXTRACTED.txt": "pass",
    "s3bfg_io1_300g_15000iops_randwrite128k_psyncqd1xunknown_m5d.8xlarge_EXTRACTED.txt": "pass",
    "s3bfg_io1_300g_15000iops_randwrite256k_psyncqd1xunknown_m5d.8xlarge_EXTRACTED.txt": "pass",
    "s3bfg_io1_300g_15000iops_randwrite4m_psyncqd1x32_m5d.8xlarge_EXTRACTED.txt": "pass",
    "s3bfg_io1_100g_5000iops_randwrite32k_psyncqd1xunknown_m5d.8xlarge_EXTRACTED.txt": "pass",
    "s3bfg_instancestore_2x300g_raid0_randwrite4m_psyncqd1x16_m5d.4xlarge_EXTRACTED.txt": "info",
    "s3bfg_instancestore_2x600g_raid0_randwrite4m_psyncqd1x32_m5d.8xlarge_EXTRACTED.txt": "info",
    "s3bfg_io1raid0_6xunknowng_6x2500iops_randwrite4m_psyncqd1x16_m5d.4xlarge_EXTRACTED.txt":
        "pass",
}


def test_every_output_of_the_second_set_has_an_expected_verdict() -> None:
    assert {row["file"] for row in realebs.facts("realebs2")} == set(EXPECTED2)


@pytest.mark.parametrize("row", realebs.facts("realebs2"), ids=lambda row: row["file"][:60])
def test_every_output_of_the_second_set_is_read_and_judged(row: dict[str, str]) -> None:
    """25 outputs from 3 other sources (fio 2.14-3.16): each read, no traceback, and the
    verdict a careful engineer gives with the facts FACTS.tsv holds; four are runs cut down
    to a job header and the group's aggregate line (judged on that line's bytes)."""
    done = judge(str(realebs.SETS["realebs2"] / row["file"]), *options(row), "--json")
    assert "Traceback" not in done.stderr, done.stderr
    expected = EXPECTED2[row["file"]]
    if expected is None:
        assert done.returncode == 4 and "needs a size" in done.stderr, done.stderr
        return
    found = json.loads(done.stdout)
    assert not found["refused"], found["refused"]
    outcomes = {v["outcome"] for v in found["verdicts"]}
    assert outcomes == {expected}, [v["message"] for v in found["verdicts"]]
    assert not any("fio used 0 %" in v["message"] for v in found["verdicts"])


# -- burst credits that ran out while fio ran (B-GP2) ---------------------------------------------
POSIX_READ = DATA / "realebs2" / "vpscomparison_gp2_8g_read4k_posixaioqd4x1_t2.micro_EXTRACTED.txt"
GP2_8 = ("--volume-type=gp2", "--volume-size=8", "--instance-type=t2.micro")


def test_status_lines_are_read_in_both_fio_forms() -> None:
    assert fio_text.normal_to_data(POSIX_READ.read_text())["status_iops"] == \
        [{"read": 100.0, "write": 0.0}]
    two = ("Jobs: 16 (f=16): [w(16)] [50.0% done] [0KB/48640KB/0KB /s] [0/3040/0 iops] "
           "[eta 01m:00s]\rJobs: 16 (f=16): [w(16)] [100.0% done] [0KB/1600KB/0KB /s] "
           "[0/100/0 iops] [eta 00m:00s]\n")
    assert fio_text._status_iops(two) == [{"read": 0.0, "write": 3040.0},
                                          {"read": 0.0, "write": 100.0}]


def test_a_gp2_whose_credits_ran_out_is_named_not_failed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_ebsperf.verdicts.judge import main
    # the published run (sequential, recorded): the note says why it averaged 130 IOPS
    assert main([str(POSIX_READ), *GP2_8]) == 0
    out = capsys.readouterr().out
    assert out.startswith("INFO ")
    assert "burst credits ran out: fio's last status line shows 100 IOPS, the baseline of " \
           "this gp2 8 GiB on t2.micro (100 IOPS), and the run averaged 130 IOPS" in out
    # the same run as if it had been random (a floor of 3,000 IOPS): not a FAIL of the volume
    random = tmp_path / "random.txt"
    random.write_text(POSIX_READ.read_text().replace("--rw=read ", "--rw=randread ")
                      .replace("rw=read,", "rw=randread,"))
    assert main([str(random), *GP2_8]) == 2
    out = capsys.readouterr().out
    assert out.startswith("INCONCLUSIVE ") and "randread 4KiB" in out
    assert "inconclusive: burst credits ran out" in out
    # the results name the limit that bound the run
    assert main([str(random), *GP2_8, "--json"]) == 2
    said = json.loads(capsys.readouterr().out)["verdicts"][0]
    assert said["binding"] == "burst credits"
