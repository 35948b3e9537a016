"""Every check in the suites is traceable to a claim ID and its source."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pytest_ebsperf.models import CLAIMS

ROOT = Path(__file__).resolve().parent.parent
SUITE_FILES = sorted((ROOT / "suites").rglob("test_*.py"))
CHECKS = {"check_cap", "check_floor", "check_rel", "check_sweep", "record_info",
          "check_discard", "check_knee", "check_time", "check_first_write",
          "check_write_after_trim", "check_stability", "check_instance_bound"}


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
            assert isinstance(claim, ast.Constant) and claim.value in CLAIMS, \
                f"{name}: {ast.unparse(call)[:60]} does not name a known claim"
            assert claim.value in doc, f"{name}: checks {claim.value}, docstring does not cite it"


def test_every_claim_has_a_source_url() -> None:
    for claim in CLAIMS.values():
        assert claim.source_url.startswith("http"), claim.id
