"""docs/aws-iam-policy.md stays in step with the AWS calls the package makes."""

from __future__ import annotations

import json
import re
from typing import Any

from support.common import ROOT

DOC = ROOT / "docs" / "aws-iam-policy.md"
PACKAGE = ROOT / "pytest_ebsperf" / "aws"


def policy() -> dict[str, Any]:
    blocks = re.findall(r"```json\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    return dict(json.loads(blocks[0]))


def granted() -> set[str]:
    actions: set[str] = set()
    for statement in policy()["Statement"]:
        listed = statement["Action"]
        actions.update([listed] if isinstance(listed, str) else listed)
    return actions


def test_every_json_block_of_the_policy_document_is_valid_json() -> None:
    blocks = re.findall(r"```json\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert len(blocks) == 2
    for block in blocks:
        json.loads(block)


def test_the_policy_grants_every_action_the_package_calls() -> None:
    called = set()
    for source in PACKAGE.glob("*.py"):
        called.update(re.findall(r'aws_call\(\s*"([a-z0-9-]+:[A-Za-z]+)"', source.read_text()))
    assert {"ec2:DescribeVolumes", "ec2:CreateVolume", "cloudwatch:GetMetricData"} <= called
    assert called <= granted()


def test_destructive_actions_are_only_granted_on_tagged_volumes_or_tagged_instances() -> None:
    for statement in policy()["Statement"]:
        listed = statement["Action"]
        actions = {listed} if isinstance(listed, str) else set(listed)
        if actions & {"ec2:CreateVolume", "ec2:DeleteVolume", "ec2:DetachVolume", "ec2:CreateTags"}:
            assert statement["Resource"] != "*" and statement.get("Condition"), statement["Sid"]
