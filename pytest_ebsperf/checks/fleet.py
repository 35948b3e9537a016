"""A fleet: the same suites on many hosts, reached through pytest-testinfra's backends.

The hosts come from testinfra's own options (``--hosts=ssh://root@10.0.0.2,...``,
``--ssh-config``, ``--ssh-identity-file``, ``--ansible-inventory``, ``--connection``,
``--sudo``), expanded by ``testinfra.get_hosts`` exactly as testinfra does for its ``host``
fixture, so every backend it has works (ssh, paramiko, ansible with an inventory, docker,
kubectl ...). Each host gets a session of its own: fio, the device inspection, the safety
refusals and sysfs facts all run there through the host object.

Per-host volume facts come from a hosts file (``--ebsperf-hosts-file``, TOML or JSON)::

    [defaults]                      # for every host not listed, and under each host's keys
    device = "/dev/nvme1n1"
    type = "gp3"
    size_gib = 500

    ["ssh://root@10.0.0.2"]         # the host as given to --hosts, or its name
    type = "io1"
    size_gib = 200
    iops = 2000
    instance_type = "c5.xlarge"

Keys: ``device``, ``type``, ``size_gib``, ``iops``, ``throughput_mibps``,
``instance_type``, ``burst_balance_pct``; anything else is refused with a sentence.
Without a file, every host uses the command line's ``--device`` and volume options.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_ebsperf.aws.pricing import builtin_prices, duration, estimate_cost
from pytest_ebsperf.awsmodel import volume_types
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.errors import EXIT_CODES, ConfigError, EbsperfError, Parser

#: hosts-file key -> (Settings field, type).
HOST_KEYS: Mapping[str, tuple[str, type]] = {
    "device": ("device", str),
    "type": ("volume_type", str),
    "size_gib": ("volume_size", int),
    "iops": ("volume_iops", int),
    "throughput_mibps": ("volume_throughput", float),
    "instance_type": ("instance_type", str),
    "burst_balance_pct": ("burst_balance", float),
}
#: Options of pytest-testinfra that say how to reach the hosts (its own dests).
TESTINFRA_OPTIONS = ("connection", "ssh_config", "ssh_identity_file", "sudo", "sudo_user",
                     "ansible_inventory", "force_ansible")


@dataclass(frozen=True)
class FleetHost:
    """One host of the fleet: ``id`` is testinfra's test id (``ssh://10.0.0.2``), ``name``
    its host name, ``host`` the testinfra Host object, ``facts`` its hosts-file entry."""

    id: str
    name: str
    host: Any
    facts: Mapping[str, Any] = field(default_factory=dict)
    #: The --hosts entry it came from (``ssh://root@10.0.0.2``; an ansible pattern may give
    #: several hosts).
    spec: str = ""

    @property
    def keys(self) -> tuple[str, ...]:
        """Names a hosts-file table may use for this host."""
        return tuple(dict.fromkeys(k for k in (self.spec, self.id, self.name,
                                               self.spec.split("://", 1)[-1],
                                               self.id.split("://", 1)[-1]) if k))


def hosts_from_testinfra(specs: str, options: Mapping[str, Any]) -> list[FleetHost]:
    """The hosts of ``--hosts`` (comma-separated testinfra specs, ansible patterns with
    ``--ansible-inventory``), made by testinfra with its options, sorted by test id."""
    # testinfra (and its backends): only for a fleet (--hosts)
    import testinfra

    given = [part.strip() for part in specs.split(",") if part.strip()]
    if not given:
        raise ConfigError(f"--hosts={specs!r} names no host: give testinfra host specs, e.g. "
                          "--hosts=ssh://root@10.0.0.2,ssh://root@10.0.0.3.")
    kwargs = {k: options.get(k) for k in TESTINFRA_OPTIONS if options.get(k) is not None}
    found: dict[str, FleetHost] = {}
    for spec in given:
        try:
            made = testinfra.get_hosts([spec], **kwargs)
        except Exception as exc:  # noqa: BLE001 - testinfra's errors vary by backend
            raise ConfigError(f"--hosts: testinfra could not make a host of {spec!r} "
                              f"({exc}).") from None
        for host in made:
            host_id = host.backend.get_pytest_id()
            found.setdefault(host_id, FleetHost(host_id, host.backend.get_hostname(), host,
                                                spec=spec))
    return [found[k] for k in sorted(found)]


def multiplex(hosts: Sequence[FleetHost], directory: str) -> int:
    """One ssh connection per host for the whole run: testinfra's ssh backend asks for
    ``ControlMaster=auto`` but has no ``ControlPath`` unless told, so without this every
    command is a new ssh handshake. Sockets go to ``directory`` (short paths: a socket path
    has at most 107 bytes). Hosts with a ControlPath of their own keep it. Returns how many
    hosts were given one."""
    given = 0
    for index, fleet_host in enumerate(hosts):
        backend = getattr(fleet_host.host, "backend", None)
        if getattr(backend, "NAME", "") != "ssh" or getattr(backend, "controlpath", None):
            continue
        if "controlpath" in str(getattr(backend, "ssh_extra_args", "") or "").lower():
            continue
        backend.controlpath = f"{directory}/{index}"  # type: ignore[union-attr]
        given += 1
    return given


def end_multiplex(directory: str) -> None:
    """Close the run's ssh master connections and remove their sockets."""

    root = Path(directory)
    if not root.is_dir():
        return
    # every master at once: one after another, a busy host's few seconds each added up
    closing = [subprocess.Popen(["ssh", "-o", f"ControlPath={socket}", "-O", "exit",
                                 "ebsperf-fleet"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL) for socket in root.iterdir()]
    try:
        for process in closing:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def load_hosts_file(path: str) -> dict[str, dict[str, Any]]:
    """The hosts file as ``{host or "defaults": {key: value}}``; a sentence on bad input."""
    source = Path(path)
    if source.exists() and not source.is_file():
        raise ConfigError(f"--ebsperf-hosts-file={path} is not a regular file; pass a TOML or "
                          "JSON file with a table per host.")
    try:
        if source.exists() and source.stat().st_size > 16 * 1024 * 1024:
            raise ConfigError(f"--ebsperf-hosts-file={path} is larger than 16 MiB; a hosts "
                              "file has a table of a few lines per host.")
        text = source.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"--ebsperf-hosts-file={path} is not text (byte {exc.start} is not "
                          "UTF-8); pass a TOML or JSON file with a table per host.") from None
    except OSError as exc:
        raise ConfigError(f"--ebsperf-hosts-file={path}: cannot read it "
                          f"({exc.strerror or exc}).") from None
    if source.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"--ebsperf-hosts-file={path} is not valid JSON (line "
                              f"{exc.lineno}: {exc.msg}).") from None
    else:
        try:
            # a hosts file only; Python 3.10 has tomli instead
            import tomllib
        except ImportError:  # Python 3.10
            raise ConfigError(f"--ebsperf-hosts-file={path}: TOML needs Python 3.11 or newer; "
                              "write the same tables as a .json file.") from None
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"--ebsperf-hosts-file={path} is not valid TOML ({exc}).") \
                from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ConfigError(f"--ebsperf-hosts-file={path}: give one table per host (and an "
                          "optional [defaults]), each with device, type, size_gib, iops, ...")
    for host, entry in data.items():
        for key, value in entry.items():
            if key not in HOST_KEYS:
                raise ConfigError(f"--ebsperf-hosts-file={path}: [{host}] has {key!r}; the keys "
                                  f"are {', '.join(HOST_KEYS)}.")
            wanted = HOST_KEYS[key][1]
            ok = isinstance(value, wanted) or (wanted is float and isinstance(value, int))
            if not ok or isinstance(value, bool):
                raise ConfigError(f"--ebsperf-hosts-file={path}: [{host}] {key} = {value!r} "
                                  f"should be {'a number' if wanted in (int, float) else 'text'}.")
    return {str(k): dict(v) for k, v in data.items()}


