"""The results file (``--ebsperf-report=FILE.json``): every check and measurement of a run.

The shape is documented in ``docs/results-file.md`` and, as a JSON Schema, in
``docs/results-schema.json``. Bump :data:`FORMAT_VERSION` on any change that is not purely
additive, and teach :mod:`.baseline` to read the old version.
"""

from __future__ import annotations

import json
import os
import platform
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pytest_ebsperf import __version__
from pytest_ebsperf.results import records
from pytest_ebsperf.units import plain_json

FORMAT_NAME = "pytest-ebsperf-results"
FORMAT_VERSION = 1
SCHEMA_ID = "https://pytest-ebsperf.readthedocs.io/results-schema-v1.json"

#: Keys of a report row copied into a check (the rest of the row is formatted text).
_CHECK_KEYS = ("nodeid", "claim", "what", "policy", "outcome", "unit", "binding", "reason",
               "message", "volume", "workload")


def annotate_measurements(rows: Iterable[Mapping[str, Any]],
                          measurements: Iterable[dict[str, Any]]) -> None:
    """Give each measurement the claim and "what" of its test's first row (in place)."""
    first_row: dict[str, Mapping[str, Any]] = {}
    for row in rows:
        first_row.setdefault(str(row.get("nodeid", "")), row)
    for measurement in measurements:
        found = first_row.get(str(measurement.get("nodeid", "")))
        if found is not None:
            measurement.setdefault("claim", found.get("claim"))
            measurement.setdefault("what", found.get("what"))
            # the verdict beside the figures (the CSV's check columns)
            measurement.setdefault("check", {
                "outcome": found.get("outcome"), "expected": found.get("expected_value"),
                "unit": found.get("unit"), "binding": found.get("binding"),
                "policy": found.get("policy")})


def build_document(rows: Sequence[Mapping[str, Any]], measurements: Sequence[Mapping[str, Any]],
                   *, settings: Mapping[str, Any], environment: Mapping[str, Any],
                   cost: Mapping[str, Any] | None = None,
                   compare: Mapping[str, Any] | None = None,
                   created: datetime | None = None) -> dict[str, Any]:
    """The results document as plain JSON types (validates against the schema)."""
    numbered = [{"id": index, **m} for index, m in enumerate(measurements)]
    by_test = records.by_nodeid(numbered)
    fio_versions = sorted({str(m["fio_version"]) for m in numbered if m.get("fio_version")})
    volumes = _volumes(numbered)
    document: dict[str, Any] = plain_json({
        "$schema": SCHEMA_ID,
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "created": (created or datetime.now(timezone.utc)).isoformat(timespec="seconds"),
        "environment": {**environment, "fio_version": ", ".join(fio_versions) or None},
        "settings": dict(settings),
        "instance": _instance(volumes, settings),
        "volumes": volumes,
        "checks": [_check(row, by_test.get(str(row.get("nodeid", "")), ())) for row in rows],
        "measurements": numbered,
        "summary": _summary(rows),
        "compare": dict(compare) if compare else None,
        "cost": dict(cost) if cost else None,
    })
    return document


def environment_facts(*, pytest_version: str, fio_host: str) -> dict[str, Any]:
    """Where the run happened: kernel, OS, host name, Python, pytest and plugin versions."""
    return {"plugin_version": __version__, "pytest_version": pytest_version,
            "python_version": platform.python_version(), "kernel": platform.release(),
            "os": platform.system(), "machine": platform.machine(), "hostname": platform.node(),
            "fio_host": fio_host}


def settings_facts(values: Mapping[str, Any], origin: Mapping[str, str]) -> dict[str, Any]:
    """Each setting with where its value came from (``{"runtime": {"value": 2.0, ...}}``)."""
    return {name: {"value": value, "origin": origin.get(name, "default")}
            for name, value in values.items() if name != "origin"}


def _check(row: Mapping[str, Any], measurements: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    check = {key: row.get(key) for key in _CHECK_KEYS}
    if row.get("host"):
        check["host"] = row["host"]  # a fleet run: the host the claim was checked on
    check.update({
        "expected": {"value": row.get("expected_value"), "text": row.get("expected")},
        "measured": {"value": row.get("measured_value"), "text": row.get("measured")},
        "details": row.get("details") or {},
        "notes": list(row.get("notes") or []),
        "fio": row.get("fio") or {},
        "compare": row.get("compare"),
        "measurement_ids": [m["id"] for m in measurements],
    })
    return check


def _volumes(measurements: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for m in measurements:
        facts = m.get("volume_facts") or {}
        key = (records.volume_key(facts), m.get("device"), m.get("role"))
        seen.setdefault(key, {"label": m.get("volume"), "device": m.get("device"),
                              "role": m.get("role"), "emulated": bool(m.get("emulated")),
                              "facts": facts})
    return list(seen.values())


def _instance(volumes: Sequence[Mapping[str, Any]], settings: Mapping[str, Any]
              ) -> dict[str, Any]:
    for volume in volumes:
        facts = volume.get("facts") or {}
        if facts.get("instance_type"):
            provenance = (facts.get("provenance") or {}).get("instance_type", "given")
            return {"type": facts["instance_type"], "provenance": provenance}
    setting = settings.get("instance_type") or {}
    if setting.get("value"):
        return {"type": setting["value"], "provenance": setting.get("origin", "given")}
    return {"type": None, "provenance": "unknown"}


def _summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[str(row.get("outcome"))] = counts.get(str(row.get("outcome")), 0) + 1
        status = (row.get("compare") or {}).get("status")
        if status:
            counts[f"compare {status}"] = counts.get(f"compare {status}", 0) + 1
    return counts


def write_document(document: Mapping[str, Any], path: Path) -> None:
    """Write ``document`` atomically: a reader (or the next CI step) never sees half a file.

    Atomic means a new file renamed over the old one, which is only right for a regular file
    (or none): a device node, pipe or socket given as the path (``/dev/null``,
    ``/dev/stdout``) is written into instead, never replaced, and a symlink is followed.
    """
    path = Path(os.path.realpath(path))
    text = json.dumps(document, indent=1, sort_keys=False, allow_nan=False)
    if path.exists() and not path.is_file():
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes the file private; a results file is not
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
