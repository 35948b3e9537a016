"""Is the volume still being initialized from its snapshot?

"Volumes created from snapshots ... must have blocks downloaded/written before full
performance"; empty volumes deliver full performance at once (claims.md B-INIT,
https://docs.aws.amazon.com/ebs/latest/userguide/initalize-volume.html). Measuring a volume
that is still lazily loading blocks from S3 measures the loading, not the volume type, so the
plugin skips with :meth:`InitializationState.skip_reason` unless the user opts in to reading
every block first (:func:`initialization_read_argv`).

Progress comes from ``DescribeVolumeStatus`` -> ``VolumeStatuses[].InitializationStatusDetails``
(``InitializationType`` default | provisioned-rate | volume-copy, ``Progress`` 0-100,
``EstimatedTimeToCompleteInSeconds`` for provisioned-rate only; may lag up to 5 minutes).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_ebsperf.aws.failures import aws_call
from pytest_ebsperf.awsmodel.ebs import MIB
from pytest_ebsperf.awsmodel.init_rate import (  # the valid range, said once
    INIT_RATE_MAX_MIBPS,
    INIT_RATE_MIN_MIBPS,
    valid_rate,
)
from pytest_ebsperf.errors import EbsperfError
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import Workload

__all__ = ["INIT_RATE_MAX_MIBPS", "INIT_RATE_MIN_MIBPS", "InitializationState"]


@dataclass(frozen=True)
class InitializationState:
    """How far a restored (or copied) volume is initialized.

    ``source`` is the snapshot (``snap-...``) or source volume (``vol-...``); None for an
    empty volume, which needs no initialization. ``progress_pct`` is None when AWS gave no
    ``InitializationStatusDetails`` (no initialization running, or an old API).
    """

    volume_id: str
    source: str | None
    progress_pct: int | None = None
    init_type: str | None = None
    eta_s: int | None = None
    fast_restored: bool = False
    #: The Provisioned Rate for Volume Initialization (MiB/s) it was created with, if any.
    rate_mibps: float | None = None

    @property
    def complete(self) -> bool:
        """True if reads run at the volume type's speed (empty, fast-restored or 100 %)."""
        if self.source is None or self.fast_restored:
            return True
        return self.progress_pct is None or self.progress_pct >= 100

    def skip_reason(self) -> str | None:
        """A sentence for ``pytest.skip`` while initialization runs; None when complete."""
        if self.complete:
            return None
        verb = "copied from" if (self.source or "").startswith("vol-") else "restored from"
        eta = f", about {_duration(self.eta_s)} to go" if self.eta_s else ""
        return (
            f"volume {self.volume_id} was {verb} {self.source} and is {self.progress_pct} % "
            f"initialized{eta}: numbers would reflect lazy loading, not the volume type. Wait "
            "for 100 % (aws ec2 describe-volume-status) or opt in to the initialization read "
            "that reads every block once."
        )

    def label(self) -> str:
        """Short report-column text: ``empty``, ``100 %``, ``37 % (default)``."""
        if self.source is None:
            return "empty"
        if self.fast_restored:
            return "fast snapshot restore"
        rate = f" at {self.rate_mibps:g} MiB/s" if self.rate_mibps else ""
        if self.progress_pct is None:
            return f"initialized{' (provisioned rate' + rate + ')' if rate else ''}"
        kind = f" ({self.init_type}{rate})" if self.init_type else ""
        return f"{self.progress_pct} %{kind}"


def parse_volume_status(
    response: Mapping[str, Any], volume_id: str, *, source: str | None, fast_restored: bool = False,
    rate_mibps: float | None = None,
) -> InitializationState:
    """Read ``InitializationStatusDetails`` for ``volume_id`` from a DescribeVolumeStatus reply."""
    for item in response.get("VolumeStatuses", []):
        if item.get("VolumeId") != volume_id:
            continue
        details = item.get("InitializationStatusDetails") or {}
        progress = details.get("Progress")
        eta = details.get("EstimatedTimeToCompleteInSeconds")
        return InitializationState(
            volume_id=volume_id,
            source=source,
            progress_pct=int(progress) if progress is not None else None,
            init_type=details.get("InitializationType"),
            eta_s=int(eta) if eta is not None else None,
            fast_restored=fast_restored,
            rate_mibps=rate_mibps,
        )
    return InitializationState(volume_id, source, fast_restored=fast_restored,
                               rate_mibps=rate_mibps)


