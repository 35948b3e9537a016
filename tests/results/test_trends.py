"""Regression tracking over months: the history store, change points, the history and compare
commands, and their HTML in a real headless browser.

Synthetic histories are made from a real results file (tests/data/results/baseline.json, an
emulated io1 read) with its figures and per-second samples scaled run by run; the end-to-end
test runs a suite six times on an emulated volume, the last three slower.
"""

from __future__ import annotations

import copy
import json
import multiprocessing
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from support.common import DATA, ROOT, ebsperf_cli, needs_fio, needs_root

from pytest_ebsperf.trends import changes
from pytest_ebsperf.trends.store import SCHEMA_V1, SCHEMA_VERSION, HistoryStore

HERE = DATA / "results"
IO1_READ = (f"{ROOT}/suites/io1/test_io1.py::"
            "test_random_read_holds_provisioned_iops_999_percent_of_seconds")


def base_document() -> dict[str, Any]:
    return json.loads((HERE / "baseline.json").read_text())


def scaled(document: dict[str, Any], factor: float, rng: random.Random, cv: float = 0.02,
           day: int = 0, **environment: str) -> dict[str, Any]:
    """``document`` as a run whose figures are ``factor`` x the original, with run-to-run
    noise of ``cv`` (each second's samples follow the run's level)."""
    run = copy.deepcopy(document)
    level = factor * rng.gauss(1.0, cv)
    for check in run["checks"]:
        if isinstance(check["measured"]["value"], (int, float)):
            check["measured"]["value"] *= level
    for measurement in run["measurements"]:
        for key in ("total_iops", "total_bw", "read_iops", "read_bw"):
            series = measurement["series"].get(key) or {}
            if series.get("values"):
                series["values"] = [v * level * rng.gauss(1.0, 0.005) for v in series["values"]]
        measurement["iops"] *= level
    run["created"] = f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}T02:00:00+00:00"
    run["environment"].update(environment)
    return run


# -- the change-point test ---------------------------------------------------------------
def test_a_5_percent_step_at_2_percent_noise_is_found_within_5_runs_of_it() -> None:
    rng = random.Random(11)
    found = 0
    trials = 200
    for trial in range(trials):
        values = [rng.gauss(1000, 20) for _ in range(40)] + [rng.gauss(950, 19) for _ in range(5)]
        hits = [c for c in changes.change_points(values, seed=trial)
                if abs(c.index - 40) <= 5 and c.after < c.before]
        found += bool(hits)
    assert found / trials >= 0.9, found


def test_step_free_series_of_100_runs_report_no_change_99_percent_of_the_time() -> None:
    rng = random.Random(12)
    trials = 600
    alarms = sum(bool(changes.change_points([rng.gauss(1000, 20) for _ in range(100)],
                                            seed=trial)) for trial in range(trials))
    # at most 1 % expected; 1.8 % is beyond three standard errors of 600 trials
    assert alarms / trials <= 0.018, alarms


def test_a_drift_of_3_percent_a_week_is_reported_as_a_change_for_the_worse() -> None:
    rng = random.Random(13)
    reported = 0
    for trial in range(50):  # nightly for six weeks
        values = [rng.gauss(1000 * (1 - 0.03 * day / 7), 20) for day in range(42)]
        worse = changes.worsening_since(changes.change_points(values, seed=trial), 42, 42)
        reported += worse is not None
    assert reported == 50


def test_short_series_use_welchs_test_at_the_same_level() -> None:
    rng = random.Random(14)
    alarms = sum(bool(changes.change_points([rng.gauss(1000, 20) for _ in range(8)]))
                 for _ in range(1500))
    assert alarms / 1500 <= 0.015
    step = changes.change_points([4000, 3996, 4003, 3400, 3397, 3404])
    assert [c.index for c in step] == [3] and step[0].p_value < 0.001


