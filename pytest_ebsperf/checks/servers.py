"""Checks through fio's client/server mode (``--ebsperf-fio-servers``): every check runs once,
on every server at the same time, and each host is judged against its own volume.

The hosts run ``fio --server`` (the docs say how to start it); their devices and volume facts
come from the hosts file (``--ebsperf-hosts-file``, a table per server) or the command line.
One fio client sends each server its job file (``fio --client=A a.fio --client=B b.fio``),
fio reports each server's numbers and, with several, ``All clients``; the per-second logs come
back per host, so the duty-cycle statistics are the same as for a local run.

A check's rows: one per host (PASS/FAIL/INCONCLUSIVE with the host in the Host column), one
for a server that did not answer, and an INFO row for all hosts together against the sum of
their expectations (a set spread over hosts). The test fails when any host fails or did not
answer, and its message names them.

Writes are refused: a fio server cannot be asked whether its device is mounted, holds a
filesystem or is the root disk. Measure writes over ssh (``--hosts``), where every refusal is
checked on the host.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_ebsperf import awsmodel
from pytest_ebsperf.awsmodel.volume_types import is_instance_store
from pytest_ebsperf.checks import fleet
from pytest_ebsperf.checks.core import _latency_percentiles
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.emulate.target import SuiteMismatch, volume_from_settings
from pytest_ebsperf.errors import EbsperfError, VolumeSpecError
from pytest_ebsperf.fio import clientserver
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.results import report
from pytest_ebsperf.results.records import measurement_facts
from pytest_ebsperf.units import format_quantity
from pytest_ebsperf.verdicts import plain, verdict
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict

if TYPE_CHECKING:
    from pytest_ebsperf.awsmodel.types import Expectation
    from pytest_ebsperf.awsmodel.volume import Volume
    from pytest_ebsperf.checks.core import CheckCore, FirstRun


@dataclass(frozen=True)
class ServerHost:
    """One fio server of the fleet with its settings (its device and volume facts)."""

    server: clientserver.FioServer
    settings: Settings
    facts: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"fio://{self.server.address}"


def server_hosts(settings: Settings, entries: Mapping[str, Mapping[str, Any]]
                 ) -> list[ServerHost]:
    """The servers of ``--ebsperf-fio-servers`` with their facts from the hosts file."""

    found = []
    for server in clientserver.parse_servers(settings.fio_servers or ""):
        facts = dict(entries.get("defaults", {}))
        for key in (server.spec, server.address):
            if key in entries:
                facts.update(entries[key])
                break
        host = fleet.FleetHost(f"fio://{server.address}", server.address, None, facts,
                               spec=server.spec)
        origin = f"hosts file {settings.hosts_file}" if settings.hosts_file else "command line"
        mine = fleet.settings_for(settings, host, origin)
        found.append(ServerHost(server, dataclasses.replace(mine, host="local://"), facts))
    return found


def _hosts(runner: CheckCore, claim: str, what: str, workload: Workload, metric: str,
           credits: bool | None
           ) -> tuple[list[tuple[ServerHost, Volume, Expectation, Workload]], list[str]]:
    """Each server with its volume, expectation and job, and the hosts of another type left
    out (writes refused; none left: skipped)."""
    if workload.writes:
        runner.refuse(f"{claim}: writes through fio servers are refused: a fio server cannot "
                      "be asked whether its device is mounted, holds data or is the root disk. "
                      "Measure writes over ssh with --hosts, where each refusal is checked on "
                      "the host.")
    hosts: list[tuple[ServerHost, Volume, Expectation, Workload]] = []
    skipped: list[str] = []
    for host in runner.session.fio_servers:
        try:
            volume = volume_from_settings(host.settings, runner.suite_type,
                                          runner.emulated_default)
        except SuiteMismatch as exc:
            skipped.append(f"{host.label}: {exc}")
            continue
        except VolumeSpecError as exc:
            runner.refuse(f"{host.label}: {exc}")
        if not host.settings.device:
            runner.refuse(f"{host.label}: no device; give it in the hosts file "
                          "(--ebsperf-hosts-file) or with --device.")
        expectation = _expectation(runner, claim, what, volume, workload, metric, credits)
        hosts.append((host, volume, expectation, _tuned(runner, volume, workload,
                                                       expectation)))
    if not hosts:
        runner.skip("; ".join(skipped))
    return hosts, skipped


def first_on_servers(runner: CheckCore, claim: str, what: str, workload: Workload, *,
                     metric: str = "iops", credits: bool | None = None) -> FirstRun:
    """What :func:`check_on_servers` runs: the first host's job (the plan shows one)."""
    return _hosts(runner, claim, what, workload, metric, credits)[0][0][3], runner.target


