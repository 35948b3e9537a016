"""Every check in the suites is traceable to a claim ID and its source."""

from __future__ import annotations

import ast

import pytest
from support.common import ROOT, SUITES

from pytest_ebsperf.awsmodel import CLAIMS

SUITE_FILES = [*sorted(SUITES.rglob("test_*.py")), SUITES / "hdd.py"]
CHECKS = {"check_cap", "check_floor", "check_rel", "check_sweep", "record_info",
          "check_discard", "check_knee", "check_time", "check_first_write",
          "check_write_after_trim", "check_stability", "check_instance_bound",
          "check_encrypted_twin", "check_faster_than", "check_mean_latency",
          "check_burst_duration", "check_baseline_after_knee", "check_refill", "check_no_knee"}


def suite_tests() -> list[tuple[str, ast.FunctionDef]]:
    found = []
    for path in SUITE_FILES:
        tree = ast.parse(path.read_text())
        found += [(f"{path.parent.name}/{node.name}", node) for node in tree.body
                  if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")]
    return found


@pytest.mark.parametrize(("name", "node"), suite_tests(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_suite_test_cites_known_claims_in_docstring_and_check(
        name: str, node: ast.FunctionDef) -> None:
    doc = ast.get_docstring(node) or ""
    cited = [c for c in CLAIMS if c in doc]
    assert cited, f"{name}: the docstring cites no known claim ID"
    for call in ast.walk(node):
        if isinstance(call, ast.Call) and getattr(call.func, "attr", None) in CHECKS:
            claim = call.args[0]
            # a constant, or one of two chosen by the volume ("S2-09" if big else "S0-06")
            choices = [claim.body, claim.orelse] if isinstance(claim, ast.IfExp) else [claim]
            for choice in choices:
                assert isinstance(choice, ast.Constant) and choice.value in CLAIMS, \
                    f"{name}: {ast.unparse(call)[:60]} does not name a known claim"
                assert choice.value in doc, \
                    f"{name}: checks {choice.value}, docstring does not cite it"


def test_every_claim_has_a_source_url() -> None:
    for claim in CLAIMS.values():
        assert claim.source_url.startswith("http"), claim.id


#: Every claim ID of the catalogue (claims.md Part A, seeds 000-004; Part B's specs).
CATALOGUE = (
    *(f"S0-{n:02d}" for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)),
    *(f"S1-{n:02d}" for n in range(1, 10)),
    *(f"S2-{n:02d}" for n in range(1, 24)),
    *(f"S3-{n:02d}" for n in range(1, 12)),
    *(f"S4-{n:02d}" for n in range(1, 10)),
    "B-IOACCT", "B-GP2", "B-GP3", "B-IO1", "B-IO2", "B-HDD", "B-STD", "B-IS", "B-EBSOPT",
    "B-SLA", "B-PRICE", "B-MODEL", "B-INIT", "B-ENC", "B-NVME", "B-METRICS",
)


def _load_generator():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_claims_doc",
                                                  ROOT / "scripts" / "gen_claims_doc.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_registry_holds_every_claim_of_the_catalogue() -> None:
    missing = [c for c in CATALOGUE if c not in CLAIMS]
    assert not missing, f"claims of the catalogue missing from the registry: {missing}"
    extra = [c for c in CLAIMS if c not in CATALOGUE]
    assert not extra, f"registry IDs not in the catalogue: {extra}"


def test_every_claim_is_measured_checked_against_the_seeds_or_says_why_not() -> None:
    """The claims page's traceability: a suite test, a model check, or a reason for each."""
    from pytest_ebsperf.awsmodel.claims import NOT_MEASURED

    gen = _load_generator()
    suites, modelled = gen.suite_tests(), gen.model_tests()
    uncovered = [c for c in CLAIMS if c not in suites and c not in modelled
                 and c not in NOT_MEASURED]
    assert not uncovered, f"claims neither measured, checked nor explained: {uncovered}"
    for claim_id in CLAIMS:
        assert gen.checked_by(claim_id, suites, modelled) != "-", claim_id


def test_model_checks_name_claims_that_exist_and_reasons_are_sentences() -> None:
    from pytest_ebsperf.awsmodel.claims import NOT_MEASURED

    gen = _load_generator()
    assert set(gen.model_tests()) <= set(CLAIMS)
    for claim_id, reason in NOT_MEASURED.items():
        assert claim_id in CLAIMS and reason.endswith(".") and len(reason) > 30, claim_id
