"""Load the run a gate compares with: an ``--ebsperf-report`` file or a pytest-benchmark run.

``--ebsperf-compare`` takes a path or a saved pytest-benchmark run id:

* a results file written by ``--ebsperf-report`` (``"format": "pytest-ebsperf-results"``);
* a pytest-benchmark JSON (saved by ``--benchmark-autosave``/``--benchmark-save`` or written by
  ``--benchmark-json``): the measurements ride in each benchmark's ``extra_info["ebsperf"]``;
* a run id such as ``0001`` or ``0001_candidate``, looked up in pytest-benchmark's file storage
  (``--benchmark-storage``, default ``./.benchmarks``, any machine directory; the newest match).

Every problem is a :class:`BaselineError` with a sentence that says how to make a baseline.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_ebsperf.errors import EbsperfError
from pytest_ebsperf.results.compare import HOW_TO_RECORD, Baseline
from pytest_ebsperf.results.document import FORMAT_NAME, FORMAT_VERSION
from pytest_ebsperf.results.history import EXTRA_INFO_KEY


class BaselineError(EbsperfError):
    """The baseline cannot be used (missing, unreadable, not a results file)."""


def load_baseline(spec: str, *, benchmark_storage: str = "file://./.benchmarks",
                  cwd: Path | None = None) -> Baseline:
    """The :class:`Baseline` named by ``spec`` (see the module docstring)."""
    base = cwd or Path.cwd()
    path = Path(spec) if Path(spec).is_absolute() else base / spec
    if path.is_file():
        return from_file(path)
    if path.exists():
        raise BaselineError(f"--ebsperf-compare={spec} is a directory, not a results file or "
                            f"a saved run; {HOW_TO_RECORD}.")
    if _looks_like_path(spec):
        raise BaselineError(f"No baseline at {spec} (--ebsperf-compare): the file does not "
                            f"exist. To create it, {HOW_TO_RECORD}.")
    return from_benchmark_storage(spec, benchmark_storage, base)


def _looks_like_path(spec: str) -> bool:
    return "/" in spec or spec.endswith(".json")


def from_file(path: Path) -> Baseline:
    """Read a results file or a pytest-benchmark JSON."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BaselineError(f"Cannot read the baseline {path}: {exc.strerror or exc}.") from None
    except UnicodeDecodeError:
        raise BaselineError(f"The baseline {path} is not text; pass a file written by "
                            "--ebsperf-report.") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"The baseline {path} is not JSON ({exc.msg} at line {exc.lineno}); "
                            f"pass a file written by --ebsperf-report.") from None
    if isinstance(data, Mapping) and data.get("format") == FORMAT_NAME:
        return _from_results(path, data)
    if isinstance(data, Mapping) and isinstance(data.get("benchmarks"), list):
        return _from_benchmark_json(path, data)
    raise BaselineError(f"The baseline {path} is neither an ebsperf results file (no "
                        f'"format": "{FORMAT_NAME}") nor a pytest-benchmark run; {HOW_TO_RECORD}.')


def _from_results(path: Path, data: Mapping[str, Any]) -> Baseline:
    version = data.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise BaselineError(f"The baseline {path} has results format version {version!r}; "
                            f"this pytest-ebsperf reads versions up to {FORMAT_VERSION}. "
                            "Upgrade pytest-ebsperf or record the baseline again.")
    measurements = data.get("measurements")
    if not isinstance(measurements, list):
        raise BaselineError(f"The baseline {path} has no measurements list; it is damaged or "
                            f"was not written by --ebsperf-report. {HOW_TO_RECORD}.")
    env = data.get("environment") or {}
    facts = ", ".join(str(v) for v in (data.get("created"), env.get("fio_version"),
                                       env.get("kernel") and f"kernel {env.get('kernel')}")
                      if v)
    source = f"{path}" + (f" ({facts})" if facts else "")
    return Baseline(source, [m for m in measurements if isinstance(m, Mapping)])


def _from_benchmark_json(path: Path, data: Mapping[str, Any]) -> Baseline:
    measurements: list[Mapping[str, Any]] = []
    for bench in data["benchmarks"]:
        payload = (bench.get("extra_info") or {}).get(EXTRA_INFO_KEY) if isinstance(
            bench, Mapping) else None
        if isinstance(payload, Mapping):
            measurements.extend(m for m in payload.get("measurements") or ()
                                if isinstance(m, Mapping))
    if not measurements:
        raise BaselineError(f"The pytest-benchmark run {path} holds no ebsperf measurements "
                            "(it was saved without pytest-ebsperf checks, or by another "
                            f"plugin); {HOW_TO_RECORD}.")
    when = data.get("datetime")
    commit = (data.get("commit_info") or {}).get("id")
    facts = ", ".join(str(v) for v in (when, commit and f"commit {str(commit)[:12]}") if v)
    return Baseline(f"{path}" + (f" ({facts})" if facts else ""), measurements)


def from_benchmark_storage(run_id: str, storage: str, cwd: Path) -> Baseline:
    """A saved run ``run_id`` (``0001``, ``0001_name``) in pytest-benchmark's file storage."""
    if "://" in storage and not storage.startswith("file://"):
        raise BaselineError(f"--ebsperf-compare={run_id} names a saved run, but only "
                            f"pytest-benchmark's file storage is read, not {storage}. Pass the "
                            "run as a JSON file (pytest --benchmark-json=FILE) instead.")
    root = Path(storage.removeprefix("file://"))
    root = root if root.is_absolute() else cwd / root
    found = sorted(root.glob(f"*/{run_id}*.json"), key=lambda p: (p.name, str(p.parent)))
    if not found:
        saved = sorted(p.stem for p in root.glob("*/[0-9][0-9][0-9][0-9]_*.json"))
        listing = f" Saved runs: {', '.join(saved[-5:])}." if saved else \
            " It holds no saved runs."
        raise BaselineError(f"No baseline: --ebsperf-compare={run_id} is not a file and no "
                            f"saved pytest-benchmark run matches it in {root}.{listing} "
                            f"To create one, {HOW_TO_RECORD}.")
    return from_file(found[-1])
