"""Settings that cannot go together, or cannot be true of any volume: each refused before fio
starts, with one sentence that names the flag, where the value came from and what to pass.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from urllib.parse import urlsplit

from pytest_ebsperf.awsmodel import volume_types
from pytest_ebsperf.awsmodel.ebs import ERAS, MAX_SET_VOLUMES
from pytest_ebsperf.awsmodel.init_rate import valid_rate
from pytest_ebsperf.config.emulation import parse_latency, parse_misses
from pytest_ebsperf.config.options import MAX_IODEPTH, MAX_NUMJOBS, OPTIONAL_TABLES, OPTIONS_BY_DEST
from pytest_ebsperf.config.settings import Lookup, Settings, build
from pytest_ebsperf.errors import ConfigError


def resolve(cli: Lookup, env: Mapping[str, str], ini: Lookup) -> Settings:
    """Build Settings from the three sources; raise ConfigError with a sentence on bad input."""
    settings = build(cli, env, ini)
    validate(settings)
    return settings


def validate(settings: Settings) -> None:
    """Checks that need no model: types, signs, combinations of options."""
    o = settings.origin
    for dest in ("volume_type", "reference_volume_type"):
        vtype = getattr(settings, dest)
        if vtype is not None and volume_types.known(vtype) is None:
            flag = OPTIONS_BY_DEST[dest].flag
            raise ConfigError(f"{vtype!r} is not a valid {flag} (from {o[dest]}). Valid "
                              f"types: {', '.join(volume_types.names())}.")
    for dest in ("reference_volume_type", "reference_encrypted"):
        if getattr(settings, dest) is not None and not (settings.reference_device
                                                          or settings.emulate):
            raise ConfigError(f"{OPTIONS_BY_DEST[dest].flag} (from {o[dest]}) describes "
                              "--reference-device, and none is given: pass the twin as "
                              "--reference-device=PATH, or drop the option.")
    for dest in ("volume_size", "volume_iops", "volume_throughput", "runtime", "iodepth",
                 "numjobs", "emulate_factor"):
        value = getattr(settings, dest)
        if value is not None and value <= 0:
            flag = OPTIONS_BY_DEST[dest].flag
            raise ConfigError(f"{flag} must be positive, got {value} (from {o[dest]}).")
    if settings.volume_init_rate is not None:
        try:
            valid_rate(settings.volume_init_rate, f"--volume-init-rate (from {o['volume_init_rate']})")
        except ValueError as exc:
            raise ConfigError(f"{exc} Pass the rate the volume was created with, or drop the "
                              "option.") from None
    for dest, most, why in (
            ("iodepth", MAX_IODEPTH, ("Linux AIO allows 65,536 events in flight system-wide "
                                      "(fs.aio-max-nr) and io_uring rings hold at most 32,768 "
                                      "entries; fio allocates every queue entry up front")),
            ("numjobs", MAX_NUMJOBS, ("each fio job is a process with its own queue; a few per "
                                      "CPU already saturate any volume"))):
        value = getattr(settings, dest)
        if value is not None and value > most:
            flag = OPTIONS_BY_DEST[dest].flag
            raise ConfigError(f"{flag}={value:,} (from {o.get(dest, 'default')}) is above the "
                              f"most this plugin runs, {most:,}: {why}. Pass a smaller value "
                              "or leave it to the plugin's default.")
    if settings.host:
        _check_host_spec(settings.host, o.get("host", "default"))
    runtime = settings.runtime
    if runtime is not None and not MIN_RUNTIME_S <= runtime <= MAX_RUNTIME_S:
        raise ConfigError(
            f"--ebsperf-runtime={runtime:g} (from {o.get('runtime', 'default')}) is outside "
            f"{MIN_RUNTIME_S:g} s to {MAX_RUNTIME_S:,} s (7 days): the checks judge whole "
            "seconds of fio's run, and a longer soak is several runs. Pass seconds in that "
            "range.")
    names = {n.strip().lower() for n in str(settings.tables or "").split(",") if n.strip()}
    unknown = names - {"all", "none", *OPTIONAL_TABLES}
    if unknown:
        raise ConfigError(f"--ebsperf-tables={settings.tables} (from "
                          f"{o.get('tables', 'default')}) names {', '.join(sorted(unknown))}; "
                          f"pick from {', '.join(OPTIONAL_TABLES)}, all or none.")
    block = settings.block
    if block is not None and not 1.0 <= block <= 3600.0:
        raise ConfigError(f"--ebsperf-block={block:g} (from {o.get('block', 'default')}) is the "
                          "measuring seconds of one block of a comparison: pass 1 to 3,600.")
    if not 0.0 < settings.false_alarm < 1.0:
        raise ConfigError(f"--ebsperf-false-alarm is a probability between 0 and 1 (0.001: one "
                          f"red run in 1,000 on a healthy volume), got {settings.false_alarm:g} "
                          f"(from {o.get('false_alarm', 'default')}).")
    if settings.miss_spell < 1.0:
        raise ConfigError(f"--ebsperf-miss-spell is a mean length in seconds, at least 1 "
                          f"(independent seconds), got {settings.miss_spell:g} "
                          f"(from {o.get('miss_spell', 'default')}).")
    if settings.ramp is not None and settings.ramp < 0:
        raise ConfigError(f"--ebsperf-ramp must be 0 or more, got {settings.ramp} "
                          f"(from {o['ramp']}).")
    balance = settings.burst_balance
    if balance is not None and not 0 <= balance <= 100:
        raise ConfigError(f"--burst-balance is a percentage (CloudWatch BurstBalance, 0-100), "
                          f"got {balance:g} (from {o['burst_balance']}).")
    if settings.emulate and settings.device:
        raise ConfigError(f"--emulate and --device={settings.device} (from {o['device']}) "
                          "exclude each other: --emulate creates its own volume. Pass one.")
    if settings.emulate_factor != 1.0 and not settings.emulate:
        raise ConfigError("--emulate-factor only applies with --emulate.")
    _check_emulation(settings)
    _check_emulation_aids(settings)
    _check_set(settings)
    if settings.fio_options or settings.job_file:
        settings.user_fio_options  # noqa: B018 (parsed now: a bad option stops the run at once)
    sizes = settings.sweep_sizes_bytes if settings.sweep_sizes is not None else ()
    if settings.sweep_sizes is not None and not sizes:
        raise ConfigError("--ebsperf-sweep-sizes is empty: give block sizes such as "
                          "4k,16k,64k,256k,1M.")
    if any(size % 512 for size in sizes):
        raise ConfigError(f"--ebsperf-sweep-sizes={settings.sweep_sizes}: every block size "
                          "must be a multiple of 512 bytes (direct I/O).")


def _check_emulation(settings: Settings) -> None:
    """The emulation options' values and that they come with --emulate (their parsers are
    loaded only when one is given: a plain pytest start needs none of them)."""
    if str(settings.emulate_latency or "").strip().lower() not in ("", "none", "0") or \
            settings.emulate_device_latency is not None or settings.emulate_misses:
        _check_emulated_latency_and_misses(settings)
    if parse_timescale(settings.emulate_timescale) is not None and not settings.emulate:
        raise ConfigError("--emulate-timescale only applies with --emulate (a real volume's "
                          "credits run on real time).")


def _check_emulated_latency_and_misses(settings: Settings) -> None:
    o = settings.origin

    if parse_latency(settings.emulate_latency) is not None and not settings.emulate:
        raise ConfigError(f"--emulate-latency={settings.emulate_latency} (from "
                          f"{o.get('emulate_latency', 'default')}) only applies with --emulate "
                          "(a real volume's I/O takes its own time).")
    if settings.emulate_device_latency is not None:
        where = f"--emulate-device-latency (from {o.get('emulate_device_latency', 'default')})"
        if not settings.emulate:
            raise ConfigError(f"{where} only applies with --emulate.")
        if parse_latency(settings.emulate_device_latency, "--emulate-device-latency") in (
                None, "auto"):
            raise ConfigError(f"{where}: give a mean in milliseconds, e.g. 2 or 0.5.")

    origin = f"--emulate-misses (from {o.get('emulate_misses', 'default')})"
    if parse_misses(settings.emulate_misses, origin) is not None and not settings.emulate:
        raise ConfigError(f"{origin} only applies with --emulate (a real volume misses on its "
                          "own).")


#: testinfra's connection backends (``<backend>://...``).
HOST_BACKENDS = ("local", "ssh", "paramiko", "docker", "podman", "kubectl", "openshift",
                 "ansible", "salt", "winrm", "lxc")


def _check_host_spec(spec: str, where: str) -> None:
    """``--ebsperf-host``: a testinfra host spec with a host name and a port in range."""

    scheme = spec.split("://", 1)[0] if "://" in spec else "ssh"
    hint = "Pass a spec such as ssh://root@10.0.0.3:22 or local://."
    if scheme not in HOST_BACKENDS:
        raise ConfigError(f"--ebsperf-host={spec} (from {where}) names no connection backend "
                          f"testinfra knows ({', '.join(HOST_BACKENDS)}). {hint}")
    if scheme not in ("ssh", "paramiko"):
        return
    parts = urlsplit(spec if "://" in spec else f"ssh://{spec}")
    try:
        port = parts.port
    except ValueError:
        raise ConfigError(f"--ebsperf-host={spec} (from {where}) has a port that is not a "
                          f"number from 1 to 65535. {hint}") from None
    if not parts.hostname:
        raise ConfigError(f"--ebsperf-host={spec} (from {where}) names no host. {hint}")
    if port is not None and not 1 <= port <= 65535:
        raise ConfigError(f"--ebsperf-host={spec} (from {where}): port {port} is outside 1 to "
                          f"65535. {hint}")


#: Shortest and longest fio run time one check may be given (seconds).
MIN_RUNTIME_S = 1.0
MAX_RUNTIME_S = 7 * 24 * 3600

#: Most runs of one stability check (each is a whole fio run).
MAX_RUNS = 50


def _check_set(settings: Settings) -> None:
    """--ebsperf-era, --volume-count, --device=A,B and --emulate-member-factors together."""
    o = settings.origin
    if settings.era != "now":
        _check_era(settings)
    if not 4 <= settings.runs <= MAX_RUNS:
        raise ConfigError(f"--ebsperf-runs={settings.runs} (from {o.get('runs', 'default')}) must "
                          f"be between 4 and {MAX_RUNS}: the first run is dropped and a "
                          "coefficient of variation needs three more.")
    count, devices = settings.volume_count, settings.devices
    if count is not None and not 1 <= count <= MAX_SET_VOLUMES:
        raise ConfigError(f"--volume-count={count} (from {o['volume_count']}) must be between 1 "
                          f"and {MAX_SET_VOLUMES} (volumes measured together as one set).")
    if len(set(devices)) != len(devices):
        raise ConfigError(f"--device={','.join(devices)} names a device twice: each member of "
                          "a set is a different volume.")
    if count is not None and len(devices) > 1 and count != len(devices):
        raise ConfigError(f"--volume-count={count} (from {o['volume_count']}) but --device "
                          f"names {len(devices)} devices: drop --volume-count (the devices "
                          "make the set) or name that many devices.")
    factors = settings.member_factors
    if factors and not settings.emulate:
        raise ConfigError("--emulate-member-factors only applies with --emulate (it slows "
                          "emulated members, not volumes).")
    if factors and len(factors) != (count or 1):
        raise ConfigError(f"--emulate-member-factors={settings.emulate_member_factors} gives "
                          f"{len(factors)} factors for --volume-count={count or 1}: give one "
                          "per member, e.g. 1,1,1,0.75 for four.")


def _check_era(settings: Settings) -> None:

    if settings.era not in ERAS:
        raise ConfigError(f"{settings.era!r} (from {settings.origin.get('era', 'default')}) is "
                          f"not an era for --ebsperf-era: give one of {', '.join(ERAS)} (now: "
                          "today's specs).")


def parse_timescale(text: str, where: str = "--emulate-timescale") -> float | None:
    """``"auto"`` -> None, ``"100"`` -> 100.0; anything else is a sentence (ConfigError)."""
    value = text.strip().lower()
    if value in ("", "auto"):
        return None
    try:
        scale = float(value)
    except ValueError:
        scale = math.nan
    if not math.isfinite(scale) or scale < 1:
        raise ConfigError(f"{text!r} is not a time scale for {where}: give 'auto' or a number "
                          "of 1 or more (100 turns a 2,000 s burst into 20 s).")
    return scale


def _check_emulation_aids(settings: Settings) -> None:
    """The testing aids that shape an emulated burst bucket (only with --emulate)."""
    factor, start = settings.emulate_bucket_factor, settings.emulate_burst_balance
    if (factor is not None or start is not None) and not settings.emulate:
        raise ConfigError("--emulate-bucket-factor and --emulate-burst-balance only apply "
                          "with --emulate: they change the emulated bucket, not a volume.")
    if factor is not None and (not math.isfinite(factor) or factor <= 0):
        raise ConfigError(f"--emulate-bucket-factor must be a positive number, got "
                          f"{factor:g} (0.7 gives a bucket 30 % smaller than the model's).")
    if start is not None and not 0 <= start <= 100:
        raise ConfigError(f"--emulate-burst-balance is a percentage (0-100), got {start:g}.")
    for name, value in (("--emulate-device-factor", settings.emulate_device_factor),
                        ("--emulate-first-write-factor", settings.emulate_first_write_factor)):
        if value is None:
            continue
        if not settings.emulate:
            raise ConfigError(f"{name} only applies with --emulate: it slows an emulated "
                              "volume, not a real one.")
        if not math.isfinite(value) or not 0 < value <= 10:
            raise ConfigError(f"{name} is a share of the emulated volume's rates, above 0 and "
                              f"at most 10, got {value:g} (0.9: 10 % slower).")
