"""Create, attach, hand out and always remove the volumes of a provisioned matrix run.

    with Provisioner(parse_provision_spec("gp3:100,io1:200:4000"), duration_s=1800,
                     max_cost_usd=1.0) as run:
        for volume, device in run:           # one at a time, each deleted after its turn
            ...

Before anything is created the run's cost is estimated (:mod:`.pricing`) and refused above
``max_cost_usd``. Volumes are created empty (full performance at once, B-INIT) in this
instance's Availability Zone, tagged (:mod:`.lifecycle`), attached on a free ``/dev/sd[f-p]``
name (the names AWS recommends for EBS volumes on Linux, device-naming docs) and located
locally by NVMe serial on Nitro or by the Xen name. Clean-up runs on every path: normal exit,
exceptions and KeyboardInterrupt through ``__exit__``, interpreter exit through ``atexit``, and
it also removes volumes of this run that were created but never reported back (an interrupt
during CreateVolume), found by the run-id tag.
"""

from __future__ import annotations

import atexit
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType
from typing import Any

from pytest_ebsperf.aws import devices, lifecycle
from pytest_ebsperf.aws.clients import AwsClients
from pytest_ebsperf.aws.failures import (
    CleanupError,
    CostLimitError,
    ProvisioningError,
    aws_call,
)
from pytest_ebsperf.aws.imds import ImdsClient, InstanceIdentity
from pytest_ebsperf.aws.pricelist import PriceListClient
from pytest_ebsperf.aws.pricing import CostEstimate, PriceTable, estimate_cost
from pytest_ebsperf.aws.volumes import VolumeRecord
from pytest_ebsperf.awsmodel.volume import DEFAULT, DISCOVERED, Volume

log = logging.getLogger(__name__)
DEVICE_LETTERS = "fghijklmnop"


