"""Building fio jobs, the host wrapper, and real fio runs on a loop device (root only)."""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from support.common import DATA, backing_seen, detach_own

from pytest_ebsperf.errors import (
    ConfigError,
    DeviceError,
    FioNotFoundError,
    FioRunError,
)
from pytest_ebsperf.fio import process as fio_process
from pytest_ebsperf.fio.host import FioHost, RunResult, pgrep_pattern
from pytest_ebsperf.fio.jobs import escape_filename, fio_argv
from pytest_ebsperf.fio.refusals import diagnose
from pytest_ebsperf.fio.runner import FioRunner
from pytest_ebsperf.fio.workload import Workload

HERE = DATA / "fio"
MIB = 1024 * 1024
READ = Workload("randread", bs=4096, iodepth=4, runtime_s=2, ramp_s=1)
LONG_READ = Workload("randread", bs=4096, iodepth=4, runtime_s=30, ramp_s=0)


def argv_for(workload: Workload, *, readonly: bool = False, engine: str = "libaio") -> list[str]:
    return fio_argv(
        workload, "/dev/xvdf", output_path="/t/out.json", log_prefix="/t/log",
        readonly=readonly, engine=engine,
    )  # fmt: skip


# --- building the fio command ----------------------------------------------------------------


def test_every_job_reports_json_to_a_file_and_never_creates_the_target() -> None:
    argv = argv_for(READ)
    assert argv[0] == "fio"
    expected = {
        "--output-format=json", "--output=/t/out.json", "--allow_file_create=0",
        "--filename=/dev/xvdf", "--time_based", "--runtime=2000ms", "--ramp_time=1000ms",
        "--group_reporting", "--randrepeat=0", "--percentile_list=1:5:10:50:90:99:99.9:99.99",
        "--write_iops_log=/t/log", "--write_bw_log=/t/log", "--write_lat_log=/t/log",
        "--log_avg_msec=1000",
    }  # fmt: skip
    assert expected <= set(argv)


def test_fio_is_told_its_clock_unless_the_user_names_one() -> None:
    # named, fio skips its start-up test of the CPUs' clocks (benchmarks/bench_fio_start.py)
    assert [a for a in argv_for(READ) if a.startswith("--clocksource")] == \
        ["--clocksource=clock_gettime"]
    theirs = Workload("randread", extra=(("clocksource", "gettimeofday"),))
    assert [a for a in argv_for(theirs) if a.startswith("--clocksource")] == \
        ["--clocksource=gettimeofday"]


def test_a_read_workload_always_runs_fio_read_only() -> None:
    assert "--readonly" in argv_for(READ, readonly=False)
    assert "--readonly" not in argv_for(Workload("randwrite"), readonly=False)


def test_a_writing_workload_is_refused_in_read_only_mode() -> None:
    with pytest.raises(ConfigError, match="Refusing to run the writing workload 'randrw 70/30"):
        argv_for(Workload("randrw", rwmixread=70), readonly=True)


def test_mixed_workloads_pass_their_read_share_and_random_ones_skip_the_random_map() -> None:
    mixed = argv_for(Workload("randrw", rwmixread=70, bs=16384, iodepth=8, numjobs=2))
    assert {"--rw=randrw", "--rwmixread=70", "--bs=16384", "--iodepth=8", "--numjobs=2",
            "--norandommap"} <= set(mixed)  # fmt: skip
    sequential = argv_for(Workload("read", bs=MIB, size=64 * MIB))
    assert "--norandommap" not in sequential and "--rwmixread=50" not in sequential
    assert f"--size={64 * MIB}" in sequential


def test_extra_options_are_appended_but_may_not_override_the_job() -> None:
    argv = argv_for(READ.replace(extra=(("cpus_allowed", "0"), ("nice", "5"))))
    assert argv[-2:] == ["--cpus_allowed=0", "--nice=5"]
    assert "--thread" in argv  # jobs are threads of one fio process: they die with it
    with pytest.raises(ConfigError, match="sets filename, rw in its extra fio options"):
        argv_for(READ.replace(extra=(("rw", "randwrite"), ("filename", "/dev/sda"))))


def test_the_engine_must_be_resolved_before_building() -> None:
    with pytest.raises(ConfigError, match="resolve_engine"):
        argv_for(READ, engine="auto")


