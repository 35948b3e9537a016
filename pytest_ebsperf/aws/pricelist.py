"""Live EBS prices from the AWS Price List Query API, with the built-in table as fallback.

``pricing:GetProducts`` (service code AmazonEC2) returns one JSON document per SKU. EBS
SKUs carry ``volumeApiName`` (gp3, io1, ...) and ``regionCode`` attributes, and their
``usagetype`` says what is billed, after an optional region prefix (``APN1-``; us-east-1 has
none): ``EBS:VolumeUsage[.gp3]`` per GB-month, ``EBS:VolumeP-IOPS.gp3|.piops|.io2[.tier2|
.tier3]`` per IOPS-month, ``EBS:VolumeP-Throughput.gp3`` per GiBps-month (so /1024 for MiB/s)
and ``EBS:VolumeIOUsage`` per I/O for Magnetic. The API is served from us-east-1
(https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/using-price-list-query-api.html).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any

from pytest_ebsperf.aws.clients import AwsClients
from pytest_ebsperf.aws.pricing import PriceTable, builtin_prices
from pytest_ebsperf.awsmodel.types import VolumePrices

#: io2 IOPS tiers by usage-type suffix (provisioned-iops pricing: up to 32,000, 32,001-64,000,
#: above 64,000).
_IO2_TIERS = {"": 32_000.0, ".tier2": 64_000.0, ".tier3": math.inf}


class PriceListClient:
    """Fetch a :class:`PriceTable` from the Price List API, or fall back and say why."""

    def __init__(self, clients: AwsClients | None = None, *, pricing_client: Any = None) -> None:
        self._clients = clients
        self._pricing = pricing_client

    def table(self, region: str, volume_types: Iterable[str]) -> PriceTable:
        """Live prices for ``volume_types`` in ``region``; the built-in table if unreachable."""
        fallback = builtin_prices(region)
        try:
            live = {
                kind: self.fetch(region, kind, fallback.prices[kind]) for kind in set(volume_types)
            }
        except Exception as exc:  # noqa: BLE001 - any failure (no access, no network, odd data) -> built-in
            reason = _short(exc)
            return PriceTable(
                region,
                fallback.prices,
                f"{fallback.source}; the Price List API was not usable: {reason}",
            )
        merged = {**fallback.prices, **live}
        return PriceTable(
            region, merged, f"AWS Price List API ({region}, {date.today().isoformat()})"
        )

    def fetch(self, region: str, volume_type: str, base: VolumePrices) -> VolumePrices:
        """One volume type's prices; ``base`` supplies what the API does not publish."""
        client = self._pricing or (self._clients or AwsClients()).pricing()
        filters = [
            {"Type": "TERM_MATCH", "Field": "regionCode", "Value": region},
            {"Type": "TERM_MATCH", "Field": "volumeApiName", "Value": volume_type},
        ]
        documents: list[str] = []
        token: str | None = None
        while True:
            kwargs: dict[str, Any] = {"ServiceCode": "AmazonEC2", "Filters": filters}
            if token:
                kwargs["NextToken"] = token
            response = client.get_products(**kwargs)
            documents.extend(response.get("PriceList", []))
            token = response.get("NextToken")
            if not token:
                break
        return parse_price_list(documents, volume_type, base)


def parse_price_list(
    documents: Iterable[str], volume_type: str, base: VolumePrices
) -> VolumePrices:
    """Read the EBS rates of one volume type out of ``PriceList`` JSON strings."""
    storage: float | None = None
    changes: dict[str, Any] = {}
    tiers: dict[float, float] = {}
    for usage, unit, usd in _rates(documents):
        if usage.startswith("EBS:VolumeUsage"):
            storage = usd
        elif usage.startswith("EBS:VolumeP-IOPS"):
            if base.iops_tiers:  # tiered (io2): the tier is the usage type's suffix
                tier = usage[len(f"EBS:VolumeP-IOPS.{volume_type}") :]
                tiers[_IO2_TIERS.get(tier, math.inf)] = usd
            else:
                changes["iops_month"] = usd
        elif usage.startswith("EBS:VolumeP-Throughput"):
            changes["mibps_month"] = usd / 1024 if unit.lower().startswith("gibps") else usd
        elif usage.startswith("EBS:VolumeIOUsage"):
            changes["per_million_io"] = usd * 1e6
    if storage is None:
        raise LookupError(f"no GB-month price for {volume_type} in the Price List answer")
    if tiers:
        changes["iops_tiers"] = tuple(sorted(tiers.items()))
    return dataclasses.replace(base, gb_month=storage, **changes)


def _rates(documents: Iterable[str]) -> Iterable[tuple[str, str, float]]:
    """``(usage type without region prefix, unit, USD)`` for each on-demand first-tier rate."""
    for raw in documents:
        doc: Mapping[str, Any] = json.loads(raw)
        usage = str(doc.get("product", {}).get("attributes", {}).get("usagetype", ""))
        usage = usage[usage.find("EBS:") :] if "EBS:" in usage else usage
        for term in doc.get("terms", {}).get("OnDemand", {}).values():
            for dimension in term.get("priceDimensions", {}).values():
                if str(dimension.get("beginRange", "0")) != "0":
                    continue  # only the first tier of a range-priced dimension
                usd = dimension.get("pricePerUnit", {}).get("USD")
                if usd is not None:
                    yield usage, str(dimension.get("unit", "")), float(usd)


def _short(exc: BaseException) -> str:
    # One line: the reason ends up inside a sentence (an HTML error page has many).
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."
