"""The progress line of long checks, the terminal writer behind it, and the knee picture."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_ebsperf.credits.plot import KneePlot, plot_path, save_plot
from pytest_ebsperf.credits.progress import (
    Forecast,
    ProgressMonitor,
    block_stat_path,
    parse_block_stat,
)
from pytest_ebsperf.plugin.terminal import TerminalProgress
from pytest_ebsperf.verdicts.knee import find_knee

KIB = 1024


def forecast(balance: float = 27_000.0, **changes: object) -> Forecast:
    values: dict[str, object] = {"phase": "burst", "total_s": 27.0, "balance": balance,
                                 "earn": 300.0, "capacity": 54_000.0, "cost": 1.0,
                                 "bs": 16 * KIB, "unit": "I/O credits", "burst_drain": 2_700.0}
    values.update(changes)
    return Forecast(**values)  # type: ignore[arg-type]


def test_the_line_shows_elapsed_rate_credits_left_and_time_to_the_knee() -> None:
    line = forecast().line(elapsed=3.0, dt=1.0, bytes_per_s=3_000 * 16 * KIB)
    assert line == ("ebsperf burst: 3 s of 27 s | 3,000 IOPS | ~24,300 I/O credits left | "
                    "knee in ~9 s")


def test_after_the_knee_the_line_says_baseline() -> None:
    f = forecast(balance=100.0)
    f.line(1.0, 1.0, 3_000 * 16 * KIB)
    assert f.line(2.0, 1.0, 300 * 16 * KIB).endswith("| ~0 I/O credits left | at baseline")


def test_an_idle_line_shows_what_the_wait_earned_and_buys() -> None:
    f = forecast(balance=0.0, idle=True, phase="refill", total_s=27.0)
    assert f.line(9.0, 9.0, 0.0) == ("ebsperf refill: 9 s of 27 s idle | ~2,700 I/O credits "
                                     "earned | next burst ~1.0 s")


def test_throughput_volumes_show_mib_per_second() -> None:
    f = forecast(bs=1024 * KIB, throughput=True, unit="MiB of throughput credit", earn=80.0,
                 balance=4_000.0)
    assert "| 500 MiB/s |" in f.line(1.0, 1.0, 500 * 1024 * KIB)


def test_block_stat_lines_give_completed_ios_and_bytes() -> None:
    line = "   40056        0  5908416     4698    12305        1   393792     1026 0 280 5725"
    assert parse_block_stat(line) == (40056 + 12305, 512 * (5908416 + 393792))
    with pytest.raises(ValueError):
        parse_block_stat("1 2 3")
    assert block_stat_path("/dev/loop3") == Path("/sys/class/block/loop3/stat")


class Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.finished = 0

    def update(self, line: str) -> None:
        self.lines.append(line)

    def finish(self) -> None:
        self.finished += 1


def test_the_monitor_writes_one_line_per_sample_from_the_counter_and_ends_it() -> None:
    now = [0.0]
    counts = [(0, 0)]
    writer = Lines()
    monitor = ProgressMonitor(writer, lambda: counts[0], forecast(), interval_s=3600.0,
                              clock=lambda: now[0])
    with monitor:
        for second in (1, 2):
            now[0] = float(second)
            counts[0] = (3_000 * second, 3_000 * second * 16 * KIB)
            monitor.sample()
    assert [line.split(" | ")[1] for line in writer.lines] == ["3,000 IOPS", "3,000 IOPS"]
    assert writer.finished == 1


def test_a_vanished_device_ends_the_line_quietly() -> None:
    def gone() -> tuple[int, int]:
        raise FileNotFoundError("gone")

    writer = Lines()
    with ProgressMonitor(writer, gone, forecast(), interval_s=0.01) as monitor:
        monitor.sample()
    assert writer.lines == [] and writer.finished == 0


class FakeWriter:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str, flush: bool = False) -> None:
        self.text += text


class FakeCapture:
    def __init__(self) -> None:
        self.suspended = 0

    @contextlib.contextmanager
    def global_and_fixture_disabled(self) -> Iterator[None]:
        self.suspended += 1
        yield


def test_the_terminal_line_is_rewritten_in_place_below_pytests_own_line() -> None:
    writer, capture = FakeWriter(), FakeCapture()
    progress = TerminalProgress(writer, capture)
    progress.update("first long line")
    progress.update("short")
    progress.finish()
    assert writer.text == "\nfirst long line\rshort          \n"
    assert capture.suspended == 3  # output capture is lifted for every write


def test_progress_is_a_heartbeat_when_output_is_not_a_terminal(pytester: pytest.Pytester
                                                               ) -> None:
    pytester.makepyfile("""
        def test_writer(pytestconfig):
            from pytest_ebsperf.plugin import STATE_KEY
            book = pytestconfig.stash[STATE_KEY].session.credits
            print("progress writer:", book.progress)
    """)
    result = pytester.runpytest_subprocess("-s")
    result.stdout.fnmatch_lines(["*progress writer: <pytest_ebsperf.plugin.terminal.HeartbeatProgress*"])


# -- picture ----------------------------------------------------------------------------------
def test_a_knee_plot_is_a_png_named_after_the_test(tmp_path: Path) -> None:
    values = [3000.0] * 10 + [300.0] * 6
    times = [float(i + 1) for i in range(len(values))]
    knee = find_knee(values, times)
    plot = KneePlot("gp2 burst duration", "IOPS", [0.0, *times], [3000.0, *values],
                    [(0, 3000), (10, 3000), (10, 300), (16, 300)], 10.0, 1.2, knee.t_s,
                    [knee.reason])
    path = save_plot(plot, plot_path(tmp_path / "plots", "suites/gp2/test_x.py::test_y[a]"))
    assert path.parent == tmp_path / "plots"
    assert path.name == "suites_gp2_test_x.py_test_y_a-knee.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_matplotlib_the_plot_raises_import_error(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    for name in [m for m in sys.modules if m.startswith("matplotlib")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError):
        save_plot(KneePlot("t", "IOPS", [0.0], [1.0]), tmp_path / "x.png")


def test_a_heartbeat_writes_whole_lines_at_most_every_30_seconds() -> None:
    from pytest_ebsperf.plugin.terminal import HeartbeatProgress

    now = [0.0]
    written: list[str] = []
    writer = SimpleNamespace(write=lambda text, flush=False: written.append(text))
    beat = HeartbeatProgress(writer, None, every_s=30.0, clock=lambda: now[0])
    for second in range(95):
        now[0] = float(second)
        beat.update(f"line at {second} s")
    assert written == ["\nline at 30 s\n", "line at 60 s\n", "line at 90 s\n"]
    beat.finish()
    now[0] = 200.0
    beat.update("a new check")
    assert len(written) == 3  # a new check starts its own 30 s