# -- the store ---------------------------------------------------------------------------
def test_runs_from_results_files_keep_identity_facets_and_intervals(tmp_path: Path) -> None:
    rng = random.Random(1)
    with HistoryStore(tmp_path / "h.sqlite") as store:
        for day in range(3):
            store.append(scaled(base_document(), 1.0, rng, day=day, kernel=f"6.{day}"))
        (identity, points), = store.series().items()
        assert identity.claim == "S0-02" and "io1 100 GiB 4000 IOPS" in identity.volume
        assert [p.facets["kernel"] for p in points] == ["6.0", "6.1", "6.2"]
        assert all(p.low is not None and p.low < p.measured < p.high for p in points)
        assert store.document(1)["checks"][0]["claim"] == "S0-02"


def test_a_run_confirmed_at_a_deeper_queue_stays_in_its_checks_series(tmp_path: Path) -> None:
    # A shortfall is confirmed at a deeper queue, and the check's figure then comes from
    # that run (QD80x1 where the plan said QD20x1): the same check on the same volume.
    rng = random.Random(3)
    db = tmp_path / "h.sqlite"
    with HistoryStore(db) as store:
        for day, factor in enumerate((1.0, 1.0, 1.0, 0.85, 0.85, 0.85)):
            run = scaled(base_document(), factor, rng, cv=0.005, day=day)
            label = run["checks"][0]["workload"]
            assert re.search(r" QD\d+x\d+$", label), label
            if day == 5:
                run["checks"][0]["workload"] = re.sub(r"QD\d+x", "QD80x", label)
            store.append(run)
        series = store.series()
    (identity, points), = series.items()
    assert [p.run_id for p in points] == [1, 2, 3, 4, 5, 6] and "QD" not in identity.key
    # rows stored with the queue in their identity (earlier versions) join the same series
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE checks SET identity = identity || ' QD20x1' WHERE run_id < 4")
    with HistoryStore(db) as store:
        (again, joined), = store.series().items()
    assert again.key == identity.key and [p.run_id for p in joined] == [1, 2, 3, 4, 5, 6]
    done = _cli("history", "--db", str(db), "--since", "3")
    assert done.returncode == 1 and "from run 4" in done.stdout, done.stdout + done.stderr


def _append_many(path: str, count: int, seed: int) -> None:
    rng = random.Random(seed)
    with HistoryStore(path) as store:
        for day in range(count):
            store.append(scaled(base_document(), 1.0, rng, day=day), source=f"writer {seed}")


def test_two_writers_appending_at_once_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "h.sqlite")
    HistoryStore(path).close()
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_append_many, args=(path, 40, seed)) for seed in (1, 2)]
    for writer in writers:
        writer.start()
    with HistoryStore(path) as reader:  # read while they write: whole runs only
        seen = [len(reader.runs()) for _ in range(20)]
    for writer in writers:
        writer.join(120)
        assert writer.exitcode == 0
    with HistoryStore(path) as store:
        runs = store.runs()
        assert len(runs) == 80
        assert sorted({r["source"] for r in runs}) == ["writer 1", "writer 2"]
        (_, points), = store.series().items()
        assert len(points) == 80
    assert seen == sorted(seen)


def test_a_database_of_the_older_schema_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA_V1)
    rng = random.Random(3)
    for day in range(4):
        document = scaled(base_document(), 1.0, rng, day=day)
        cursor = db.execute("INSERT INTO runs (created, source, host, document) VALUES "
                            "(?, 'pytest', 'vm', ?)", (document["created"], json.dumps(document)))
        db.execute("INSERT INTO checks (run_id, identity, claim, what, outcome, unit, "
                   "expected, measured) VALUES (?, 'x', 'S0-02', 'w', 'info', 'IOPS', NULL, 1)",
                   (cursor.lastrowid,))
    db.commit()
    db.close()
    with HistoryStore(path) as store:
        assert store.version == SCHEMA_VERSION
        assert [r["id"] for r in store.runs()] == [1, 2, 3, 4]
        (identity, points), = store.series().items()
        assert len(points) == 4 and points[0].low is not None  # re-read from the documents
        assert identity.claim == "S0-02"
    raw = sqlite3.connect(path).execute("SELECT document FROM runs LIMIT 1").fetchone()[0]
    assert json.loads(zlib.decompress(raw))["format"] == "pytest-ebsperf-results"