def test_colons_in_device_paths_are_escaped_for_fio() -> None:
    assert escape_filename("/dev/disk/by-path/pci-0000:00:1f.0") == (
        "/dev/disk/by-path/pci-0000\\:00\\:1f.0"
    )


# --- the host wrapper --------------------------------------------------------------------------


def test_host_arguments_are_quoted_so_shell_syntax_stays_literal() -> None:
    result = FioHost().run(["printf", "%s|", "a b", "$(echo injected)", "x;y", "'q'"])
    assert (result.rc, result.stdout) == (0, "a b|$(echo injected)|x;y|'q'|")


def test_a_host_command_is_bounded_by_timeout_on_the_target() -> None:
    start = time.monotonic()
    result = FioHost().run(["sleep", "30"], timeout_s=0.5)
    assert result.rc == 124
    assert time.monotonic() - start < 10


def test_host_files_listing_and_block_device_checks(tmp_path: Path) -> None:
    host = FioHost()
    (tmp_path / "a_iops.1.log").write_text("1000, 5, 0, 0, 0\n")
    (tmp_path / "b.json").write_text("{}")
    assert host.listdir(str(tmp_path)) == ["a_iops.1.log", "b.json"]
    assert host.glob(str(tmp_path), "*.log") == [str(tmp_path / "a_iops.1.log")]
    assert host.read_text(str(tmp_path / "b.json")) == "{}"
    assert host.exists(str(tmp_path)) and not host.exists(str(tmp_path / "nope"))
    assert not host.is_block_device(str(tmp_path / "b.json"))


def test_local_file_calls_made_in_process_agree_with_the_shell_ones(tmp_path: Path) -> None:
    """On testinfra's local backend the file calls are made by this process: they give what
    cat, ls, test and mktemp give through the shell, failures included."""
    direct, shell = FioHost(), FioHost()
    shell.direct = False
    assert direct.direct
    (tmp_path / ".hidden").write_text("h")
    (tmp_path / "r.json").write_text('{"é": 1}\n')
    (tmp_path / "sub").mkdir()
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "loop").symlink_to("/dev/loop-control" if os.path.exists("/dev/loop-control")
                                   else "/dev/null")
    for host in (direct, shell):
        assert host.listdir(str(tmp_path)) == [".hidden", "dangling", "loop", "r.json", "sub"]
        assert host.read_text(str(tmp_path / "r.json")) == '{"é": 1}\n'
        assert host.exists(str(tmp_path / "sub")) and not host.exists(str(tmp_path / "dangling"))
        assert host.is_file(str(tmp_path / "r.json")) and not host.is_file(str(tmp_path / "sub"))
        assert not host.is_block_device(str(tmp_path / "loop"))  # a character device
        assert not host.is_block_device(str(tmp_path / "nowhere"))
        for call in (host.read_text, host.listdir):
            with pytest.raises(FioRunError, match="failed on this machine.*No such file"):
                call(str(tmp_path / "nowhere"))
        made = host.mkdtemp()
        assert stat.S_IMODE(os.stat(made).st_mode) == 0o700 and "ebsperf-fio." in made
        (Path(made) / "x").write_text("x")
        host.remove_tree(made)
        assert not os.path.exists(made)
    blocks = sorted(Path("/sys/block").glob("loop*"))
    if blocks:
        node = f"/dev/{blocks[0].name}"
        assert direct.is_block_device(node) == shell.is_block_device(node) == os.path.exists(node)


def test_remove_tree_deletes_a_temp_dir_and_refuses_anything_like_root() -> None:
    host = FioHost()
    made = host.mkdtemp()
    assert stat.S_IMODE(os.stat(made).st_mode) == 0o700
    host.remove_tree(made)
    assert not os.path.exists(made)
    for path in ("/", "/tmp", "relative/dir", "/tmp/../etc"):
        with pytest.raises(DeviceError, match="Refusing to delete"):
            host.remove_tree(path)


@pytest.mark.parametrize("marker", ["/tmp/ebsperf-fio.AbC123/fio.json", "a.b(c)+d", "-x[y]"])
def test_the_process_pattern_matches_the_marker_but_not_itself(marker: str) -> None:
    pattern = pgrep_pattern(marker)
    assert re.search(pattern, f"fio --output={marker} --name=x")
    assert not re.search(pattern, pattern)


