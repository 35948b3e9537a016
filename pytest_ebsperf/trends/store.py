"""The history store: every run's results in one SQLite database (Python's own ``sqlite3``).

    store = HistoryStore("perf-history.sqlite")
    run_id = store.append(document)              # a results document (docs/results-file.md)
    for identity, points in store.series().items(): ...

Each run keeps the whole results document (facts, settings, per-second series, verdicts;
zlib-compressed JSON) and one row per check with what trends need: the check's **identity**
(the host, or the instance type on EC2; the volume's type, size and provisioned values; the
claim; what was measured and how, the queue depth aside), its **facets** (fio and kernel
versions, AMI, instance type: things that change between runs and are annotated, not split
on), the measured figure with the interval of its per-second samples, the expected figure
and the outcome.

Safe to share: WAL journal (readers are never blocked by a writer, and see whole runs only),
``BEGIN IMMEDIATE`` for each append and a busy timeout, so two runs finishing at once both
land. The schema carries its version (``meta.schema_version``); an older database is
migrated in place when opened, in one transaction.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ebsperf.errors import ConfigError
from pytest_ebsperf.verdicts.stats import summarize

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self from Python 3.11

#: The schema this code writes. 1: runs and checks without facets or intervals (0.1
#: previews); 2: facets, intervals, latency, the document compressed.
SCHEMA_VERSION = 2
BUSY_TIMEOUT_MS = 30_000
#: Units whose larger values are better (IOPS, bytes/s); latency (ns) is worse when larger.
HIGHER_IS_BETTER = {"IOPS": True, "B/s": True, "ns": False, "ratio": True}

#: The queue a workload label ends with (``randread 16KiB QD20x1``). It is not part of a
#: check's identity: the planner may confirm a shortfall at a deeper queue, and the check's
#: figure then comes from that run, yet it is the same check on the same volume.
_QUEUE = re.compile(r"\s+QD\d+x\d+$")


def series_key(identity: str) -> str:
    """A stored identity without its workload's queue (identities stored with one, by
    earlier versions or before a deeper-queue confirmation, join the same series)."""
    return _QUEUE.sub("", identity)

_SCHEMA_V2 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created TEXT NOT NULL,
    source TEXT NOT NULL,
    host TEXT,
    instance_type TEXT,
    ami TEXT,
    kernel TEXT,
    fio_version TEXT,
    plugin_version TEXT,
    summary TEXT,
    document BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS checks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    identity TEXT NOT NULL,
    nodeid TEXT, claim TEXT, what TEXT, workload TEXT, host TEXT,
    volume TEXT, volume_type TEXT, volume_size INTEGER, volume_iops INTEGER,
    volume_throughput REAL,
    instance_type TEXT, ami TEXT, kernel TEXT, fio_version TEXT,
    outcome TEXT, policy TEXT, unit TEXT, expected REAL, measured REAL,
    low REAL, high REAL, seconds INTEGER, p50_ns REAL, p99_ns REAL, binding TEXT
);
CREATE INDEX IF NOT EXISTS checks_by_identity ON checks (identity, run_id);
"""
#: The 0.1 preview's schema (kept to test the migration).
SCHEMA_V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, created TEXT NOT NULL,
                   source TEXT NOT NULL, host TEXT, document TEXT NOT NULL);
CREATE TABLE checks (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL,
                     identity TEXT NOT NULL, claim TEXT, what TEXT, outcome TEXT, unit TEXT,
                     expected REAL, measured REAL);
