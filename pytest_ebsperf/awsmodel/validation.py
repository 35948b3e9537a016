"""Check a volume description against what AWS would accept, and normalise it.

Each error is one sentence: what is wrong, the rule (with its claim ID) and what to pass
instead -- the pytest layer shows it as a usage error.
"""

from __future__ import annotations

from collections.abc import Callable

from pytest_ebsperf.awsmodel import ebs, instances, volume_types
from pytest_ebsperf.awsmodel.volume import DEFAULT, DISCOVERED, Volume
from pytest_ebsperf.awsmodel.volume_types import Provisioned, VolumeType
from pytest_ebsperf.errors import VolumeSpecError


def _check_type(volume: Volume) -> Volume:
    vtype = volume.type.strip().lower()
    if volume_types.known(vtype) is None:
        raise VolumeSpecError(f"{volume.type!r} is not a valid --volume-type. Valid types: "
                              f"{', '.join(volume_types.names())}.")
    return volume if vtype == volume.type else volume.replace(type=vtype)


def _check_size(volume: Volume, kind: VolumeType, low: int, high: int) -> int:
    vtype = volume.type
    rule = f"{vtype} sizes run from {low:,} to {high:,} GiB ({kind.claim})"
    if volume.size_gib is None:
        raise VolumeSpecError(f"A {vtype} volume needs a size: {rule}. Pass --volume-size=GIB.")
    if not low <= volume.size_gib <= high:
        raise VolumeSpecError(
            f"{vtype} with {volume.size_gib:,} GiB is not a valid volume: {rule}. "
            f"Pass a --volume-size between {low} and {high}."
        )
    return volume.size_gib


def _provisioned_types() -> list[str]:
    """The types with provisioned IOPS that come with the volume (gp3)."""
    return [k for k in volume_types.names() if (rule := volume_types.volume_type(k).iops)
            is not None and rule.default is not None]


def _check_derived_iops(volume: Volume, kind: VolumeType, size: int,
                        baseline: Callable[[int], int]) -> Volume:
    base = baseline(size)
    if volume.iops is not None and volume.iops != base:
        raise VolumeSpecError(
            f"{volume.type} with {size:,} GiB and {volume.iops:,} IOPS is not a valid volume: "
            f"{volume.type} IOPS are not provisioned but follow from size "
            f"({kind.iops_from_size_rule}), so {size:,} GiB has a baseline of {base:,} IOPS "
            f"({kind.claim}). Drop --volume-iops, pass --volume-iops={base}, or use "
            f"{' or '.join(_provisioned_types())} for provisioned IOPS."
        )
    # The baseline is not a provisioned figure; keep gp2 volumes alike however they came in.
    return volume.replace(iops=None) if volume.iops is not None else volume


def _check_provisioned_iops(volume: Volume, kind: VolumeType, rule: Provisioned, size: int,
                            provenance: dict[str, str]) -> Volume:
    vtype = volume.type
    low, high, per_gib = int(rule.low), int(rule.high), int(rule.per)
    spec = kind.claim
    if volume.iops is None:
        if rule.default is None:
            raise VolumeSpecError(
                f"{vtype} needs provisioned IOPS: pass --volume-iops=N ({vtype} allows "
                f"{low:,}-{high:,} IOPS, at most {per_gib:,} per GiB; {spec})."
            )
        provenance["iops"] = DEFAULT
        return volume.replace(iops=int(rule.default))
    if not low <= volume.iops <= high:
        raise VolumeSpecError(
            f"{vtype} with {volume.iops:,} IOPS is not a valid volume: {vtype} allows "
            f"{low:,} to {high:,} IOPS ({spec}). Pass --volume-iops between {low} and {high}."
        )
    most = int(rule.most(size))
    if volume.iops > most:
        raise VolumeSpecError(
            f"{vtype} with {size:,} GiB and {volume.iops:,} IOPS is not a valid volume: "
            f"{vtype} allows at most {per_gib:,} IOPS per GiB, so {size:,} GiB allows up to "
            f"{most:,} IOPS ({spec}). Pass --volume-iops<={most} or a larger --volume-size."
        )
    return volume


def _check_iops(volume: Volume, kind: VolumeType, size: int,
                provenance: dict[str, str]) -> Volume:
    if kind.iops_from_size is not None:
        return _check_derived_iops(volume, kind, size, kind.iops_from_size)
    if kind.iops is not None:
        return _check_provisioned_iops(volume, kind, kind.iops, size, provenance)
    if volume.iops is not None:
        raise VolumeSpecError(
            f"{volume.type} volumes have no provisioned IOPS (their limits follow from "
            f"{'size' if kind.family == volume_types.HDD else 'the type'}, {kind.claim}). "
            "Drop --volume-iops."
        )
    return volume


def _check_throughput(volume: Volume, kind: VolumeType, provenance: dict[str, str]) -> Volume:
    rule, vtype = kind.throughput_mibps, volume.type
    if rule is None:
        if volume.throughput_mibps is not None:
            takes = [k for k in volume_types.names()
                     if volume_types.volume_type(k).throughput_mibps is not None]
            raise VolumeSpecError(
                f"--volume-throughput applies only to {' and '.join(takes)} volumes; {vtype} "
                f"throughput follows from its {'IOPS' if kind.iops is not None else 'size'} "
                f"({kind.claim}). Drop --volume-throughput."
            )
        return volume
    if volume.throughput_mibps is None:
        if rule.default is None:
            raise VolumeSpecError(f"{vtype} needs provisioned throughput: pass "
                                  f"--volume-throughput=MIBPS ({kind.claim}).")
        provenance["throughput_mibps"] = DEFAULT
        return volume.replace(throughput_mibps=rule.default)
    tput = volume.throughput_mibps
    iops = volume.iops or (kind.iops.default if kind.iops and kind.iops.default else 0)
    low, high = rule.low, rule.high
    if not low <= tput <= high:
        raise VolumeSpecError(
            f"{vtype} with {tput:,g} MiB/s is not a valid volume: {vtype} allows {low:,g} to "
            f"{high:,g} MiB/s ({kind.claim}). Pass --volume-throughput between {low:g} and "
            f"{high:g}."
        )
    most = rule.most(iops)
    if tput > most:
        raise VolumeSpecError(
            f"{vtype} with {iops:,g} IOPS and {tput:,g} MiB/s is not a valid volume: {vtype} "
            f"allows at most {rule.per:g} MiB/s per provisioned IOPS, so {iops:,g} IOPS allows "
            f"up to {most:,g} MiB/s ({kind.claim}). Pass --volume-throughput<={most:g} or more "
            "--volume-iops."
        )
    return volume


