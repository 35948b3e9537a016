"""The witnesses of a run beside fio: the kernel's count of the device's I/O and the volume's
own counters (EBS NVMe log page 0xD0), read before and after each run, and what they say
when they disagree with fio or name the limit that bound.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_ebsperf.checks.session import EbsperfSession
from pytest_ebsperf.device import ebsnvme, kernelstat
from pytest_ebsperf.device.kernelstat import BlockStat
from pytest_ebsperf.emulate.target import Target
from pytest_ebsperf.fio.counted import Witness, apply_witness
from pytest_ebsperf.fio.kept import keep_part
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.verdicts.diagnosis import steal_sentence
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict, measured_alone


def members_alone(target: Target) -> list[Target]:
    """The devices a run writes to: each member of a set driven together, else itself."""
    if not target.members or target.md is not None:
        return [target]
    reports = dict(zip(target.members, target.member_reports))
    return [Target(m, target.volume, emulated=target.emulated, report=reports.get(m),
                   role=target.role, emulated_set=target.emulated_set)
            for m in target.members]


def path_again(target: Any) -> None:
    """Before a run measured again alone: the latency daemon of ``target``'s emulated volume
    measures its path again, now (the correction it followed may be a busy spell's); a
    volume without a daemon here (none, a remote one, a set) is left as it is."""
    emulated: Any = getattr(target, "emulated", None)
    if getattr(emulated, "latency_us", None) and hasattr(emulated, "calibrate_path"):
        emulated.calibrate_path()


def latency_again_if_spoiled(core: Any, found: Verdict, result: FioResult, workload: Workload,
                             judge: Callable[[FioResult], Verdict]
                             ) -> tuple[Verdict, FioResult]:
    """A latency claim whose emulated volume fell behind in its run and did not PASS is
    measured again holding the host alone, and that run decides (a false FAIL has at most
    twice the check's level): in a quiet main job io2's per-second means at QD 1 went from
    0.30-0.37 ms to 0.51-0.92 ms in 5 of 10 s, INCONCLUSIVE. A volume set slower keeps up
    with its setting, so its seconds are not behind and its FAIL stands. The latency daemon's
    path is measured again first, alone: the correction it began from may be a busy spell's
    (a quiet main job's fresh run without it fell behind in 9 of 10 s too, 0.42 ms for 0.3)."""
    behind = len(result.emulator_behind)
    if found.outcome is Outcome.PASS or not behind:
        return found, result
    with core.measuring_alone("its first run was the host's: measured again alone"):
        path_again(core.target)
        again = core.run(workload)
    if result.kept_as:
        keep_part(Path(result.kept_as), check=core.nodeid, phase="host-spoiled")
    return measured_alone(judge(again), found, behind), again


class Witnesses:
    """Reads the second witnesses of a runner's runs; what they say goes to ``notes`` (the
    check's notes, each said once)."""

    def __init__(self, session: EbsperfSession, notes: list[str]) -> None:
        self.session = session
        self.notes = notes

    def kernel_counts(self, target: Target) -> BlockStat | None:
        if target.members and target.md is None:
            stats = [self.kernel_counts(member) for member in members_alone(target)
                     if member.members == ()]
            total: BlockStat | None = None
            for stat in stats:
                if stat is None:
                    return None
                total = stat if total is None else total + stat
            return total
        host = self.session.runner.host
        if host.is_local:
            return kernelstat.read(target.path)
        if target.report is None:
            return None
        return kernelstat.read_on(host, target.report.name)

    def kernel_seen(self, target: Target, before: BlockStat | None, result: FioResult,
                    workload: Workload) -> tuple[FioResult, dict[str, float] | None]:
        """What the kernel counted on the device during the run (a second witness), and the
        run judged by it: the rule judge applies to fio's own Disk stats
        (:func:`pytest_ebsperf.fio.counted.apply_witness`), on counters read after fio ended
        (no lag). The count goes with the run (:attr:`FioResult.counted`), so that judge of a
        kept run weighs the count the check weighed."""
        if before is None:
            return result, None
        after = self.kernel_counts(target)
        if after is None:
            return result, None
        seen = after - before
        seconds = max(result.read.runtime_ms, result.write.runtime_ms) / 1000.0
        if seconds > 0:
            # fio's counts exclude its ramp; the kernel counts it too, so it never sees less
            count = Witness(target.path, seen.reads + seen.read_merges,
                            seen.writes + seen.write_merges, seconds,
                            float(seen.read_sectors * kernelstat.SECTOR),
                            float(seen.write_sectors * kernelstat.SECTOR), lag_s=0.0,
                            source="the kernel's counters, read before and after fio")
            result, said, replaced = apply_witness(result, workload, count)
            if replaced and said not in self.notes:
                self.notes.append(said)
            result = replace(result, counted=count.record())
        merged = kernelstat.merge_note(seen, workload.bs, target.path)
        if merged and merged not in self.notes:
            self.notes.append(merged)
        return result, seen.facts()

    def volume_counts(self, target: Target) -> Any:
        """The volume's own counters (EBS NVMe log page 0xD0), when it has them."""
        if target.emulated_any or target.members or not self.session.runner.host.is_local:
            return None
        if not ebsnvme.is_ebs_nvme(target.path):
            if self.session.first_to_say("ebs-nvme"):  # once per run, then out of the way
                self.notes.append(f"{target.path} is not an EBS NVMe device: the volume's own "
                                  "statistics (NVMe log page 0xD0) are not available")
            return None
        try:
            return ebsnvme.parse_log_page(ebsnvme.read_log_page(target.path))
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            if self.session.first_to_say("ebs-nvme"):
                self.notes.append(f"the volume's own statistics of {target.path} could not "
                                  f"be read ({exc})")
            return None

    def volume_seen(self, target: Target, before: Any, result: FioResult
                       ) -> dict[str, int] | None:
        """What the volume itself counted during the run, and which limit it says bound."""
        if before is None:
            return None
        after = self.volume_counts(target)
        if after is None:
            return None
        delta = after - before
        seconds = max(result.read.runtime_ms, result.write.runtime_ms) / 1000.0
        said = ebsnvme.bound_sentence(delta, seconds)
        if said and said not in self.notes:
            self.notes.append(said)
        facts: dict[str, int] = delta.facts()
        return facts

    def emulator_seen(self, target: Target, workload: Workload, result: FioResult,
                      volume_type: str) -> FioResult:
        """An emulated volume's own witness (:mod:`pytest_ebsperf.emulate.witness`): the
        seconds in which it fell behind what it was set to deliver are marked on the
        result, left out of the verdict and said."""
        started = self.session.runner.last_started
        pool = target.emulated_set
        driven = set(target.members)  # a set's run may drive some of its members only
        devices = ([target.emulated] if target.emulated is not None
                   else [m for m in pool.members if m.path in driven] if pool is not None
                   else [])
        if not devices or started is None:
            return result
        from pytest_ebsperf.emulate import witness  # only where a volume is emulated
        from pytest_ebsperf.verdicts.verdict import series_values

        values = series_values(result, "total_iops")
        series = next((result.series[key] for key in ("total_iops", "read_iops", "write_iops")
                       if key in result.series and len(result.series[key])), None)
        if series is None or not values:
            return result
        found = witness.behind(devices, series.t_s[:len(values)], values,
                               started + max(workload.ramp_s, 0.0), bs=workload.bs,
                               outstanding=workload.iodepth * workload.numjobs,
                               run_from=started)
        if not found.seconds:
            return replace(result, emulator_share=found.share)
        said, stolen = found.sentence(volume_type), steal_sentence(result.host_cpu_steal_pct)
        return replace(result, emulator_behind=found.seconds,
                       emulator_said=f"{said}; {stolen}" if stolen else said,
                       emulator_share=found.share)
