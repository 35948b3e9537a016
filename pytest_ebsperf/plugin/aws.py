"""pytest hooks for AWS: discovery, the initialization read and provisioned matrix runs.

The work happens in plain objects: discovery and the initialization read in
:class:`~pytest_ebsperf.checks.session.EbsperfSession`, every AWS call in :mod:`pytest_ebsperf.aws`.
This module wires them to pytest:

* options ``--ebsperf-provision``, ``--ebsperf-max-cost`` and ``--ebsperf-no-discovery``
  (with ini and environment twins, :mod:`pytest_ebsperf.config.options`), ``--ebsperf-initialize``
  and ``--ebsperf-sweep`` (delete what crashed provisioned runs left behind, then exit);
* the session-scoped ``ebsperf_provisioned`` fixture, parametrized with one volume spec per
  test id (``[gp3-100]``), so pytest groups the tests by volume: each volume is created before
  its first test and deleted after its last, one at a time;
* the "volume facts" section of the terminal summary, from ``EbsperfSession.facts``.

Testing aid: the environment variables ``EBSPERF_SYSFS_ROOT`` and ``EBSPERF_DEV_ROOT`` make
device identification read a fake ``/sys`` and ``/dev`` (the plugin's own tests map a loop
device to a mocked EBS volume with them). Real runs never need them.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

import pytest

from pytest_ebsperf.errors import ConfigError, EbsperfError
from pytest_ebsperf.plugin.outcomes import fail_plainly
from pytest_ebsperf.plugin.run_code import (
    aws_failures,
    aws_instance,
    aws_module,
    aws_pricing,
    awsmodel,
    awsmodel_validation,
    checks_session,
    results_tables,
)
from pytest_ebsperf.plugin.state import STATE_KEY
from pytest_ebsperf.plugin.terminal import terminal_width

if TYPE_CHECKING:  # names for annotations; the modules come from run_code.py
    from pytest_ebsperf.aws import Provisioner, SweepReport
    from pytest_ebsperf.awsmodel.facts import ProvisionedVolume, ProvisioningFacts
    from pytest_ebsperf.awsmodel.volume import Volume
    from pytest_ebsperf.checks.session import EbsperfSession
    from pytest_ebsperf.plugin.state import EbsperfPlugin

SYSFS_ENV = "EBSPERF_SYSFS_ROOT"
DEV_ENV = "EBSPERF_DEV_ROOT"
FIXTURE = "ebsperf_provisioned"
#: Seconds a check needs beyond runtime and ramp (fio start-up, report), and a volume beyond
#: its checks (create, attach, detach, delete), for the cost estimate; both err high.
CHECK_OVERHEAD_S = 10.0
VOLUME_OVERHEAD_S = 300.0
FACT_NAMES = {
    "type": "type", "size_gib": "size (GiB)", "iops": "IOPS",
    "throughput_mibps": "throughput (MiB/s)", "instance_type": "instance type",
    "encrypted": "encrypted", "burst_balance_pct": "burst balance (%)", "nitro": "Nitro",
    "volume_id": "volume id",
}  # fmt: skip


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ebsperf")
    group.addoption(
        "--ebsperf-sweep", action="store_true", dest="ebsperf_sweep", default=False,
        help="delete EBS volumes that crashed --ebsperf-provision runs left behind (tagged "
        "ebsperf:run-id, over an hour old, not attached to another instance), then exit.")


def device_roots(env: Mapping[str, str]) -> dict[str, str]:
    """Where device identification looks for ``/sys`` and ``/dev`` (a testing aid)."""
    return {"sysfs_root": env.get(SYSFS_ENV) or "/sys", "dev_root": env.get(DEV_ENV) or "/dev"}


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    if not config.getoption("ebsperf_sweep"):
        return None
    try:
        report = sweep_now()
    except EbsperfError as exc:
        raise pytest.UsageError(f"--ebsperf-sweep: {exc}") from None
    print(f"ebsperf sweep: {report.sentence()}")
    return 1 if report.failed else 0


def sweep_now() -> SweepReport:
    """Sweep this account and region for leftovers; detach only from this instance."""

    try:
        identity = aws_module.ImdsClient().identity()
    except aws_module.NotOnEc2Error:
        identity = None  # leftovers can be deleted from anywhere; none is detached then
    region = identity.region if identity else None
    clients = aws_module.AwsClients(region_fallback=lambda: region)
    clients.require_credentials()
    return aws_module.sweep_leftovers(clients=clients,
                               instance_id=identity.instance_id if identity else None)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    state = config.stash.get(STATE_KEY, None)
    if state is None:
        return
    state.inputs.initialize = state.settings.initialize
    state.inputs.aws_options = device_roots(os.environ)
    # xdist workers would each provision the whole matrix on the same instance
    parallel = hasattr(config, "workerinput") or bool(config.getoption("numprocesses", None))
    try:
        run = AwsRun(state, parallel=parallel)
    except EbsperfError as exc:
        raise pytest.UsageError(str(exc)) from None
    state.aws = run
    config.pluginmanager.register(run, "ebsperf-aws")


def pytest_unconfigure(config: pytest.Config) -> None:
    run = aws_run(config)
    if run is not None:
        run.close()
        config.pluginmanager.unregister(run)
        config.stash[STATE_KEY].aws = None


def aws_run(config: pytest.Config) -> AwsRun | None:
    """The run's AWS side (made at configure), or None."""
    state = config.stash.get(STATE_KEY, None)
    return cast("AwsRun | None", state.aws if state is not None else None)


