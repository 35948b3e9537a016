"""The run's credit book: time scale, ledger-aware credit checks, options and their errors."""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.config.consistency import parse_timescale, validate
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.credits.book import AUTO_BURST_S, CreditBook, auto_timescale
from pytest_ebsperf.errors import ConfigError

GP2 = Volume("gp2", size_gib=100)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(("text", "scale"), [("auto", None), ("", None), ("100", 100.0),
                                             (" 2.5 ", 2.5)])
def test_time_scales_are_auto_or_a_number_of_one_or_more(text: str, scale: float | None
                                                         ) -> None:
    assert parse_timescale(text) == scale


@pytest.mark.parametrize("text", ["fast", "0.5", "0", "-3", "nan", "inf"])
def test_a_bad_time_scale_is_a_sentence_saying_what_is_allowed(text: str) -> None:
    with pytest.raises(ConfigError, match="give 'auto' or a number of 1 or more"):
        parse_timescale(text)


def test_auto_makes_a_full_bucket_burst_for_about_twenty_seconds() -> None:
    assert auto_timescale(GP2) == pytest.approx(2_000 / AUTO_BURST_S)  # the brief's 100
    assert auto_timescale(Volume("gp2", size_gib=500)) == pytest.approx(3_600 / AUTO_BURST_S)
    st1 = Volume("st1", size_gib=2048)
    assert auto_timescale(st1) == pytest.approx(2048 * 1024 / (500 - 80) / AUTO_BURST_S)
    # no knee: scaled by how long a full bucket lasts at 3,000 IOPS (the no-knee watch)
    assert auto_timescale(Volume("gp2", size_gib=1000)) == pytest.approx(1_800 / AUTO_BURST_S)
    assert auto_timescale(Volume("io1", size_gib=100, iops=1000)) == 1.0


def test_real_volumes_run_on_real_time() -> None:
    book = CreditBook(Settings())
    assert book.timescale(GP2) == 1.0
    with pytest.raises(ConfigError, match="only applies with --emulate"):
        validate(Settings(emulate_timescale="100"))


def test_testing_aids_are_checked_and_only_apply_to_emulated_volumes() -> None:
    with pytest.raises(ConfigError, match="only apply with --emulate"):
        validate(Settings(emulate_bucket_factor=0.7))
    with pytest.raises(ConfigError, match="positive"):
        validate(Settings(emulate=True, emulate_bucket_factor=0.0))
    with pytest.raises(ConfigError, match="percentage"):
        validate(Settings(emulate=True, emulate_burst_balance=120.0))
    book = CreditBook(Settings(emulate=True))
    book.configure(bucket_factor=0.7, start_pct=0.0)
    assert (book.bucket_factor, book.emulated_start_pct) == (0.7, 0.0)


def test_a_fresh_real_volume_gets_the_models_own_shortfall_sentence() -> None:
    book = CreditBook(Settings())
    empty = GP2.replace(burst_balance_pct=1.0)  # 54,000 credits: 20 s at burst
    assert book.burst_shortfall(GP2, 62.0) is None
    assert "leave it idle for about" in (book.burst_shortfall(empty, 62.0) or "")


def test_burst_checks_see_the_credits_earlier_runs_spent() -> None:
    clock = Clock()
    book = CreditBook(Settings(emulate=True, emulate_timescale="100"), clock=clock)
    ledger = book.ledger(GP2)
    assert ledger is not None and book.burst_shortfall(GP2, 4.0) is None
    ledger.charge(0.0, [3_000.0] * 18, 1.0)  # 18 of the 20 seconds of burst are gone
    clock.now = 18.0
    problem = book.burst_shortfall(GP2, 4.0)
    assert problem is not None
    assert "has about 5,400 I/O credits (10 % of the bucket) after 1 earlier run" in problem
    clock.now = 40.0  # 22 idle seconds earned 6,600 more: 12,000 >= 4 x 2,700
    assert book.burst_shortfall(GP2, 4.0) is None


def test_volumes_without_a_bucket_have_no_ledger() -> None:
    book = CreditBook(Settings())
    assert book.ledger(Volume("io1", size_gib=100, iops=1000)) is None
    assert book.burst_shortfall(Volume("io1", size_gib=100, iops=1000), 1e9) is None


