"""pytest hooks: options, settings, fixtures and the terminal summary. Wiring only."""

from __future__ import annotations

import importlib
import os
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ebsperf.config.consistency import resolve
from pytest_ebsperf.config.options import OPTIONS, Option
from pytest_ebsperf.config.settings import STRICT_FLAG_ALONE, STRICT_OUTCOMES
from pytest_ebsperf.deferred import later
from pytest_ebsperf.device import lifetime
from pytest_ebsperf.errors import EbsperfError
from pytest_ebsperf.plugin import hookspecs
from pytest_ebsperf.plugin.aws import provisioned_session
from pytest_ebsperf.plugin.hosts import fleet_session
from pytest_ebsperf.plugin.keys import MEASUREMENT_KEY, ROW_KEY, marker_kwargs
from pytest_ebsperf.plugin.outcomes import fail_plainly
from pytest_ebsperf.plugin.state import STATE_KEY, EbsperfPlugin

if TYPE_CHECKING:  # loaded when a check first needs them: a run without checks pays nothing
    from pytest_ebsperf.checks.session import EbsperfSession
    from pytest_ebsperf.plugin import fixture as plugin_fixture
    from pytest_ebsperf.plugin.fixture import Ebsperf
else:
    plugin_fixture = later("pytest_ebsperf.plugin.fixture")

__all__ = ["MEASUREMENT_KEY", "ROW_KEY", "STATE_KEY", "EbsperfPlugin"]

#: Feature modules with hooks of their own (options go into the same "ebsperf" group).
#: Registered by :func:`pytest_addoption`, not through ``pytest_plugins``: pytest looks each
#: ``pytest_plugins`` name up among every installed distribution's entry points first,
#: which cost a pytest start about 10 ms per name.
FEATURE_PLUGINS = (
    "pytest_ebsperf.plugin.credits",
    "pytest_ebsperf.plugin.results",
    "pytest_ebsperf.plugin.aws",
    "pytest_ebsperf.plugin.hosts",
    "pytest_ebsperf.plugin.groups",
)

MARKER_HELP = (
    "ebsperf(volume_type=None, emulated=None, **settings): the volume type a suite checks "
    "(other volumes skip it), the volume --emulate makes for it (a dict of volume facts, e.g. "
    "{'type': 'io1', 'size_gib': 200, 'iops': 2000}) and per-test settings (runtime=..., "
    "iodepth=...), which win over the command line; drains=True: the checks run the burst "
    "bucket dry, so they run after the type's other checks."
)


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """Every option under ``--ebsperf-``; the short forms (``--device``...) are added once
    the other plugins' and the conftests' options are known (:func:`_add_aliases`)."""
    group = parser.getgroup("ebsperf", "block-storage performance claims (pytest-ebsperf)")
    aids = parser.getgroup("ebsperf testing aids", "pytest-ebsperf's testing aids: emulated "
                           "volumes made slow or small on purpose")
    for option in OPTIONS:
        (aids if option.testing_aid else group).addoption(option.canonical,
                                                          **_argparse_kwargs(option))
        if option.ini:  # booleans as booleans (true/false, yes/no, 1/0)
            help_text = f"default for {option.canonical}: {option.help}"
            if option.kind == "bool":
                parser.addini(option.ini, help=help_text, type="bool", default=None)
            else:
                parser.addini(option.ini, help=help_text, type="string", default=None)
    # the feature modules' options follow these, in the same group
    for name in FEATURE_PLUGINS:
        if pluginmanager.is_blocked(name) or pluginmanager.get_plugin(name) is not None:
            continue
        pluginmanager.register(importlib.import_module(name), name)


