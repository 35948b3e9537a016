"""Pure, cited models of EBS and instance-store performance.

A :class:`~pytest_ebsperf.awsmodel.volume.Volume` and a :class:`~pytest_ebsperf.fio.workload.Workload`
go in; ceilings (:class:`Limit`), expectations (:class:`Expectation`), burst plans and queue
depths come out. Nothing here does I/O. Typical use::

    volume = validate(Volume("io1", size_gib=200, iops=2000, instance_type="m5.large"))
    exp = cap_expectation("S0-04", "io1 random read", volume, Workload("randread"))
    exp.value, exp.binding.name      # 2000.0, 'io1 provisioned 2,000 IOPS'

Per-type formulas are in :mod:`.ebs` (gp2, gp3, io1, io2) and :mod:`.hdd` (st1, sc1,
standard); each constant's claim ID and source are in their ``CITATIONS`` tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ebsperf.deferred import names_from

if TYPE_CHECKING:  # the same names, loaded on first use (deferred.names_from)
    from pytest_ebsperf.awsmodel.accounting import (
        accounted_bytes_per_io,
        ebs_ops_per_io,
        instance_ops_per_io,
        is_cap_checkable,
        merges,
    )
    from pytest_ebsperf.awsmodel.burst import (
        BurstPlan,
        burst_plan,
        burst_shortfall,
        burst_time_expectation,
        drain_seconds,
        gp2_burst_plan,
        has_burst,
        hdd_burst_plan,
    )
    from pytest_ebsperf.awsmodel.caps import (
        VolumeCaps,
        era_applies,
        io_unit_bytes,
        volume_caps,
    )
    from pytest_ebsperf.awsmodel.claims import CLAIMS, Claim, cite, claim, source_url
    from pytest_ebsperf.awsmodel.ebs import ERA_2013, ERA_2014, ERAS, NOW
    from pytest_ebsperf.awsmodel.expect import cap_expectation, crossover_bs, expected_iops, limits
    from pytest_ebsperf.awsmodel.floor import floor_expectation, instance_store_rate
    from pytest_ebsperf.awsmodel.instances import (
        EbsLimits,
        as_ebs_limits,
        ebs_limits,
        ebs_limits_from_api,
        ebs_note,
        instance_store_devices,
        instance_store_iops,
        known_instance_types,
        nitro,
    )
    from pytest_ebsperf.awsmodel.queue import (
        default_latency_s,
        default_queue_depth,
        little_iops,
        plan_queue,
    )
    from pytest_ebsperf.awsmodel.types import (
        CAP,
        DUTY_GP,
        DUTY_IO,
        FLOOR,
        INFO,
        INSTANCE,
        REL,
        TIME,
        VOLUME,
        Expectation,
        Limit,
    )
    from pytest_ebsperf.awsmodel.validation import validate
    from pytest_ebsperf.awsmodel.volume_types import (
        HDD,
        MAGNETIC,
        SSD,
        STORE,
        VolumeType,
        bursting_names,
        volume_type,
    )

#: Where each name of the package lives: importing one of its modules, or the package for
#: one name, does not load the others.
_WHERE: dict[str, str] = {
    "BurstPlan": "burst",
    "CAP": "types",
    "CLAIMS": "claims",
    "Claim": "claims",
    "DUTY_GP": "types",
    "DUTY_IO": "types",
    "ERAS": "ebs",
    "ERA_2013": "ebs",
    "ERA_2014": "ebs",
    "EbsLimits": "instances",
    "Expectation": "types",
    "FLOOR": "types",
    "INFO": "types",
    "INSTANCE": "types",
    "Limit": "types",
    "NOW": "ebs",
    "REL": "types",
    "TIME": "types",
    "VOLUME": "types",
    "VolumeCaps": "caps",
    "VolumeType": "volume_types",
    "MAGNETIC": "volume_types",
    "STORE": "volume_types",
    "HDD": "volume_types",
    "SSD": "volume_types",
    "volume_type": "volume_types",
    "bursting_names": "volume_types",
    "accounted_bytes_per_io": "accounting",
    "as_ebs_limits": "instances",
    "burst_plan": "burst",
    "burst_shortfall": "burst",
    "burst_time_expectation": "burst",
    "cap_expectation": "expect",
    "cite": "claims",
    "claim": "claims",
    "crossover_bs": "expect",
    "default_latency_s": "queue",
    "default_queue_depth": "queue",
    "plan_queue": "queue",
    "expected_iops": "expect",
    "drain_seconds": "burst",
    "ebs_limits": "instances",
    "ebs_limits_from_api": "instances",
    "ebs_note": "instances",
    "ebs_ops_per_io": "accounting",
    "era_applies": "caps",
    "floor_expectation": "floor",
    "gp2_burst_plan": "burst",
    "has_burst": "burst",
    "hdd_burst_plan": "burst",
    "instance_ops_per_io": "accounting",
    "instance_store_devices": "instances",
    "instance_store_iops": "instances",
    "instance_store_rate": "floor",
    "io_unit_bytes": "caps",
    "is_cap_checkable": "accounting",
    "known_instance_types": "instances",
    "limits": "expect",
    "little_iops": "queue",
    "merges": "accounting",
    "nitro": "instances",
    "source_url": "claims",
    "validate": "validation",
    "volume_caps": "caps",
}


__getattr__ = names_from(__name__, _WHERE)

__all__ = [
    "CAP",
    "CLAIMS",
    "DUTY_GP",
    "DUTY_IO",
    "ERAS",
    "ERA_2013",
    "ERA_2014",
    "FLOOR",
    "HDD",
    "INFO",
    "INSTANCE",
    "MAGNETIC",
    "NOW",
    "REL",
    "SSD",
    "STORE",
    "TIME",
    "VOLUME",
    "BurstPlan",
    "Claim",
    "EbsLimits",
    "Expectation",
    "Limit",
    "VolumeCaps",
    "VolumeType",
    "accounted_bytes_per_io",
    "as_ebs_limits",
    "burst_plan",
    "burst_shortfall",
    "burst_time_expectation",
    "bursting_names",
    "cap_expectation",
    "cite",
    "claim",
    "crossover_bs",
    "default_latency_s",
    "default_queue_depth",
    "drain_seconds",
    "ebs_limits",
    "ebs_limits_from_api",
    "ebs_note",
    "ebs_ops_per_io",
    "era_applies",
    "expected_iops",
    "floor_expectation",
    "gp2_burst_plan",
    "has_burst",
    "hdd_burst_plan",
    "instance_ops_per_io",
    "instance_store_devices",
    "instance_store_iops",
    "instance_store_rate",
    "io_unit_bytes",
    "is_cap_checkable",
    "known_instance_types",
    "limits",
    "little_iops",
    "merges",
    "nitro",
    "plan_queue",
    "source_url",
    "validate",
    "volume_caps",
    "volume_type",
]  # fmt: skip