INSERT INTO meta VALUES ('schema_version', '1');
"""


@dataclass(frozen=True)
class Point:
    """One run of one check: what the trends need."""

    run_id: int
    created: str
    measured: float
    low: float | None
    high: float | None
    expected: float | None
    outcome: str
    unit: str
    facets: Mapping[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Identity:
    """What makes two runs of a check comparable."""

    key: str
    claim: str
    what: str
    host: str
    volume: str
    unit: str

    @property
    def higher_is_better(self) -> bool:
        return HIGHER_IS_BETTER.get(self.unit, True)


def _statements(script: str) -> list[str]:
    return [part.strip() for part in script.split(";") if part.strip()]


class HistoryStore:
    """A SQLite history of runs at ``path`` (created on first use)."""

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        if self.path.exists() and self.path.is_dir():
            raise ConfigError(f"{self.path} is a directory; --ebsperf-history takes a file "
                              "(e.g. perf-history.sqlite).")
        if read_only:
            self._open_read_only()
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT_MS / 1000,
                                      isolation_level=None)
            self.db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA foreign_keys = ON")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"{self.path} is not a history database this version can use "
                              f"({exc}). Pass another --ebsperf-history file.") from None

    def _open_read_only(self) -> None:
        """Open an existing database without writing a byte to it (``history`` and
        ``compare`` only read): no tables made, no journal mode set, no migration; a file
        that holds no history of this plugin's is refused with a sentence."""
        try:
            self.db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                      timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
            version = self.version
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"{self.path} is not a history database ({exc}): pass the file "
                              "--ebsperf-history wrote.") from None
        if version == 0:
            self.db.close()
            raise ConfigError(f"{self.path} holds no pytest-ebsperf history (no schema version "
                              "in it): pass the file --ebsperf-history wrote; it was left "
                              "as it was.")
        if version != SCHEMA_VERSION:
            self.db.close()
            newer = version > SCHEMA_VERSION
            raise ConfigError(f"{self.path} was written by {'a newer' if newer else 'an older'} "
                              f"pytest-ebsperf (schema {version}, this one knows "
                              f"{SCHEMA_VERSION}): "
                              + ("upgrade it." if newer else "a run with --ebsperf-history="
                                 f"{self.path} upgrades it; reading it changes nothing."))

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- schema --------------------------------------------------------------------------
    @property
    def version(self) -> int:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'"
                                  ).fetchone()
        except sqlite3.OperationalError:
            return 0
        return int(row[0]) if row else 0

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def _migrate(self) -> None:
        with self._transaction() as db:
            version = self.version
            if version > SCHEMA_VERSION:
                raise ConfigError(f"{self.path} was written by a newer pytest-ebsperf (schema "
                                  f"{version}, this one knows {SCHEMA_VERSION}): upgrade it.")
            if version == 0:
                for statement in _statements(_SCHEMA_V2):
                    db.execute(statement)
                db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)",
                           (str(SCHEMA_VERSION),))
            elif version == 1:
                self._migrate_v1(db)

    def _migrate_v1(self, db: sqlite3.Connection) -> None:
        """0.1 preview -> 2: the facets, intervals and latency are re-read from each run's
        document (kept whole in v1 too)."""
        old_runs = db.execute("SELECT id, created, source, document FROM runs ORDER BY id"
                              ).fetchall()
        db.execute("DROP TABLE checks")
        db.execute("ALTER TABLE runs RENAME TO runs_v1")
        for statement in _statements(_SCHEMA_V2):
            if "meta" not in statement.split("(")[0]:
                db.execute(statement)
        for run_id, created, source, text in old_runs:
            document = json.loads(text)
            self._insert(db, document, source, run_id=run_id, created=created)
        db.execute("DROP TABLE runs_v1")
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'",
                   (str(SCHEMA_VERSION),))

    # -- writing -------------------------------------------------------------------------
    def append(self, document: Mapping[str, Any], source: str = "pytest") -> int:
        """Store one results document as a run; its id."""
        with self._transaction() as db:
            return self._insert(db, document, source)

    def _insert(self, db: sqlite3.Connection, document: Mapping[str, Any], source: str, *,
                run_id: int | None = None, created: str | None = None) -> int:
        env = document.get("environment") or {}
        run = run_facts(document)
        blob = zlib.compress(json.dumps(document, allow_nan=False).encode(), 6)
        cursor = db.execute(
            "INSERT INTO runs (id, created, source, host, instance_type, ami, kernel, "
            "fio_version, plugin_version, summary, document) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (run_id, created or document.get("created") or "", source, env.get("hostname"),
             run["instance_type"], run["ami"], run["kernel"], run["fio_version"],
             env.get("plugin_version"), json.dumps(document.get("summary") or {}), blob))
        new_id = int(cursor.lastrowid or 0)
        db.executemany(
            "INSERT INTO checks (run_id, identity, nodeid, claim, what, workload, host, volume, "
            "volume_type, volume_size, volume_iops, volume_throughput, instance_type, ami, "
            "kernel, fio_version, outcome, policy, unit, expected, measured, low, high, "
            "seconds, p50_ns, p99_ns, binding) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [(new_id, *row) for row in check_rows(document, run)])
        return new_id

    # -- reading -------------------------------------------------------------------------
    def runs(self) -> list[dict[str, Any]]:
        """Every run: id, created, source, host, instance type, AMI, kernel, fio version."""
        cursor = self.db.execute("SELECT id, created, source, host, instance_type, ami, kernel, "
                                 "fio_version, summary FROM runs ORDER BY id")
        names = [c[0] for c in cursor.description]
        return [dict(zip(names, row)) for row in cursor]

    def document(self, run_id: int) -> dict[str, Any]:
        row = self.db.execute("SELECT document FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise ConfigError(f"{self.path} has no run {run_id}; its runs are "
                              f"{', '.join(str(r['id']) for r in self.runs()) or 'none'}.")
        return dict(json.loads(zlib.decompress(row[0])))

    def series(self, *, claim: str | None = None, host: str | None = None
               ) -> dict[Identity, list[Point]]:
        """Every check's runs, oldest first, by identity (optionally one claim or host)."""
        query = ("SELECT c.identity, c.claim, c.what, c.host, c.volume, c.unit, c.run_id, "
                 "r.created, c.measured, c.low, c.high, c.expected, c.outcome, c.fio_version, "
                 "c.kernel, c.ami, c.instance_type FROM checks c JOIN runs r ON r.id = c.run_id "
                 "WHERE c.measured IS NOT NULL")
        args: list[Any] = []
        if claim:
            query += " AND c.claim = ?"
            args.append(claim)
        if host:
            query += " AND c.host = ?"
            args.append(host)
        query += " ORDER BY c.identity, c.run_id"
        found: dict[Identity, list[Point]] = {}
        identities: dict[str, Identity] = {}
        for (stored, claim_id, what, where, volume, unit, run_id, created, measured, low,
             high, expected, outcome, fio, kernel, ami, instance) in self.db.execute(query, args):
            key = series_key(stored)
            ident = identities.setdefault(key, Identity(key, claim_id or "", what or "",
                                                        where or "", volume or "", unit or ""))
            found.setdefault(ident, []).append(Point(
                run_id, created, measured, low, high, expected, outcome or "", unit or "",
                {"fio": fio, "kernel": kernel, "ami": ami, "instance type": instance}))
        for points in found.values():
            points.sort(key=lambda point: point.run_id)
        return found


# -- what a document says ----------------------------------------------------------------
def run_facts(document: Mapping[str, Any]) -> dict[str, Any]:
    """The run's facets: instance type, AMI, kernel, fio version."""
    env = document.get("environment") or {}
    instance = (document.get("instance") or {}).get("type")
    settings = document.get("settings") or {}
    ami = env.get("ami") or (settings.get("ami") or {}).get("value")
    return {"instance_type": instance, "ami": ami, "kernel": env.get("kernel"),
            "fio_version": env.get("fio_version"), "hostname": env.get("hostname")}


def check_rows(document: Mapping[str, Any], run: Mapping[str, Any]) -> Iterable[tuple[Any, ...]]:
    """One row per judged check (``checks`` columns after ``run_id``)."""
    measurements = {m.get("id"): m for m in document.get("measurements") or []}
    for check in document.get("checks") or []:
        mine = [measurements[i] for i in check.get("measurement_ids") or ()
                if i in measurements]
        primary = next((m for m in mine if m.get("phase", "steady") in ("steady", "look")),
                       mine[0] if mine else {})
        facts = primary.get("volume_facts") or {}
        host = check.get("host") or run.get("instance_type") or run.get("hostname") or "-"
        volume = volume_label(facts) or str(check.get("volume") or "")
        unit = str(check.get("unit") or "")
        measured = (check.get("measured") or {}).get("value")
        low, high, seconds = interval(primary, unit, measured)
        identity = series_key("|".join(str(x) for x in (
            host, volume, check.get("claim"), check.get("what"), check.get("workload"))))
        p50, p99 = _latency(primary)
        yield (identity, check.get("nodeid"), check.get("claim"), check.get("what"),
               check.get("workload"), host, volume, facts.get("type"), facts.get("size_gib"),
               facts.get("iops"), facts.get("throughput_mibps"),
               facts.get("instance_type") or run.get("instance_type"), run.get("ami"),
               run.get("kernel"), primary.get("fio_version") or run.get("fio_version"),
               check.get("outcome"), check.get("policy"), unit,
               (check.get("expected") or {}).get("value"),
               measured if isinstance(measured, (int, float)) and math.isfinite(measured)
               else None, low, high, seconds, p50, p99, check.get("binding"))


def volume_label(facts: Mapping[str, Any]) -> str:
    """``io1 100 GiB 4000 IOPS`` from a measurement's volume facts ("" without a type)."""
    if not facts.get("type"):
        return ""
    parts = [str(facts["type"])]
    if facts.get("size_gib") is not None:
        parts.append(f"{facts['size_gib']} GiB")
    if facts.get("iops") is not None:
        parts.append(f"{facts['iops']} IOPS")
    if facts.get("throughput_mibps") is not None:
        parts.append(f"{facts['throughput_mibps']:g} MiB/s")
    return " ".join(parts)


def interval(measurement: Mapping[str, Any], unit: str, measured: Any
             ) -> tuple[float | None, float | None, int]:
    """The 95 % interval of the mean of the run's per-second samples of ``unit`` (None
    without samples)."""
    key = {"IOPS": "total_iops", "B/s": "total_bw"}.get(unit)
    values = ((measurement.get("series") or {}).get(key) or {}).get("values") if key else None
    values = [float(v) for v in values or () if isinstance(v, (int, float))]
    if len(values) < 2 or not isinstance(measured, (int, float)):
        return None, None, len(values)

    summary = summarize(values)
    low, high = summary.bounds(0.025)  # two-sided 95 %: 2.5 % each way, from batch means
    if not (math.isfinite(low) and math.isfinite(high)):
        return None, None, len(values)
    mean = summary.mean
    scale = measured / mean if mean else 1.0  # the check's figure may be fio's whole-run mean
    return low * scale, high * scale, len(values)


def _latency(measurement: Mapping[str, Any]) -> tuple[float | None, float | None]:
    for direction in ("read", "write"):
        data = measurement.get(direction) or {}
        if data.get("iops"):
            clat = data.get("clat_ns") or {}
            return clat.get("p50"), clat.get("p99")
    return None, None


def documents_from(paths: Sequence[str | Path]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(source, results document) for each results file, or each run in a pytest-benchmark
    JSON file (its ebsperf extra_info); a file that is neither is a sentence."""
    for raw in paths:
        path = Path(raw)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{path} cannot be read as JSON ({exc}).") from None
        if isinstance(data, dict) and data.get("format") == "pytest-ebsperf-results":
            yield f"file:{path}", data
        elif isinstance(data, dict) and "benchmarks" in data:
            yield f"pytest-benchmark:{path}", _from_benchmark(data, path)
        else:
            raise ConfigError(f"{path} is neither a results file (--ebsperf-report) nor a "
                              "pytest-benchmark JSON with ebsperf data.")


def _from_benchmark(data: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """A results document rebuilt from pytest-benchmark's saved run: each benchmark's
    ``extra_info["ebsperf"]`` holds its check's figures and measurements (written by
    :func:`pytest_ebsperf.results.history.extra_info`)."""
    checks: list[dict[str, Any]] = []
    measurements: list[dict[str, Any]] = []
    for bench in data.get("benchmarks") or []:
        info = (bench.get("extra_info") or {}).get("ebsperf") or {}
        if not info.get("claim"):
            continue
        ids = []
        for m in info.get("measurements") or []:
            ids.append(len(measurements))
            measurements.append({**m, "id": len(measurements)})
        unit = str(info.get("unit") or "")
        checks.append({
            "nodeid": bench.get("fullname"), "claim": info.get("claim"),
            "what": info.get("what"), "outcome": info.get("outcome"), "unit": unit,
            "workload": info.get("workload"), "volume": info.get("volume"),
            "expected": {"value": info.get("expected")},
            "measured": {"value": info.get("value")}, "measurement_ids": ids})
    if not checks:
        raise ConfigError(f"{path} is a pytest-benchmark file without ebsperf checks (saved "
                          "by a run of these suites with --benchmark-autosave).")
    machine = data.get("machine_info") or {}
    settings = machine.get("ebsperf") or {}
    return {"format": "pytest-ebsperf-results", "created": data.get("datetime") or "",
            "environment": {"hostname": machine.get("node"), "kernel": machine.get("release")},
            "instance": {"type": settings.get("instance_type")}, "checks": checks,
            "measurements": measurements, "summary": {}}
