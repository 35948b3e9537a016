"""``type:size[:iops[:throughput]]`` volume specs for provisioned matrix runs.

    parse_provision_spec("gp3:100,io1:200:4000,gp3:500:6000:500")

Ranges are the CreateVolume limits of today (claims.md B-GP2, B-GP3 incl. the 2025 increase,
B-IO1, B-IO2, B-HDD, B-STD), checked here so that a typo fails before anything is created
or paid for.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_ebsperf.aws.errors import ProvisionSpecError
from pytest_ebsperf.volume import GIVEN, Volume

EBS_TYPES = ("gp2", "gp3", "io1", "io2", "st1", "sc1", "standard")
SPEC_FORMAT = "type:size[:iops[:throughput]], e.g. gp3:100 or io1:200:4000 or gp3:500:6000:500"


@dataclass(frozen=True)
class Limits:
    """CreateVolume limits of one type: size range, IOPS range and per-GiB ratio, throughput."""

    size: tuple[int, int]
    iops: tuple[int, int] | None = None
    iops_per_gib: int | None = None
    throughput: tuple[int, int] | None = None
    mibps_per_iops: float | None = None


LIMITS = {
    "gp2": Limits((1, 16_384)),
    "gp3": Limits((1, 65_536), (3_000, 80_000), 500, (125, 2_000), 0.25),
    "io1": Limits((4, 16_384), (100, 64_000), 50),
    "io2": Limits((4, 65_536), (100, 256_000), 1_000),
    "st1": Limits((125, 16_384)),
    "sc1": Limits((125, 16_384)),
    "standard": Limits((1, 1_024)),
}


def parse_provision_spec(text: str, *, source: str | None = None) -> list[Volume]:
    """Parse comma-separated specs into :class:`Volume` objects (fields marked GIVEN).

    ``source`` names where the text came from (an option or ini key) for the messages.
    """
    specs = [part.strip() for part in text.split(",")]
    if not text.strip() or not all(specs):
        origin = f" (from {source})" if source else ""
        raise ProvisionSpecError(
            f"Volume specs {text!r}{origin} contain an empty spec. Expected {SPEC_FORMAT}, "
            "several separated by commas."
        )
    return [parse_one(spec, source=source) for spec in specs]


def parse_one(spec: str, *, source: str | None = None) -> Volume:
    """Parse one ``type:size[:iops[:throughput]]``."""
    where = f"Volume spec {spec!r}" + (f" (from {source})" if source else "")
    parts = spec.split(":")
    kind = parts[0].strip().lower()
    if kind not in LIMITS:
        raise ProvisionSpecError(
            f"{where}: {kind!r} is not a volume type that can be provisioned. "
            f"Valid types: {', '.join(EBS_TYPES)}."
        )
    if not 2 <= len(parts) <= 4:
        raise ProvisionSpecError(f"{where} has {len(parts)} fields. Expected {SPEC_FORMAT}.")
    names = ("size", "IOPS", "throughput")
    numbers = [_number(value, name, where) for value, name in zip(parts[1:], names)]
    size = numbers[0]
    iops = numbers[1] if len(numbers) > 1 else None
    throughput = numbers[2] if len(numbers) > 2 else None
    check(kind, size, iops, throughput, where=where)
    provenance = {"type": GIVEN, "size_gib": GIVEN}
    provenance.update({"iops": GIVEN} if iops is not None else {})
    provenance.update({"throughput_mibps": GIVEN} if throughput is not None else {})
    return Volume(
        type=kind,
        size_gib=size,
        iops=iops,
        throughput_mibps=float(throughput) if throughput is not None else None,
        provenance=provenance,
    )


def check(kind: str, size: int, iops: int | None, throughput: int | None, *, where: str) -> None:
    """Raise :class:`ProvisionSpecError` if AWS would refuse this combination."""
    limits = LIMITS[kind]
    _in_range(size, limits.size, f"{kind} size", "GiB", where)
    if iops is not None:
        if limits.iops is None:
            raise ProvisionSpecError(
                f"{where} gives IOPS, but {kind} IOPS are not provisioned (they follow from size "
                f"or throughput credits). Use {kind}:{size}."
            )
        _in_range(iops, limits.iops, f"{kind} IOPS", "IOPS", where)
        ratio_cap = max(limits.iops[0], (limits.iops_per_gib or 0) * size)
        if iops > ratio_cap:
            raise ProvisionSpecError(
                f"{where} asks for {iops:,} IOPS on {size:,} GiB; {kind} allows at most "
                f"{limits.iops_per_gib} IOPS per GiB ({ratio_cap:,} IOPS for this size)."
            )
    elif kind in ("io1", "io2"):
        raise ProvisionSpecError(f"{where} needs provisioned IOPS for {kind}: {kind}:{size}:IOPS.")
    if throughput is not None:
        if limits.throughput is None:
            raise ProvisionSpecError(
                f"{where} gives a throughput, but only gp3 throughput is provisioned."
            )
        _in_range(throughput, limits.throughput, "gp3 throughput", "MiB/s", where)
        effective_iops = (iops or limits.iops[0]) if limits.iops else 0
        cap = max(limits.throughput[0], (limits.mibps_per_iops or 0) * effective_iops)
        if throughput > cap:
            raise ProvisionSpecError(
                f"{where} asks for {throughput:,} MiB/s with {effective_iops:,} IOPS; gp3 allows "
                f"at most 0.25 MiB/s per IOPS ({cap:g} MiB/s)."
            )


def _number(value: str, name: str, where: str) -> int:
    try:
        number = int(value.strip().replace("_", ""))
    except ValueError:
        raise ProvisionSpecError(
            f"{where}: {value!r} is not a whole number for the {name}. Expected {SPEC_FORMAT}."
        ) from None
    return number


def _in_range(value: int, bounds: tuple[int, int], what: str, unit: str, where: str) -> None:
    low, high = bounds
    if not low <= value <= high:
        raise ProvisionSpecError(
            f"{where}: {what} {value:,} {unit} is outside what AWS accepts ({low:,}-{high:,} {unit})."
        )