def _sleeper(marker: str, ignore_sigint: bool) -> subprocess.Popen[bytes]:
    code = "import signal, time\n"
    if ignore_sigint:
        code += "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    code += "print('ready', flush=True)\ntime.sleep(60)\n"
    proc = subprocess.Popen([sys.executable, "-c", code, marker], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    return proc


@pytest.mark.parametrize(
    ("ignore_sigint", "returncode"), [(False, -signal.SIGINT), (True, -signal.SIGKILL)]
)
def test_kill_matching_interrupts_first_and_kills_what_ignores_it(
    ignore_sigint: bool, returncode: int
) -> None:
    marker = f"/tmp/ebsperf-test-{uuid.uuid4().hex}"
    proc = _sleeper(marker, ignore_sigint)
    try:
        assert FioHost().matching_pids(marker) == [proc.pid]
        assert FioHost().kill_matching(marker, grace_s=0.5)
        assert proc.wait(timeout=10) == returncode  # Python re-raises SIGINT at exit
        assert FioHost().matching_pids(marker) == []
    finally:
        proc.kill()
        proc.wait()


# --- sentences for failed runs (golden stderr from real fio runs) -----------------------------


def _golden_failure(name: str, rc: int = 1) -> RunResult:
    return RunResult(
        rc, (HERE / f"{name}.stdout").read_text(), (HERE / f"{name}.stderr").read_text()
    )


@pytest.mark.parametrize(
    ("name", "errors", "expected"),
    [
        ("permission_denied", (13,), "permission denied. Run pytest as root"),
        ("odirect_einval", (22,), "does not support O_DIRECT"),
        ("file_creation_disallowed", (), "vanished before fio opened it"),
        ("missing_readonly", (), "vanished before fio opened it"),
    ],
)
def test_fio_failures_become_sentences_that_say_what_to_do(
    name: str, errors: tuple[int, ...], expected: str
) -> None:
    message = diagnose(_golden_failure(name), "", "/dev/xvdf", "this machine", errors)
    assert expected in message


def test_an_unknown_failure_quotes_fio_and_the_exit_status() -> None:
    failed = RunResult(3, "", "fio: something new went wrong\n")
    message = diagnose(failed, "", "/dev/xvdf", "box", ())
    assert "exit status 3" in message and "something new went wrong" in message


def test_an_unexplained_job_error_is_named_with_its_errno_text() -> None:
    message = diagnose(RunResult(1, "", ""), "", "/dev/xvdf", "box", (5,))
    assert "5 (Input/output error)" in message


# --- fio itself: found, too old, engines -------------------------------------------------------


needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def _script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_a_missing_fio_says_how_to_install_it(tmp_path: Path) -> None:
    runner = FioRunner(fio=str(tmp_path / "no-such-fio"))
    with pytest.raises(FioNotFoundError, match="apt-get install fio.*dnf install fio.*--fio=PATH"):
        runner.version()


def test_an_fio_older_than_3_is_refused_with_the_version_found(tmp_path: Path) -> None:
    old = _script(tmp_path / "fio", "echo fio-2.1.5\n")
    with pytest.raises(
        FioNotFoundError, match=r"is fio-2\.1\.5, too old: .* needs fio 3\.0 or newer"
    ):
        FioRunner(fio=old).version()


@needs_fio
def test_the_version_is_read_once_and_cached(tmp_path: Path) -> None:
    counter = tmp_path / "calls"
    fio = _script(tmp_path / "fio", f'echo x >> "{counter}"\nexec fio "$@"\n')
    runner = FioRunner(fio=fio)
    assert runner.version() == runner.version()
    assert counter.read_text().count("x") == 1


@needs_fio
def test_auto_engine_picks_an_engine_this_fio_lists() -> None:
    runner = FioRunner()
    listed = subprocess.run(
        ["fio", "--enghelp"], check=False, capture_output=True, text=True
    ).stdout.split()
    assert runner.resolve_engine("auto") in {"io_uring", "libaio"} & set(listed)
    assert runner.resolve_engine("psync") == "psync"


@needs_fio
def test_auto_engine_falls_back_to_libaio_when_io_uring_is_listed_but_fails(tmp_path: Path) -> None:
    fio = _script(
        tmp_path / "fio",
        'case "$*" in *ioengine=io_uring*) echo "io_uring disabled" >&2; exit 1;; esac\n'
        'exec fio "$@"\n',
    )
    listed = subprocess.run([fio, "--enghelp"], check=False, capture_output=True, text=True).stdout
    if "io_uring" not in listed:
        pytest.skip("this fio has no io_uring engine")
    assert FioRunner(fio=fio).resolve_engine("auto") == "libaio"


# --- the target is checked before fio runs -----------------------------------------------------


@needs_fio
def test_a_mistyped_device_path_is_refused_and_nothing_is_created(tmp_path: Path) -> None:
    missing = tmp_path / "nodir" / "xvdz"
    expected = (
        r"'.*/nodir/xvdz' does not exist on this machine\. "
        r"Pass --device=PATH with a block device \(lsblk lists them\)\."
    )
    with pytest.raises(DeviceError, match=expected):
        FioRunner().run(READ, str(missing), readonly=True)
    assert not missing.parent.exists()


@needs_fio
def test_a_regular_file_is_refused_because_fio_would_benchmark_the_file(tmp_path: Path) -> None:
    image = tmp_path / "disk.img"
    image.write_bytes(b"\0" * 4096)
    with pytest.raises(
        DeviceError, match="is a regular file, not a block device: fio would silently"
    ):
        FioRunner().run(READ, str(image), readonly=True)
    assert image.read_bytes() == b"\0" * 4096


# --- real runs on a loop device ----------------------------------------------------------------


@pytest.fixture(scope="module")
def loop_device(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A 256 MiB loop device on a private tmpfs, detached and unmounted on every path."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create a loop device")
    if shutil.which("fio") is None or shutil.which("losetup") is None:
        pytest.skip("needs fio and losetup")
    if not os.path.exists("/dev/loop-control"):
        pytest.skip("this kernel has no loop devices (/dev/loop-control is missing)")
    mnt = tmp_path_factory.mktemp("fio-loop")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=300m", "tmpfs", str(mnt)], check=False
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        image = mnt / "volume.img"
        with open(image, "wb") as f:
            f.truncate(256 * MIB)
        made = subprocess.run(
            ["losetup", "--find", "--show", str(image)], check=False, capture_output=True, text=True
        )
        if made.returncode != 0:
            pytest.skip(f"losetup failed: {made.stderr.strip()}")
        device = made.stdout.strip()
        backing = backing_seen(device)
        try:
            yield device
        finally:
            detach_own(device, backing)
    finally:
        # the loop device lets go of its file a moment after losetup -d: retry, then detach
        # the mount lazily so nothing stays mounted whatever held it
        for _ in range(20):
            if subprocess.run(["umount", str(mnt)], check=False,
                              capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        else:
            subprocess.run(["umount", "-l", str(mnt)], check=False, capture_output=True)


@pytest.fixture(scope="module")
def runner() -> FioRunner:
    return FioRunner()


def _marker(runner: FioRunner) -> str:
    return next(a.split("=", 1)[1] for a in runner.last_argv if a.startswith("--output="))


def _fio_processes(marker: str) -> list[tuple[int, int]]:
    """(pid, parent pid) of every live fio process whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            comm = (entry / "comm").read_text().strip()
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if comm == "fio" and marker in cmdline:
            found.append((int(entry.name), ppid))
    return found


def _during_run(
    runner: FioRunner, action: Callable[[str, list[tuple[int, int]]], None]
) -> threading.Thread:
    """Call ``action(marker, fio processes)`` from a thread once fio has been running for 1 s."""
    runner.last_argv = []

    def watch() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            procs = _fio_processes(_marker(runner)) if runner.last_argv else []
            if procs:  # one fio process: its jobs are threads of it
                time.sleep(1)
                action(_marker(runner), procs)
                return
            time.sleep(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def _assert_nothing_left(runner: FioRunner, marker: str) -> None:
    assert _fio_processes(marker) == []
    assert runner.host.matching_pids(marker) == []
    assert not os.path.exists(posixpath.dirname(marker)), "the temp dir was not removed"


@pytest.mark.needs_root
def test_a_random_read_returns_summary_and_per_second_series(
    loop_device: str, runner: FioRunner
) -> None:
    result = runner.run(READ, loop_device, readonly=True)
    stats = result.raw["jobs"][0]["read"]
    assert result.read.iops > 0 and not result.write.active
    assert result.read.clat.p(99) is not None and result.read.lat.p(99.9) is not None
    assert len(result.series["read_iops"]) == stats["iops_samples"] >= 1
    assert result.series["read_iops"].mean() == pytest.approx(stats["iops_mean"])
    assert result.errors == () and result.jobs == 1


@pytest.mark.needs_root
def test_a_run_records_its_command_and_wall_time_and_removes_its_files(
    loop_device: str, runner: FioRunner
) -> None:
    runner.run(READ, loop_device, readonly=True)
    marker = _marker(runner)
    assert "--readonly" in runner.last_argv and f"--filename={loop_device}" in runner.last_argv
    assert runner.last_wall_s is not None
    assert READ.runtime_s + READ.ramp_s <= runner.last_wall_s < READ.runtime_s + READ.ramp_s + 15
    assert not os.path.exists(posixpath.dirname(marker))


@pytest.mark.needs_root
def test_a_70_30_mix_with_two_jobs_counts_both_jobs_and_both_directions(
    loop_device: str, runner: FioRunner
) -> None:
    mixed = Workload("randrw", rwmixread=70, bs=4096, iodepth=4, numjobs=2, runtime_s=2, ramp_s=0)
    result = runner.run(mixed, loop_device, readonly=False)
    assert result.jobs == 2
    assert result.read.iops / result.total_iops == pytest.approx(0.70, abs=0.05)
    total = result.series["total_iops"]
    assert len(total) >= 1
    assert (
        total.values[0]
        == result.series["read_iops"].values[0] + result.series["write_iops"].values[0]
    )


@pytest.mark.needs_root
def test_a_prefix_runs_before_fio_unchanged(loop_device: str, runner: FioRunner) -> None:
    result = runner.run(READ, loop_device, readonly=True, prefix=("env", "EBSPERF_PREFIX=1"))
    assert runner.last_argv[:3] == ["env", "EBSPERF_PREFIX=1", "fio"]
    assert result.read.iops > 0


@pytest.mark.needs_root
def test_permission_denied_tells_the_user_to_run_as_root_or_use_sudo(
    loop_device: str, runner: FioRunner, tmp_path: Path
) -> None:
    if shutil.which("setpriv") is None:
        pytest.skip("needs setpriv to drop CAP_DAC_OVERRIDE")
    node = tmp_path / "blk000"
    rdev = os.stat(loop_device).st_rdev
    os.mknod(node, 0o000 | stat.S_IFBLK, os.makedev(os.major(rdev), os.minor(rdev)))
    os.chmod(node, 0)
    no_dac = ("setpriv", "--bounding-set=-dac_override,-dac_read_search",
              "--inh-caps=-dac_override,-dac_read_search", "--")  # fmt: skip
    with pytest.raises(FioRunError, match="permission denied. Run pytest as root") as info:
        runner.run(READ, str(node), readonly=True, prefix=no_dac)
    # fio's own line names the device and cuts its error text at a fixed length: under
    # pytest-xdist's longer temporary paths it may end in "error=Permiss"
    assert info.value.rc == 1 and "error=Permiss" in info.value.stderr


@pytest.mark.needs_root
def test_a_device_without_o_direct_is_explained(loop_device: str, runner: FioRunner) -> None:
    if shutil.which("strace") is None:
        pytest.skip("needs strace to inject EINVAL on open")
    inject = ("strace", "-f", "-o", "/dev/null", "-P", loop_device, "-e", "trace=openat",
              "-e", "inject=openat:error=EINVAL")  # fmt: skip
    with pytest.raises(FioRunError, match="does not support O_DIRECT"):
        runner.run(READ, loop_device, readonly=True, prefix=inject)


@pytest.mark.needs_root
def test_an_option_fio_does_not_know_is_reported_as_rejected(
    loop_device: str, runner: FioRunner
) -> None:
    with pytest.raises(FioRunError, match="fio rejected an option or engine: .*no_such_option"):
        runner.run(READ.replace(extra=(("no_such_option", "1"),)), loop_device, readonly=True)


@pytest.mark.needs_root
def test_fio_killed_by_sigterm_mid_run_is_reported_and_reaped(
    loop_device: str, runner: FioRunner
) -> None:
    def terminate(marker: str, procs: list[tuple[int, int]]) -> None:
        pids = {pid for pid, _ in procs}
        main = next(pid for pid, ppid in procs if ppid not in pids)
        os.kill(main, signal.SIGTERM)

    thread = _during_run(runner, terminate)
    with pytest.raises(
        FioRunError, match=r"fio was killed by signal 15 \(SIGTERM\) after \d"
    ) as info:
        runner.run(LONG_READ, loop_device, readonly=True)
    thread.join(timeout=5)
    assert info.value.rc == 128
    _assert_nothing_left(runner, _marker(runner))


@pytest.mark.needs_root
def test_fio_killed_by_sigkill_mid_run_is_reported_and_reaped(
    loop_device: str, runner: FioRunner
) -> None:
    def kill_all(marker: str, procs: list[tuple[int, int]]) -> None:
        for pid, _ in procs:
            os.kill(pid, signal.SIGKILL)

    _stopped_early(runner, loop_device, kill_all,
                   pytest.raises(FioRunError, match=r"fio was killed by signal 9 \(SIGKILL\)"))


@pytest.mark.needs_root
def test_ctrl_c_during_a_run_reaps_fio_and_removes_its_files(
    loop_device: str, runner: FioRunner
) -> None:
    main = threading.get_ident()

    def interrupt(marker: str, procs: list[tuple[int, int]]) -> None:
        signal.pthread_kill(main, signal.SIGINT)  # what Ctrl-C delivers to the pytest process

    _stopped_early(runner, loop_device, interrupt, pytest.raises(KeyboardInterrupt))


def _stopped_early(runner: FioRunner, loop_device: str,
                   action: Callable[[str, list[tuple[int, int]]], None],
                   raises: AbstractContextManager[Any]) -> None:
    """``action`` during a long run ends it with ``raises``, long before its run time, and
    leaves nothing behind."""
    thread = _during_run(runner, action)
    start = time.monotonic()
    with raises:
        runner.run(LONG_READ, loop_device, readonly=True)
    thread.join(timeout=5)
    assert time.monotonic() - start < LONG_READ.runtime_s
    _assert_nothing_left(runner, _marker(runner))


@pytest.mark.needs_root
def test_a_run_that_outlives_its_timeout_is_stopped_and_reported(
    loop_device: str, runner: FioRunner
) -> None:
    start = time.monotonic()
    with pytest.raises(FioRunError, match="fio did not finish within 2 s") as info:
        runner.run(LONG_READ, loop_device, readonly=True, timeout_s=2)
    assert info.value.rc == 124
    assert time.monotonic() - start < LONG_READ.runtime_s
    _assert_nothing_left(runner, _marker(runner))


def test_without_setpriv_a_child_whose_parent_is_already_gone_exits_before_exec() -> None:
    # the prctl fallback (no setpriv with --pdeathsig): a parent that died between fork and
    # prctl leaves the child adopted, by pid 1 or by a subreaper (a container's init), so the
    # child compares its parent with the pid that forked it, not with 1
    ours = subprocess.run(["true"], preexec_fn=partial(fio_process._die_with_parent, os.getpid()),
                          check=False, timeout=30)
    assert ours.returncode == 0
    started = time.monotonic()
    adopted = subprocess.run(["sleep", "20"], check=False, timeout=30,
                             preexec_fn=partial(fio_process._die_with_parent, os.getpid() + 1))
    assert adopted.returncode == 1 and time.monotonic() - started < 10


def test_an_engine_probe_runs_its_job_as_a_thread_of_the_one_fio_process(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The parent-death signal reaches the fio process a probe starts, not a job process it
    forks: one forked by a probe outlived a run SIGKILLed meanwhile (a signal test), asleep
    for good, its directory removed. A probe's job is a thread, as a run's are."""
    from pytest_ebsperf.fio.engines import Engines
    from pytest_ebsperf.fio.host import FioHost

    seen: list[list[str]] = []

    def ran(self: Engines, argv: list[str], tmp: str, *, local: bool) -> bool:
        seen.append(argv)
        return False

    monkeypatch.setattr(Engines, "_probe_ran", ran)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert Engines(FioHost(), "fio").works("io_uring") is False
    (argv,) = seen
    assert "--thread" in argv and "--name=probe" in argv