def provisioned_session(config: pytest.Config) -> EbsperfSession | None:
    """The session of the provisioned volume attached now, or None (no provisioning)."""
    run = aws_run(config)
    return run.attached_session if run is not None else None


@pytest.fixture(scope="session")
def ebsperf_provisioned(request: pytest.FixtureRequest) -> Iterator[tuple[Volume, str] | None]:
    """With ``--ebsperf-provision``: ``(Volume, device)`` of the volume the test runs on.

    Parametrized with one volume spec per test id (``[gp3-100]``, ``[io1-200-4000]``): the
    volume is created, tagged and attached before its first test, and detached and deleted
    after its last, also when tests fail or the run is interrupted. None otherwise.
    """
    spec = getattr(request, "param", None)
    if spec is None:
        yield None
        return
    run = aws_run(request.config)
    assert run is not None  # made at configure, with the parametrization it serves
    with run.attached(spec) as pair:
        yield pair


def spec_id(spec: Volume) -> str:
    """Test id of a volume spec: ``gp3-100``, ``io1-200-4000``, ``gp3-500-6000-500``."""
    parts = [spec.type, spec.size_gib, spec.iops, spec.throughput_mibps]
    return "-".join(f"{part:g}" if isinstance(part, float) else str(part)
                    for part in parts if part is not None)


def spec_text(spec: Volume) -> str:
    """A volume spec as the user wrote it: ``io1:200:4000``."""
    return spec_id(spec).replace("-", ":")


def suite_type(item: pytest.Item) -> str | None:
    """The volume type the closest ``ebsperf`` marker names, if any."""
    for marker in item.iter_markers("ebsperf"):
        if marker.kwargs.get("volume_type"):
            return str(marker.kwargs["volume_type"])
    return None


