"""Every option fio documents is either allowed and harmless, or refused with its reason.

The list comes from the fio on this machine (``fio --cmdhelp=all`` and the io_uring and libaio
engines' ``--enghelp``), so a newer fio with new options fails here until they are sorted.
Each allowed option then runs for real: a read-only check's fio job with it, on a loop device
over a file, must leave the device's bytes, the working directory and the temporary directory
as they were.
"""

from __future__ import annotations

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support.common import backing_file, needs_fio, needs_root, sha256

from pytest_ebsperf.errors import ConfigError
from pytest_ebsperf.fio.allowlist import ALLOWED, REFUSED, parse_fio_options
from pytest_ebsperf.fio.jobs import RESERVED, fio_argv
from pytest_ebsperf.fio.workload import Workload


def documented() -> set[str]:
    names: set[str] = set()
    for args in (["--cmdhelp=all"], ["--enghelp=io_uring"], ["--enghelp=libaio"]):
        out = subprocess.run(["fio", *args], capture_output=True, text=True,
                             check=False).stdout
        names |= {line.split(":", 1)[0].strip() for line in out.splitlines() if ":" in line}
    return {name for name in names if name}


@needs_fio
def test_every_option_fio_documents_is_sorted() -> None:
    names = documented()
    assert len(names) > 200  # fio 3.33 documents 232 with these engines
    unsorted = sorted(n for n in names if n not in ALLOWED and n not in REFUSED
                      and n not in RESERVED)
    assert unsorted == [], f"options neither allowed nor refused: {unsorted}"
    assert not ALLOWED & set(REFUSED)
    assert not ALLOWED & RESERVED


@needs_fio
def test_every_refused_or_reserved_option_is_refused_with_a_reason() -> None:
    for name in sorted(documented() - ALLOWED - {"thread"}):  # thread: always on, taken
        with pytest.raises(ConfigError, match=rf"{name} (is refused: it|is built by the checks)"):
            parse_fio_options(f"{name}=1")


def test_an_option_not_on_the_list_is_refused_whatever_fio_would_make_of_it() -> None:
    with pytest.raises(ConfigError, match="is not among the fio options the checks accept"):
        parse_fio_options("some_future_option=/dev/sdb")


#: A value for each allowed option (those without one are flags).
SAMPLES = {
    "ba": "4k", "blockalign": "4k", "bsrange": "4k-8k", "blocksize_range": "4k-8k",
    "bssplit": "4k/50:8k/50", "randrepeat": "1", "randseed": "42",
    "rw_sequencer": "sequential", "random_generator": "tausworthe64",
    "random_distribution": "zipf:1.2", "percentage_random": "50", "allrandrepeat": "1",
    "offset_increment": "1M", "offset_align": "4k", "io_size": "1M",
    "io_limit": "1M", "number_ios": "100", "loops": "1", "iodepth_batch": "2",
    "iodepth_batch_submit": "2", "iodepth_batch_complete": "1",
    "iodepth_batch_complete_min": "1", "iodepth_batch_complete_max": "2", "iodepth_low": "1",
    "serialize_overlap": "1", "io_submit_mode": "inline", "lockfile": "exclusive",
    "rate": "10m", "rate_min": "1k", "rate_process": "poisson", "rate_cycle": "1000",
    "rate_ignore_thinktime": "1", "rate_iops": "500", "rate_iops_min": "1", "ratemin": "1k",
    "ratecycle": "1000", "max_latency": "1s", "latency_target": "10ms",
    "latency_window": "100ms", "latency_percentile": "99", "latency_run": "0",
    "thinktime": "1000", "thinktime_spin": "500", "thinktime_blocks": "4",
    "thinktime_iotime": "100ms", "startdelay": "0", "flow_id": "1", "flow": "1",
    "flow_sleep": "100", "fsync": "4", "fdatasync": "4", "write_barrier": "4",
    "sync_file_range": "wait_before:8", "end_fsync": "1", "fsync_on_close": "1", "sync": "1",
    "invalidate": "1", "fadvise_hint": "random", "atomic": "0", "overwrite": "1",
    "mem": "malloc", "iomem": "mmap", "zero_buffers": "", "refill_buffers": "",
    "scramble_buffers": "1", "buffer_pattern": "0xdeadbeef",
    "buffer_compress_percentage": "50", "buffer_compress_chunk": "4k",
    "dedupe_percentage": "10", "dedupe_mode": "repeat", "dedupe_working_set_percentage": "50",
    "dedupe_global": "0", "lockmem": "1M", "hugepage-size": "2M", "nice": "5", "prio": "4",
    "prioclass": "2", "cpumask": "1", "cpus_allowed": "0", "cpus_allowed_policy": "shared",
    "numa_cpu_nodes": "0", "numa_mem_policy": "default", "clocksource": "gettimeofday",
    "gtod_cpu": "0", "description": "a job", "block_error_percentiles": "1",
    "significant_figures": "4", "disk_util": "0", "error_dump": "1", "exit_what": "group",
    "cmdprio_percentage": "10", "cmdprio_class": "2", "cmdprio": "4",
    "cmdprio_bssplit": "4k/10", "sqthread_poll_cpu": "0", "nonvectored": "1",
    "uncached": "1", "nowait": "1", "force_async": "4",
}
LIBAIO_ONLY = {"userspace_reap"}


