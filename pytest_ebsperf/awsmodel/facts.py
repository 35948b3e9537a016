"""What the run learned about its volumes, typed: discovery, initialization, provisioning and
each volume measured. Plain dictionaries at run time (they go into the results file and the
"volume facts" summary as they are), checked by mypy through these definitions.
"""

from __future__ import annotations

from typing import Any, TypedDict


class DiscoveryFacts(TypedDict, total=False):
    """Asking AWS what ``--device`` is."""

    #: "discovered", "failed", "off (...)", "not needed: ...", "not run: ...".
    status: str
    missing: list[str]
    error: str
    aws: dict[str, Any]
    #: Why AWS could not describe --reference-device (its facts then come from options).
    reference_error: str


class InitializationFacts(TypedDict, total=False):
    """A volume restored from a snapshot that is not fully initialized (B-INIT)."""

    state: str
    skip_reason: str
    read_estimate_s: float
    read_s: float | None
    error: str
    #: The Provisioned Rate for Volume Initialization it was created with (MiB/s), and
    #: whether AWS said it was initialized when the run began.
    rate_mibps: float
    complete: bool


class ProvisionedVolume(TypedDict):
    spec: str
    volume_id: str | None
    device: str
    deleted: bool


class ProvisioningFacts(TypedDict, total=False):
    """``--ebsperf-provision``: what was created, what it cost, what was cleaned up."""

    specs: list[str]
    run_id: str
    max_cost_usd: float
    volumes: list[ProvisionedVolume]
    cost: str
    cost_usd: float
    sweep: str
    instance_limits: str
    cleanup: str
    notes: list[str]


class VolumeEntry(TypedDict, total=False):
    """One volume measured: its device, label, each fact with its source, notes."""

    device: str
    label: str
    facts: dict[str, dict[str, Any]]
    notes: list[str]
    emulated: bool
    noswap: bool
    spec: str


class RunFacts(TypedDict, total=False):
    discovery: DiscoveryFacts
    initialization: InitializationFacts
    provisioning: ProvisioningFacts
    volumes: list[VolumeEntry]
