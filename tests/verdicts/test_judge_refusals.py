"""``ebsperf judge`` never gives a verdict on a figure fio never writes, never a traceback,
and the read-only commands write nothing (issue: a reader that never invents a figure)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support.common import DATA

HERE = DATA / "fio"
IO1 = ("--volume-type=io1", "--volume-size=100", "--volume-iops=4000")


def ebsperf(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_ebsperf", *args],
                          capture_output=True, text=True, timeout=60, check=False,
                          **kwargs)  # type: ignore[call-overload]


def _edited(tmp_path: Path, field: str, value: object) -> Path:
    report = json.loads((HERE / "randread.json").read_text())
    for job in report["jobs"]:
        job["read"][field] = value
        for option in ("write_iops_log", "write_bw_log", "write_lat_log"):
            job["job options"].pop(option, None)
    path = tmp_path / "edited.json"
    # json.dumps writes Infinity and NaN as JavaScript does, which Python's reader accepts
    path.write_text(json.dumps(report))
    return path


@pytest.mark.parametrize(("field", "value"), [
    ("iops", -4394.5), ("iops", float("inf")), ("iops", float("nan")), ("iops", "lots"),
    ("iops", 1e29), ("bw_bytes", -1), ("runtime", "zero"), ("total_ios", "many"),
    ("iops", True)])
def test_an_impossible_figure_is_refused_naming_its_field(tmp_path: Path, field: str,
                                                          value: object) -> None:
    done = ebsperf("judge", str(_edited(tmp_path, field, value)), *IO1)
    assert done.returncode == 4, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert f"'{field}'" in done.stderr and "fio never writes" in done.stderr, done.stderr
    assert done.stdout == ""  # no verdict at all


def test_a_group_id_that_is_not_a_number_is_refused(tmp_path: Path) -> None:
    report = json.loads((HERE / "randread.json").read_text())
    report["jobs"][0]["groupid"] = "zero"
    path = tmp_path / "group.json"
    path.write_text(json.dumps(report))
    done = ebsperf("judge", str(path), *IO1)
    assert done.returncode == 4 and "Traceback" not in done.stderr, done.stderr
    assert "'groupid'" in done.stderr


def test_a_terse_line_cut_short_is_refused_not_a_traceback(tmp_path: Path) -> None:
    line = next(text for text in (HERE / "formats" / "randread_jobs.txt").read_text()
                .splitlines() if text.startswith("3;fio-"))
    path = tmp_path / "cut.terse"
    path.write_text(";".join(line.split(";")[:54]) + "\n")
    done = ebsperf("judge", str(path), *IO1)
    assert done.returncode == 4, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "cannot be read as fio output" in done.stderr


def test_a_reader_that_stops_reading_ends_the_command_quietly(tmp_path: Path) -> None:
    done = subprocess.run(
        f"{sys.executable} -m pytest_ebsperf judge {HERE / 'randread.json'} {' '.join(IO1)} "
        f"--json | head -c 10", shell=True, capture_output=True, text=True, timeout=60,
        check=False)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


def test_plan_fleet_refuses_a_volume_type_it_does_not_know() -> None:
    done = ebsperf("plan-fleet", "--hosts=2", "--checks=3", "--volume-type=gp9")
    assert done.returncode == 4 and "Traceback" not in done.stderr, done.stderr
    assert "--volume-type=gp9" in done.stderr and "gp3" in done.stderr


@pytest.mark.parametrize("command", ["history", "compare"])
@pytest.mark.parametrize("kind", ["empty", "other"])
def test_the_read_only_commands_write_nothing_into_a_foreign_database(
        tmp_path: Path, command: str, kind: str) -> None:
    db = tmp_path / "theirs.sqlite"
    if kind == "empty":
        db.write_bytes(b"")
    else:
        with sqlite3.connect(db) as made:
            made.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
            made.execute("INSERT INTO notes (text) VALUES ('mine')")
        made.close()
    before = db.read_bytes()
    args = ["--db", str(db)] if command == "history" else ["1", "2", "--db", str(db)]
    done = ebsperf(command, *args)
    assert done.returncode == 4, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and str(db) in done.stderr, done.stderr
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["theirs.sqlite"]  # no -wal, -shm
