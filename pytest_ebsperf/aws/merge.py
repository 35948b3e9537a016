"""Merge what the user gave with what discovery found: given values always win.

A field counts as given when ``given.provenance`` marks it GIVEN. If a ``Volume`` arrives
without provenance (built by hand), every field with a value counts as given. Conflicts are
kept, not silently dropped: each one becomes a note such as "--volume-type=gp3 was given but
AWS says vol-0abc is gp2; using gp3 as given".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_ebsperf.awsmodel.volume import DEFAULT, DISCOVERED, GIVEN, Volume

#: Volume fields discovery can fill, and the option that sets each (DESIGN.md option names).
FIELDS: Mapping[str, str] = {
    "type": "--volume-type",
    "size_gib": "--volume-size",
    "iops": "--volume-iops",
    "throughput_mibps": "--volume-throughput",
    "instance_type": "--instance-type",
    "encrypted": "encrypted",
    "burst_balance_pct": "--burst-balance",
    "nitro": "nitro",
    "volume_id": "volume id",
}


def given_fields(given: Volume | None) -> frozenset[str]:
    """Names of the fields the user set explicitly."""
    if given is None:
        return frozenset()
    if given.provenance:
        return frozenset(name for name in FIELDS if given.provenance.get(name) == GIVEN)
    return frozenset(
        name for name in FIELDS if name != "nitro" and getattr(given, name) not in (None, "")
    )


def merge(
    given: Volume | None,
    found: Mapping[str, Any],
    *,
    defaulted: frozenset[str] = frozenset(),
    subject: str = "the volume",
) -> tuple[Volume, tuple[str, ...]]:
    """The merged :class:`Volume` and a note per conflict between given and found values.

    ``found`` maps field names to discovered values (None = not found); names in
    ``defaulted`` were assumed (e.g. gp3's 125 MiB/s) and are marked DEFAULT, not DISCOVERED.
    """
    explicit = given_fields(given)
    values: dict[str, Any] = {}
    provenance: dict[str, str] = {}
    notes: list[str] = []
    for name, option in FIELDS.items():
        mine = getattr(given, name) if given is not None else None
        theirs = found.get(name)
        if name in explicit:
            values[name], provenance[name] = mine, GIVEN
            if theirs is not None and theirs != mine and name not in defaulted:
                notes.append(_conflict(option, mine, theirs, subject))
        elif theirs is not None:
            values[name] = theirs
            provenance[name] = DEFAULT if name in defaulted else DISCOVERED
        elif given is not None and name in given.provenance:
            values[name], provenance[name] = mine, given.provenance[name]
    if "type" not in values:
        values["type"] = given.type if given is not None else ""
    return Volume(**values, provenance=provenance), tuple(notes)


def _conflict(option: str, mine: Any, theirs: Any, subject: str) -> str:
    if option.startswith("--"):
        return (
            f"{option}={_show(mine)} was given but AWS says {subject} has {_show(theirs)}; "
            f"using {_show(mine)} as given."
        )
    return f"{option} {_show(mine)} was given but AWS says {_show(theirs)}; using {_show(mine)}."


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return f"{value:g}"
    return str(value)