class AwsRun:
    """Provisioned matrix runs and the volume-facts summary; registered as a plugin."""

    def __init__(self, state: EbsperfPlugin, *, parallel: bool = False) -> None:
        self._state = state
        self.settings = state.settings
        self.specs = self._parse_specs(parallel)
        self.provisioner: Provisioner | None = None
        self.lines: list[str] = []
        #: The instance's EBS-optimized limits as DescribeInstanceTypes gave them, if asked.
        self.instance_limits: awsmodel.EbsLimits | None = None
        #: The session of the volume attached now (:meth:`attached`): the run's, knowing it.
        self.attached_session: EbsperfSession | None = None

    @property
    def session(self) -> EbsperfSession:
        return self._state.session

    def _parse_specs(self, parallel: bool) -> list[Volume]:
        s = self.settings
        if s.max_cost < 0:
            raise ConfigError(f"--ebsperf-max-cost is a limit in US dollars, got {s.max_cost:g} "
                              f"(from {s.origin.get('max_cost')}); pass 0 or more.")
        if not s.provision:
            return []
        where = s.origin.get("provision", "--ebsperf-provision")
        other = "--emulate" if s.emulate else f"--device={s.device}" if s.device else None
        if other:
            raise ConfigError(f"--ebsperf-provision (from {where}) creates its own volumes, so "
                              f"it excludes {other}. Pass one of them.")
        if parallel:
            raise ConfigError(f"--ebsperf-provision (from {where}) attaches one volume at a time "
                              "to this instance; it cannot be split over xdist workers. Drop -n.")

        specs = aws_module.parse_provision_spec(s.provision, source=where)
        twice = [spec_text(v) for v, n in Counter(specs).items() if n > 1]
        if twice:
            raise ConfigError(f"--ebsperf-provision (from {where}) lists {', '.join(twice)} "
                              "more than once; each volume spec runs the suites once.")
        return specs

    # -- parametrization and cost ------------------------------------------------------------
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if not self.specs or FIXTURE not in metafunc.fixturenames:
            return
        wanted = suite_type(metafunc.definition)
        params = [pytest.param(spec, id=spec_id(spec), marks=() if wanted in (None, spec.type)
                               else pytest.mark.skip(reason=f"this suite checks {wanted} "
                                                     f"volumes; {spec_text(spec)} is not one."))
                  for spec in self.specs]  # fmt: skip
        metafunc.parametrize(FIXTURE, params, indirect=True, scope="session")

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self.specs:
            self._initialization_lines()
            return
        try:
            self._start_provisioning(session.items, bool(session.config.option.collectonly))
        except EbsperfError as exc:
            raise pytest.UsageError(f"--ebsperf-provision: {exc}") from None

    def checks_per_spec(self, items: list[pytest.Item]) -> Counter[Volume]:
        """How many tests will run on each provisioned volume (skipped ones do not count)."""
        counts: Counter[Volume] = Counter()
        for item in items:
            params = getattr(getattr(item, "callspec", None), "params", {})
            if FIXTURE in params and item.get_closest_marker("skip") is None:
                counts[params[FIXTURE]] += 1
        return counts

    def _start_provisioning(self, items: list[pytest.Item], collect_only: bool) -> None:
        counts = self.checks_per_spec(items)
        if not counts:
            return
        per_check = self.settings.runtime_s + self.settings.ramp_s + CHECK_OVERHEAD_S
        hold_s = max(counts.values()) * per_check + VOLUME_OVERHEAD_S
        specs = [spec for spec in self.specs if counts[spec]]
        provisioner = aws_module.Provisioner(specs, duration_s=hold_s,
                                             max_cost_usd=self.settings.max_cost,
                                             **self.session.aws_options)
        facts = self.session.facts.setdefault("provisioning", {})
        facts.update({"specs": [spec_text(s) for s in specs], "run_id": provisioner.run_id,
                      "max_cost_usd": self.settings.max_cost, "volumes": []})
        if collect_only:
            self._cost_line(provisioner.estimate(), facts)
            return
        self.provisioner = provisioner.__enter__()  # credentials, estimate, cost refusal
        self._cost_line(provisioner.estimate(), facts)
        sweep = aws_module.sweep_leftovers(clients=provisioner.clients,
                                    instance_id=provisioner.identity.instance_id)
        facts["sweep"] = sweep.sentence()
        self.lines.append(f"ebsperf: leftovers of earlier runs: {sweep.sentence()}")
        self._instance_limits(provisioner)

    def _cost_line(self, estimate: Any, facts: ProvisioningFacts) -> None:
        facts.update({"cost": estimate.sentence(), "cost_usd": round(estimate.total_usd, 6)})
        self.lines.append(f"ebsperf: estimated cost: {estimate.sentence()}; the limit is "
                          f"${self.settings.max_cost:g} (--ebsperf-max-cost). Each volume is "
                          "held only while its own tests run.")

    def _instance_limits(self, provisioner: Provisioner) -> None:
        name = provisioner.identity.instance_type
        try:
            found = aws_instance.describe_instance_type(provisioner.clients.ec2(), name)
        except aws_failures.AwsError as exc:
            self.session.facts["provisioning"]["instance_limits"] = str(exc)
            return
        if found is not None and found.ebs is not None:
            self.instance_limits = awsmodel.as_ebs_limits(found.ebs)

    def _initialization_lines(self) -> None:
        if not self._state.session_made:
            return  # no check asked for the volume: nothing was discovered or read

        init, found = self.session.facts.get("initialization"), self.session.found
        if not init or found is None or found.skip_reason is None:
            return
        if self.session.initialize:
            self.lines.append(f"ebsperf: {found.path} is {init['state']} initialized; every "
                              f"block is read once before the first check (at least "
                              f"{aws_pricing.duration(init['read_estimate_s'])}).")
        else:
            self.lines.append(f"ebsperf: checks of {found.path} are skipped: {found.skip_reason}")

    def pytest_report_collectionfinish(self) -> list[str]:
        return self.lines

    # -- one volume at a time ----------------------------------------------------------------
    @contextmanager
    def attached(self, spec: Volume) -> Iterator[tuple[Volume, str]]:
        """Provision ``spec``, make it the volume under test, and always remove it again."""
        provisioner = self.provisioner
        if provisioner is None:
            pytest.skip("provisioning did not start (collection was interrupted).")
        label = spec_text(spec)
        try:
            volume, device = provisioner.provision(spec)

            volume = awsmodel_validation.validate(volume)
        except EbsperfError as exc:
            self._release_all(provisioner)
            fail_plainly(f"Could not provision {label} for these tests: {exc}", pytrace=False)
        record: ProvisionedVolume = {"spec": label, "volume_id": volume.volume_id,
                                     "device": device, "deleted": False}
        self.session.facts["provisioning"]["volumes"].append(record)

        found = checks_session.FoundVolume(volume, device, f"provisioned as {label}")
        run = self.session if self.instance_limits is None else \
            self.session.knowing(instance_limits=self.instance_limits)
        self.attached_session = run.with_volume(found)
        self.session.record_volume(device, volume, spec=label)
        try:
            yield volume, device
        finally:
            self.attached_session = None
            self.session.resources.forget(device)  # the next volume may come under its path
            record["deleted"] = self._release(provisioner, str(volume.volume_id))

    def _release(self, provisioner: Provisioner, volume_id: str) -> bool:
        try:
            provisioner.release(volume_id)
        except Exception as exc:  # noqa: BLE001 - the final clean-up retries; say why here
            provisioner.notes.append(f"Removing {volume_id} after its tests failed ({exc}); "
                                     "the clean-up at the end of the run tried again.")
            return False
        return True

    def _release_all(self, provisioner: Provisioner) -> None:
        try:
            provisioner.cleanup()
        except EbsperfError as exc:
            provisioner.notes.append(str(exc))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.close() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # volumes left behind cost money

    def close(self) -> bool:
        """Remove every volume this run created; False (and a note) if some are left."""
        provisioner, self.provisioner = self.provisioner, None
        if provisioner is None:
            return True
        facts = self.session.facts["provisioning"]
        try:
            provisioner.cleanup()
        except EbsperfError as exc:
            facts["cleanup"] = str(exc)
            return False
        finally:
            facts["notes"] = list(provisioner.notes)
        facts["cleanup"] = f"every volume of run {provisioner.run_id} was deleted."
        return True

    # -- report ------------------------------------------------------------------------------
    def summary_lines(self) -> list[str]:
        if not self._state.session_made:
            return []
        return facts_lines(self.session.facts)


