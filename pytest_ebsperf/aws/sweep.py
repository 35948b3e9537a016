"""Remove volumes left behind by earlier runs that crashed (power loss, SIGKILL, lost host).

Only volumes whose ``ebsperf:run-id`` tag starts with the given prefix are considered, so
untagged volumes and volumes of other tools are never touched. A leftover attached to this
instance is detached first; one attached to another instance is reported and left alone
(that instance may be running its own test right now).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from pytest_ebsperf.aws import lifecycle
from pytest_ebsperf.aws.clients import AwsClients
from pytest_ebsperf.errors import ConfigError


@dataclass(frozen=True)
class SweepReport:
    """What a sweep did: ``deleted`` ids, and ``skipped``/``failed`` ids with a reason each."""

    deleted: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    failed: tuple[tuple[str, str], ...] = ()

    def sentence(self) -> str:
        """One line for the terminal summary."""
        parts = [f"deleted {len(self.deleted)} leftover volume(s)"]
        parts += [f"left {vid} alone ({why})" for vid, why in self.skipped]
        parts += [f"could not delete {vid} ({why})" for vid, why in self.failed]
        return "; ".join(parts) + "."


def sweep_leftovers(
    run_tag_prefix: str = lifecycle.RUN_ID_PREFIX,
    older_than: timedelta = timedelta(hours=1),
    *,
    clients: AwsClients | None = None,
    instance_id: str | None = None,
    now: datetime | None = None,
    waiting: lifecycle.Waiting | None = None,
    dry_run: bool = False,
) -> SweepReport:
    """Delete volumes tagged by earlier runs whose id starts with ``run_tag_prefix``.

    ``older_than`` protects runs still in progress: only volumes created before
    ``now - older_than`` are removed. ``instance_id`` is this instance (volumes attached to
    it are detached first); None means "detach nothing". ``dry_run`` only reports.
    """
    if not run_tag_prefix.strip() or "*" in run_tag_prefix or "?" in run_tag_prefix:
        raise ConfigError(
            f"{run_tag_prefix!r} is not a usable run-id prefix for a sweep: give a plain prefix "
            f"such as {lifecycle.RUN_ID_PREFIX!r} or a full run id."
        )
    clients = clients or AwsClients()
    ec2 = clients.ec2()
    cutoff = (now or datetime.now(timezone.utc)) - older_than
    waiting = waiting or lifecycle.Waiting()
    deleted: list[str] = []
    skipped: list[tuple[str, str]] = []
    failed: list[tuple[str, str]] = []
    for volume in lifecycle.tagged_volumes(ec2, run_tag_prefix + "*"):
        volume_id = str(volume["VolumeId"])
        reason = _reason_to_keep(volume, run_tag_prefix, cutoff, instance_id)
        if reason:
            skipped.append((volume_id, reason))
            continue
        if dry_run:
            skipped.append((volume_id, "dry run"))
            continue
        try:
            lifecycle.detach_and_delete(ec2, volume, instance_id=instance_id, waiting=waiting)
        except Exception as exc:  # noqa: BLE001 - report and go on with the next leftover
            failed.append((volume_id, str(exc)))
        else:
            deleted.append(volume_id)
    return SweepReport(tuple(deleted), tuple(skipped), tuple(failed))


def _reason_to_keep(
    volume: dict[str, Any], prefix: str, cutoff: datetime, instance_id: str | None
) -> str | None:
    run_id = lifecycle.tag_value(volume, lifecycle.TAG_RUN_ID) or ""
    if not run_id.startswith(prefix):  # EC2 wildcards are looser than a prefix; re-check
        return f"run id {run_id!r} does not start with {prefix!r}"
    created = volume.get("CreateTime")
    if isinstance(created, datetime) and _utc(created) > cutoff:
        return f"created {_utc(created).isoformat(timespec='seconds')}, too recent"
    others = {
        str(a.get("InstanceId"))
        for a in volume.get("Attachments", [])
        if a.get("State") != "detached" and a.get("InstanceId") != instance_id
    }
    if others:
        return f"attached to {', '.join(sorted(others))}"
    return None


def _utc(stamp: datetime) -> datetime:
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)