def test_bad_databases_and_files_are_sentences(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    done = _cli("history", "--db", str(junk))
    assert done.returncode == 4 and "is not a history database" in done.stderr
    text = tmp_path / "notes.json"
    text.write_text('{"hello": 1}')
    done = _cli("history", "--db", str(tmp_path / "h.sqlite"), "--import", str(text))
    assert done.returncode == 4 and "neither a results file" in done.stderr
    assert "Traceback" not in done.stderr


# -- the commands --------------------------------------------------------------------------
def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return ebsperf_cli(*args, cwd=cwd)


def _history_files(tmp_path: Path, factors: list[float], **environment: Any) -> list[str]:
    rng = random.Random(5)
    files = []
    for day, factor in enumerate(factors):
        path = tmp_path / f"run{day:03d}.json"
        extra = {k: (v(day) if callable(v) else v) for k, v in environment.items()}
        path.write_text(json.dumps(scaled(base_document(), factor, rng, cv=0.01, day=day,
                                          **extra)))
        files.append(str(path))
    return files


def test_history_finds_a_recent_step_and_fails_the_gate(tmp_path: Path) -> None:
    files = _history_files(tmp_path, [1.0] * 20 + [0.93] * 4,
                           kernel=lambda day: "6.1" if day < 20 else "6.18")
    done = _cli("history", "--db", str(tmp_path / "h.sqlite"), "--import", *files,
                "--since", "5", "--html", str(tmp_path / "t.html"))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 changed or drifting for the worse within the last 5 runs" in done.stdout
    assert "WORSE S0-02 io1 random read 4 KiB" in done.stdout and "from run 21" in done.stdout
    # what the level assumes, and that these runs (independent, 1 % CV) bear it out
    assert "the level assumes runs independent of each other" in done.stdout
    assert "consistent with that" in done.stdout, done.stdout
    assert "the level assumes runs independent" in (tmp_path / "t.html").read_text()
    steady = _cli("history", "--db", str(tmp_path / "h2.sqlite"), "--import", *files[:20],
                  "--since", "5")
    assert steady.returncode == 0, steady.stdout + steady.stderr
    assert "WORSE" not in steady.stdout


def test_history_names_a_slow_drift_that_no_step_shows(tmp_path: Path) -> None:
    # five runs at 4,000 IOPS, then 3,880, 3,767, 3,641 (-3 % a run, each run's CV 1 %):
    # no split of eight runs is a clear step, the drift is
    factors = [1.0] * 5 + [0.97, 0.9418, 0.9103]
    files = _history_files(tmp_path, factors)
    done = _cli("history", "--db", str(tmp_path / "h.sqlite"), "--import", *files)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DRIFT S0-02 io1 random read 4 KiB" in done.stdout
    assert "%/run" in done.stdout and "from run 6" in done.stdout
    assert "WORSE" not in done.stdout  # named as a drift, not as a step
    flat = _cli("history", "--db", str(tmp_path / "flat.sqlite"), "--import", *files[:5])
    assert flat.returncode == 0, flat.stdout


def test_the_drift_test_holds_its_false_alarm_level_on_flat_series() -> None:
    from pytest_ebsperf.trends.changes import DEFAULT_DRIFT_ALPHA, drift

    rng = random.Random(21)
    for n in (8, 30, 100):
        alarms = sum(drift([1000.0 * rng.gauss(1, 0.02) for _ in range(n)]) is not None
                     for _ in range(1000))
        assert alarms / 1000 <= 2 * DEFAULT_DRIFT_ALPHA  # 0.5 % at most, plus its noise


def test_the_gate_says_when_its_runs_are_correlated_with_each_other() -> None:
    # issue 40: the gate's tests take runs as exchangeable; a series whose runs wander
    # (AR(1) at 0.8 between runs) is told apart from independent runs around a real step
    from pytest_ebsperf.trends.analysis import gate
    from pytest_ebsperf.trends.changes import run_correlation

    rng = random.Random(8)

    def said(values: list[float]) -> bool:
        changes, _, moving = gate(values)
        found = run_correlation(values, changes, moving)
        assert found is not None and found.runs == len(values)
        return found.correlated

    wandering = stepped = 0
    for _ in range(100):
        x, series = 0.0, []
        for _ in range(50):
            x = 0.8 * x + rng.gauss(0, 0.02 * 0.6)
            series.append(1000 * (1 + x))
        wandering += said(series)
        stepped += said([1000 * rng.gauss(1 if i < 40 else 0.9, 0.02) for i in range(50)])
    assert wandering >= 85 and stepped <= 8, (wandering, stepped)
    assert run_correlation([1000.0] * 5, []) is None  # too few runs to say


def test_the_matrix_puts_each_run_under_its_own_column(tmp_path: Path) -> None:
    # runs 1-3 on m5.large, runs 4-5 on m6i.large: each value stands under the run that
    # measured it (m6i's under runs 4 and 5, m5's under 1-3), blank elsewhere
    files = _history_files(tmp_path, [1.0, 1.0, 1.0, 0.8, 0.8])
    for day, path in enumerate(files):
        document = json.loads(Path(path).read_text())
        document["instance"]["type"] = "m6i.large" if day >= 3 else "m5.large"
        document["environment"].pop("instance", None)
        Path(path).write_text(json.dumps(document))
    db = str(tmp_path / "h.sqlite")
    assert _cli("history", "--db", db, "--import", *files).returncode in (0, 1)
    done = _cli("compare", "--db", db, "--matrix", "S0-02", "--last", "5")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = next(line for line in lines if "run 1" in line)
    starts = [header.index(f"run {n}") for n in range(1, 6)] + [len(header) + 40]

    def cells(prefix: str) -> list[str]:
        row = next(line for line in lines if line.startswith(prefix))
        return [row[a:b].strip() for a, b in zip(starts, starts[1:])]

    m5, m6i = cells("m5.large"), cells("m6i.large")
    assert all(m5[:3]) and m5[3:] == ["", ""], done.stdout
    assert m6i[:3] == ["", "", ""] and all(m6i[3:]), done.stdout


def test_compare_gives_two_files_the_gates_verdicts(tmp_path: Path) -> None:
    base, slow, same = _history_files(tmp_path, [1.0, 0.85, 1.0])
    done = _cli("compare", base, slow)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "REGRESSION S0-02" in done.stdout and "statistically clear" in done.stdout
    fine = _cli("compare", base, same)
    assert fine.returncode == 0, fine.stdout
    assert "0 regressed" in fine.stdout


def test_the_matrix_lays_one_claim_out_by_instance_type(tmp_path: Path) -> None:
    files = _history_files(tmp_path, [1.0] * 6,
                           instance=lambda day: "m5.large" if day % 2 else "m6i.large")
    for path in files:  # the instance type lives beside the environment
        document = json.loads(Path(path).read_text())
        document["instance"]["type"] = document["environment"].pop("instance")
        Path(path).write_text(json.dumps(document))
    db = str(tmp_path / "h.sqlite")
    assert _cli("history", "--db", db, "--import", *files).returncode == 0
    done = _cli("compare", "--db", db, "--matrix", "S0-02", "--by", "instance_type",
                "--last", "6")
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if "io1 random read" in line]
    assert len(rows) == 2 and rows[0].startswith("m5.large") and rows[1].startswith("m6i")
    assert all(line.count("IOPS") == 3 for line in rows)  # each type in 3 of the 6 runs


