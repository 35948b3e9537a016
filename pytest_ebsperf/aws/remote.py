"""Discovery for a device on another host: what only that host can tell (its device's NVMe
serial and model in its sysfs, its instance metadata) is read there, by a short script its
``python3`` runs (sent through the testinfra host object, like the safety inspection); the
AWS API calls (DescribeVolumes, DescribeInstanceTypes, CloudWatch) are then made from here
with this run's credentials, exactly as for a local device.

The script needs only Python's standard library there. It reads the device first; a device
EC2 does not attach (a loop device, another NVMe drive) is refused then, as a local one is,
and the host's instance metadata is not asked for anything. Instance metadata is asked for with
IMDSv2 (a token first), at ``http://169.254.169.254`` or the endpoint the host's own
``AWS_EC2_METADATA_SERVICE_ENDPOINT`` names. Testing aids: ``EBSPERF_SYSFS_ROOT`` and
``EBSPERF_DEV_ROOT`` (the fake ``/sys`` and ``/dev`` of the plugin's own tests) are passed
along and read there; ``EBSPERF_REMOTE_IMDS_ENDPOINT`` points the script at a fake IMDS.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ebsperf.aws import devices
from pytest_ebsperf.aws.discover import refuse_non_aws
from pytest_ebsperf.aws.failures import NotOnEc2Error
from pytest_ebsperf.aws.imds import InstanceIdentity
from pytest_ebsperf.errors import DeviceError

if TYPE_CHECKING:
    from pytest_ebsperf.fio.host import FioHost

IMDS_ENV = "EBSPERF_REMOTE_IMDS_ENDPOINT"

_SCRIPT = r'''
import json, os, sys, urllib.request
device, sysfs, dev_root, endpoint, ask = sys.argv[1:6]
out = {}
path = device
if dev_root.rstrip("/") != "/dev" and device.startswith("/dev/"):
    path = os.path.join(dev_root, device[len("/dev/"):])
if not os.path.exists(path):
    print(json.dumps({"error": device + " does not exist. Pass the block device of the volume "
                      "under test, e.g. --device=/dev/nvme1n1 (lsblk lists them)."}))
    sys.exit(0)
real = os.path.realpath(path)
name = os.path.basename(real)
whole = name
for base in os.listdir(os.path.join(sysfs, "block")) if os.path.isdir(os.path.join(sysfs, "block")) else []:
    if name != base and name.startswith(base) and os.path.isdir(os.path.join(sysfs, "block", base, name)):
        whole = base
def read(p):
    try:
        with open(p) as f:
            return f.read().strip()
    except OSError:
        return None
controller = os.path.join(sysfs, "block", whole, "device")
out.update(resolved=real, kernel_name=whole, model=read(os.path.join(controller, "model")),
           serial=read(os.path.join(controller, "serial")))
if ask != "imds":
    print(json.dumps(out))
    sys.exit(0)
endpoint = endpoint or os.environ.get("AWS_EC2_METADATA_SERVICE_ENDPOINT") or "http://169.254.169.254/"
base = endpoint.rstrip("/") + "/latest/"
try:
    put = urllib.request.Request(base + "api/token", method="PUT",
                                 headers={"X-aws-ec2-metadata-token-ttl-seconds": "60"})
    token = urllib.request.urlopen(put, timeout=2).read().decode()
    def get(key):
        req = urllib.request.Request(base + "meta-data/" + key,
                                     headers={"X-aws-ec2-metadata-token": token})
        try:
            return urllib.request.urlopen(req, timeout=2).read().decode().strip()
        except Exception:
            return None
    mapping = {}
    for key in (get("block-device-mapping/") or "").split():
        value = get("block-device-mapping/" + key)
        if value:
            mapping[key] = value
    az = get("placement/availability-zone") or ""
    out["imds"] = {"instance_id": get("instance-id"), "instance_type": get("instance-type"),
                   "availability_zone": az, "region": get("placement/region") or az[:-1],
                   "block_device_mapping": mapping, "endpoint": endpoint}
except Exception as exc:
    out["imds_error"] = "%s: %s" % (type(exc).__name__, exc)
print(json.dumps(out))
'''


def identify_on(host: FioHost, device: str, *, sysfs_root: str = "/sys",
                dev_root: str = "/dev", env: Mapping[str, str] | None = None
                ) -> tuple[devices.DeviceInfo, InstanceIdentity]:
    """What ``device`` is on ``host`` and which instance that host is; raises DeviceError or
    NotOnEc2Error with a sentence naming the host."""
    env = os.environ if env is None else env
    data = _ask(host, device, sysfs_root, dev_root, env, imds=False)
    info = _device_info(device, data)
    # as for a local device: a device EC2 does not attach is refused before the host's
    # instance metadata is asked for anything

    refuse_non_aws(info)
    data = _ask(host, device, sysfs_root, dev_root, env, imds=True)
    if "imds" not in data or not data["imds"].get("instance_id"):
        why = data.get("imds_error", "no instance id")
        raise NotOnEc2Error(f"{host} is not an EC2 instance, or its instance metadata is off "
                            f"({why}): its volume facts cannot be discovered. Give them in the "
                            "hosts file (--ebsperf-hosts-file) or the volume options.")
    imds = data["imds"]
    identity = InstanceIdentity(
        instance_id=str(imds["instance_id"]), instance_type=str(imds["instance_type"]),
        availability_zone=str(imds["availability_zone"]), region=str(imds["region"]),
        block_device_mapping=dict(imds.get("block_device_mapping") or {}),
        endpoint=str(imds.get("endpoint", "")))
    return info, identity


def _ask(host: FioHost, device: str, sysfs_root: str, dev_root: str, env: Mapping[str, str],
         *, imds: bool) -> dict[str, Any]:
    """What the script prints on ``host``: the device, and with ``imds`` the instance."""
    done = host.run(["python3", "-c", _SCRIPT, device, sysfs_root, dev_root,
                     env.get(IMDS_ENV, ""), "imds" if imds else "device"], timeout_s=30)
    try:
        data = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        said = (done.stderr.strip() or done.stdout.strip())[-300:]
        raise DeviceError(f"On {host}: {device} could not be identified (python3 there said: "
                          f"{said or 'nothing'}; exit status {done.rc}).") from None
    if not isinstance(data, dict):
        raise DeviceError(f"On {host}: {device} could not be identified (python3 there "
                          f"printed {str(data)[:100]!r}).")
    if "error" in data:
        raise DeviceError(f"On {host}: {data['error']}")
    return data


def _device_info(device: str, data: Mapping[str, object]) -> devices.DeviceInfo:
    """Classify the device from what the host read, with the same code as for a local one
    (it reads a copy of those sysfs entries, made here)."""
    kernel = str(data.get("kernel_name") or os.path.basename(str(data.get("resolved", ""))))
    with tempfile.TemporaryDirectory(prefix="ebsperf-remote-sysfs.") as tmp:
        controller = Path(tmp, "sys", "block", kernel, "device")
        controller.mkdir(parents=True)
        for key in ("model", "serial"):
            value = data.get(key)
            if value is not None:
                (controller / key).write_text(f"{value}\n")
        node = Path(tmp, "dev", kernel)
        node.parent.mkdir()
        node.touch()
        found = devices.identify_device(f"/dev/{kernel}", sysfs_root=f"{tmp}/sys",
                                        dev_root=f"{tmp}/dev")
    names = devices.attachment_names(Path(device).name) or found.attachment_names
    return dataclasses.replace(found, path=device, resolved=str(data.get("resolved", device)),
                               attachment_names=names)
