"""Writes docs/claims.md from the claims registry (pytest_ebsperf.awsmodel.CLAIMS).

    python3 scripts/gen_claims_doc.py          # rewrite docs/claims.md
    python3 scripts/gen_claims_doc.py --check  # exit 1 when docs/claims.md is out of date
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from pytest_ebsperf.awsmodel import CLAIMS
from pytest_ebsperf.awsmodel.claims import NOT_MEASURED

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "claims.md"


#: Suite bodies several suites import (named by the suites that collect them).
SHARED = {ROOT / "suites" / "hdd.py": "st1+sc1"}
#: Checks that only record (policy INFO); every other check asserts.
RECORDING = ("record_info(",)


def suite_tests() -> dict[str, list[str]]:
    """Claim ID -> the suite tests whose docstring or check cites it."""
    return {claim: [name for name, _ in tests] for claim, tests in _suite_citations().items()}


def _suite_citations() -> dict[str, list[tuple[str, bool]]]:
    """Claim ID -> (suite test, whether it asserts) for each test that cites it."""
    cited: dict[str, list[tuple[str, bool]]] = {}
    for path in [*sorted((ROOT / "suites").rglob("test_*.py")), *SHARED]:
        text = path.read_text()
        for match in re.finditer(r"def (test_\w+)\(.*?(?=\n(?:@|def )|\Z)", text, re.DOTALL):
            body = match.group(0)
            asserts = not any(call in body for call in RECORDING)
            for claim in sorted(set(re.findall(r"\b(S\d-\d\d|B-[A-Z0-9]+)\b", body))):
                room = SHARED.get(path) or path.parent.name
                cited.setdefault(claim, []).append((f"{room}/{match.group(1)}", asserts))
    return cited


def how_checked(claim_id: str, modelled: dict[str, list[str]]) -> str:
    """asserted / recorded / seeds' tables / not measurable, for the "how" column."""
    kinds = []
    tests = _suite_citations().get(claim_id, [])
    if any(asserts for _, asserts in tests):
        kinds.append("asserted")
    elif tests:
        kinds.append("recorded")
    if claim_id in modelled:
        kinds.append("seeds' tables")
    if claim_id in NOT_MEASURED:
        kinds.append("not measurable")
    return ", ".join(kinds) or "-"