# -- options as users meet them -----------------------------------------------------------
def test_the_credit_options_are_in_the_ebsperf_help_group(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    # every option under its --ebsperf- name; the bucket's testing aids in their own group
    result.stdout.fnmatch_lines(["*--ebsperf-emulate-timescale=N*", "*--ebsperf-plots=DIR*",
                                 "*testing aids*",
                                 "*--ebsperf-emulate-bucket-factor=FACTOR*",
                                 "*--ebsperf-emulate-burst-balance=PERCENT*"])


@pytest.mark.parametrize(("args", "message"), [
    (["--emulate-timescale=fast"], "*'fast' is not a time scale*"),
    (["--emulate-timescale=100"], "*--emulate-timescale only applies with --emulate*"),
    (["--emulate-bucket-factor=0.7"], "*only apply with --emulate*"),
    (["--emulate", "--emulate-bucket-factor=-1"], "*must be a positive number*"),
])
def test_bad_credit_options_are_usage_errors(pytester: pytest.Pytester, args: list[str],
                                             message: str) -> None:
    pytester.makepyfile("def test_plain(): pass")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_the_time_scale_also_comes_from_the_environment(pytester: pytest.Pytester,
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    monkeypatch.setenv("EBSPERF_EMULATE_TIMESCALE", "fast")
    pytester.makepyfile("def test_plain(): pass")
    result = pytester.runpytest()
    result.stderr.fnmatch_lines(["*'fast' is not a time scale*"])


def fake_config(*, verbosity: int = 0, worker: bool = False) -> Any:
    plugins = {"terminalreporter": object(), "capturemanager": None}
    config = SimpleNamespace(get_verbosity=lambda: verbosity,
                             pluginmanager=SimpleNamespace(get_plugin=plugins.get),
                             get_terminal_writer=lambda: "writer")
    if worker:
        config.workerinput = {}
    return config


def test_progress_is_a_line_on_a_terminal_a_heartbeat_in_a_log_and_silent_under_qq_or_xdist(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_ebsperf.plugin import terminal

    monkeypatch.setattr(sys, "stdout", SimpleNamespace(isatty=lambda: True))
    assert isinstance(terminal.progress_writer(fake_config()), terminal.TerminalProgress)
    assert isinstance(terminal.progress_writer(fake_config(verbosity=-1)),
                      terminal.HeartbeatProgress)
    assert terminal.progress_writer(fake_config(verbosity=-2)) is None
    assert terminal.progress_writer(fake_config(worker=True)) is None
    monkeypatch.setattr(sys, "stdout", SimpleNamespace(isatty=lambda: False))
    assert isinstance(terminal.progress_writer(fake_config()), terminal.HeartbeatProgress)


def test_a_run_stopped_once_settled_is_booked_for_the_seconds_it_ran() -> None:
    """B-HDD: a CAP check planned for 14 s stops after 4 once its PASS is settled. Booked as
    14 s, the ledger earned the 10 unrun seconds on top of the next check's own: three such
    checks on an emulated sc1 left it 480 MiB richer than the bucket, and the burst-duration
    check that followed failed a healthy volume (expected 14.5 s, the bucket lasted 11.2)."""
    from pytest_ebsperf.emulate.target import Target
    from pytest_ebsperf.fio.result import DirectionStats, FioResult, Series
    from pytest_ebsperf.fio.workload import Workload

    clock = Clock()
    book = CreditBook(Settings(emulate=True, emulate_timescale="100"), clock=clock)
    ledger = book.ledger(GP2)
    assert ledger is not None
    planned = Workload("randread", runtime_s=14.0, ramp_s=0.0)
    ran = FioResult("fio-3.33", DirectionStats(iops=3_000.0, total_ios=12_000,
                                               runtime_ms=4_000.0), DirectionStats(),
                    series={"total_iops": Series((1.0, 2.0, 3.0, 4.0), (3_000.0,) * 4)})
    with book.track(Target("/dev/loop9", GP2), planned) as finished:
        clock.now = 4.0
        finished(ran)
    # 4 s at 3,000 spent 12,000 and earned 1,200: the ledger is up to date now, not at 14 s
    assert ledger.updated_at == pytest.approx(4.0)
    assert ledger.at(4.0) == pytest.approx(54_000 - 12_000 + 4 * 300)
    clock.now = 10.0  # 6 idle seconds earn 1,800, once
    assert ledger.at(clock.now) == pytest.approx(54_000 - 12_000 + 10 * 300)
