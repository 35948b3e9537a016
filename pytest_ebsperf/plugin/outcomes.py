"""A check's outcome as pytest, JUnit and pytest-html show it.

A verdict is PASS, FAIL, INCONCLUSIVE or INFO. pytest knows passed, failed and skipped, so:

* FAIL is a failed test (its message, no traceback).
* INCONCLUSIVE (the sample could not decide) and INFO (recorded, never judged) are reports
  whose pytest outcome is ``skipped`` - never passed, and never red unless
  ``--ebsperf-strict`` says so - with their own category, letter and word: ``?`` /
  ``INCONCLUSIVE`` and ``I`` / ``INFO`` in the progress line, the counts (``3 passed, 1
  info``), the short summary and ``-v``. JUnit gets ``<skipped type="ebsperf.info">`` (or
  ``ebsperf.inconclusive``) and the property ``ebsperf.outcome``; pytest-html's result
  column says INFO or INCONCLUSIVE.
* A test whose verdicts are all INFO is INFO; one INFO beside a PASS (a pre-warm recorded
  on the way to a judged claim) leaves it passed.

The outcome travels as the user property ``ebsperf.outcome`` (xdist carries it to the
controller).
"""

from __future__ import annotations

import os
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from pytest_ebsperf.plugin.keys import item_state
from pytest_ebsperf.plugin.run_code import verdicts_outcome
from pytest_ebsperf.plugin.terminal import terminal_width

if TYPE_CHECKING:  # names for annotations; the modules come from run_code.py
    from pytest_ebsperf.verdicts.outcome import Verdict

#: The user property (and JUnit property) naming a test's ebsperf outcome.
OUTCOME_PROPERTY = "ebsperf.outcome"
INFO = "info"  # Outcome.INFO.value
INCONCLUSIVE = "inconclusive"  # Outcome.INCONCLUSIVE.value
#: pytest_report_teststatus answers: (category, progress letter, verbose word).
STATUS: dict[str, tuple[str, str, tuple[str, dict[str, bool]]]] = {
    INFO: ("info", "I", ("INFO", {"cyan": True})),
    INCONCLUSIVE: ("inconclusive", "?", ("INCONCLUSIVE", {"yellow": True})),
}
#: JUnit ``<skipped type=...>`` of each.
JUNIT_TYPE = {INFO: "ebsperf.info", INCONCLUSIVE: "ebsperf.inconclusive"}


def fail_plainly(message: str, pytrace: bool = False) -> NoReturn:
    """``pytest.fail(message, pytrace=False)`` that also drops the exception being handled:
    called in an ``except`` block, pytest would print the message twice with "During
    handling of the above exception, another exception occurred" between them."""
    raise pytest.fail.Exception(message, pytrace=pytrace) from None


def strict_note(outcome: str) -> str:
    """What a failure made of an INFO or INCONCLUSIVE verdict adds to its message."""
    return (f" ({outcome.upper()} fails the run: --ebsperf-strict"
            f"{'=' + outcome if outcome else ''}.)")


def decide(item: pytest.Item, found: Verdict, strict: frozenset[str]) -> Verdict:
    """Apply one verdict to the running test: FAIL fails now, INCONCLUSIVE stops the test
    as INCONCLUSIVE (or fails it under strict), PASS and INFO let it go on (the test's
    outcome is settled by :func:`settle` when it ends)."""

    kept = item_state(item)
    kept.verdicts.append(found)
    kept.strict = strict
    if found.outcome is verdicts_outcome.Outcome.FAIL:
        pytest.fail(wrapped(item, found.message), pytrace=False)
    if found.outcome is verdicts_outcome.Outcome.INCONCLUSIVE:
        if INCONCLUSIVE in strict:
            pytest.fail(wrapped(item, found.message + strict_note(INCONCLUSIVE)),
                        pytrace=False)
        kept.raised = INCONCLUSIVE
        pytest.skip(found.message)
    return found


def settle(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport
           ) -> None:
    """Turn the call report of a test into INFO or INCONCLUSIVE when its verdicts say so
    (a passed test whose verdicts are all INFO; a skip raised by an INCONCLUSIVE verdict)."""
    if report.when != "call":
        return
    kept = item_state(item)
    verdicts, strict = kept.verdicts, kept.strict
    if report.failed and verdicts:
        shorten(report, verdicts[-1])
    if report.skipped and kept.raised == INCONCLUSIVE and \
            call.excinfo is not None and call.excinfo.errisinstance(pytest.skip.Exception):
        mark(item, report, INCONCLUSIVE)
        return
    if not (report.passed and verdicts and all(v.outcome.value == INFO for v in verdicts)):
        return
    message = " | ".join(v.message for v in verdicts)
    if INFO in strict:
        report.outcome = "failed"
        report.longrepr = message + strict_note(INFO)
        return
    path, line = item.reportinfo()[:2]
    report.outcome = "skipped"
    report.longrepr = (os.fspath(path), (line or 0) + 1, message)
    mark(item, report, INFO)


def wrapped(item: pytest.Item, message: str) -> str:
    """A finding as pytest prints it in its failures: a paragraph wrapped to the terminal
    (pytest prints the text as it is, and a finding is one sentence of hundreds of
    characters)."""

    width = terminal_width(item.config)
    if width is None:
        return message

    return "\n".join(textwrap.wrap(message, width=max(40, width - 2), break_long_words=False,
                                    break_on_hyphens=False))


def _flat(text: str) -> str:
    return " ".join(text.split())


#: The short summary's line of a failed check is cut to this many characters.
SHORT_LINE = 160