def facts_for(entries: Mapping[str, Mapping[str, Any]], fleet_host: FleetHost
              ) -> dict[str, Any]:
    """A host's facts: ``[defaults]`` overlaid with its own table (by its --hosts entry,
    test id or name)."""
    facts = dict(entries.get("defaults", {}))
    for key in fleet_host.keys:
        if key in entries:
            facts.update(entries[key])
            break
    return facts


def unknown_entries(entries: Mapping[str, Any], hosts: Sequence[FleetHost]) -> list[str]:
    """Tables of the hosts file that match no host of the run (most likely a typo)."""
    known = {key for h in hosts for key in h.keys}
    return [k for k in entries if k != "defaults" and k not in known]


def settings_for(settings: Settings, fleet_host: FleetHost, source: str) -> Settings:
    """The run's settings for one host: its spec as ``host`` and its hosts-file facts over
    the command line's (each marked as coming from ``source``)."""
    changes: dict[str, Any] = {"host": fleet_host.id}
    origin = dict(settings.origin)
    origin["host"] = "--hosts"
    for key, value in fleet_host.facts.items():
        dest = HOST_KEYS[key][0]
        changes[dest] = value
        origin[dest] = source
    if "device" in changes:
        changes["devices"] = (changes["device"],)
    return dataclasses.replace(settings, origin=origin, **changes)