def _check_burst_balance(volume: Volume, kind: VolumeType) -> None:
    pct = volume.burst_balance_pct
    if pct is None:
        return
    if not 0 <= pct <= 100:
        raise VolumeSpecError(f"--burst-balance must be a percentage from 0 to 100, got {pct:g}.")
    if not kind.bursts:
        bursting = [k for k in volume_types.names() if volume_types.volume_type(k).bursts]
        raise VolumeSpecError(
            f"--burst-balance applies to {', '.join(bursting[:-1])} and {bursting[-1]}; "
            f"{volume.type} volumes do not burst ({kind.claim}). Drop --burst-balance."
        )


def _check_instance(volume: Volume, kind: VolumeType, provenance: dict[str, str]) -> Volume:
    itype = volume.instance_type
    if itype is None:
        if not kind.ebs:
            raise VolumeSpecError(
                "instance-store needs an instance type to know its published IOPS: pass "
                "--instance-type=NAME (for example i4i.xlarge). On EC2 it is discovered."
            )
        return volume
    if volume.provenance.get("instance_type") == DISCOVERED and not instances.is_known(itype):
        return volume  # its limits come from DescribeInstanceTypes, not from the table
    instances.check_instance_type(itype)
    is_nitro = instances.nitro(itype)
    if "nitro" not in volume.provenance and is_nitro is not None and is_nitro != volume.nitro:
        provenance["nitro"] = DEFAULT
        return volume.replace(nitro=is_nitro)
    return volume


def _check_instance_store(volume: Volume) -> None:
    for value, option in ((volume.iops, "--volume-iops"),
                          (volume.throughput_mibps, "--volume-throughput")):  # fmt: skip
        if value is not None:
            raise VolumeSpecError(
                f"Instance store has no provisioned performance; its IOPS are published per "
                f"instance type (B-IS). Drop {option}."
            )
    if volume.size_gib is not None and volume.size_gib < 1:
        raise VolumeSpecError(f"--volume-size must be at least 1 GiB, got {volume.size_gib}.")


def _check_era(volume: Volume, era: str) -> None:
    """The limits of ``era`` (``--ebsperf-era``): a type that did not exist yet, a size or
    provisioned IOPS AWS did not sell then."""
    if era == ebs.NOW:
        return
    kind = volume_types.volume_type(volume.type)
    vtype, where = volume.type, f"--ebsperf-era={era}"
    if kind.launched > int(era):
        raise VolumeSpecError(
            f"{vtype} volumes did not exist in {era} (introduced in {kind.launched}); "
            f"{where} checks volumes as the seed documents of that year knew them. Drop "
            f"{where} for today's specs, or test a volume type of that time.")
    rule = kind.era_rule(volume, era) if kind.era_rule is not None else None
    if rule is not None:
        raise VolumeSpecError(f"{volume.label()} is not a valid {era} volume: {rule}. "
                              f"Drop {where} for today's specs, or pass a volume of that time.")


def _check_off_nitro(volume: Volume, kind: VolumeType) -> None:
    if kind.off_nitro is None or volume.nitro:
        return
    provisioned, delivered = kind.off_nitro
    if (volume.iops or 0) > provisioned:
        raise VolumeSpecError(
            f"{volume.type} with {volume.iops:,} IOPS is not a valid volume on "
            f"{volume.instance_type or 'an instance'}: it is not built on the Nitro System, "
            f"where AWS lets you provision at most {provisioned:,} IOPS and delivers at most "
            f"{delivered:,} ({kind.claim}). Pass --volume-iops<={provisioned} or a Nitro "
            "instance type.")


def validate(volume: Volume, era: str = ebs.NOW) -> Volume:
    """Return ``volume`` normalised, or raise :class:`VolumeSpecError` with a sentence.

    Normalising: the type is lower-cased; gp3 gets its included 3,000 IOPS / 125 MiB/s when
    not given (provenance ``default``); gp2's IOPS (which may only restate the baseline) are
    dropped; ``nitro`` follows the instance type unless given explicitly. ``era`` adds the
    limits of that year (see :data:`~pytest_ebsperf.awsmodel.ebs.ERAS`).
    """
    ebs.check_era(era)
    volume = _check_type(volume)
    kind = volume_types.volume_type(volume.type)
    provenance = dict(volume.provenance)
    if kind.size_gib is None:
        _check_instance_store(volume)
    else:
        size = _check_size(volume, kind, *kind.size_gib)
        volume = _check_iops(volume, kind, size, provenance)
        volume = _check_throughput(volume, kind, provenance)
    _check_burst_balance(volume, kind)
    volume = _check_instance(volume, kind, provenance)
    _check_off_nitro(volume, kind)
    _check_era(volume, era)
    return volume.replace(provenance=provenance) if provenance != volume.provenance else volume