def _argparse_kwargs(option: Option) -> dict[str, Any]:
    help_text = option.help
    if option.env:
        help_text += f" Environment: {option.env}."
    if option.kind == "bool":
        return {"action": "store_true", "dest": f"ebsperf_{option.dest}", "default": None,
                "help": help_text}
    if option.kind == "outcomes":  # --ebsperf-strict alone, or =inconclusive / =info
        return {"dest": f"ebsperf_{option.dest}", "metavar": "OUTCOMES", "nargs": "?",
                "const": STRICT_FLAG_ALONE, "default": None,
                "help": f"{help_text} Default: {option.default}."}
    if option.default is not None:
        help_text += f" Default: {option.default!r}."
    return {"dest": f"ebsperf_{option.dest}", "metavar": option.metavar, "default": None,
            "help": help_text}


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser,
                                  args: list[str]) -> Generator[None, None, None]:
    """``--ebsperf-strict suites/io1``: argparse would take the path as the flag's value
    (it takes one optionally); a flag followed by anything but a list of outcomes is the
    flag alone. Once the initial conftests are loaded (their options added), the short
    forms of the options join where their names are free."""
    early = early_config.stash.setdefault(EARLY_KEY, BeforeConfigure())
    early.benchmarks_existed = _benchmarks_dir().exists()
    for index, arg in enumerate(args):
        if arg == "--":
            break
        if arg == "--ebsperf-strict" and (index + 1 == len(args)
                                          or not _outcome_list(args[index + 1])):
            args[index] = f"--ebsperf-strict={STRICT_FLAG_ALONE}"
    yield
    early.taken = _add_aliases(parser)


@dataclass
class BeforeConfigure:
    """What the plugin learns before the run object exists (while pytest loads the initial
    conftests): the run object (:data:`STATE_KEY`) holds everything after that."""

    #: The short forms another plugin or a conftest had taken (said once, at configure).
    taken: list[tuple[str, str]] = field(default_factory=list)
    #: Whether pytest-benchmark's default storage (``./.benchmarks``) existed before the run.
    benchmarks_existed: bool = True


EARLY_KEY = pytest.StashKey[BeforeConfigure]()


def _option_names(parser: pytest.Parser) -> set[str]:
    """Every option string the parser holds (all groups, and options outside a group)."""
    names: set[str] = set()
    groups = [*getattr(parser, "_groups", []), getattr(parser, "_anonymous", None)]
    for group in groups:
        for argument in getattr(group, "options", []) or []:
            try:
                names.update(argument.names())
            except AttributeError:
                continue
    return names


def _add_aliases(parser: pytest.Parser) -> list[tuple[str, str]]:
    """Add ``--device`` etc. as aliases of ``--ebsperf-device`` where no one else has the
    name; (alias, canonical) of the ones already taken."""
    names = _option_names(parser)
    group = parser.getgroup("ebsperf")
    aids = parser.getgroup("ebsperf testing aids")
    taken = []
    for option in OPTIONS:
        alias = option.alias
        if alias is None:
            continue
        if alias in names:
            taken.append((alias, option.canonical))
            continue
        kwargs = {**_argparse_kwargs(option), "help": f"short for {option.canonical}"}
        (aids if option.testing_aid else group).addoption(alias, **kwargs)
    return taken


def _benchmarks_dir() -> Path:
    return Path.cwd() / ".benchmarks"


def _forget_empty_benchmarks(config: pytest.Config) -> None:
    """pytest-benchmark makes ``./.benchmarks`` in every run; unless the run asked for its
    storage (a save, a compare, another storage path) an empty one it made is removed."""
    early = config.stash.get(EARLY_KEY, None)
    if early is None or early.benchmarks_existed or hasattr(config, "workerinput"):
        return
    asked = any(config.getoption(name, None) for name in (
        "benchmark_save", "benchmark_autosave", "benchmark_compare", "benchmark_json"))
    storage = str(config.getoption("benchmark_storage", None) or "")
    if asked or storage not in ("", "file://./.benchmarks"):
        return
    try:
        _benchmarks_dir().rmdir()  # only when empty
    except OSError:
        pass