@dataclass
class HostState:
    """What became of one host in this run."""

    fleet_host: FleetHost
    session: Any = None
    #: Why the host could not be measured (unreachable, no fio, refused), else None.
    broken: str | None = None
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    inconclusive: int = 0


def reachability(fleet_host: FleetHost) -> str | None:
    """None when the host answers a command; else the sentence why it does not."""
    try:
        result = fleet_host.host.run("true")
    except Exception as exc:  # noqa: BLE001 - paramiko, docker ... raise their own errors
        # testinfra's ssh backend raises with the failed command's result (exit status 255)
        result = exc.args[0] if exc.args and hasattr(exc.args[0], "stderr") else None
        if result is None:
            return f"{fleet_host.name} is unreachable ({type(exc).__name__}: {exc})."
    if int(result.rc) == 0:
        return None
    said = (str(result.stderr).strip() or str(result.stdout).strip())[:300]
    if "permission denied" in said.lower():
        return f"{fleet_host.name} refuses the login ({said})."
    return f"{fleet_host.name} is unreachable (exit status {result.rc}: {said or 'no output'})."


def host_summary(states: Sequence[HostState]) -> list[str]:
    """Lines of the fleet summary: counts, then one line per host."""
    broken = [s for s in states if s.broken]
    failed = [s for s in states if not s.broken and s.failed]
    undecided = [s for s in states if not s.broken and not s.failed and s.inconclusive]
    passed = [s for s in states if not s.broken and not s.failed and not s.inconclusive
              and s.passed]
    idle = len(states) - len(broken) - len(failed) - len(undecided) - len(passed)
    counts = (f"{len(states)} host(s): {len(passed)} passed, {len(failed)} failed, "
              f"{len(broken)} unreachable"
              + (f", {len(undecided)} inconclusive" if undecided else "")
              + (f", {idle} ran no check" if idle else ""))
    lines = [counts]
    for state in states:
        if state.broken:
            lines.append(f"  {state.fleet_host.id}: UNREACHABLE - {state.broken}")
        else:
            word = ("FAILED" if state.failed else "INCONCLUSIVE" if state.inconclusive else
                    "passed" if state.passed else "no check")
            undecided_n = f", {state.inconclusive} inconclusive" if state.inconclusive else ""
            lines.append(f"  {state.fleet_host.id}: {word} ({state.passed} passed, "
                         f"{state.failed} failed{undecided_n}, {state.skipped} skipped)")
    return lines


def describe_error(exc: BaseException, fleet_host: FleetHost) -> str:
    """An error of a host's preflight as a sentence that names the host once."""
    text = str(exc) if isinstance(exc, EbsperfError) else f"{type(exc).__name__}: {exc}"
    return text if fleet_host.name in text else f"On {fleet_host.name}: {text}"


