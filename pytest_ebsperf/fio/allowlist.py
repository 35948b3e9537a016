"""A user's own fio options for the built-in checks: ``--ebsperf-fio-options`` and
``--ebsperf-job-file``.

They join every check's job as extra options. Only options on an allow-list pass: those that
shape the I/O on the device under test (block sizes, mixes, rates, thinktime, random
distributions, buffers, priorities). Refused, with a sentence naming where they came from:
options the checks build themselves (device, direction, block size, queue depth, run time,
logs, ``readonly``: set the matching setting instead), options that name a file or device of
their own (``mem=mmap:FILE``, ``read_iolog``, ``replay_redirect``, ``directory``...), that
write, trim, verify or reset data, change the device or the system or run commands
(``exec_prerun``, ``ioscheduler``, ``allow_mounted_write``...), and any option not on the list.
"""

from __future__ import annotations

import configparser
import stat
from pathlib import Path

from pytest_ebsperf.errors import ConfigError
from pytest_ebsperf.fio.jobs import RESERVED

#: Options that only shape the I/O on the given device: how big, how mixed, how fast, in what
#: order, with what buffers and priorities. Everything else is refused.
ALLOWED = frozenset({
    # block sizes and alignment
    "ba", "blockalign", "bsrange", "blocksize_range", "bssplit", "bs_unaligned",
    "blocksize_unaligned",
    # random offsets
    "randrepeat", "randseed", "norandommap", "rw_sequencer", "random_generator",
    "random_distribution", "percentage_random", "allrandrepeat",
    # where and how much on the device
    "offset_increment", "offset_align", "io_size", "io_limit", "number_ios", "loops",
    # queueing and submission
    "iodepth_batch", "iodepth_batch_submit", "iodepth_batch_complete",
    "iodepth_batch_complete_min", "iodepth_batch_complete_max", "iodepth_low",
    "serialize_overlap", "io_submit_mode", "lockfile",
    # rates, pauses, latency targets
    "rate", "rate_min", "rate_process", "rate_cycle", "rate_ignore_thinktime", "rate_iops",
    "rate_iops_min", "ratemin", "ratecycle", "max_latency", "latency_target", "latency_window",
    "latency_percentile", "latency_run", "thinktime", "thinktime_spin", "thinktime_blocks",
    "thinktime_iotime", "startdelay", "flow_id", "flow", "flow_sleep",
    # syncing and caching of the device itself
    "fsync", "fdatasync", "write_barrier", "sync_file_range", "end_fsync", "fsync_on_close",
    "sync", "invalidate", "fadvise_hint", "atomic", "overwrite",
    # buffers
    "mem", "iomem", "zero_buffers", "refill_buffers", "scramble_buffers", "buffer_pattern",
    "buffer_compress_percentage", "buffer_compress_chunk", "dedupe_percentage", "dedupe_mode",
    "dedupe_working_set_percentage", "dedupe_global", "lockmem", "hugepage-size",
    # CPU, NUMA, priority, clocks
    "nice", "prio", "prioclass", "cpumask", "cpus_allowed", "cpus_allowed_policy",
    "numa_cpu_nodes", "numa_mem_policy", "clocksource", "gtod_cpu",
    # reporting that adds, never removes, what the checks read
    "description", "block_error_percentiles", "significant_figures", "disk_util",
    "error_dump", "exitall", "exit_what", "exitall_on_error",
    # engine options (io_uring, libaio)
    "hipri", "cmdprio_percentage", "cmdprio_class", "cmdprio", "cmdprio_bssplit", "fixedbufs",
    "registerfiles", "sqthread_poll", "sqthread_poll_cpu", "nonvectored", "uncached", "nowait",
    "force_async", "userspace_reap",
})  # fmt: skip