def check_on_servers(runner: CheckCore, claim: str, what: str, workload: Workload, *,
                     metric: str = "iops", credits: bool | None = None) -> Verdict:
    """Run ``workload`` on every server at once; judge each host; decide once."""
    hosts, skipped = _hosts(runner, claim, what, workload, metric, credits)
    started = time.perf_counter()
    engine = workload.engine if workload.engine != "auto" else "libaio"
    jobs = {host.server: clientserver.job_text(job.replace(engine=engine),
                                               str(host.settings.device), engine=engine)
            for host, _, _, job in hosts}
    runner.announce(f"{claim}: {workload.label()} on {len(jobs)} fio server(s) at once")
    try:
        run = clientserver.run_clients(jobs, fio=runner.settings.fio,
                                       timeout_s=workload.runtime_s + workload.ramp_s + 120)
    except EbsperfError as exc:
        runner.refuse(f"{claim}: {exc}")
    verdicts: list[Verdict] = []
    policy = runner.session.policy.split(len(hosts))
    for host, volume, expectation, job in hosts:
        result = run.results.get(host.server.address)
        if result is None:
            found = Verdict(Outcome.FAIL, claim, what, expectation.value, None,
                            expectation.unit, "unreachable",
                            f"unreachable: {run.failed.get(host.server.address, '')}",
                            f"{what} on {host.label}: the fio server did not answer "
                            f"({run.failed.get(host.server.address, 'no result')}).",
                            expectation.policy)
            _row(runner, found, host, volume, job, None)
            verdicts.append(found)
            continue
        found = verdict.judge(expectation, result, job, metric=metric, cpu_count=None,
                              policy=policy)
        _row(runner, found, host, volume, job, result)
        _measurement(runner, host, volume, job, result)
        verdicts.append(found)
    if run.aggregate is not None and len(run.results) > 1:
        total = sum(e.value for h, _, e, _ in hosts if h.server.address in run.results)
        unit = hosts[0][2].unit
        together = plain.judge_info(
            claim, f"{what}, all {len(run.results)} hosts together", run.aggregate,
            unit=unit, expected=total,
            notes=[("fio's All clients: the hosts measured at the same time, against the sum "
                   "of their expectations (a set spread over hosts)")])
        runner.record("row", {**report.row_from_verdict(
            together, volume_label="all hosts", workload_label=workload.label(),
            nodeid=runner.nodeid, fio_summary={}), "host": "all"})
    decided = _decide(claim, what, verdicts, hosts, skipped)
    runner.verdicts.append(decided)
    runner.announce(f"{claim}: {decided.reason} ({time.perf_counter() - started:.1f} s)")
    return runner.decided(decided)


def _expectation(runner: CheckCore, claim: str, what: str, volume: Volume,
                 workload: Workload, metric: str, credits: bool | None) -> Expectation:
    if is_instance_store(volume.type):
        return awsmodel.floor_expectation(claim, what, volume, workload)
    use_credits = volume.credits_assumed if credits is None else credits
    return awsmodel.cap_expectation(claim, what, volume, workload, credits=use_credits,
                                  metric=metric, era=runner.settings.era)


def _tuned(runner: CheckCore, volume: Volume, workload: Workload,
           expectation: Expectation) -> Workload:
    """The host's own queue depth (Little's law for its volume), unless the user set one."""
    rate = expectation.value if expectation.unit == "IOPS" else expectation.value / workload.bs
    s = runner.settings
    return awsmodel.plan_queue(volume, workload, rate, cpu_count=runner.session.cpu_count,
                           iodepth=s.iodepth, numjobs=s.numjobs)


def _row(runner: CheckCore, found: Verdict, host: ServerHost, volume: Volume,
         job: Workload, result: Any) -> None:
    summary: dict[str, Any] = {}
    if result is not None:

        summary = {"fio_version": result.fio_version,
                   "measured_s": round(max(result.read.runtime_ms,
                                           result.write.runtime_ms) / 1000.0, 3),
                   "planned_s": job.runtime_s, **_latency_percentiles(result, job)}
    row = report.row_from_verdict(found, volume_label=f"{volume.label()} "
                                  f"({host.settings.device})", workload_label=job.label(),
                                  nodeid=runner.nodeid, fio_summary=summary)
    row["host"] = host.label
    runner.record("row", row)


def _measurement(runner: CheckCore, host: ServerHost, volume: Volume, job: Workload,
                 result: Any) -> None:
    runner.record("measurement", {
        "phase": "steady", "host": host.label,
        "volume": f"{volume.label()} ({host.settings.device})", "title": job.title,
        "pattern": job.pattern, "bs": job.bs, "iops": result.total_iops,
        "bw_bytes": result.total_bw_bytes, "workload": job.label(), "wall_s": None,
        "fio_wall_s": None, "kernel": None, "ebs_nvme": None, "volumes": None,
        "fio_options": [],
        **measurement_facts(job, result, volume, role="device",
                            device=str(host.settings.device), emulated=False,
                            nodeid=runner.nodeid),
    })


def _decide(claim: str, what: str, verdicts: list[Verdict],
            hosts: list[tuple[ServerHost, Any, Any, Any]], skipped: list[str]) -> Verdict:
    """One outcome for the test: FAIL if any host failed or did not answer."""
    labels = [h.label for h, _, _, _ in hosts]
    bad = [(label, v) for label, v in zip(labels, verdicts) if v.outcome is Outcome.FAIL]
    open_ = [(label, v) for label, v in zip(labels, verdicts)
             if v.outcome is Outcome.INCONCLUSIVE]
    parts = [f"{label}: {format_quantity(v.measured, v.unit)} - {v.reason}"
             for label, v in zip(labels, verdicts)]
    tail = f" Not this suite's: {'; '.join(skipped)}." if skipped else ""
    if bad:
        names = ", ".join(label for label, _ in bad)
        message = (f"{what}: {len(bad)} of {len(verdicts)} host(s) fall short ({names}). "
                   f"{'; '.join(parts)}.{tail}\n" + "\n".join(v.message for _, v in bad))
        outcome = Outcome.FAIL
    elif open_:
        message = f"{what}: inconclusive on {', '.join(n for n, _ in open_)}. {'; '.join(parts)}."
        outcome = Outcome.INCONCLUSIVE
    else:
        message = f"{what}: every host holds the claim. {'; '.join(parts)}.{tail}"
        outcome = Outcome.PASS
    first = verdicts[0]
    return Verdict(outcome, claim, what, first.expected, first.measured, first.unit,
                   "fleet", f"{len(verdicts) - len(bad)} of {len(verdicts)} hosts pass",
                   message, first.policy, {"hosts": labels})