# -- planning ---------------------------------------------------------------------------------
#: Measured by benchmarks/bench_fleet.py (docs/benchmarks.md): over ssh, a host's first check
#: costs about 1.6 s of set-up (reachability, fio version, engine probes, the device's
#: inspection) and every check about 2.0 s of round trips besides fio's ramp and runtime
#: (about 26 commands of ~90 ms on one multiplexed connection).
SSH_HOST_SETUP_S = 1.6
SSH_CHECK_OVERHEAD_S = 2.0
#: fio client/server: one client run per check for all hosts; ~2 s of fio start-up and
#: job transfer, growing by ~0.03 s per host.
CLIENT_CHECK_OVERHEAD_S = 2.0
CLIENT_PER_HOST_S = 0.03


@dataclass(frozen=True)
class FleetPlan:
    """How long a fleet run takes, by engine, and how it was worked out."""

    hosts: int
    checks: int
    seconds: float
    engine: str
    workers: int
    per_check_s: float

    def describe(self) -> str:

        rounds = -(-self.hosts // self.workers) if self.engine == "ssh" else 1
        return (f"{self.hosts} host(s) x {self.checks} check(s) over {self.engine}"
                f"{f' with {self.workers} worker(s)' if self.engine == 'ssh' else ''}: about "
                f"{duration(self.seconds)} ({rounds} round(s) of hosts, "
                f"{self.per_check_s:.1f} s per check)")


def plan(hosts: int, checks: int, *, runtime_s: float, ramp_s: float, workers: int = 1,
         engine: str = "ssh") -> FleetPlan:
    """Wall time of ``checks`` checks on each of ``hosts`` hosts (upper bound: checks run their
    whole runtime; most stop earlier once their verdict is settled)."""
    if hosts < 1 or checks < 1 or workers < 1:
        raise ConfigError("A fleet plan needs at least one host, one check and one worker.")
    if engine == "ssh":
        per_check = runtime_s + ramp_s + SSH_CHECK_OVERHEAD_S
        rounds = -(-hosts // workers)
        seconds = rounds * (SSH_HOST_SETUP_S + checks * per_check)
    elif engine == "fio-servers":
        per_check = runtime_s + ramp_s + CLIENT_CHECK_OVERHEAD_S + CLIENT_PER_HOST_S * hosts
        seconds = checks * per_check
    else:
        raise ConfigError(f"engine {engine!r}: give ssh or fio-servers.")
    return FleetPlan(hosts, checks, seconds, engine, workers, per_check)


def plan_main(argv: Sequence[str]) -> int:
    """``ebsperf plan-fleet``: time, and the volumes' cost over that time."""


    parser = Parser(prog="ebsperf plan-fleet", description="How long a fleet run takes, and "
                    "what the volumes cost while it runs.", epilog=EXIT_CODES,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, required=True)
    parser.add_argument("--checks", type=int, required=True,
                        help="checks per host (pytest --collect-only -q | wc -l, divided by "
                             "the hosts)")
    parser.add_argument("--runtime", type=float, default=60.0)
    parser.add_argument("--ramp", type=float, default=2.0)
    parser.add_argument("--workers", type=int, default=1, help="pytest-xdist -n")
    parser.add_argument("--engine", choices=("ssh", "fio-servers"), default="ssh")
    parser.add_argument("--volume-type")
    parser.add_argument("--volume-size", type=int)
    parser.add_argument("--volume-iops", type=int)
    parser.add_argument("--volume-throughput", type=float)
    parser.add_argument("--region", default="us-east-1")
    args = parser.parse_args(list(argv))
    if args.volume_type:
        ebs = volume_types.ebs_names()
        if args.volume_type not in ebs:
            print(f"--volume-type={args.volume_type}: plan-fleet prices EBS volumes; pass one "
                  f"of {', '.join(ebs)}.", file=sys.stderr)
            return 4
    try:
        found = plan(args.hosts, args.checks, runtime_s=args.runtime, ramp_s=args.ramp,
                     workers=args.workers, engine=args.engine)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 4
    print(found.describe())
    if args.volume_type:
        volume = Volume(args.volume_type, size_gib=args.volume_size, iops=args.volume_iops,
                        throughput_mibps=args.volume_throughput)
        cost = estimate_cost([volume] * args.hosts, found.seconds, builtin_prices(args.region))
        print(f"{args.hosts} x {volume.label()} held for that time: about "
              f"${cost.total_usd:,.2f} ({cost.source}); the instances are billed on top.")
    return 0
