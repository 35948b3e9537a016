"""A user's own fio options for the built-in checks: ``--ebsperf-fio-options`` and
``--ebsperf-job-file``.

They join every check's job as extra options. Refused, with a sentence naming where they came
from: options the checks build themselves (device, direction, block size, queue depth, run
time, logs, ``readonly``: set the matching setting instead), and options that could write
where the checks only read, change the device or run commands (``exec_prerun``,
``allow_mounted_write``, ``ioscheduler``, ``verify``, ``trim``...).
"""

from __future__ import annotations

import configparser
from pathlib import Path

from pytest_ebsperf.errors import ConfigError
from pytest_ebsperf.fio.jobs import RESERVED

#: Options no user setting may pass to fio: they write, destroy, change the device or run
#: commands outside what the checks control.
NEVER = frozenset({
    "allow_mounted_write", "ioscheduler", "unlink", "unlink_each_loop", "create_on_open",
    "create_only", "create_serialize", "opendir", "fill_device", "fill_fs", "pre_read",
    "zonemode", "zonesize", "zoneskip", "write_hint", "bwavgtime", "iopsavgtime",
    "thinktime_blocks_type", "cgroup", "cgroup_nodelete", "uid", "gid",
})
#: Option name prefixes refused for the same reason.
NEVER_PREFIXES = ("exec_", "verify", "do_verify", "trim", "experimental_verify", "write_",
                  "per_job_logs", "log_")


def _check(pairs: list[tuple[str, str]], where: str) -> tuple[tuple[str, str], ...]:
    for name, _ in pairs:
        if not name or any(c.isspace() for c in name):
            raise ConfigError(f"{where}: {name!r} is not a fio option name.")
        if name in NEVER or name.startswith(NEVER_PREFIXES):
            raise ConfigError(f"{where}: {name} is refused: it could write, change the device "
                              "or run commands outside what the checks control.")
        if name in RESERVED:
            raise ConfigError(f"{where}: {name} is built by the checks themselves (device, "
                              "direction, block size, queue depth, time, logs); set the "
                              "matching --ebsperf-* option instead, or leave it out.")
    return tuple(pairs)


def parse_fio_options(text: str, where: str = "--ebsperf-fio-options"
                      ) -> tuple[tuple[str, str], ...]:
    """``"norandommap,randrepeat=0"`` -> ``(("norandommap", ""), ("randrepeat", "0"))``."""
    pairs = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, _, value = item.lstrip("-").partition("=")
        pairs.append((name.strip(), value.strip()))
    return _check(pairs, where)


def parse_job_file(path: str, where: str = "--ebsperf-job-file"
                   ) -> tuple[tuple[str, str], ...]:
    """The options of a fio job file's ``[global]`` section and its first job section (the
    job's win), as extra options."""
    file = Path(path).expanduser()
    try:
        text = file.read_text()
    except OSError as exc:
        raise ConfigError(f"{where}={path}: cannot be read ({exc.strerror}).") from None
    parser = configparser.ConfigParser(allow_no_value=True, interpolation=None,
                                       delimiters=("=",), comment_prefixes=("#", ";"),
                                       strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(text, source=str(file))
    except configparser.Error as exc:
        raise ConfigError(f"{where}={path} is not a fio job file: {exc.message}") from None
    sections = parser.sections()
    merged: dict[str, str] = {}
    for section in [s for s in sections if s == "global"] + \
            [s for s in sections if s != "global"][:1]:
        for name, value in parser.items(section, raw=True):
            merged[name.strip()] = "" if value is None else value.strip()
    if not merged:
        raise ConfigError(f"{where}={path} has no options (a [global] or job section with "
                          "name=value lines).")
    return _check(list(merged.items()), f"{where}={path}")