def shorten(report: pytest.TestReport, found: Verdict) -> None:
    """A failed check's line in the short summary says claim and reason, not its paragraph.

    pytest puts the crash message after ``FAILED nodeid - ``: cut to the terminal's width
    locally, whole where it thinks it runs in CI (the ``CI`` variable) or with ``-vv``. The
    finding is a paragraph, printed in full above, so whole it would be said twice; this
    line names the claim, what and why, which a CI log's last lines need. JUnit's
    ``message`` attribute gets the same line; its text keeps the paragraph."""
    crash = getattr(report.longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    if crash is None or not isinstance(message, str) or \
            _flat(found.message) not in _flat(message):
        return  # not this verdict's failure (an error in the test's own code)
    line = f"{found.outcome.value.upper()} {found.claim}: {found.what}: {found.reason}"
    if len(line) > SHORT_LINE:
        line = line[:SHORT_LINE - 3].rstrip() + "..."
    crash.message = line


def mark(item: pytest.Item, report: pytest.TestReport, outcome: str) -> None:
    """The outcome as a user property of the call report (the terminal, xdist) and of the
    item (the teardown report, whose properties JUnit writes)."""
    for holder in (item, report):
        holder.user_properties = [*[(k, v) for k, v in holder.user_properties
                                    if k != OUTCOME_PROPERTY], (OUTCOME_PROPERTY, outcome)]


def outcome_of(report: Any) -> str | None:
    """``info`` or ``inconclusive`` for a call report :func:`settle` marked, else None."""
    if getattr(report, "when", None) != "call":
        return None
    for key, value in getattr(report, "user_properties", ()) or ():
        if key == OUTCOME_PROPERTY and value in STATUS:
            return str(value)
    return None


def summary_lines(reports: Iterable[Any], *, width: int | None, word_of: Any,
                  nodeid_of: Any = lambda report: report.nodeid) -> list[str]:
    """``INFO nodeid - message`` per INFO or INCONCLUSIVE test for the short summary
    (cut to ``width`` like pytest's own lines; None: whole)."""
    lines = []
    for report in reports:
        outcome = outcome_of(report)
        if outcome is None:
            continue
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else ""
        reason = str(reason).removeprefix("Skipped: ")
        line = f"{word_of(outcome)} {nodeid_of(report)}"
        if reason:
            line += f" - {reason}"
        if width is not None and len(line) > width:
            line = line[:max(width - 3, 10)] + "..."
        lines.append(line)
    return lines


def rewrite_junit(path: str) -> None:
    """Give the INFO and INCONCLUSIVE testcases of the JUnit file at ``path`` (those with the
    property ``ebsperf.outcome``) their own ``<skipped type>`` and a message that starts
    with the outcome's word."""

    if not os.path.exists(path):
        return
    tree = ET.parse(path)
    changed = False
    for case in tree.iter("testcase"):
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        outcome = props.get(OUTCOME_PROPERTY)
        if outcome not in JUNIT_TYPE:
            continue
        for skipped in case.findall("skipped"):
            skipped.set("type", JUNIT_TYPE[outcome])
            word = STATUS[outcome][2][0]
            message = skipped.get("message") or ""
            if not message.startswith(word):
                skipped.set("message", f"{word}: {message}")
            changed = True
    if changed:
        tree.write(path, encoding="utf-8", xml_declaration=True)


#: Report characters (``-r``) that show INFO and INCONCLUSIVE tests in the short summary:
#: those that show skips (``s``, and ``a``/``A``, which pytest expands to include it) and
#: ``I`` for these alone.
SUMMARY_CHARS = frozenset("sI")
SUMMARY_TITLE = "short test summary info"


def add_to_short_summary(reporter: Any, config: pytest.Config) -> None:
    """pytest's short test summary lists skips, failures and errors by category; INFO and
    INCONCLUSIVE tests are categories of their own, so their lines are added after pytest's
    (under its heading, which is written when pytest wrote none)."""
    original = reporter.short_test_summary

    def short_test_summary() -> None:
        written: list[str] = []
        plain_sep = reporter.write_sep

        def write_sep(sep: str, title: str | None = None, **markup: Any) -> None:
            if title == SUMMARY_TITLE:
                written.append(title)
            plain_sep(sep, title, **markup)

        reporter.write_sep = write_sep
        try:
            original()
        finally:
            reporter.write_sep = plain_sep
        if not SUMMARY_CHARS & set(getattr(reporter, "reportchars", "")):
            return
        found = [*reporter.stats.get("inconclusive", []), *reporter.stats.get("info", [])]
        width = None if config.get_verbosity() >= 2 else reporter._tw.fullwidth
        lines = summary_lines(found, width=width, word_of=lambda o: STATUS[o][2][0],
                              nodeid_of=lambda report: shown_nodeid(config, report))
        if not lines:
            return
        if not written:
            plain_sep("=", SUMMARY_TITLE, cyan=True, bold=True)
        for line in lines:
            word, rest = line.split(" ", 1)
            markup = STATUS[INFO if word == "INFO" else INCONCLUSIVE][2][1]
            reporter.write_line(f"{reporter._tw.markup(word, **markup)} {rest}")

    reporter.short_test_summary = short_test_summary


def shown_nodeid(config: pytest.Config, report: Any) -> str:
    """The test's id as pytest's own summary lines show it (relative to the current
    directory): pytest 9 keeps it as ``report.id``, earlier versions as a string."""
    found: Any = getattr(report, "id", None)
    try:
        if found is not None and hasattr(found, "path"):
            found = config.cwd_relative_nodeid(found)
            return f"{found.path}::{found.rest}" if found.rest is not None else str(found.path)
        return str(config.cwd_relative_nodeid(report.nodeid))
    except (AttributeError, TypeError, ValueError):
        return str(report.nodeid)