def _run(option: str, device: str, workdir: Path) -> tuple[str, int, str]:
    value = SAMPLES.get(option, "")
    engine = "libaio" if option in LIBAIO_ONLY else "io_uring"
    extra = (("thinktime", "1000"),) if option.startswith("thinktime_") else ()
    workload = Workload("randread", bs=4096, runtime_s=0.1, ramp_s=0, engine=engine,
                        extra=(*parse_fio_options(f"{option}={value}" if value else option),
                               *extra))
    out = workdir / option
    out.mkdir()
    argv = fio_argv(workload, device, output_path=str(out / "fio.json"),
                    log_prefix=str(out / "fio"), readonly=True, engine=engine)
    env = {**os.environ, "TMPDIR": str(workdir.parent / "tmp")}  # fio's own temporary files
    try:
        done = subprocess.run(argv, cwd=workdir, capture_output=True, text=True, timeout=60,
                              check=False, env=env)
    except subprocess.TimeoutExpired:
        return option, -1, "did not finish within 60 s"
    return option, done.returncode, done.stderr.strip()[-200:]


@pytest.mark.early  # 75 s in the shared pass (conftest)
@needs_root
@needs_fio
def test_every_allowed_option_runs_without_writing_anywhere(
        loop_device: object, tmp_path: Path) -> None:
    device = loop_device(32)  # type: ignore[operator]
    image = backing_file(device)
    image.write_bytes(bytes(range(256)) * (32 * 1024 * 4))  # a pattern any write would break
    before = sha256(image)
    workdir = tmp_path / "work"
    workdir.mkdir()
    temp = tmp_path / "tmp"
    temp.mkdir()
    # thinktime_spin busy-waits: among other fio processes on this 2-CPU machine it missed
    # its run time by a minute (fio's own timing), so it runs alone
    alone = {"thinktime_spin"}
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda o: _run(o, device, workdir), sorted(ALLOWED - alone)))
    results += [_run(option, device, workdir) for option in sorted(alone)]
    assert sha256(image) == before
    made = {p.name for p in workdir.iterdir()}
    assert made == set(ALLOWED), f"files made in the working directory: {made - set(ALLOWED)}"
    for option, _, _ in results:
        leftovers = sorted(p.name for p in (workdir / option).iterdir()
                           if not p.name.startswith("fio"))
        assert leftovers == [], f"{option} made {leftovers}"
    assert list(temp.iterdir()) == []
    ran = [option for option, rc, _ in results if rc == 0]
    # an option fio rejects for this device or kernel (polled I/O on a loop device...) is
    # fio's own refusal, which the checks report as a sentence; most must simply run
    assert len(ran) >= 0.9 * len(ALLOWED), [r for r in results if r[1] != 0]