class Provisioner:
    """Context manager owning every volume it creates; see the module docstring.

    ``duration_s`` is how long each volume is held. The estimate assumes all specs are held
    at once, an upper bound when they are provisioned one after another by iterating.
    """

    def __init__(
        self,
        specs: Sequence[Volume],
        *,
        duration_s: float,
        max_cost_usd: float | None = None,
        clients: AwsClients | None = None,
        identity: InstanceIdentity | None = None,
        prices: PriceTable | PriceListClient | None = None,
        run_id: str | None = None,
        sysfs_root: str = "/sys",
        dev_root: str = "/dev",
        waiting: lifecycle.Waiting | None = None,
        device_timeout_s: float = 120.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not specs:
            raise ProvisioningError("Nothing to provision: the list of volume specs is empty.")
        self.specs = tuple(specs)
        self.duration_s = duration_s
        self.max_cost_usd = max_cost_usd
        self.run_id = run_id or lifecycle.new_run_id()
        self._clients = clients
        self._identity = identity
        self._prices = prices
        self._sysfs_root, self._dev_root = sysfs_root, dev_root
        self._waiting = waiting or lifecycle.Waiting()
        self._device_timeout_s = device_timeout_s
        self._sleep = sleep
        self._estimate: CostEstimate | None = None
        self._creates = 0
        self.created: list[str] = []
        self.notes: list[str] = []

    @property
    def identity(self) -> InstanceIdentity:
        if self._identity is None:
            self._identity = ImdsClient().identity()
        return self._identity

    @property
    def clients(self) -> AwsClients:
        if self._clients is None:
            identity = self.identity
            self._clients = AwsClients(region_fallback=lambda: identity.region)
        return self._clients

    def estimate(self) -> CostEstimate:
        """The cost of holding every spec for ``duration_s`` (computed once)."""
        if self._estimate is None:
            prices = self._prices or PriceListClient(self.clients)
            if isinstance(prices, PriceListClient):
                prices = prices.table(self.clients.region, {spec.type for spec in self.specs})
            self._estimate = estimate_cost(self.specs, self.duration_s, prices)
        return self._estimate

    def __enter__(self) -> Provisioner:  # noqa: PYI034 - not meant to be subclassed
        self.clients.require_credentials()
        estimate = self.estimate()
        if self.max_cost_usd is not None and estimate.total_usd > self.max_cost_usd:
            raise CostLimitError(
                f"Refusing to create volumes: {estimate.sentence()}, above the limit of "
                f"${self.max_cost_usd:g}. Raise the cost limit, shorten the run or provision "
                "smaller volumes."
            )
        atexit.register(self._cleanup_at_exit)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self.cleanup()
        except CleanupError as error:
            if exc_type is None:
                raise
            # Do not hide the error that ended the run; say what was left behind instead.
            self.notes.append(str(error))
            log.error("%s", error)

    def __iter__(self) -> Iterator[tuple[Volume, str]]:
        """Provision each spec in turn; each volume is removed before the next is created."""
        for spec in self.specs:
            volume, device = self.provision(spec)
            try:
                yield volume, device
            finally:
                if volume.volume_id in self.created:  # not already removed by cleanup()
                    self.release(str(volume.volume_id))

    def provision(self, spec: Volume) -> tuple[Volume, str]:
        """Create, attach and locate one volume; returns ``(Volume, local device path)``."""
        ec2 = self.clients.ec2()
        name = self._free_device_name()
        volume_id = self._create(ec2, spec)
        lifecycle.wait_for(ec2, "volume_available", volume_id, self._waiting, "creating it")
        with aws_call("ec2:AttachVolume", what=f"attaching {volume_id} as {name}"):
            ec2.attach_volume(VolumeId=volume_id, InstanceId=self.identity.instance_id, Device=name)
        lifecycle.wait_for(
            ec2, "volume_in_use", volume_id, self._waiting, f"attaching it as {name}"
        )
        device = self._wait_for_device(volume_id, name)
        data = lifecycle.describe(ec2, volume_id) or {}
        return self._volume(VolumeRecord.from_api(data), device), device

    def release(self, volume_id: str) -> None:
        """Detach (if attached here) and delete one volume this run created."""
        ec2 = self.clients.ec2()
        data = lifecycle.describe(ec2, volume_id)
        if data is not None:
            lifecycle.detach_and_delete(
                ec2, data, instance_id=self.identity.instance_id, waiting=self._waiting
            )
        if volume_id in self.created:
            self.created.remove(volume_id)

    def cleanup(self) -> None:
        """Remove every volume of this run; raise :class:`CleanupError` naming leftovers."""
        if self._clients is None and not self.created:
            return  # nothing was ever sent to AWS
        ids = list(dict.fromkeys(self.created))
        try:
            tagged = lifecycle.tagged_volumes(self.clients.ec2(), self.run_id)
            ids += [str(v["VolumeId"]) for v in tagged if v["VolumeId"] not in ids]
        except Exception as exc:  # noqa: BLE001 - keep going with the ids we know; say why
            self.notes.append(f"Could not list volumes tagged with run {self.run_id}: {exc}")
        failed: dict[str, str] = {}
        for volume_id in ids:
            try:
                self.release(volume_id)
            except Exception as exc:  # noqa: BLE001 - one stuck volume must not keep the others alive
                failed[volume_id] = str(exc)
        if failed:
            raise CleanupError(_leftover_sentence(self.run_id, failed), volume_ids=tuple(failed))
        atexit.unregister(self._cleanup_at_exit)

    def _cleanup_at_exit(self) -> None:
        try:
            self.cleanup()
        except Exception as exc:  # noqa: BLE001 - the interpreter is exiting: log, never raise
            log.error("%s", exc)

    def _create(self, ec2: Any, spec: Volume) -> str:
        now = datetime.now(timezone.utc)
        tags = lifecycle.run_tags(
            self.run_id, self.identity.instance_id, lifecycle.expiry(now, self.duration_s)
        )
        kwargs: dict[str, Any] = {
            "AvailabilityZone": self.identity.availability_zone,
            "Size": spec.size_gib,
            "VolumeType": spec.type,
            "TagSpecifications": [{"ResourceType": "volume", "Tags": tags}],
            # Idempotent on retries: a second CreateVolume with the same token is a no-op.
            "ClientToken": f"{self.run_id}-{self._creates}",
        }
        self._creates += 1
        if spec.iops is not None:
            kwargs["Iops"] = spec.iops
        if spec.throughput_mibps is not None:
            kwargs["Throughput"] = int(spec.throughput_mibps)
        with aws_call("ec2:CreateVolume", what=f"creating {spec.label()}"):
            volume_id = str(ec2.create_volume(**kwargs)["VolumeId"])
        self.created.append(volume_id)
        return volume_id

    def _free_device_name(self) -> str:
        used = {self._letters(a["Device"]) for a in self._attachments_here()}
        for letters in DEVICE_LETTERS:
            local = [self._dev_root + f"/{p}d{letters}" for p in ("s", "xv")]
            if letters not in used and not any(Path(p).exists() for p in local):
                return f"/dev/sd{letters}"
        raise ProvisioningError(
            f"No free device name /dev/sd[f-p] on {self.identity.instance_id}: detach a volume "
            "or provision fewer at once."
        )

    def _attachments_here(self) -> list[dict[str, Any]]:
        filters = [{"Name": "attachment.instance-id", "Values": [self.identity.instance_id]}]
        with aws_call("ec2:DescribeVolumes", what="finding a free device name"):
            volumes = self.clients.ec2().describe_volumes(Filters=filters).get("Volumes", [])
        return [
            a
            for v in volumes
            for a in v.get("Attachments", [])
            if a.get("InstanceId") == self.identity.instance_id
        ]

    @staticmethod
    def _letters(device: str) -> str:
        short = device.rsplit("/", 1)[-1]
        return short[3:] if short.startswith("xvd") else short[2:]

    def _wait_for_device(self, volume_id: str, name: str) -> str:
        deadline = time.monotonic() + self._device_timeout_s
        while True:
            found = devices.find_attached_device(
                volume_id, name, sysfs_root=self._sysfs_root, dev_root=self._dev_root
            )
            if found:
                return found
            if time.monotonic() >= deadline:
                raise ProvisioningError(
                    f"Volume {volume_id} was attached as {name} but no local device appeared "
                    f"within {self._device_timeout_s:g} s (looked for NVMe serial "
                    f"{volume_id.replace('-', '')} under {self._sysfs_root}/block and for "
                    f"{' / '.join(devices.attachment_names(name))})."
                )
            self._sleep(1.0)

    def _volume(self, record: VolumeRecord, device: str) -> Volume:
        found, defaulted = record.volume_fields()
        found["instance_type"] = self.identity.instance_type
        found["nitro"] = Path(device).name.startswith("nvme")
        provenance = {
            key: DEFAULT if key in defaulted else DISCOVERED
            for key, value in found.items()
            if value is not None
        }
        return Volume(**found, provenance=provenance)


def _leftover_sentence(run_id: str, failed: dict[str, str]) -> str:
    details = "; ".join(f"{vid}: {why}" for vid, why in failed.items())
    return (
        f"Could not remove {len(failed)} volume(s) created by run {run_id} ({details}). They "
        f"still cost money: delete them in the EC2 console, or run sweep_leftovers('{run_id}') "
        "once they are detached."
    )