def model_tests() -> dict[str, list[str]]:
    """Claim ID -> the tests of tests/awsmodel/test_seed_claims.py whose docstring starts with it."""
    import ast

    cited: dict[str, list[str]] = {}
    tree = ast.parse((ROOT / "tests" / "awsmodel" / "test_seed_claims.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            head = (ast.get_docstring(node) or "").split(":")[0]
            for claim in re.findall(r"\b(S\d-\d\d|B-[A-Z0-9]+)\b", head):
                cited.setdefault(claim, []).append(f"seed_claims/{node.name}")
    return cited


def checked_by(claim_id: str, suites: dict[str, list[str]], models: dict[str, list[str]]
               ) -> str:
    """The cell of the "checked by" column: measurements, model checks, or the reason."""
    parts = [f"`{t}`" for t in suites.get(claim_id, [])]
    parts += [f"model: `{t}`" for t in models.get(claim_id, [])]
    if claim_id in NOT_MEASURED:
        parts.append(f"not a measurement: {NOT_MEASURED[claim_id]}")
    return "<br>".join(parts).replace("|", "/") or "-"


def render() -> str:
    cited = suite_tests()
    modelled = model_tests()
    counts: dict[str, int] = {}
    rows = []
    for claim in CLAIMS.values():
        tests = checked_by(claim.id, cited, modelled)
        how = how_checked(claim.id, modelled)
        if claim.seed:
            first = how.split(", ")[0]
            counts[first] = counts.get(first, 0) + 1
        title = claim.title.replace("|", "/")
        rows.append(f"| {claim.id} | {title} | {claim.status} | {how} | {tests} | "
                    f"{claim.source_url} |")
    seeds = sum(counts.values())
    summary = ", ".join(f"{counts[k]} {label}" for k, label in (
        ("asserted", "asserted by a suite check"), ("recorded", "recorded (INFO)"),
        ("seeds' tables", "checked against the seeds' own tables"),
        ("not measurable", "not measurable, with the reason")) if counts.get(k))
    lines = [
        "# Claims",
        "",
        "Every claim the plugin knows, with its source. `S<seed>-<nn>` are claims from the seed",
        "documents (blog posts and AWS slides, 2013-2016); `B-*` are today's AWS specifications.",
        "Status: valid, changed (the spec moved since), env (retired hardware), non-det (best",
        "effort), price, advice, spec (today's documentation).",
        "",
        "\"How\" says what a run does with the claim: **asserted** (a suite check judges it",
        "and can fail: PASS, FAIL or INCONCLUSIVE), **recorded** (measured and reported as",
        "INFO, never failed: best-effort Magnetic figures), **seeds' tables** (a model check",
        "against the seed's own figures in `tests/awsmodel/test_seed_claims.py`: prices, retired",
        "hardware, formulas) or **not measurable** (and why). \"Checked by\" names them.",
        f"Of the {seeds} seed claims: {summary} (each counted once, by the first of these).",
        "Generated by `scripts/gen_claims_doc.py`.",
        "",
        "| claim | what | status | how | checked by | source |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        *_what_checks_can_show(),
    ]
    return "\n".join(lines) + "\n"


def _what_checks_can_show() -> list[str]:
    """What the two seed-001 pass checks can and cannot show: S1-08's one-sided question,
    S1-09's power by the number of runs."""
    from pytest_ebsperf.config.options import OPTIONS_BY_DEST
    from pytest_ebsperf.verdicts import stability

    default_runs = int(OPTIONS_BY_DEST["runs"].default)
    alpha = 0.001 / 6  # the instance_store suite alone: six checks share the run's 0.001
    runs = (4, 6, default_runs, 16)
    cvs = (0.01, 0.02, 0.05, 0.08, 0.10, 0.15, 0.20, 0.30)
    head = "| runs' CV | " + " | ".join(f"{n} runs{' (default)' if n == default_runs else ''}"
                                         for n in runs) + " |"
    table = [head, "|---|" + "---|" * len(runs)]
    for cv in cvs:
        cells = []
        for n in runs:
            p_pass, p_fail = stability.stability_power(n, cv, alpha)
            cells.append(f"{p_pass:.2f} / {p_fail:.2f}")
        table.append(f"| {cv * 100:g} % | " + " | ".join(cells) + " |")
    return [
        "## What S1-08 and S1-09 can show",
        "",
        "**S1-08** (TRIM has no effect until the device fills): the check fills the whole",
        "device, measures random writes, TRIMs it and measures again. It can show that writes",
        (f"after TRIM are not more than {(1 - stability.MIN_PASS_RATIO) * 100:.0f} % slower than "
         "on the full device (the ratio's whole"),
        "interval at or above 0.90: PASS), and says whether TRIM helped: only when the whole",
        "interval lies above 1. A device that keeps fresh blocks in reserve writes as fast when",
        "full as when TRIMmed; that is consistent with the claim, not evidence that TRIM helps.",
        "",
        "**S1-09** (run-to-run variation): `--ebsperf-runs` runs (first dropped, as seed 001",
        "did); PASS when the CV's upper bound at 95 % confidence is at most 10 %, FAIL when its",
        "lower bound at the check's false-alarm level exceeds 10 %. Probability of PASS / FAIL",
        f"for runs whose means vary with the CV on the left (normal runs; level {alpha:.1e}, the",
        "instance_store suite's share of 0.001). Seed 001 measured CV 1 % (m3), 2 % (c3) and",
        f"0 % (r3): with {default_runs} runs such volumes pass, and one that varies by 30 %",
        "fails, almost always; with the old default of 4, a 2 % volume passed 72 % of the time",
        "and a 30 % one failed 38 % of the time.",
        "",
        *table,
    ]


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if DOC.read_text() != text:
            print(f"{DOC} is out of date: run python3 scripts/gen_claims_doc.py")
            return 1
        return 0
    DOC.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