@pytest.mark.skipif(shutil.which("chromium-headless-shell") is None,
                    reason="needs Debian's chromium-headless-shell (scripts/install.sh)")
def test_the_charts_are_drawn_in_a_real_browser_with_their_marks(tmp_path: Path) -> None:
    files = _history_files(tmp_path, [1.0] * 12 + [0.9] * 4,
                           kernel=lambda day: "6.1" if day < 12 else "6.18")
    page = tmp_path / "t.html"
    _cli("history", "--db", str(tmp_path / "h.sqlite"), "--import", *files, "--html", str(page))
    dom = subprocess.run(
        ["chromium-headless-shell", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
         page.as_uri()], capture_output=True, text=True, timeout=120, check=False).stdout
    assert 'data-charts="1"' in dom, dom[-2000:]  # laid out by the browser, non-empty
    assert 'data-drawn="yes"' in dom
    assert dom.count('class="point"') == 16 and dom.count('class="interval"') == 16
    assert 'class="change-point"' in dom
    assert re.search(r"-(9|10|11)\.\d %", dom), "the step of about -10 % is labelled"
    assert 'class="annotation"' in dom and "kernel 6.1 -&gt; 6.18" in dom
    assert 'class="expected"' not in dom or 'class="band"' in dom


@needs_root
@needs_fio
def test_six_runs_of_a_suite_the_last_three_slower_fail_the_history_gate(
        tmp_path: Path) -> None:
    db = tmp_path / "history.sqlite"
    lasts = []
    # three runs at a time, as three CI jobs finishing together would append to one history
    # (each append is its own transaction); the slower three start after the first three end
    for factor in (1.0, 0.85):
        runs = [subprocess.Popen(
            [sys.executable, "-m", "pytest", IO1_READ, "--emulate", "--ebsperf-runtime=3",
             f"--emulate-factor={factor}", f"--ebsperf-history={db}", "-p", "no:cacheprovider",
             "--ebsperf-miss-spell=1"], cwd=tmp_path, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True) for _ in range(3)]
        try:
            for run in runs:
                out = run.communicate(timeout=300)[0]
                assert "history: run" in out, out[-2000:]
                lasts.append(out[-3000:])
        finally:
            for run in runs:
                if run.poll() is None:
                    run.kill()
                    run.wait()
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT run_id, identity, measured, outcome FROM checks").fetchall()
    # Every run stored its one measured check under the same identity.
    assert len(rows) == 6 and len({r[1] for r in rows}) == 1, (rows, lasts)
    assert all(r[2] is not None for r in rows), (rows, lasts)
    done = _cli("history", "--db", str(db), "--since", "3")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "WORSE S0-04 io1 random read 16 KiB" in done.stdout
    assert "from run 4" in done.stdout


def test_a_drift_that_began_later_is_named_from_its_onset_not_from_run_1() -> None:
    """Five flat runs, then 3 % worse a run (CV 2 %): whenever the onset test fires it names
    the start; the Mann-Kendall test, whose p may be smaller, said "from run 1" for 40 % of
    such drifts before."""
    from pytest_ebsperf.trends.changes import drift

    rng = random.Random(11)
    starts = []
    for _ in range(300):
        flat = [4000 * (1 + rng.gauss(0, 0.02)) for _ in range(5)]
        sliding = [4000 * (1 - 0.03 * (i + 1)) * (1 + rng.gauss(0, 0.02)) for i in range(5)]
        found = drift(flat + sliding)
        if found is not None:
            starts.append(found.start)
            assert "broken-stick" in found.method
    assert len(starts) >= 290
    assert 0 not in starts
    assert sum(4 <= s <= 6 for s in starts) / len(starts) >= 0.9