def _outcome_list(text: str) -> bool:
    words = {*STRICT_OUTCOMES, STRICT_FLAG_ALONE, "both", "none", "true", "false", "yes", "no"}
    return all(part.strip().lower() in words for part in text.split(",")) and bool(text)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    early = config.stash.get(EARLY_KEY, None)
    for alias, canonical in early.taken if early is not None else []:
        config.issue_config_time_warning(pytest.PytestConfigWarning(
            f"pytest-ebsperf: {alias} belongs to another plugin or a conftest here; "
            f"use {canonical} for pytest-ebsperf's"), stacklevel=2)
    try:
        settings = resolve(lambda o: config.getoption(f"ebsperf_{o.dest}"), os.environ,
                           lambda o: config.getini(o.ini) if o.ini else None)
    except EbsperfError as exc:
        raise pytest.UsageError(str(exc)) from None
    plugin = EbsperfPlugin(config, settings)
    # SIGTERM (a cancelled CI job) and SIGHUP stop fio and remove what the run made before
    # the process dies of them, as Ctrl-C does.
    lifetime.install()
    if hasattr(config, "workerinput"):
        lifetime.die_with_parent()  # an xdist worker ends with its controller, however it ends

    config.stash[STATE_KEY] = plugin
    config.pluginmanager.register(plugin, "ebsperf-state")
    if settings.emulate and not hasattr(config, "workerinput"):
        plugin.share_path_calibration()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    # Last: the feature modules' own unconfigure (the fleet's ssh connections, the AWS
    # side) read the run object this removes. They are registered from this module's
    # pytest_addoption, which pluggy calls while registering this module, before it adds
    # this hook, so without trylast this one ran first and theirs found nothing to close.
    _forget_empty_benchmarks(config)
    plugin = config.stash.get(STATE_KEY, None)
    if plugin is not None:
        plugin.close()
        config.pluginmanager.unregister(plugin)
        del config.stash[STATE_KEY]


@pytest.fixture(scope="session")
def ebsperf_session(pytestconfig: pytest.Config) -> EbsperfSession:
    """The run-wide :class:`~pytest_ebsperf.checks.session.EbsperfSession`: settings, fio runner,
    the volume under test for each suite and its (real or emulated) device."""
    session: EbsperfSession = pytestconfig.stash[STATE_KEY].session
    return session


@pytest.fixture
def ebsperf(request: pytest.FixtureRequest, ebsperf_session: EbsperfSession,
            ebsperf_provisioned: object, ebsperf_host_id: str | None) -> Iterator[Ebsperf]:
    """Run fio on the volume under test and judge documented claims.

    ``ebsperf.workload(pattern, bs)`` builds a job with a queue depth chosen so the volume is
    the bottleneck; ``check_cap`` / ``check_floor`` / ``check_rel`` / ``check_sweep`` /
    ``record_info`` run it, judge it, add a row to the report and pass, fail (with the claim,
    expected, measured and binding limit) or skip. The suite's volume type comes from
    ``pytest.mark.ebsperf(volume_type=...)``. With ``--ebsperf-provision`` each test runs once
    per provisioned volume (see ``ebsperf_provisioned``).
    """
    markers = marker_kwargs(request.node)
    try:
        settings = ebsperf_session.settings.with_marker(markers)
    except EbsperfError as exc:
        fail_plainly(str(exc), pytrace=False)
    # the run's session, or one derived from it: a fleet host's, the provisioned volume's
    session = fleet_session(request.node, ebsperf_host_id) or \
        provisioned_session(request.config) or ebsperf_session
    if session is not ebsperf_session:
        try:
            settings = session.settings.with_marker(markers)
        except EbsperfError as exc:
            fail_plainly(str(exc), pytrace=False)
    runner = plugin_fixture.Ebsperf(session, request.node, settings, markers.get("volume_type"),
                     emulated=markers.get("emulated"))
    # the check measures under the host's shared measuring lock, so an exclusive hold on
    # another worker (a comparison of real devices, a latency claim, a run measured again)
    # waits for its runs (a burst check's: its whole check)
    with runner.measuring_shared():
        yield runner
