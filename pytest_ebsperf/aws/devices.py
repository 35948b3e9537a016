"""From a local block device to the EBS volume behind it, without root and without AWS calls.

On Nitro instances EBS volumes are NVMe devices whose serial number is the volume id without
the dash, and whose model is "Amazon Elastic Block Store"; instance store reports "Amazon EC2
NVMe Instance Storage" (claims.md B-NVME; https://docs.aws.amazon.com/ebs/latest/userguide/
identify-nvme-ebs-device.html). The ``nvmeXn1`` numbers follow enumeration order and may change
between boots, so names like ``/dev/sdf`` are udev symlinks that we resolve. On Xen instances
there is no serial: the kernel renames the requested ``sdf`` to ``xvdf`` and the volume is
found through the attachment's device name (ecosystem-notes §3.1), which :class:`DeviceInfo`
offers in both spellings.

``sysfs_root`` and ``dev_root`` let tests build a fake ``/sys`` and ``/dev`` in a directory.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from pytest_ebsperf.awsmodel import volume_types
from pytest_ebsperf.errors import DeviceError

EBS_MODEL = "Amazon Elastic Block Store"
INSTANCE_STORE_MODEL = "Amazon EC2 NVMe Instance Storage"

#: What kind of device a path is.
EBS_NVME = "ebs-nvme"  # Nitro EBS volume: volume id known from the serial
INSTANCE_STORE = volume_types.INSTANCE_STORE  # Nitro instance store (NVMe model string)
XEN = "xen-or-scsi"  # xvdX / sdX: EBS or instance store, the API has to tell
LOOP = "loop"
OTHER_NVME = "nvme"  # an NVMe drive that is not an AWS one
OTHER = "other"  # md, dm, virtio, ...

_BY_ID_RE = re.compile(r"nvme-Amazon_Elastic_Block_Store_(vol[0-9a-f]+)")
_PARTITION_RES = (re.compile(r"^(nvme\d+n\d+)p\d+$"), re.compile(r"^((?:xv|s|v)d[a-z]+)\d+$"))
_ATTACH_NAME_RE = re.compile(r"^(?:xv|s)d[a-z]{1,2}$")


@dataclass(frozen=True)
class DeviceInfo:
    """What the local system says about a device path.

    ``attachment_names`` are the device names AttachVolume may have been given for it
    (``("/dev/sdf", "/dev/xvdf")``), for the ``attachment.device`` filter of DescribeVolumes.
    """

    path: str
    resolved: str
    kernel_name: str
    kind: str
    volume_id: str | None = None
    model: str | None = None
    attachment_names: tuple[str, ...] = ()

    @property
    def is_instance_store(self) -> bool:
        return self.kind == INSTANCE_STORE

    def describe(self) -> str:
        """``/dev/sdf (nvme1n1, Amazon Elastic Block Store)`` for messages."""
        renamed = self.kernel_name if Path(self.path).name != self.kernel_name else None
        extra = [bit for bit in (renamed, self.model) if bit]
        return f"{self.path} ({', '.join(extra)})" if extra else self.path


def serial_to_volume_id(serial: str) -> str | None:
    """``vol0123abc`` (space padded) -> ``vol-0123abc``; None if it is not a volume serial."""
    serial = serial.strip()
    if not re.fullmatch(r"vol-?[0-9a-f]{8,17}", serial):
        return None
    return serial if serial.startswith("vol-") else "vol-" + serial[3:]


def attachment_names(name: str) -> tuple[str, ...]:
    """Both spellings AttachVolume may have used for a short name: ``xvdf`` -> sdf, xvdf."""
    short = name.rsplit("/", 1)[-1]
    if not _ATTACH_NAME_RE.match(short):
        return ()
    letters = short[3:] if short.startswith("xvd") else short[2:]
    return (f"/dev/sd{letters}", f"/dev/xvd{letters}")


def local_path(device: str, dev_root: str = "/dev") -> Path:
    """``/dev/sdf`` under a different ``dev_root`` (tests); other paths are left alone."""
    if dev_root.rstrip("/") != "/dev" and device.startswith("/dev/"):
        return Path(dev_root) / device[len("/dev/") :]
    return Path(device)


def identify_device(device: str, *, sysfs_root: str = "/sys", dev_root: str = "/dev") -> DeviceInfo:
    """Classify ``device`` and read its EBS volume id where the system exposes it."""
    given = local_path(device, dev_root)
    if not given.exists():
        raise DeviceError(
            f"{device} does not exist. Pass the block device of the volume under test, e.g. "
            "--device=/dev/nvme1n1 or --device=/dev/xvdf (lsblk lists them)."
        )
    resolved = Path(os.path.realpath(given))
    kernel_name = _whole_disk(resolved.name)
    by_id = _BY_ID_RE.search(given.name)
    names = attachment_names(given.name) or attachment_names(kernel_name)
    if kernel_name.startswith("nvme"):
        return _nvme_info(device, str(resolved), kernel_name, sysfs_root, names, by_id)
    kind = LOOP if kernel_name.startswith("loop") else XEN if names else OTHER
    return DeviceInfo(device, str(resolved), kernel_name, kind, attachment_names=names)


def _nvme_info(
    device: str,
    resolved: str,
    kernel_name: str,
    sysfs_root: str,
    names: tuple[str, ...],
    by_id: re.Match[str] | None,
) -> DeviceInfo:
    controller = Path(sysfs_root) / "block" / kernel_name / "device"
    model = _read(controller / "model")
    serial = _read(controller / "serial")
    if model == INSTANCE_STORE_MODEL:
        return DeviceInfo(device, resolved, kernel_name, INSTANCE_STORE, None, model, names)
    volume_id = serial_to_volume_id(serial or "") or (
        serial_to_volume_id(by_id.group(1)) if by_id else None
    )
    if model == EBS_MODEL or (model is None and volume_id):
        return DeviceInfo(device, resolved, kernel_name, EBS_NVME, volume_id, model, names)
    return DeviceInfo(device, resolved, kernel_name, OTHER_NVME, None, model, names)


def find_nvme_device(
    volume_id: str, *, sysfs_root: str = "/sys", dev_root: str = "/dev"
) -> str | None:
    """The ``/dev/nvmeXn1`` whose serial is ``volume_id`` (B-NVME), or None if not (yet) there."""
    block = Path(sysfs_root) / "block"
    for entry in sorted(block.glob("nvme*n*")):
        if serial_to_volume_id(_read(entry / "device" / "serial") or "") == volume_id:
            return str(Path(dev_root) / entry.name)
    return None


def find_attached_device(
    volume_id: str, device_name: str, *, sysfs_root: str = "/sys", dev_root: str = "/dev"
) -> str | None:
    """Where an attached volume appeared: NVMe serial first (Nitro), else the Xen name."""
    nvme = find_nvme_device(volume_id, sysfs_root=sysfs_root, dev_root=dev_root)
    if nvme:
        return nvme
    for candidate in reversed(attachment_names(device_name)):  # xvdf before sdf
        short = candidate.rsplit("/", 1)[-1]
        if (Path(sysfs_root) / "block" / short).exists():
            return str(Path(dev_root) / short)
    return None


def _whole_disk(name: str) -> str:
    """The disk a partition belongs to (``nvme1n1p1`` -> ``nvme1n1``): volumes are disks."""
    for pattern in _PARTITION_RES:
        match = pattern.match(name)
        if match:
            return match.group(1)
    return name


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None
