"""Fixtures for the plugin-level AWS tests: a real block device that sysfs says is EBS.

The inner pytest runs in a subprocess (environment variables matter) against the moto server
and the fake IMDS of support.aws. Three pieces make that honest:

* ``ebs_device``: a loop device whose block node is placed, under the name ``nvme1n1``, in
  a fake ``/dev``, with a fake sysfs entry whose NVMe serial is a moto volume id. fio and the
  safety checks see the real loop device (same major:minor); discovery sees an EBS volume.
  The plugin reads the fake trees through its testing aid ``EBSPERF_SYSFS_ROOT`` /
  ``EBSPERF_DEV_ROOT``.
* ``FakeNvmeDriver``: stands in for the kernel during provisioned runs; a volume attached to
  the instance in moto appears as such a node, and disappears when it is detached.
* ``inner``: a conftest for the inner run that refuses connections to anything but
  127.0.0.1 (and logs them for the outer test to fail on), and dumps ``EbsperfSession.facts``
  as JSON when the run ends.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from support.aws import LOOPBACK, ec2_client

EBS_MODEL = "Amazon Elastic Block Store"

INNER_CONFTEST = f'''
import json
import os
import socket

_connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex


def _allowed(address):
    if isinstance(address, (str, bytes)) or address[0] == "{LOOPBACK}":
        return True
    with open(os.environ["EBSPERF_TEST_REFUSED"], "a") as log:
        log.write(repr(address) + "\\n")
    return False


def _guarded_connect(self, address):
    if not _allowed(address):
        raise OSError(f"the test guard refused a connection to {{address!r}}")
    return _connect(self, address)


def _guarded_connect_ex(self, address):
    return _connect_ex(self, address) if _allowed(address) else 111


socket.socket.connect = _guarded_connect
socket.socket.connect_ex = _guarded_connect_ex


def pytest_unconfigure(config):
    from pytest_ebsperf.plugin import STATE_KEY

    state = config.stash.get(STATE_KEY, None)
    if state is not None:
        with open(os.environ["EBSPERF_TEST_FACTS"], "w") as out:
            json.dump(state.session.facts, out)
'''


@dataclass
class Inner:
    """The inner pytest run: its directory, and what it left for the outer test."""

    pytester: pytest.Pytester
    refused_log: Path
    facts_file: Path

    def run(self, *args: str) -> pytest.RunResult:
        """Run pytest in a subprocess; fail if it tried to leave 127.0.0.1."""
        # the facts table is one of the tables the summary shows when asked
        result = self.pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rs",
                                                    "--ebsperf-tables=facts", *args)
        refused = self.refused_log.read_text() if self.refused_log.exists() else ""
        assert not refused, f"the inner run tried to connect outside loopback: {refused}"
        return result

    def facts(self) -> dict[str, Any]:
        """``EbsperfSession.facts`` of the last run, as JSON read back."""
        data: dict[str, Any] = json.loads(self.facts_file.read_text())
        return data

    def only_volume(self) -> dict[str, Any]:
        entries: list[dict[str, Any]] = self.facts()["volumes"]
        assert len(entries) == 1, entries
        return entries[0]


@pytest.fixture
def inner(pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Inner:
    """An inner pytest directory with the loopback guard and the facts dump."""
    refused, facts = tmp_path / "refused.log", tmp_path / "facts.json"
    monkeypatch.setenv("EBSPERF_TEST_REFUSED", str(refused))
    monkeypatch.setenv("EBSPERF_TEST_FACTS", str(facts))
    pytester.makeconftest(INNER_CONFTEST)
    return Inner(pytester, refused, facts)


def block_node(path: Path, device: str) -> None:
    """Create ``path`` as a block special file for the same device as ``device``."""
    os.mknod(path, stat.S_IFBLK | 0o600, os.stat(device).st_rdev)


class FakeTree:
    """A fake ``/sys`` and ``/dev`` whose device nodes are real loop devices."""

    def __init__(self, root: Path, loop: str) -> None:
        self.sys, self.dev, self.loop = root / "sys", root / "dev", loop
        (self.sys / "block").mkdir(parents=True)
        self.dev.mkdir(parents=True)

    def nvme(self, volume_id: str, name: str = "nvme1n1", model: str = EBS_MODEL,
             loop: str | None = None) -> str:
        """``nvme1n1`` with the volume's serial (over ``loop``, default the tree's loop
        device); returns the path to pass as --device."""
        controller = self.sys / "block" / name / "device"
        controller.mkdir(parents=True)
        (controller / "serial").write_text(volume_id.replace("-", "").ljust(20) + "\n")
        (controller / "model").write_text(model.ljust(40) + "\n")
        block_node(self.dev / name, loop or self.loop)
        return str(self.dev / name)

    def xen(self, name: str = "xvdf") -> str:
        """A Xen-style disk (no serial): found only through the attachment device name."""
        (self.sys / "block" / name).mkdir(parents=True)
        block_node(self.dev / name, self.loop)
        return str(self.dev / name)

    def remove(self, name: str) -> None:
        shutil.rmtree(self.sys / "block" / name)
        (self.dev / name).unlink()


@pytest.fixture
def fake_tree(
    loop_device: Callable[..., str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> FakeTree:
    """A fake sysfs and /dev over one scratch loop device, announced to the plugin."""
    tree = FakeTree(tmp_path / "root", loop_device(64))
    monkeypatch.setenv("EBSPERF_SYSFS_ROOT", str(tree.sys))
    monkeypatch.setenv("EBSPERF_DEV_ROOT", str(tree.dev))
    return tree


class FakeNvmeDriver:
    """Stands in for the kernel: volumes attached to ``instance_id`` in moto appear as NVMe
    devices in ``tree`` (nvme0n1, nvme1n1, ...) and disappear when they are detached.
    ``seen`` lists the volumes attached after it started."""

    def __init__(self, tree: FakeTree, instance_id: str) -> None:
        self.tree, self.instance_id = tree, instance_id
        self.ec2 = ec2_client()
        self.seen: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> FakeNvmeDriver:  # noqa: PYI034 - not meant to be subclassed
        self.poll()  # the root volume, attached at launch, becomes nvme0n1 as on Nitro
        self.seen.clear()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stop.wait(0.1):
            self.poll()

    def poll(self) -> None:
        filters = [{"Name": "attachment.instance-id", "Values": [self.instance_id]}]
        volumes = self.ec2.describe_volumes(Filters=filters)["Volumes"]
        attached = {str(v["VolumeId"]).replace("-", "") for v in volumes}
        present = {}
        for entry in sorted((self.tree.sys / "block").glob("nvme*")):
            serial = (entry / "device" / "serial").read_text().strip()
            if serial in attached:
                present[serial] = entry.name
            else:
                self.tree.remove(entry.name)
        for serial in sorted(attached - set(present)):
            number = next(n for n in range(99) if f"nvme{n}n1" not in present.values())
            present[serial] = f"nvme{number}n1"
            self.tree.nvme(f"vol-{serial[3:]}", present[serial])
            self.seen.append(f"vol-{serial[3:]}")


@pytest.fixture
def nvme_driver(fake_tree: FakeTree, instance: str) -> Iterator[FakeNvmeDriver]:
    """The fake NVMe driver, running for the whole test."""
    with FakeNvmeDriver(fake_tree, instance) as driver:
        yield driver


def attach_volume(instance_id: str, device: str = "/dev/sdf", **create: Any) -> str:
    """Create a moto volume in the instance's AZ and attach it; returns its id."""
    ec2 = ec2_client()
    volume_id = str(ec2.create_volume(AvailabilityZone="us-east-1a", **create)["VolumeId"])
    ec2.attach_volume(VolumeId=volume_id, InstanceId=instance_id, Device=device)
    return volume_id
