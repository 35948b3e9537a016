"""Settings resolution: one precedence (marker > command line > environment > ini > default)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_ebsperf.config.consistency import resolve
from pytest_ebsperf.config.options import OPTIONS_BY_DEST, Option
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.errors import ConfigError


def make(cli: dict[str, Any] | None = None, env: dict[str, str] | None = None,
         ini: dict[str, str] | None = None) -> Settings:
    cli, ini = cli or {}, ini or {}
    return resolve(lambda o: cli.get(o.dest), env or {}, lambda o: ini.get(o.ini or ""))


def test_nothing_given_yields_defaults_marked_as_default() -> None:
    settings = make()
    assert settings.device is None and settings.engine == "auto" and settings.fio == "fio"
    assert settings.origin["device"] == "default"
    assert settings.runtime_s == 60.0 and settings.ramp_s == 2.0


def test_emulated_runs_default_to_short_runtimes() -> None:
    settings = make(cli={"emulate": True})
    assert settings.runtime_s == 5.0 and settings.ramp_s == 0.5


def test_command_line_wins_over_environment_and_ini() -> None:
    settings = make(cli={"volume_size": "200"}, env={"EBSPERF_VOLUME_SIZE": "300"},
                    ini={"ebsperf_volume_size": "400"})
    assert settings.volume_size == 200
    assert settings.origin["volume_size"] == "command line (--volume-size)"


def test_environment_wins_over_ini() -> None:
    settings = make(env={"EBSPERF_VOLUME_TYPE": "gp3"}, ini={"ebsperf_volume_type": "io1"})
    assert settings.volume_type == "gp3"
    assert settings.origin["volume_type"] == "environment (EBSPERF_VOLUME_TYPE)"


def test_ini_is_used_when_nothing_else_is_given() -> None:
    settings = make(ini={"ebsperf_runtime": "30"})
    assert settings.runtime_s == 30.0 and settings.given("runtime")


def test_marker_wins_over_command_line() -> None:
    settings = make(cli={"runtime": "60"}).with_marker({"runtime": 5, "volume_type": "io1"})
    assert settings.runtime_s == 5.0 and settings.origin["runtime"] == "marker"
    assert settings.volume_type is None  # a suite's type is not a setting override


@pytest.mark.parametrize(
    ("cli", "env", "ini", "words"),
    [
        ({"volume_type": "gp9"}, {}, {}, ["'gp9' is not a valid --volume-type",
                                          "Valid types: gp2, gp3, io1"]),
        ({}, {"EBSPERF_VOLUME_SIZE": "big"}, {}, ["'big' from environment (EBSPERF_VOLUME_SIZE)",
                                                   "whole number"]),
        ({}, {}, {"ebsperf_runtime": "soon"}, ["'soon' from ini (ebsperf_runtime)", "number"]),
        ({"burst_balance": "150"}, {}, {}, ["--burst-balance is a percentage", "got 150"]),
        ({"volume_iops": "-5"}, {}, {}, ["--volume-iops must be positive", "got -5"]),
        ({"emulate": True, "device": "/dev/loop9"}, {}, {}, ["exclude each other"]),
        ({"emulate_factor": "0.5"}, {}, {}, ["only applies with --emulate"]),
        ({}, {"EBSPERF_STRICT": "maybe"}, {}, ["not a list of outcomes for --ebsperf-strict"]),
    ],
)
def test_bad_values_are_reported_with_their_origin(cli: dict[str, Any], env: dict[str, str],
                                                   ini: dict[str, str], words: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        make(cli=cli, env=env, ini=ini)
    for word in words:
        assert word in str(info.value)


def test_every_option_has_help_and_a_flag_in_the_ebsperf_namespace() -> None:
    for option in OPTIONS_BY_DEST.values():
        assert isinstance(option, Option) and option.help.endswith(".")
        assert option.flag.startswith("--")


@pytest.mark.parametrize("cli, words", [
    ({"iodepth": "100000000"}, ["--ebsperf-iodepth=100,000,000", "65,536", "fs.aio-max-nr"]),
    ({"numjobs": "5000"}, ["--ebsperf-numjobs=5,000", "1,024", "process"]),
    ({"false_alarm": "1.5"}, ["--ebsperf-false-alarm is a probability", "got 1.5"]),
    ({"miss_spell": "0.5"}, ["--ebsperf-miss-spell", "at least 1"]),
])
def test_out_of_range_statistics_and_queue_options_are_refused_with_the_reason(
        cli: dict[str, Any], words: list[str]) -> None:
    with pytest.raises(ConfigError) as found:
        make(cli=cli)
    for word in words:
        assert word in str(found.value)


def test_the_false_alarm_level_has_env_and_ini_twins() -> None:
    assert make(env={"EBSPERF_FALSE_ALARM": "0.01"}).false_alarm == 0.01
    assert make(ini={"ebsperf_false_alarm": "0.02"}).false_alarm == 0.02
    assert make(ini={"ebsperf_miss_spell": "3"}).miss_spell == 3.0
