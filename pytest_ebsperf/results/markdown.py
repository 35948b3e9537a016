"""The run as Markdown, where people read CI results: ``--ebsperf-markdown=FILE``, and
appended to ``$GITHUB_STEP_SUMMARY`` when GitHub Actions sets it.

The claims table (one row per check), the findings (each FAIL and INCONCLUSIVE with its
paragraph), pytest's counts, then the seed-shaped tables folded away (``<details>``).
Tables are GitHub's pipe tables, written by tabulate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tabulate import tabulate

from pytest_ebsperf.results import report, tables

TITLE = "pytest-ebsperf"
SETS_CAPTION = "cells: IOPS / MiB/s by the number of volumes measured together"


def _cell(text: Any) -> str:
    """A table cell: pipes escaped, one line."""
    return " ".join(str(text).split()).replace("|", "\\|")


def summary(rows: Sequence[Mapping[str, Any]], measurements: Sequence[Mapping[str, Any]], *,
            counts: str = "", notes: Sequence[str] = ()) -> str:
    """The Markdown text of a run."""

    parsed = [report.ReportRow.from_dict(r) for r in rows]
    hosts = any(row.host for row in parsed)
    headers = [*(["Host"] if hosts else []), "Claim", "What", "Expected", "Measured",
               "Verdict", "Binding limit", "Ran"]
    table = [[*([row.host] if hosts else []), row.claim, row.what, row.expected,
              row.measured, f"**{row.outcome.upper()}**" if row.outcome != "pass"
              else "PASS", row.binding, report.ran_text(row.fio)] for row in parsed]
    parts = [f"## {TITLE}", ""]
    if counts:
        parts += [counts, ""]
    if table:
        parts += [tabulate([[_cell(c) for c in line] for line in table], headers=headers,
                           tablefmt="github", disable_numparse=True), ""]
    findings = [row for row in parsed if row.outcome in ("fail", "inconclusive")]
    if findings:
        parts += ["### Findings", ""]
        for row in findings:
            where = f" on {row.host}" if row.host else ""
            parts.append(f"- **{row.outcome.upper()} {row.claim}**{where}: "
                         f"{' '.join(row.message.split())}")
        parts.append("")
    for note in notes:
        parts += [note, ""]
    if tables.steady(measurements):
        blocks = [(tables.SEED_TITLE, f"cells: IOPS / MiB/s, laid out as {report.SEED_000}",
                   tables.seed_table(measurements, tablefmt="github")),
                  (tables.RUNS_TITLE, f"as {report.SEED_001}",
                   tables.runs_table(measurements, tablefmt="github")),
                  (tables.SETS_TITLE, SETS_CAPTION,
                   tables.sets_table(measurements, tablefmt="github"))]
        for title, caption, text in blocks:
            if text:
                parts += ["<details>", f"<summary>{title}</summary>", "", caption, "", text,
                          "", "</details>", ""]
    return "\n".join(parts).rstrip() + "\n"