#: The volume facts come first in the summary.
SUMMARY_ORDER = 10


def pytest_ebsperf_summary_sections(config: pytest.Config
                                    ) -> list[tuple[int, str, list[str]]]:
    """The "volume facts" part of the terminal summary (none when no check ran)."""
    run = aws_run(config)
    lines = run.summary_lines() if run is not None else []
    if not lines:
        return []

    width = terminal_width(config)
    fitted = [part for line in lines
              for part in results_tables.wrap_text(
                  line, width, indent=" " * (len(line) - len(line.lstrip()) + 4))]
    return [(SUMMARY_ORDER, "ebsperf volume facts", fitted)]


def facts_lines(facts: Mapping[str, Any]) -> list[str]:
    """The "volume facts" summary: each fact with its source, then notes and run facts."""
    lines: list[str] = []
    for entry in facts.get("volumes", []):
        lines.append(f"{entry['device']}: {entry['label']}")
        for name, fact in entry["facts"].items():
            value = fact["value"]
            shown = ("yes" if value else "no") if isinstance(value, bool) else f"{value}"
            lines.append(f"  {FACT_NAMES.get(name, name):<20} {shown:<24} {fact['source']}")
        lines.extend(f"  note: {note}" for note in entry.get("notes", []))
    if facts.get("volumes") and "discovery" in facts:
        lines.append(f"discovery: {facts['discovery'].get('status', 'not tried')}")
    init = facts.get("initialization")
    if init:
        done = f"read in {init['read_s']} s" if init.get("read_s") is not None else "not read"
        lines.append(f"initialization: {init['state']} when the run started; {done}.")
    run = facts.get("provisioning")
    if run:
        lines.extend(f"provisioning {key}: {run[key]}" for key in ("cost", "sweep") if key in run)
        lines.extend(f"provisioning note: {note}" for note in run.get("notes", []))
        if "cleanup" in run:
            lines.append(f"provisioning clean-up: {run['cleanup']}")
    return lines
