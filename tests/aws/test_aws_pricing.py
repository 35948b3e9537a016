"""Cost estimates (claims.md B-PRICE): the arithmetic, the billing rules, and the price source.

moto does not implement the Price List API (GetProducts answers "Not yet implemented"), so
the live path is tested with botocore's Stubber on answers shaped like AWS's, and the
fallback against the moto server, where the call fails like an unreachable API would.
"""

# Fixtures are imported from test_aws_support, so using them as arguments redefines the name.

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from pytest_ebsperf.aws import (
    PriceListClient,
    builtin_prices,
    estimate_cost,
    parse_provision_spec,
)
from pytest_ebsperf.aws.pricing import billed_seconds, monthly_cost
from pytest_ebsperf.awsmodel.volume import Volume

US = builtin_prices("us-east-1")


def test_a_gp3_month_adds_iops_above_3000_and_throughput_above_125() -> None:
    volume = Volume(type="gp3", size_gib=100, iops=6000, throughput_mibps=500)
    # 100 x 0.08 + 3,000 x 0.005 + 375 x 0.040 (B-PRICE, us-east-1)
    assert monthly_cost(volume, US.prices["gp3"]) == pytest.approx(8 + 15 + 15)


def test_io2_iops_are_priced_in_the_three_tiers() -> None:
    volume = Volume(type="io2", size_gib=100, iops=80_000)
    expected = 100 * 0.125 + 32_000 * 0.065 + 32_000 * 0.0455 + 16_000 * 0.032
    assert monthly_cost(volume, US.prices["io2"]) == pytest.approx(expected)


def test_gp2_bills_a_60_second_minimum_and_io1_whole_hours() -> None:
    assert billed_seconds(10, US.prices["gp2"]) == 60
    assert billed_seconds(61.2, US.prices["gp3"]) == 62
    assert billed_seconds(10, US.prices["io1"]) == 3600
    assert billed_seconds(3601, US.prices["st1"]) == 7200


def test_an_estimate_prorates_a_30_day_month_and_says_where_prices_came_from() -> None:
    specs = parse_provision_spec("gp2:2000")
    estimate = estimate_cost(specs, 43_200, US)
    # AWS's example: $0.10/GB-month x 2000 GB x 43,200 s / (86,400 s x 30) = $3.33
    assert estimate.total_usd == pytest.approx(3.33, abs=0.005)
    assert estimate.sentence() == (
        "1 volume (gp2 2,000 GiB) for 12 h in us-east-1: about $3.3333 (snapshots, data "
        "transfer and the instance not included; prices from the built-in price table "
        "(us-east-1, as of 2025))"
    )


def test_magnetic_volumes_also_pay_for_their_io_requests() -> None:
    spec = Volume(type="standard", size_gib=100)
    storage_only = monthly_cost(spec, US.prices["standard"]) * 3600 / (30 * 86_400)
    assert estimate_cost([spec], 3600, US).total_usd > storage_only


def test_a_region_without_built_in_prices_uses_the_highest_and_says_so() -> None:
    table = builtin_prices("sa-east-1")
    assert table.prices["gp2"].gb_month == 0.12
    assert "no prices for sa-east-1; used the highest of us-east-1, ap-northeast-1" in table.source


def product(usagetype: str, unit: str, usd: str, begin: str = "0") -> str:
    """One PriceList entry in the shape GetProducts returns (a JSON document as a string)."""
    return json.dumps({
        "product": {"productFamily": "Storage", "sku": "SKU1",
                    "attributes": {"usagetype": usagetype, "volumeApiName": "gp3",
                                   "regionCode": "ap-northeast-1"}},
        "serviceCode": "AmazonEC2",
        "terms": {"OnDemand": {"SKU1.T": {"priceDimensions": {"SKU1.T.D": {
            "unit": unit, "beginRange": begin, "endRange": "Inf",
            "pricePerUnit": {"USD": usd}}}}}},
    })


def stubbed_pricing(pages: list[list[str]], volume_type: str) -> Any:
    client = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="x",
                          aws_secret_access_key="y")
    stub = Stubber(client)
    for number, page in enumerate(pages):
        response: dict[str, Any] = {"FormatVersion": "aws_v1", "PriceList": page}
        if number < len(pages) - 1:
            response["NextToken"] = f"page{number + 1}"
        expected: dict[str, Any] = {"ServiceCode": "AmazonEC2", "Filters": [
            {"Type": "TERM_MATCH", "Field": "regionCode", "Value": "ap-northeast-1"},
            {"Type": "TERM_MATCH", "Field": "volumeApiName", "Value": volume_type}]}
        if number:
            expected["NextToken"] = f"page{number}"
        stub.add_response("get_products", response, expected)
    stub.activate()
    return client, stub


def test_live_gp3_prices_are_read_across_pages_and_throughput_converted_from_gibps() -> None:
    client, stub = stubbed_pricing([
        [product("APN1-EBS:VolumeUsage.gp3", "GB-Mo", "0.0960000000")],
        [product("APN1-EBS:VolumeP-IOPS.gp3", "IOPS-Mo", "0.0060000000"),
         product("APN1-EBS:VolumeP-Throughput.gp3", "GiBps-mo", "49.1520000000")],
    ], "gp3")
    table = PriceListClient(pricing_client=client).table("ap-northeast-1", ["gp3"])
    stub.assert_no_pending_responses()
    gp3 = table.prices["gp3"]
    assert (gp3.gb_month, gp3.iops_month) == (0.096, 0.006)
    assert gp3.mibps_month == pytest.approx(0.048)
    assert (gp3.included_iops, gp3.included_mibps, gp3.per_second) == (3000, 125.0, True)
    assert table.source.startswith("AWS Price List API (ap-northeast-1, ")


def test_live_io2_prices_keep_their_three_iops_tiers() -> None:
    client, _ = stubbed_pricing([[
        product("APN1-EBS:VolumeUsage.io2", "GB-Mo", "0.142"),
        product("APN1-EBS:VolumeP-IOPS.io2", "IOPS-Mo", "0.074"),
        product("APN1-EBS:VolumeP-IOPS.io2.tier2", "IOPS-Mo", "0.0518"),
        product("APN1-EBS:VolumeP-IOPS.io2.tier3", "IOPS-Mo", "0.03626"),
    ]], "io2")
    io2 = PriceListClient(pricing_client=client).table("ap-northeast-1", ["io2"]).prices["io2"]
    assert io2.iops_tiers == ((32_000, 0.074), (64_000, 0.0518), (float("inf"), 0.03626))


def test_an_answer_without_a_storage_price_falls_back_to_the_built_in_table() -> None:
    client, _ = stubbed_pricing([[product("APN1-EBS:VolumeP-IOPS.gp3", "IOPS-Mo", "0.006")]],
                                "gp3")
    table = PriceListClient(pricing_client=client).table("ap-northeast-1", ["gp3"])
    assert table.prices["gp3"] == builtin_prices("ap-northeast-1").prices["gp3"]
    assert "the Price List API was not usable: no GB-month price for gp3" in table.source


def test_an_unusable_price_list_endpoint_falls_back_and_says_so(aws: str) -> None:
    table = PriceListClient().table("us-east-1", ["gp3", "io1"])  # moto: not implemented
    assert table.prices == US.prices
    assert table.source.startswith(
        "built-in price table (us-east-1, as of 2025); the Price List API was not usable: "
    )
