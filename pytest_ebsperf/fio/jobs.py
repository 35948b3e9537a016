"""Build the fio command line for a :class:`Workload`: a list of arguments, never a shell string."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ebsperf.errors import ConfigError
from pytest_ebsperf.fio.workload import Workload

#: Completion-latency percentiles fio reports (AWS states p99/p99.9 for io2 Block Express).
PERCENTILES = (1, 5, 10, 50, 90, 99, 99.9, 99.99)

# Options the builder owns: letting ``Workload.extra`` override them could turn a read-only
# check into a write, point fio at another file or break the parsing of its output.
RESERVED = frozenset(
    {
        "name", "filename", "filename_format", "directory", "rw", "readwrite", "rwmixread",
        "rwmixwrite", "readonly", "output", "output-format", "allow_file_create", "bs",
        "blocksize", "iodepth", "numjobs", "runtime", "ramp_time", "time_based", "direct",
        "ioengine", "size", "offset", "write_iops_log", "write_bw_log", "write_lat_log", "log_avg_msec",
        "per_job_logs", "group_reporting", "status-interval", "status_interval",
        "unified_rw_reporting", "trim_percentage", "verify", "do_verify", "thread",
        "buffered",
    }
)  # fmt: skip


#: fio's clock, named so that fio skips the test it makes of the CPUs' time stamp counters at
#: start when none is named (it then settles on ``cpu`` where they agree): 60 ms of the wall
#: time and 65 ms of the CPU time of a fio process (benchmarks/bench_fio_start.py). The kernel's
#: clock_gettime reads the same counter through the vDSO where the kernel trusts it, at tens
#: of nanoseconds a call. A clocksource among the user's fio options wins.
CLOCKSOURCE = "clock_gettime"


def fio_argv(
    workload: Workload,
    filename: str | Sequence[str],
    *,
    output_path: str,
    log_prefix: str,
    readonly: bool,
    engine: str,
    log_interval_ms: int = 1000,
    fio: str = "fio",
    status_interval_s: int | None = None,
    registered: bool = False,
) -> list[str]:
    """The full argv (``fio`` first) that runs ``workload`` against ``filename``.

    The report goes to ``output_path`` as JSON; interval logs go to ``<log_prefix>_iops.N.log``,
    ``_bw``, ``_lat``, ``_clat`` and ``_slat`` (one per job), averaged over ``log_interval_ms``.
    ``--readonly`` is passed whenever the workload does not write; a writing workload with
    ``readonly=True`` is refused. ``engine`` must already be resolved (not ``"auto"``).
    """
    _check(workload, readonly, engine, log_interval_ms)
    argv = [fio, "--output-format=json", f"--output={output_path}", "--eta=never"]
    if "clocksource" not in {k for k, _ in workload.extra}:
        argv.append(f"--clocksource={CLOCKSOURCE}")
    if status_interval_s:
        # a cumulative report every N seconds, appended to the output file, for live checks
        argv.append(f"--status-interval={int(status_interval_s)}")
    if readonly or not workload.writes:
        argv.append("--readonly")
    argv += [
        f"--name={workload.name or workload.pattern}",
        f"--filename={escape_filename(filename)}",
    ]
    argv += _io_options(workload, engine)
    if registered and engine == "io_uring" and not {"fixedbufs", "registerfiles"} & {
            k for k, _ in workload.extra}:
        # Registered buffers and files spare the kernel a page-pinning and a file lookup per
        # I/O: +23 % on a fast device (4 KiB reads, QD64x2: 323,000 against 263,000 IOPS).
        argv += ["--fixedbufs", "--registerfiles"]
    argv += _time_options(workload)
    argv += _report_options(log_prefix, log_interval_ms)
    argv += [f"--{k}={v}" if v != "" else f"--{k}" for k, v in workload.extra]
    return argv


def escape_filename(path: str | Sequence[str]) -> str:
    """Escape ``:`` (fio's separator for several files), as in ``/dev/disk/by-path/pci-0000:00``;
    several devices (a set) are joined with fio's separator."""
    if not isinstance(path, str):
        return ":".join(escape_filename(member) for member in path)
    return path.replace(":", "\\:")


def _check(workload: Workload, readonly: bool, engine: str, log_interval_ms: int) -> None:
    if readonly and workload.writes:
        raise ConfigError(
            f"Refusing to run the writing workload {workload.label()!r} read-only. Writes to the "
            "device need the explicit opt-in (--ebsperf-destructive)."
        )
    if not engine or engine == "auto":
        raise ConfigError(
            "The fio engine must be resolved before building the job (FioRunner.resolve_engine)."
        )
    if log_interval_ms < 1:
        raise ConfigError(f"The log interval must be at least 1 ms, got {log_interval_ms}.")
    reserved = sorted({k for k, _ in workload.extra} & RESERVED)
    if reserved:
        raise ConfigError(
            f"Workload {workload.label()!r} sets {', '.join(reserved)} in its extra fio options; "
            "those are built from the workload's own fields. Set the field instead."
        )


def _io_options(workload: Workload, engine: str) -> list[str]:
    options = [f"--rw={workload.pattern}"]
    if workload.is_mixed:
        options.append(f"--rwmixread={round(workload.read_fraction * 100)}")
    options += [
        f"--bs={workload.bs}",
        f"--ioengine={engine}",
        f"--iodepth={workload.iodepth}",
        f"--numjobs={workload.numjobs}",
        f"--direct={int(workload.direct)}",
        # Jobs as threads of the one fio process, not forked processes: the parent-death
        # signal set on that process (fio.process) then takes every job with it. A forked
        # job process outlives a SIGKILLed parent and goes on writing (seen: 4.8 million
        # sectors after pytest's exit, over a filesystem made on the device meanwhile).
        "--thread",
        "--allow_file_create=0",  # a mistyped /dev path must fail, not become a regular file
        f"--randrepeat={int(workload.random_map)}",
    ]
    if workload.is_random and not workload.random_map:
        options.append("--norandommap")  # uniform random offsets, no per-block bookkeeping
    if workload.size is not None:
        options.append(f"--size={workload.size}")
    if workload.offset:
        options.append(f"--offset={workload.offset}")
    return options


def _time_options(workload: Workload) -> list[str]:
    options = [f"--runtime={_ms(workload.runtime_s)}ms"]
    if not workload.once:
        options.insert(0, "--time_based")
    if workload.ramp_s > 0:
        options.append(f"--ramp_time={_ms(workload.ramp_s)}ms")
    return options


def _report_options(log_prefix: str, log_interval_ms: int) -> list[str]:
    return [
        "--group_reporting",
        f"--percentile_list={':'.join(f'{p:g}' for p in PERCENTILES)}",
        "--lat_percentiles=1",  # adds lat_ns percentiles; clat_ns percentiles stay
        f"--write_iops_log={log_prefix}",
        f"--write_bw_log={log_prefix}",
        f"--write_lat_log={log_prefix}",
        f"--log_avg_msec={log_interval_ms}",
    ]


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))