def read_initialization(
    ec2: Any, volume_id: str, *, source: str | None, fast_restored: bool = False,
    rate_mibps: float | None = None,
) -> InitializationState:
    """Ask DescribeVolumeStatus, but only for volumes that have something to initialize.
    ``rate_mibps``: DescribeVolumes' ``VolumeInitializationRate`` (it wins over fast
    snapshot restore when both were given, B-INIT)."""
    if rate_mibps is not None:
        fast_restored = False
    if source is None or fast_restored:
        return InitializationState(volume_id, source, fast_restored=fast_restored)
    with aws_call("ec2:DescribeVolumeStatus", what=f"initialization state of {volume_id}"):
        response = ec2.describe_volume_status(VolumeIds=[volume_id])
    return parse_volume_status(response, volume_id, source=source, fast_restored=fast_restored,
                               rate_mibps=rate_mibps)


def initialization_read_argv(device: str, *, fio: str = "fio") -> list[str]:
    """fio argv for AWS's documented initialization read of every block (B-INIT).

    AWS: ``fio --filename=/dev/nvme1n1 --rw=read --bs=1M --iodepth=32 --ioengine=libaio
    --direct=1 --name=volume-initialize``. We add ``--readonly`` (fio refuses any write) and
    ``--allow_file_create=0`` (a mistyped path must fail instead of becoming a new file under
    /dev, ecosystem-notes §0.5). The runner adds its own output options.
    """
    return [
        fio,
        f"--filename={device}",
        "--rw=read",
        "--bs=1M",
        "--iodepth=32",
        "--ioengine=libaio",
        "--direct=1",
        "--name=volume-initialize",
        "--readonly",
        "--allow_file_create=0",
    ]


def initialization_read_estimate_s(
    size_gib: float, read_mibps: float, *, progress_pct: float | None = None
) -> float:
    """Seconds a full-device read takes at ``read_mibps`` (the volume's or instance's cap).

    Blocks already fetched read fast, so the remaining share of the volume is what counts;
    the real default initialization rate "fluctuates" (B-INIT), so this is a lower bound.
    """
    if read_mibps <= 0:
        raise ValueError(f"read rate must be positive, got {read_mibps!r} MiB/s")
    remaining = 1.0 - (progress_pct or 0.0) / 100.0
    return size_gib * 1024 * max(remaining, 0.0) / read_mibps


def provisioned_rate_time_s(size_gib: float, rate_mibps: float) -> float:
    """Time a Provisioned Rate for Volume Initialization needs (B-INIT ``init_time_s``)."""
    return size_gib * 1024 / valid_rate(rate_mibps)


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


#: The initialization read gets at least this long before it is stopped.
INIT_READ_MIN_TIMEOUT_S = 600.0


def initialization_workload(limit_s: float) -> Workload:
    """AWS's initialization read (:func:`initialization_read_argv`) as the runner's workload:
    every block once, 1 MiB sequential reads, 32 outstanding, libaio, for at most
    ``limit_s``."""
    return Workload("read", bs=MIB, iodepth=32, numjobs=1, runtime_s=limit_s, ramp_s=0.0,
                    engine="libaio", name="volume-initialize", once=True)


def initialization_read(runner: Any, device: str, estimate_s: float
                        ) -> tuple[float, str | None, FioResult | None]:
    """Run the initialization read with ``runner`` (a ``FioRunner``: read-only, with the
    runner's logs and kernel counters), bounded by three times ``estimate_s`` (at least
    :data:`INIT_READ_MIN_TIMEOUT_S`). Returns the seconds it took, None or the sentence
    saying why it failed, and what fio measured (None when fio measured nothing)."""
    started = time.monotonic()
    limit_s = max(INIT_READ_MIN_TIMEOUT_S, 3.0 * estimate_s)
    try:
        result = runner.run(initialization_workload(limit_s), device, readonly=True,
                            timeout_s=limit_s + 60.0)
    except EbsperfError as exc:
        took = time.monotonic() - started
        return took, (f"the initialization read of {device} failed ({exc}); the volume is "
                      "still not fully initialized."), None
    took = time.monotonic() - started
    if result.read.runtime_ms >= (limit_s - 1.0) * 1000.0:
        return took, (f"the initialization read of {device} was stopped after "
                      f"{limit_s:,.0f} s, three times its estimate; the volume is still not "
                      "fully initialized."), result
    return took, None, result
