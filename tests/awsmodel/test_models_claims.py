"""The claims registry: every ID the models cite resolves to a title and a source."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_ebsperf import awsmodel
from pytest_ebsperf.awsmodel import CLAIMS, cite, claim, ebs, hdd, source_url

SPEC_IDS = ["B-IOACCT", "B-GP2", "B-GP3", "B-IO1", "B-IO2", "B-HDD", "B-STD", "B-IS",
            "B-EBSOPT", "B-SLA", "B-PRICE", "B-MODEL"]  # fmt: skip
STATUSES = {"valid", "changed", "env", "non-det", "incorrect", "price", "advice", "spec"}


@pytest.mark.parametrize("claim_id", SPEC_IDS)
def test_every_part_b_spec_is_registered_with_an_aws_address(claim_id: str) -> None:
    found = claim(claim_id)
    assert found.status == "spec" and found.source_url.startswith("https://")


def test_every_claim_id_the_models_mention_is_registered() -> None:
    package = Path(awsmodel.__file__).parent
    text = "".join(p.read_text() for p in package.glob("*.py"))
    mentioned = set(re.findall(r"\b(S[0-4]-\d\d|B-[A-Z]+)\b", text))
    assert len(mentioned) > 20
    assert sorted(mentioned - set(CLAIMS)) == []


def test_every_cited_constant_names_a_registered_claim() -> None:
    cited = {cid for cid, _ in [*ebs.CITATIONS.values(), *hdd.CITATIONS.values()]}
    assert cited <= set(CLAIMS)


def test_seed_claims_name_their_seed_document_and_a_known_status() -> None:
    seeds = [c for c in CLAIMS.values() if c.id.startswith("S")]
    assert len(seeds) >= 60
    for found in seeds:
        assert found.seed is not None and found.seed.startswith(f"seeds/00{found.id[1]}_")
        assert found.status in STATUSES
    assert claim("S0-15").status == "incorrect"  # 600 s cannot drain 100 GiB gp2


def test_cite_gives_the_finding_tail_and_degrades_for_unregistered_ids() -> None:
    assert cite("S0-04") == (
        "Claim S0-04, https://docs.aws.amazon.com/ebs/latest/userguide/ebs-optimization.html"
    )
    assert cite("Z9-99") == "Claim Z9-99"
    assert source_url("Z9-99", "fallback") == "fallback"


def test_an_unknown_claim_id_is_a_key_error_that_says_what_ids_look_like() -> None:
    with pytest.raises(KeyError, match="S0-04, B-GP2"):
        claim("gp2")
