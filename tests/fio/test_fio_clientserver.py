"""fio's client/server mode: servers given as fio writes them, job files, client_stats."""

from __future__ import annotations

import json

import pytest

from pytest_ebsperf.errors import ConfigError
from pytest_ebsperf.fio import clientserver as cs
from pytest_ebsperf.fio.workload import Workload


def test_servers_are_read_as_fio_writes_them():
    found = cs.parse_servers("10.0.0.2,10.0.0.3")
    assert [(s.address, s.port) for s in found] == [("10.0.0.2", 8765), ("10.0.0.3", 8765)]
    ports = cs.parse_servers("ip:10.0.0.2,8799;ip6:fe80::1,8800")
    assert [(s.spec, s.address, s.port) for s in ports] == [
        ("ip:10.0.0.2,8799", "10.0.0.2", 8799), ("ip6:fe80::1,8800", "fe80::1", 8800)]


@pytest.mark.parametrize(("text", "said"), [
    ("10.0.0.2,8765", "separate servers with ';'"),
    ("10.0.0.2,,10.0.0.3", "is not a fio server"),
    ("ip:10.0.0.2,70000;ip:10.0.0.3,1", "out of range"),
    ("a,a", "names a server twice"),
])
def test_bad_server_lists_get_a_sentence(text, said):
    with pytest.raises(ConfigError) as caught:
        cs.parse_servers(text)
    assert said in str(caught.value) and "--ebsperf-fio-servers" in str(caught.value)


def test_the_job_file_holds_the_local_runners_options_but_no_client_only_ones():
    text = cs.job_text(Workload("randread", bs=4096, iodepth=8, runtime_s=5, name="chk"),
                       "/dev/disk/by-path/pci-0000:00", engine="libaio")
    lines = text.splitlines()
    assert lines[0] == "[chk]"
    assert "filename=/dev/disk/by-path/pci-0000\\:00" in lines
    assert {"rw=randread", "bs=4096", "iodepth=8", "time_based", "runtime=5000ms",
            "write_iops_log=ebsperf"} <= set(lines)
    assert not any(line.startswith(("output", "eta", "readonly", "status-interval"))
                   for line in lines)


def _entry(host, name="j", iops=1000.0):
    return {"jobname": name, "groupid": 0, "error": 0, "hostname": host, "port": 8765,
            "job options": {}, "usr_cpu": 1.0, "sys_cpu": 1.0,
            "read": {"io_bytes": int(iops * 4096 * 3), "bw_bytes": iops * 4096, "iops": iops,
                     "runtime": 3000, "total_ios": int(iops * 3),
                     "clat_ns": {"mean": 1000.0, "percentile": {"50.000000": 900}}},
            "write": {"io_bytes": 0, "bw_bytes": 0, "iops": 0, "runtime": 0, "total_ios": 0},
            "trim": {"io_bytes": 0, "bw_bytes": 0, "iops": 0, "runtime": 0, "total_ios": 0}}


def test_client_stats_are_split_per_host_with_the_aggregate_and_the_silent_one(tmp_path):
    report = {"fio version": "fio-3.33", "client_stats": [
        _entry("10.0.0.2", iops=2000), _entry("10.0.0.3", iops=1500),
        _entry("10.0.0.2", name="All clients", iops=3500)]}
    (tmp_path / "ebsperf_iops.1.log.10.0.0.2").write_text("1000, 2001, 0, 0, 0\n"
                                                           "2000, 1999, 0, 0, 0\n")
    servers = cs.parse_servers("10.0.0.2,10.0.0.3,10.0.0.4")
    names = [p.name for p in tmp_path.iterdir()]
    run = cs._parse(json.dumps(report), "<10.0.0.4> fio: failed to connect to 10.0.0.4:8765",
                    servers, names, str(tmp_path), 1)
    assert run.results["10.0.0.2"].total_iops == 2000
    assert run.results["10.0.0.3"].total_iops == 1500
    assert run.results["10.0.0.2"].series["total_iops"].values == (2001.0, 1999.0)
    assert run.aggregate is not None and run.aggregate.total_iops == 3500
    assert run.failed == {"10.0.0.4": "<10.0.0.4> fio: failed to connect to 10.0.0.4:8765"}
