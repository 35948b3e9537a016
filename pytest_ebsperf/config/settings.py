"""Options, ini keys and environment variables, resolved once into a frozen :class:`Settings`.

Precedence (highest first): ``@pytest.mark.ebsperf(...)`` marker > command line >
environment (``EBSPERF_*``) > ini (``ebsperf_*`` in pytest.ini/setup.cfg/pyproject) > default.
This module does not import pytest: the plugin hands it a ``lookup`` callable per source.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ebsperf.config.options import (
    DEFAULT_RAMP_EMULATED_S,
    DEFAULT_RAMP_S,
    DEFAULT_RUNTIME_EMULATED_S,
    DEFAULT_RUNTIME_S,
    MARKER_SETTINGS,
    OPTIONAL_TABLES,
    OPTIONS,
    OPTIONS_BY_DEST,
    Option,
)
from pytest_ebsperf.deferred import later
from pytest_ebsperf.errors import ConfigError

if TYPE_CHECKING:  # loaded when first used (pytest_ebsperf/deferred.py)
    from pytest_ebsperf.fio import allowlist as fio_allowlist
    from pytest_ebsperf.fio import workload as fio_workload
else:
    fio_allowlist = later("pytest_ebsperf.fio.allowlist")
    fio_workload = later("pytest_ebsperf.fio.workload")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@dataclass(frozen=True)
class Settings:
    """Every ebsperf setting after precedence was applied; ``origin`` says where each came from."""

    device: str | None = None
    volume_count: int | None = None
    reference_device: str | None = None
    reference_volume_type: str | None = None
    volume_encrypted: bool | None = None
    reference_encrypted: bool | None = None
    volume_type: str | None = None
    volume_size: int | None = None
    volume_iops: int | None = None
    volume_throughput: float | None = None
    volume_init_rate: float | None = None
    instance_type: str | None = None
    burst_balance: float | None = None
    destructive: bool = False
    runtime: float | None = None
    runs: int = 10
    block: float | None = None
    plan: bool = False
    tables: str = "none"
    markdown: str | None = None
    hosts_file: str | None = None
    fio_servers: str | None = None
    ramp: float | None = None
    long: bool = False
    emulate: bool = False
    emulate_factor: float = 1.0
    emulate_timescale: str = "auto"
    emulate_device_factor: float | None = None
    emulate_first_write_factor: float | None = None
    emulate_latency: str = "none"
    emulate_misses: str | None = None
    emulate_device_latency: str | None = None
    plots: str = "ebsperf-results/plots"
    iodepth: int | None = None
    numjobs: int | None = None
    engine: str = "auto"
    fio: str = "fio"
    host: str = "local://"
    strict: frozenset[str] = frozenset()
    provision: str | None = None
    max_cost: float = 1.0
    false_alarm: float = 0.001
    miss_spell: float = 3.0
    no_discovery: bool = False
    fio_options: str | None = None
    job_file: str | None = None
    sweep_sizes: str | None = None
    keep_fio: str | None = None
    initialize: bool = False
    emulate_bucket_factor: float | None = None
    emulate_burst_balance: float | None = None
    report: str | None = None
    csv: str | None = None
    history: str | None = None
    compare: str | None = None
    compare_threshold: float = 10.0
    price_region: str | None = None
    emulate_member_factors: str | None = None
    era: str = "now"
    #: Every device of ``--device=A,B,...`` (``device`` is the first).
    devices: tuple[str, ...] = ()
    origin: Mapping[str, str] = dataclasses.field(default_factory=dict)

    @property
    def user_fio_options(self) -> tuple[tuple[str, str], ...]:
        """The fio options of --ebsperf-job-file, then --ebsperf-fio-options (checked)."""
        found: tuple[tuple[str, str], ...] = ()
        if not (self.job_file or self.fio_options):
            return found

        if self.job_file:
            found += fio_allowlist.parse_job_file(self.job_file)
        if self.fio_options:
            found += fio_allowlist.parse_fio_options(self.fio_options)
        return found

    @property
    def set_size(self) -> int:
        """Volumes in the set under test: --volume-count, else the devices named (1)."""
        return self.volume_count or max(1, len(self.devices))

    @property
    def member_factors(self) -> tuple[float, ...]:
        """--emulate-member-factors as numbers (empty: every member at full rate)."""
        text = (self.emulate_member_factors or "").strip()
        if not text:
            return ()
        found = []
        for part in text.split(","):
            try:
                value = float(part)
            except ValueError:
                value = math.nan
            if not math.isfinite(value) or value <= 0:
                raise ConfigError(f"--emulate-member-factors={text}: {part.strip()!r} is not a "
                                  "positive number (1 keeps a member at its rate, 0.75 makes "
                                  "it 25 % slow).")
            found.append(value)
        return tuple(found)

    @property
    def sweep_sizes_bytes(self) -> tuple[int, ...]:
        """--ebsperf-sweep-sizes in bytes (empty: the suites' own)."""

        parts = [p.strip() for p in (self.sweep_sizes or "").split(",") if p.strip()]
        what = "--ebsperf-sweep-sizes block size"
        return tuple(fio_workload.parse_size(p, what=what) for p in parts)

    def keep_fio_dir(self, base: Path) -> Path | None:
        """Where fio's evidence is kept (relative paths from ``base``), or None."""
        text = (self.keep_fio or "").strip()
        if text.lower() in ("none", "off", "no"):
            return None
        if not text:
            if not self.report:
                return None
            report = Path(self.report).expanduser()
            if str(report).startswith(("/dev/", "/proc/")):
                return None  # written into a device or pipe: nothing to keep beside it
            text = str(report.with_name(report.stem + "-fio"))
        path = Path(text).expanduser()
        return path if path.is_absolute() else base / path

    @property
    def tables_shown(self) -> tuple[str, ...]:
        """The optional summary tables asked for (``all``: every one)."""
        names = [n.strip().lower() for n in str(self.tables or "").split(",") if n.strip()]
        if "all" in names:
            return OPTIONAL_TABLES
        return tuple(n for n in OPTIONAL_TABLES if n in names)

    @property
    def runtime_s(self) -> float:
        if self.runtime is not None:
            return self.runtime
        return DEFAULT_RUNTIME_EMULATED_S if self.emulate else DEFAULT_RUNTIME_S

    @property
    def ramp_s(self) -> float:
        if self.ramp is not None:
            return self.ramp
        return DEFAULT_RAMP_EMULATED_S if self.emulate else DEFAULT_RAMP_S

    def given(self, dest: str) -> bool:
        """True when the user set ``dest`` (marker, command line, environment or ini)."""
        return self.origin.get(dest, "default") != "default"

    def with_marker(self, kwargs: Mapping[str, Any]) -> Settings:
        """Apply ``@pytest.mark.ebsperf(...)`` keyword arguments (highest precedence)."""
        changes: dict[str, Any] = {}
        origin = dict(self.origin)
        for key, value in kwargs.items():
            if key not in MARKER_SETTINGS:
                continue  # volume_type names the suite's type; the volume is the run's
            changes[key] = convert(OPTIONS_BY_DEST[key], value, "the ebsperf marker")
            origin[key] = "marker"
        return dataclasses.replace(self, origin=origin, **changes) if changes else self


Lookup = Callable[[Option], Any]


def build(cli: Lookup, env: Mapping[str, str], ini: Lookup) -> Settings:
    """Settings from the three sources, each value converted (:func:`~pytest_ebsperf.config.
    consistency.resolve` also refuses combinations); ConfigError with a sentence on bad input."""
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for option in OPTIONS:
        value, where = _first_given(option, cli, env, ini)
        if where == "default":
            values[option.dest] = (parse_strict(option.default, where)
                                   if option.kind == "outcomes" else option.default)
        else:
            values[option.dest] = convert(option, value, where)
        origin[option.dest] = where
    raw = values.get("device")
    if raw:
        devices = tuple(part.strip() for part in str(raw).split(","))
        if any(not part for part in devices):
            raise ConfigError(f"--device={raw} (from {origin['device']}) has an empty entry: "
                              "give block devices separated by commas, e.g. "
                              "--device=/dev/nvme1n1,/dev/nvme2n1.")
        values["device"], values["devices"] = devices[0], devices
    return Settings(origin=origin, **values)


def _first_given(option: Option, cli: Lookup, env: Mapping[str, str], ini: Lookup
                 ) -> tuple[Any, str]:
    value = cli(option)
    if value is not None and not (option.kind == "bool" and value is False):
        return value, f"command line ({option.flag})"
    if option.env and env.get(option.env, "") != "":
        return env[option.env], f"environment ({option.env})"
    if option.ini:
        value = ini(option)
        if value not in (None, "", []):
            return value, f"ini ({option.ini})"
    return None, "default"


def convert(option: Option, value: Any, where: str) -> Any:
    """Convert a raw value to the option's type, or raise a sentence naming its origin."""
    if option.kind == "bool":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE | _FALSE:
            return text in _TRUE
        raise ConfigError(f"{value!r} from {where} is not a yes/no value for {option.flag}. "
                          "Use true or false.")
    if option.kind == "str":
        return str(value).strip()
    if option.kind == "outcomes":
        return parse_strict(value, where)
    if option.kind == "yesno":
        text = str(value).strip().lower()
        if text in (_TRUE | _FALSE) - {""}:
            return text in _TRUE
        raise ConfigError(f"{value!r} from {where} is not yes or no for {option.flag}; pass "
                          f"{option.flag}=yes or {option.flag}=no.")
    if isinstance(value, str) and not value.strip().isascii():
        # Python reads "２００" (full-width digits) as 200; a typo that slipped through an
        # input method is not a number anyone meant to pass
        raise ConfigError(f"{value!r} from {where} has characters that are not ASCII digits; "
                          f"{option.flag} takes {option.metavar or 'a value'} written with "
                          "0-9.")
    try:
        number = int(value) if option.kind == "int" else float(value)
    except (TypeError, ValueError):
        kind = "a whole number" if option.kind == "int" else "a number"
        raise ConfigError(f"{value!r} from {where} is not {kind}; {option.flag} takes "
                          f"{option.metavar or 'a value'} ({option.help})") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise ConfigError(f"{value!r} from {where} is not a finite number for {option.flag}.")
    return number


#: Outcomes --ebsperf-strict can make fail the run (INFO: recorded, not judged).
STRICT_OUTCOMES = ("inconclusive", "info")
#: --ebsperf-strict alone: only a PASS passes.
STRICT_FLAG_ALONE = "all"


def parse_strict(value: Any, where: str) -> frozenset[str]:
    """--ebsperf-strict's value as the set of outcomes that fail the run: ``inconclusive``,
    ``info``, both (``all``, ``true``, the flag alone) or none (``none``, ``false``)."""
    if isinstance(value, (set, frozenset)):
        value = ",".join(sorted(value))
    if isinstance(value, bool):
        return frozenset(STRICT_OUTCOMES) if value else frozenset()
    text = str(value).strip().lower()
    if text in _TRUE | {STRICT_FLAG_ALONE, "both"}:
        return frozenset(STRICT_OUTCOMES)
    if text in _FALSE | {"none"}:
        return frozenset()
    parts = {part.strip() for part in text.split(",") if part.strip()}
    unknown = sorted(parts - set(STRICT_OUTCOMES))
    if unknown:
        raise ConfigError(
            f"{value!r} from {where} is not a list of outcomes for --ebsperf-strict: "
            f"{', '.join(repr(u) for u in unknown)} is none of inconclusive, info. Pass "
            "--ebsperf-strict (both fail the run), --ebsperf-strict=inconclusive, "
            "--ebsperf-strict=info or --ebsperf-strict=none"
            + ("; put test paths before the flag or write it with '='."
               if where.startswith("command line") else "."))
    return frozenset(parts)


