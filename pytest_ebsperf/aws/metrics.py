"""CloudWatch ``BurstBalance``: how full the credit bucket of a gp2, st1 or sc1 volume is.

AWS/EBS publishes BurstBalance (percent of credits left) for gp2, st1 and sc1 only, at
1-minute resolution, only while the volume is attached, and not at all on Nitro when the
baseline is at or above the burst rate (claims.md B-METRICS). We ask for the last 10 minutes
with ``GetMetricData`` and a plain ``MetricStat`` (moto supports that; metric math it does not)
and keep the newest datapoint's *Minimum*: the lowest balance seen in that minute is the safe
one to predict a burst from.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from pytest_ebsperf.aws.failures import aws_call

WINDOW = timedelta(minutes=10)
PERIOD_S = 60


@dataclass(frozen=True)
class BurstReading:
    """The newest BurstBalance datapoint, or why there is none (``note``)."""

    volume_id: str
    percent: float | None
    timestamp: datetime | None
    note: str | None = None


def burst_balance_query(volume_id: str) -> dict[str, Any]:
    """The ``MetricDataQueries`` entry for one volume's BurstBalance (Minimum per minute)."""
    return {
        "Id": "burst",
        "MetricStat": {
            "Metric": {
                "Namespace": "AWS/EBS",
                "MetricName": "BurstBalance",
                "Dimensions": [{"Name": "VolumeId", "Value": volume_id}],
            },
            "Period": PERIOD_S,
            "Stat": "Minimum",
        },
        "ReturnData": True,
    }


def read_burst_balance(
    cloudwatch: Any, volume_id: str, *, now: datetime | None = None, window: timedelta = WINDOW
) -> BurstReading:
    """Read the newest BurstBalance of ``volume_id`` within ``window`` before ``now``."""
    end = now or datetime.now(timezone.utc)
    with aws_call("cloudwatch:GetMetricData", what=f"BurstBalance of {volume_id}"):
        response = cloudwatch.get_metric_data(
            MetricDataQueries=[burst_balance_query(volume_id)],
            StartTime=end - window,
            EndTime=end,
            ScanBy="TimestampDescending",
        )
    return newest_datapoint(volume_id, response.get("MetricDataResults", []), window)


def newest_datapoint(
    volume_id: str, results: list[Any], window: timedelta = WINDOW
) -> BurstReading:
    """Pick the newest value out of ``MetricDataResults`` (order is not trusted)."""
    points = [
        (stamp, float(value))
        for result in results
        for stamp, value in zip(result.get("Timestamps", []), result.get("Values", []))
    ]
    if not points:
        minutes = int(window.total_seconds() // 60)
        return BurstReading(
            volume_id,
            None,
            None,
            f"CloudWatch has no BurstBalance for {volume_id} in the last {minutes} minutes "
            "(AWS reports it only while the volume is attached, and not on Nitro when the "
            "baseline is at or above the burst rate); pass --burst-balance if you know it.",
        )
    stamp, value = max(points, key=lambda point: point[0])
    return BurstReading(volume_id, value, stamp)


#: CloudWatch's own verdict per minute: 1 when the application consistently drove more IOPS
#: (throughput) than the volume's provisioned performance that minute (Nitro, not standard).
EXCEEDED_CHECKS = ("VolumeIOPSExceededCheck", "VolumeThroughputExceededCheck")


def read_exceeded_checks(cloudwatch: Any, volume_id: str, *, now: datetime | None = None,
                         window: timedelta = WINDOW) -> dict[str, float | None]:
    """The highest VolumeIOPSExceededCheck and VolumeThroughputExceededCheck of the last
    ``window`` (None: not published for this volume in that time)."""
    end = now or datetime.now(timezone.utc)
    queries = [{
        "Id": name[0].lower() + name[1:],
        "MetricStat": {
            "Metric": {"Namespace": "AWS/EBS", "MetricName": name,
                       "Dimensions": [{"Name": "VolumeId", "Value": volume_id}]},
            "Period": PERIOD_S, "Stat": "Maximum"},
        "ReturnData": True,
    } for name in EXCEEDED_CHECKS]
    with aws_call("cloudwatch:GetMetricData", what=f"exceeded checks of {volume_id}"):
        response = cloudwatch.get_metric_data(MetricDataQueries=queries, StartTime=end - window,
                                              EndTime=end)
    found: dict[str, float | None] = dict.fromkeys(EXCEEDED_CHECKS)
    by_id = {q["Id"]: name for q, name in zip(queries, EXCEEDED_CHECKS)}
    for result in response.get("MetricDataResults", []):
        values = [float(v) for v in result.get("Values", [])]
        name = by_id.get(result.get("Id", ""))
        if name and values:
            found[name] = max(values)
    return found


def exceeded_note(volume_id: str, checks: dict[str, float | None],
                  window: timedelta = WINDOW) -> str | None:
    """A sentence when CloudWatch saw the volume's limits exceeded recently, else None."""
    hit = [name for name, value in checks.items() if value and value >= 1]
    if not hit:
        return None
    minutes = int(window.total_seconds() // 60)
    what = " and ".join({"VolumeIOPSExceededCheck": "IOPS",
                         "VolumeThroughputExceededCheck": "throughput"}[n] for n in hit)
    return (f"CloudWatch: in the last {minutes} minutes the application drove more {what} "
            f"than {volume_id} is provisioned for ({', '.join(hit)} = 1): something else "
            "was using the volume, or its limits bound")