_FILES = "it names a file or device of its own, which fio would read, create or write"
_LOGS = "it changes the logs and reports the checks read"
_DESTROY = "it writes, trims, verifies or resets data beyond what the checks control"
_SYSTEM = "it changes the device, the system or who fio runs as, or runs commands"
_JOBS = "it orders jobs, and the checks run one job of their own"
#: Options refused, with the reason said.
REFUSED: dict[str, str] = {
    **dict.fromkeys((
        "directory", "filename_format", "unique_filename", "opendir", "read_iolog", "iolog",
        "read_iolog_chunked", "write_iolog", "replay_redirect", "replay_no_stall",
        "replay_scale", "replay_align", "replay_time_scale", "replay_skip",
        "merge_blktrace_file", "merge_blktrace_scalars", "merge_blktrace_iters",
        "verify_state_load", "verify_state_save", "nrfiles", "nr_files", "openfiles",
        "file_service_type", "filesize", "file_append", "fallocate", "create_serialize",
        "create_fsync", "create_on_open", "create_only", "pre_read", "unlink",
        "unlink_each_loop", "profile"), _FILES),
    **dict.fromkeys((
        "write_hist_log", "log_entries", "log_hist_msec", "log_hist_coarseness", "log_max_value",
        "log_offset", "log_prio", "log_compression", "log_compression_cpus",
        "log_store_compressed", "log_unix_epoch", "log_alternate_epoch",
        "log_alternate_epoch_clock_id", "bwavgtime", "iopsavgtime", "stats", "gtod_reduce",
        "disable_lat", "disable_clat", "disable_slat", "disable_bw_measurement",
        "clat_percentiles", "lat_percentiles", "slat_percentiles", "percentile_list",
        "kb_base", "unit_base",
        "continue_on_error", "ignore_error", "steadystate", "ss", "steadystate_duration",
        "ss_dur", "steadystate_ramp_time", "ss_ramp"), _LOGS),
    **dict.fromkeys((
        "verify", "do_verify", "trim_percentage", "verify_interval", "verify_offset", "verify_pattern", "verify_fatal", "verify_dump",
        "verify_async", "verify_backlog", "verify_backlog_batch", "experimental_verify",
        "verify_only", "trim_verify_zero", "trim_backlog", "trim_backlog_batch", "fill_device",
        "fill_fs", "zonemode", "zonesize", "zonecapacity", "zonerange", "zoneskip",
        "read_beyond_wp", "max_open_zones", "job_max_open_zones", "ignore_zone_limits",
        "zone_reset_threshold", "zone_reset_frequency", "write_hint", "cmd_type"), _DESTROY),
    **dict.fromkeys((
        "exec_prerun", "exec_postrun", "ioscheduler", "allow_mounted_write", "cgroup",
        "cgroup_weight", "cgroup_nodelete", "uid", "gid", "thinktime_blocks_type"), _SYSTEM),
    **dict.fromkeys(("wait_for", "stonewall", "wait_for_previous", "new_group"), _JOBS),
}


def _check(pairs: list[tuple[str, str]], where: str) -> tuple[tuple[str, str], ...]:
    kept = []
    for name, value in pairs:
        if not name or any(c.isspace() for c in name):
            raise ConfigError(f"{where}: {name!r} is not a fio option name.")
        if name == "thread" and value in ("", "1"):
            continue  # the checks always run their jobs as threads
        if name in REFUSED:
            raise ConfigError(f"{where}: {name} is refused: {REFUSED[name]}.")
        if name in RESERVED:
            raise ConfigError(f"{where}: {name} is built by the checks themselves (device, "
                              "direction, block size, queue depth, time, logs, threads); set "
                              "the matching --ebsperf-* option instead, or leave it out.")
        if name not in ALLOWED:
            raise ConfigError(
                f"{where}: {name} is not among the fio options the checks accept (only "
                "options that shape the I/O on the device under test are: block sizes, "
                "mixes, rates, thinktime, random distributions, buffers, priorities; see "
                "docs/safety.md).")
        if name in ("mem", "iomem") and ":" in value:
            raise ConfigError(f"{where}: {name}={value} is refused: {_FILES} (fio maps and "
                              f"truncates {value.split(':', 1)[1]!r}). Pass {name}="
                              f"{value.split(':', 1)[0]} without a file.")
        kept.append((name, value))
    return tuple(kept)


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


#: A job file larger than this is not a job file (fio's own examples are a few KiB).
MAX_JOB_FILE_BYTES = 256 * 1024


def _read_job_text(file: Path, where: str) -> str:
    """The text of a job file: a regular file of at most :data:`MAX_JOB_FILE_BYTES` of
    UTF-8 text, else a sentence."""

    try:
        info = file.stat()
    except OSError as exc:
        raise ConfigError(f"{where}: cannot be read ({exc.strerror}).") from None
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{where} is not a regular file (a device, directory or pipe); "
                          "pass a fio job file.")
    if info.st_size > MAX_JOB_FILE_BYTES:
        raise ConfigError(f"{where} has {info.st_size:,} bytes; a fio job file has a few "
                          f"hundred (at most {MAX_JOB_FILE_BYTES // 1024} KiB are read). "
                          "Pass a fio job file.")
    try:
        with open(file, "rb") as handle:
            raw = handle.read(MAX_JOB_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{where}: cannot be read ({exc.strerror}).") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{where} is not text (byte {exc.start} is not UTF-8); pass a fio "
                          "job file.") from None
    if "\0" in text:
        raise ConfigError(f"{where} is not text (it holds NUL bytes); pass a fio job file.")
    return text


def parse_job_file(path: str, where: str = "--ebsperf-job-file"
                   ) -> tuple[tuple[str, str], ...]:
    """The options of a fio job file's ``[global]`` section and its first job section (the
    job's win), as extra options."""
    file = Path(path).expanduser()
    text = _read_job_text(file, f"{where}={path}")
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
