"""Options, ini keys and environment variables, resolved once into a frozen :class:`Settings`.

Precedence (highest first): ``@pytest.mark.ebsperf(...)`` marker > command line >
environment (``EBSPERF_*``) > ini (``ebsperf_*`` in pytest.ini/setup.cfg/pyproject) > default.
This module does not import pytest: the plugin hands it a ``lookup`` callable per source.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_ebsperf.errors import ConfigError
from pytest_ebsperf.volume import VOLUME_TYPES

#: Tables the terminal summary shows only when asked (--ebsperf-tables); the reports always
#: have them.
OPTIONAL_TABLES = ("seed", "runs", "sets", "cost", "facts")

#: Runtime and ramp when nothing is given: AWS's own recipes run 60-180 s on real volumes;
#: an emulated volume is paced by the kernel to the second, so a few seconds suffice - five,
#: since a mean judged from fewer seconds has too wide a confidence interval to show that a
#: volume runs far above its cap (fio's logs often lack the last window).
DEFAULT_RUNTIME_S = 60.0
DEFAULT_RUNTIME_EMULATED_S = 5.0
DEFAULT_RAMP_S = 2.0
DEFAULT_RAMP_EMULATED_S = 0.5
#: Upper bounds of --ebsperf-iodepth and --ebsperf-numjobs (validate() says why).
MAX_IODEPTH = 65_536
MAX_NUMJOBS = 1_024


@dataclass(frozen=True)
class Option:
    """One setting: its command-line flag, ini key, environment variable and type."""

    dest: str
    flag: str
    ini: str | None
    env: str | None
    kind: str  # "str", "int", "float", "bool", "yesno", "outcomes" (--ebsperf-strict's)
    metavar: str | None
    help: str
    default: Any = None

    @property
    def canonical(self) -> str:
        """The flag under the plugin's prefix (``--device`` -> ``--ebsperf-device``): always
        registered, so it never collides with another plugin's or a conftest's options."""
        return self.flag if self.flag.startswith(PREFIX) else PREFIX + self.flag[2:]

    @property
    def alias(self) -> str | None:
        """The short form the docs and the suites' users type (``--device``), registered
        only when no other plugin or conftest has taken the name; None when the option has
        no short form."""
        return None if self.flag.startswith(PREFIX) else self.flag

    @property
    def testing_aid(self) -> bool:
        """An option that shapes an emulated volume for the plugin's own tests."""
        return self.dest in TESTING_AIDS


#: Every option lives under this prefix.
PREFIX = "--ebsperf-"
#: Options that exist to test the plugin (emulated volumes made slow, buckets made small):
#: their own group in --help.
TESTING_AIDS = frozenset({
    "emulate_member_factors", "emulate_bucket_factor", "emulate_burst_balance",
    "emulate_device_factor", "emulate_first_write_factor", "emulate_misses",
    "emulate_device_latency", "emulate_factor"})


OPTIONS: tuple[Option, ...] = (
    Option("device", "--device", "ebsperf_device", "EBSPERF_DEVICE", "str", "PATH",
           "block device under test (e.g. /dev/nvme1n1)."),
    Option("volume_count", "--volume-count", "ebsperf_volume_count", "EBSPERF_VOLUME_COUNT",
           "int", "N", "volumes measured together as one set (RAID0 stripe) by the raid0 suite: "
           "with --emulate, N emulated volumes; with --device=A,B,..., the number of devices "
           "(default)."),
    Option("reference_device", "--reference-device", None, "EBSPERF_REFERENCE_DEVICE", "str",
           "PATH", "second device for relative claims (e.g. the unencrypted twin of an "
           "encrypted volume)."),
    Option("reference_volume_type", "--reference-volume-type", None,
           "EBSPERF_REFERENCE_VOLUME_TYPE", "str", "TYPE",
           "the volume type of --reference-device (discovered on EC2): the same type as "
           "--device for the encryption claim's twin (S2-17), standard for the gp2 vs "
           "Magnetic claim (S0-08). Default: --device's type."),
    Option("volume_encrypted", "--volume-encrypted", "ebsperf_volume_encrypted",
           "EBSPERF_VOLUME_ENCRYPTED", "yesno", "yes|no",
           "whether --device is an encrypted EBS volume (discovered on EC2); the encryption "
           "claim (S2-17) needs one encrypted twin and one plain one."),
    Option("reference_encrypted", "--reference-encrypted", None, "EBSPERF_REFERENCE_ENCRYPTED",
           "yesno", "yes|no", "whether --reference-device is an encrypted EBS volume "
           "(discovered on EC2)."),
    Option("volume_type", "--volume-type", "ebsperf_volume_type", "EBSPERF_VOLUME_TYPE", "str",
           "TYPE", "volume type: " + ", ".join(VOLUME_TYPES) + "."),
    Option("volume_size", "--volume-size", "ebsperf_volume_size", "EBSPERF_VOLUME_SIZE", "int",
           "GIB", "volume size in GiB."),
    Option("volume_iops", "--volume-iops", "ebsperf_volume_iops", "EBSPERF_VOLUME_IOPS", "int",
           "N", "provisioned IOPS (gp3, io1, io2)."),
    Option("volume_throughput", "--volume-throughput", "ebsperf_volume_throughput",
           "EBSPERF_VOLUME_THROUGHPUT", "float", "MIBPS", "provisioned throughput in MiB/s (gp3)."),
    Option("instance_type", "--instance-type", "ebsperf_instance_type", "EBSPERF_INSTANCE_TYPE",
           "str", "NAME", "instance type, for its EBS-optimized limits (e.g. m5.large)."),
    Option("burst_balance", "--burst-balance", None, "EBSPERF_BURST_BALANCE", "float", "PERCENT",
           "starting credit balance in percent (CloudWatch BurstBalance) if known."),
    Option("destructive", "--ebsperf-destructive", None, None, "bool", None,
           "allow write workloads on the device (never on a mounted, root, swap or held "
           "device). Default: read-only.", False),
    Option("runtime", "--ebsperf-runtime", "ebsperf_runtime", "EBSPERF_RUNTIME", "float",
           "SECONDS", "the most a check measures, ramp excluded (it stops earlier once its verdict is "
           "settled). Default: 60 on a device, 5 on "
           "an emulated volume."),
    Option("tables", "--ebsperf-tables", "ebsperf_tables", "EBSPERF_TABLES", "str",
           "NAMES", "further tables in the terminal summary: seed (IOPS / MiB/s by volume and "
           "pattern, as the seed documents), runs, sets, cost, facts (each volume's facts and "
           "their sources), all, or none. The results file, --ebsperf-markdown and --html "
           "always have them.", "none"),
    Option("markdown", "--ebsperf-markdown", "ebsperf_markdown", "EBSPERF_MARKDOWN", "str",
           "FILE", "write the run as Markdown to FILE: the claims table, each FAIL and "
           "INCONCLUSIVE with its finding, the seed-shaped tables folded. Also appended to "
           "$GITHUB_STEP_SUMMARY when GitHub Actions sets it."),
    Option("plan", "--ebsperf-plan", None, None, "bool", None,
           "a dry run: list each selected check with its fio command line, the figure the "
           "model expects and how long it takes; start no fio.", False),
    Option("block", "--ebsperf-block", "ebsperf_block", "EBSPERF_BLOCK", "float", "SECONDS",
           "measuring seconds of one block of a comparison (gp2 vs Magnetic, first vs second "
           "write, encrypted vs plain): the two sides run in alternating blocks, a fresh fio "
           "run each, judged on the blocks' pairs. Default: 10 on a device, 2 on an "
           "emulated volume."),
    Option("runs", "--ebsperf-runs", "ebsperf_runs", "EBSPERF_RUNS", "int", "N",
           "runs of a run-to-run stability check (S1-09); the first is dropped, so at least "
           "4. With 10, a volume as steady as seed 001's (CV 1-2 percent) passes and one "
           "varying by 30 percent fails, each nearly always (docs/claims.md has the table).",
           10),
    Option("ramp", "--ebsperf-ramp", "ebsperf_ramp", "EBSPERF_RAMP", "float", "SECONDS",
           "warm-up before measuring. Default: 2 on a device, 0.5 on an emulated volume."),
    Option("long", "--ebsperf-long", None, None, "bool", None,
           "also run checks that take long on real volumes (e.g. the 33-minute gp2 knee).",
           False),
    Option("emulate", "--emulate", None, None, "bool", None,
           "create an emulated volume (kernel-throttled loop device) of the given or the "
           "suite's type instead of using --device. Needs root.", False),
    Option("emulate_member_factors", "--emulate-member-factors", None,
           "EBSPERF_EMULATE_MEMBER_FACTORS", "str", "F1,F2,...",
           "testing aid: scale each emulated member of a set (--volume-count) by its factor, "
           "e.g. 1,1,1,0.75 makes the fourth one slow."),
    Option("era", "--ebsperf-era", "ebsperf_era", "EBSPERF_ERA", "str", "ERA",
           "judge against the specs of a seed document's year: 2013, 2014, 2016 or now "
           "(default).", "now"),
    Option("emulate_factor", "--emulate-factor", None, "EBSPERF_EMULATE_FACTOR", "float",
           "FACTOR", "make the emulated volume deliver this fraction of its documented "
           "performance (0.75 shows what a failing volume looks like).", 1.0),
    Option("emulate_latency", "--emulate-latency", "ebsperf_emulate_latency",
           "EBSPERF_EMULATE_LATENCY", "str", "auto|none|MS",
           "give every I/O of an emulated volume a service time: auto (the volume type's "
           "documented figure, docs/emulation.md), none (the loop device's microseconds), or "
           "a mean in milliseconds. Needs /dev/fuse, a C compiler and libfuse3.", "none"),
    Option("emulate_device_latency", "--emulate-device-latency", None,
           "EBSPERF_EMULATE_DEVICE_LATENCY", "str", "MS",
           "the emulated device under test (not its --reference-device twin) gets this mean "
           "service time per I/O instead of --emulate-latency's: a twin made slower, for the "
           "encryption suite's latency claim.", None),
    Option("emulate_device_factor", "--emulate-device-factor", None,
           "EBSPERF_EMULATE_DEVICE_FACTOR", "float", "FACTOR",
           "testing aid: the emulated device under test (not its twin) runs at this share of "
           "its rates (0.9: an encrypted twin 10 percent slower, which S2-17 must catch)."),
    Option("emulate_first_write_factor", "--emulate-first-write-factor", None,
           "EBSPERF_EMULATE_FIRST_WRITE_FACTOR", "float", "FACTOR",
           "testing aid: writes into blocks of the emulated device not written since it was "
           "made or TRIMmed run at this share of its rates (0.7: the first-write cost S1-03 "
           "must catch)."),
    Option("emulate_misses", "--emulate-misses", None, "EBSPERF_EMULATE_MISSES", "str",
           "RATE[,SPELL_S]", "make an emulated volume miss its 90 percent line (running at 50-80 percent "
           "of its rates) in RATE of its seconds, in spells of SPELL_S seconds on average "
           "(0.001,3: the SLA's budget in 3 s spells); dip:START-END misses at fixed seconds "
           "after its first fio run began.", None),
    Option("emulate_timescale", "--emulate-timescale", None, "EBSPERF_EMULATE_TIMESCALE", "str",
           "N", "shrink emulated burst buckets N times (rates unchanged) so a 2,000 s knee "
           "comes after 2,000/N s; the model's times shrink alike. 'auto' makes a full "
           "bucket last about 20 s.", "auto"),
    Option("plots", "--ebsperf-plots", "ebsperf_plots", "EBSPERF_PLOTS", "str", "DIR",
           "where pictures go: time-based credit checks always save their PNG (per-second "
           "series, model, knee) there; 'none' saves none.", "ebsperf-results/plots"),
    Option("iodepth", "--ebsperf-iodepth", "ebsperf_iodepth", "EBSPERF_IODEPTH", "int", "N",
           "fio iodepth per job. Default: chosen from the expected rate (Little's law)."),
    Option("numjobs", "--ebsperf-numjobs", "ebsperf_numjobs", "EBSPERF_NUMJOBS", "int", "N",
           "fio jobs per check. Default: chosen from the expected rate and CPU count."),
    Option("engine", "--ebsperf-engine", "ebsperf_engine", "EBSPERF_ENGINE", "str", "NAME",
           "fio ioengine; 'auto' picks io_uring where it works, else libaio.", "auto"),
    Option("fio", "--fio", "ebsperf_fio", "EBSPERF_FIO", "str", "PATH",
           "fio executable.", "fio"),
    Option("host", "--ebsperf-host", "ebsperf_host", "EBSPERF_HOST", "str", "HOSTSPEC",
           "testinfra host spec to run fio on (local://, ssh://name, ...).", "local://"),
    Option("hosts_file", "--ebsperf-hosts-file", "ebsperf_hosts_file", "EBSPERF_HOSTS_FILE",
           "str", "PATH", "per-host volume facts for a fleet run with testinfra's --hosts: a "
           "TOML or JSON file with a table per host (device, type, size_gib, iops, "
           "throughput_mibps, instance_type) and optional [defaults]. See docs/howto-fleet.md."),
    Option("fio_servers", "--ebsperf-fio-servers", "ebsperf_fio_servers",
           "EBSPERF_FIO_SERVERS", "str", "SERVERS",
           "fio servers (fio --server) to measure at the same time through fio's client/server "
           "mode: HOST,HOST or, with ports, ip:ADDR,PORT;ip:ADDR,PORT. Each check runs once on "
           "all of them and judges each host; devices and facts per server come from "
           "--ebsperf-hosts-file. Read-only checks only."),
    Option("strict", "--ebsperf-strict", "ebsperf_strict", "EBSPERF_STRICT", "outcomes",
           "OUTCOMES", "make these outcomes fail the run: inconclusive (the sample could "
           "not decide: load-generator or queue-depth bound, too short), info (recorded, "
           "never judged), both (the flag alone, or all: only a PASS passes) or none. "
           "Without it both are reported as their own outcome and the run passes.", "none"),
    Option("provision", "--ebsperf-provision", "ebsperf_provision", "EBSPERF_PROVISION", "str",
           "SPEC", "create EBS volumes for this instance, run the suites once on each and "
           "delete them: type:size[:iops[:throughput]], comma-separated (gp3:100,io1:200:4000). "
           "Needs EC2 and the IAM policy in docs/aws-iam-policy.md."),
    Option("max_cost", "--ebsperf-max-cost", "ebsperf_max_cost", "EBSPERF_MAX_COST", "float",
           "USD", "refuse to provision when the run's estimated cost is above this many US "
           "dollars.", 1.0),
    Option("false_alarm", "--ebsperf-false-alarm", "ebsperf_false_alarm",
           "EBSPERF_FALSE_ALARM", "float", "PROBABILITY",
           "how often a whole run on a volume that meets every claim may be red: the run's "
           "false-red budget, split evenly over its checks that can fail (a check fails only "
           "on evidence at its share).", 0.001),
    Option("miss_spell", "--ebsperf-miss-spell", "ebsperf_miss_spell", "EBSPERF_MISS_SPELL",
           "float", "SECONDS", "how long, on average, a run of missed seconds of a compliant "
           "volume may last (1: missed seconds are independent). The duty-cycle test weighs "
           "the misses by this spell model, so a compliant volume's spell does not fail a "
           "check while a volume that misses every second still fails within seconds.", 3.0),
    Option("no_discovery", "--ebsperf-no-discovery", "ebsperf_no_discovery",
           "EBSPERF_NO_DISCOVERY", "bool", None, "never call AWS: volume facts that are not "
           "given are not discovered from EC2 metadata and the API.", False),
    Option("fio_options", "--ebsperf-fio-options", "ebsperf_fio_options",
           "EBSPERF_FIO_OPTIONS", "str", "OPTIONS", "your own fio options for every check's "
           "job, comma-separated name[=value] (norandommap,randrepeat=0). Options the checks "
           "build themselves, and options that could write, change the device or run "
           "commands, are refused."),
    Option("job_file", "--ebsperf-job-file", "ebsperf_job_file", "EBSPERF_JOB_FILE", "str",
           "FILE", "a fio job file whose [global] and first job section's options join every "
           "check's job (the same rules as --ebsperf-fio-options)."),
    Option("sweep_sizes", "--ebsperf-sweep-sizes", "ebsperf_sweep_sizes",
           "EBSPERF_SWEEP_SIZES", "str", "SIZES", "block sizes of the block-size sweeps "
           "(S2-08, S2-10), comma-separated (4k,16k,64k,256k,1M); each point's expectation "
           "is worked out for its size. Default: the suite's own."),
    Option("keep_fio", "--ebsperf-keep-fio", "ebsperf_keep_fio", "EBSPERF_KEEP_FIO", "str",
           "DIR|none", "keep each fio run's JSON report, interval logs and command line in "
           "DIR (one folder per run) for fio's own tools. Default: beside the results file "
           "(REPORT-fio/) when --ebsperf-report is given; 'none' keeps nothing."),
    Option("initialize", "--ebsperf-initialize", "ebsperf_initialize", "EBSPERF_INITIALIZE",
           "bool", None, "a volume restored from a snapshot that is not fully initialized: "
           "read every block once (AWS's documented fio read, as long as reading the whole "
           "volume; the estimate is printed) and then measure. Default: skip its checks.",
           False),
    Option("emulate_bucket_factor", "--emulate-bucket-factor", "ebsperf_emulate_bucket_factor",
           "EBSPERF_EMULATE_BUCKET_FACTOR", "float", "FACTOR", "testing aid: give the emulated "
           "burst bucket this share of the credits the model says it holds (0.7: a bucket 30 "
           "percent smaller than claimed, which the burst-duration check must catch). Default: 1."),
    Option("emulate_burst_balance", "--emulate-burst-balance", "ebsperf_emulate_burst_balance",
           "EBSPERF_EMULATE_BURST_BALANCE", "float", "PERCENT", "testing aid: start the "
           "emulated bucket at this balance while the model goes by --burst-balance (or a "
           "full bucket): 0 shows an empty bucket the model did not expect. Default: "
           "--burst-balance, else 100."),
    Option("report", "--ebsperf-report", "ebsperf_report", "EBSPERF_REPORT", "str", "FILE",
           "write every check and measurement (with per-second series), the model's "
           "expectation, verdict, fio, kernel, instance and volume facts and the settings to "
           "FILE as JSON (docs/results-file.md)."),
    Option("csv", "--ebsperf-csv", "ebsperf_csv", "EBSPERF_CSV", "str", "FILE",
           "write every measurement as one CSV row to FILE (workload, IOPS, bytes/s, "
           "latency percentiles, what the kernel counted)."),
    Option("history", "--ebsperf-history", "ebsperf_history", "EBSPERF_HISTORY", "str",
           "PATH", "append every run's results (facts, settings, per-second series, verdicts) "
           "to this SQLite database; `ebsperf history --db PATH` shows each "
           "check's trend and change points. Default: off."),
    Option("compare", "--ebsperf-compare", "ebsperf_compare", "EBSPERF_COMPARE", "str",
           "RUN|FILE", "compare IOPS, throughput and latency of each check with a stored run: "
           "a file from --ebsperf-report, a pytest-benchmark JSON, or a saved pytest-benchmark "
           "run id (0001). A check fails on a regression beyond the threshold that is "
           "statistically clear."),
    Option("compare_threshold", "--ebsperf-compare-threshold", "ebsperf_compare_threshold",
           "EBSPERF_COMPARE_THRESHOLD", "float", "PCT", "smallest change, in percent, that "
           "--ebsperf-compare treats as a regression.", 10.0),
    Option("price_region", "--ebsperf-price-region", "ebsperf_price_region",
           "EBSPERF_PRICE_REGION", "str", "REGION", "region of the prices in the "
           "cost-per-performance table. Default: AWS_REGION, AWS_DEFAULT_REGION, else "
           "us-east-1."),
)

OPTIONS_BY_DEST: dict[str, Option] = {o.dest: o for o in OPTIONS}
#: Settings a ``@pytest.mark.ebsperf(...)`` marker may override for its tests. The volume and
#: device are the run's, not a test's; ``volume_type`` in a marker names the suite's type.
MARKER_SETTINGS = frozenset({"runtime", "ramp", "iodepth", "numjobs", "engine", "strict"})
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@dataclass(frozen=True)
class Settings:
    """Every ebsperf setting after precedence was applied; ``origin`` says where each came from."""

    device: str | None = None
    volume_count: int | None = None
    reference_device: str | None = None
    reference_volume_type: str | None = None
    volume_encrypted: bool | None = None
    reference_encrypted: bool | None = None
    volume_type: str | None = None
    volume_size: int | None = None
    volume_iops: int | None = None
    volume_throughput: float | None = None
    instance_type: str | None = None
    burst_balance: float | None = None
    destructive: bool = False
    runtime: float | None = None
    runs: int = 10
    block: float | None = None
    plan: bool = False
    tables: str = "none"
    markdown: str | None = None
    hosts_file: str | None = None
    fio_servers: str | None = None
    ramp: float | None = None
    long: bool = False
    emulate: bool = False
    emulate_factor: float = 1.0
    emulate_timescale: str = "auto"
    emulate_device_factor: float | None = None
    emulate_first_write_factor: float | None = None
    emulate_latency: str = "none"
    emulate_misses: str | None = None
    emulate_device_latency: str | None = None
    plots: str = "ebsperf-results/plots"
    iodepth: int | None = None
    numjobs: int | None = None
    engine: str = "auto"
    fio: str = "fio"
    host: str = "local://"
    strict: frozenset[str] = frozenset()
    provision: str | None = None
    max_cost: float = 1.0
    false_alarm: float = 0.001
    miss_spell: float = 3.0
    no_discovery: bool = False
    fio_options: str | None = None
    job_file: str | None = None
    sweep_sizes: str | None = None
    keep_fio: str | None = None
    initialize: bool = False
    emulate_bucket_factor: float | None = None
    emulate_burst_balance: float | None = None
    report: str | None = None
    csv: str | None = None
    history: str | None = None
    compare: str | None = None
    compare_threshold: float = 10.0
    price_region: str | None = None
    emulate_member_factors: str | None = None
    era: str = "now"
    #: Every device of ``--device=A,B,...`` (``device`` is the first).
    devices: tuple[str, ...] = ()
    origin: Mapping[str, str] = dataclasses.field(default_factory=dict)

    @property
    def user_fio_options(self) -> tuple[tuple[str, str], ...]:
        """The fio options of --ebsperf-job-file, then --ebsperf-fio-options (checked)."""
        found: tuple[tuple[str, str], ...] = ()
        if not (self.job_file or self.fio_options):
            return found
        from pytest_ebsperf.fio.options import parse_fio_options, parse_job_file

        if self.job_file:
            found += parse_job_file(self.job_file)
        if self.fio_options:
            found += parse_fio_options(self.fio_options)
        return found

    @property
    def set_size(self) -> int:
        """Volumes in the set under test: --volume-count, else the devices named (1)."""
        return self.volume_count or max(1, len(self.devices))

    @property
    def member_factors(self) -> tuple[float, ...]:
        """--emulate-member-factors as numbers (empty: every member at full rate)."""
        text = (self.emulate_member_factors or "").strip()
        if not text:
            return ()
        found = []
        for part in text.split(","):
            try:
                value = float(part)
            except ValueError:
                value = math.nan
            if not math.isfinite(value) or value <= 0:
                raise ConfigError(f"--emulate-member-factors={text}: {part.strip()!r} is not a "
                                  "positive number (1 keeps a member at its rate, 0.75 makes "
                                  "it 25 % slow).")
            found.append(value)
        return tuple(found)

    @property
    def sweep_sizes_bytes(self) -> tuple[int, ...]:
        """--ebsperf-sweep-sizes in bytes (empty: the suites' own)."""
        from pytest_ebsperf.fio.workload import parse_size

        parts = [p.strip() for p in (self.sweep_sizes or "").split(",") if p.strip()]
        return tuple(parse_size(p, what="--ebsperf-sweep-sizes block size") for p in parts)

    def keep_fio_dir(self, base: Path) -> Path | None:
        """Where fio's evidence is kept (relative paths from ``base``), or None."""
        text = (self.keep_fio or "").strip()
        if text.lower() in ("none", "off", "no"):
            return None
        if not text:
            if not self.report:
                return None
            report = Path(self.report).expanduser()
            if str(report).startswith(("/dev/", "/proc/")):
                return None  # written into a device or pipe: nothing to keep beside it
            text = str(report.with_name(report.stem + "-fio"))
        path = Path(text).expanduser()
        return path if path.is_absolute() else base / path

    @property
    def tables_shown(self) -> tuple[str, ...]:
        """The optional summary tables asked for (``all``: every one)."""
        names = [n.strip().lower() for n in str(self.tables or "").split(",") if n.strip()]
        if "all" in names:
            return OPTIONAL_TABLES
        return tuple(n for n in OPTIONAL_TABLES if n in names)

    @property
    def runtime_s(self) -> float:
        if self.runtime is not None:
            return self.runtime
        return DEFAULT_RUNTIME_EMULATED_S if self.emulate else DEFAULT_RUNTIME_S

    @property
    def ramp_s(self) -> float:
        if self.ramp is not None:
            return self.ramp
        return DEFAULT_RAMP_EMULATED_S if self.emulate else DEFAULT_RAMP_S

    def given(self, dest: str) -> bool:
        """True when the user set ``dest`` (marker, command line, environment or ini)."""
        return self.origin.get(dest, "default") != "default"

    def with_marker(self, kwargs: Mapping[str, Any]) -> Settings:
        """Apply ``@pytest.mark.ebsperf(...)`` keyword arguments (highest precedence)."""
        changes: dict[str, Any] = {}
        origin = dict(self.origin)
        for key, value in kwargs.items():
            if key not in MARKER_SETTINGS:
                continue  # volume_type names the suite's type; the volume is the run's
            changes[key] = convert(OPTIONS_BY_DEST[key], value, "the ebsperf marker")
            origin[key] = "marker"
        return dataclasses.replace(self, origin=origin, **changes) if changes else self


Lookup = Callable[[Option], Any]


def resolve(cli: Lookup, env: Mapping[str, str], ini: Lookup) -> Settings:
    """Build Settings from the three sources; raise ConfigError with a sentence on bad input."""
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for option in OPTIONS:
        value, where = _first_given(option, cli, env, ini)
        if where == "default":
            values[option.dest] = (parse_strict(option.default, where)
                                   if option.kind == "outcomes" else option.default)
        else:
            values[option.dest] = convert(option, value, where)
        origin[option.dest] = where
    raw = values.get("device")
    if raw:
        devices = tuple(part.strip() for part in str(raw).split(","))
        if any(not part for part in devices):
            raise ConfigError(f"--device={raw} (from {origin['device']}) has an empty entry: "
                              "give block devices separated by commas, e.g. "
                              "--device=/dev/nvme1n1,/dev/nvme2n1.")
        values["device"], values["devices"] = devices[0], devices
    settings = Settings(origin=origin, **values)
    validate(settings)
    return settings


def _first_given(option: Option, cli: Lookup, env: Mapping[str, str], ini: Lookup
                 ) -> tuple[Any, str]:
    value = cli(option)
    if value is not None and not (option.kind == "bool" and value is False):
        return value, f"command line ({option.flag})"
    if option.env and env.get(option.env, "") != "":
        return env[option.env], f"environment ({option.env})"
    if option.ini:
        value = ini(option)
        if value not in (None, "", []):
            return value, f"ini ({option.ini})"
    return None, "default"


def convert(option: Option, value: Any, where: str) -> Any:
    """Convert a raw value to the option's type, or raise a sentence naming its origin."""
    if option.kind == "bool":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE | _FALSE:
            return text in _TRUE
        raise ConfigError(f"{value!r} from {where} is not a yes/no value for {option.flag}. "
                          "Use true or false.")
    if option.kind == "str":
        return str(value).strip()
    if option.kind == "outcomes":
        return parse_strict(value, where)
    if option.kind == "yesno":
        text = str(value).strip().lower()
        if text in (_TRUE | _FALSE) - {""}:
            return text in _TRUE
        raise ConfigError(f"{value!r} from {where} is not yes or no for {option.flag}; pass "
                          f"{option.flag}=yes or {option.flag}=no.")
    if isinstance(value, str) and not value.strip().isascii():
        # Python reads "２００" (full-width digits) as 200; a typo that slipped through an
        # input method is not a number anyone meant to pass
        raise ConfigError(f"{value!r} from {where} has characters that are not ASCII digits; "
                          f"{option.flag} takes {option.metavar or 'a value'} written with "
                          "0-9.")
    try:
        number = int(value) if option.kind == "int" else float(value)
    except (TypeError, ValueError):
        kind = "a whole number" if option.kind == "int" else "a number"
        raise ConfigError(f"{value!r} from {where} is not {kind}; {option.flag} takes "
                          f"{option.metavar or 'a value'} ({option.help})") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise ConfigError(f"{value!r} from {where} is not a finite number for {option.flag}.")
    return number


#: Outcomes --ebsperf-strict can make fail the run (INFO: recorded, not judged).
STRICT_OUTCOMES = ("inconclusive", "info")
#: --ebsperf-strict alone: only a PASS passes.
STRICT_FLAG_ALONE = "all"


def parse_strict(value: Any, where: str) -> frozenset[str]:
    """--ebsperf-strict's value as the set of outcomes that fail the run: ``inconclusive``,
    ``info``, both (``all``, ``true``, the flag alone) or none (``none``, ``false``)."""
    if isinstance(value, (set, frozenset)):
        value = ",".join(sorted(value))
    if isinstance(value, bool):
        return frozenset(STRICT_OUTCOMES) if value else frozenset()
    text = str(value).strip().lower()
    if text in _TRUE | {STRICT_FLAG_ALONE, "both"}:
        return frozenset(STRICT_OUTCOMES)
    if text in _FALSE | {"none"}:
        return frozenset()
    parts = {part.strip() for part in text.split(",") if part.strip()}
    unknown = sorted(parts - set(STRICT_OUTCOMES))
    if unknown:
        raise ConfigError(
            f"{value!r} from {where} is not a list of outcomes for --ebsperf-strict: "
            f"{', '.join(repr(u) for u in unknown)} is none of inconclusive, info. Pass "
            "--ebsperf-strict (both fail the run), --ebsperf-strict=inconclusive, "
            "--ebsperf-strict=info or --ebsperf-strict=none"
            + ("; put test paths before the flag or write it with '='."
               if where.startswith("command line") else "."))
    return frozenset(parts)


def validate(settings: Settings) -> None:
    """Checks that need no model: types, signs, combinations of options."""
    o = settings.origin
    for dest in ("volume_type", "reference_volume_type"):
        vtype = getattr(settings, dest)
        if vtype is not None and vtype not in VOLUME_TYPES:
            flag = OPTIONS_BY_DEST[dest].flag
            raise ConfigError(f"{vtype!r} is not a valid {flag} (from {o[dest]}). Valid "
                              f"types: {', '.join(VOLUME_TYPES)}.")
    for dest in ("reference_volume_type", "reference_encrypted"):
        if getattr(settings, dest) is not None and not (settings.reference_device
                                                          or settings.emulate):
            raise ConfigError(f"{OPTIONS_BY_DEST[dest].flag} (from {o[dest]}) describes "
                              "--reference-device, and none is given: pass the twin as "
                              "--reference-device=PATH, or drop the option.")
    for dest in ("volume_size", "volume_iops", "volume_throughput", "runtime", "iodepth",
                 "numjobs", "emulate_factor"):
        value = getattr(settings, dest)
        if value is not None and value <= 0:
            flag = OPTIONS_BY_DEST[dest].flag
            raise ConfigError(f"{flag} must be positive, got {value} (from {o[dest]}).")
    for dest, most, why in (
            ("iodepth", MAX_IODEPTH, ("Linux AIO allows 65,536 events in flight system-wide "
                                      "(fs.aio-max-nr) and io_uring rings hold at most 32,768 "
                                      "entries; fio allocates every queue entry up front")),
            ("numjobs", MAX_NUMJOBS, ("each fio job is a process with its own queue; a few per "
                                      "CPU already saturate any volume"))):
        value = getattr(settings, dest)
        if value is not None and value > most:
            flag = OPTIONS_BY_DEST[dest].flag
            raise ConfigError(f"{flag}={value:,} (from {o.get(dest, 'default')}) is above the "
                              f"most this plugin runs, {most:,}: {why}. Pass a smaller value "
                              "or leave it to the plugin's default.")
    if settings.host:
        _check_host_spec(settings.host, o.get("host", "default"))
    runtime = settings.runtime
    if runtime is not None and not MIN_RUNTIME_S <= runtime <= MAX_RUNTIME_S:
        raise ConfigError(
            f"--ebsperf-runtime={runtime:g} (from {o.get('runtime', 'default')}) is outside "
            f"{MIN_RUNTIME_S:g} s to {MAX_RUNTIME_S:,} s (7 days): the checks judge whole "
            "seconds of fio's run, and a longer soak is several runs. Pass seconds in that "
            "range.")
    names = {n.strip().lower() for n in str(settings.tables or "").split(",") if n.strip()}
    unknown = names - {"all", "none", *OPTIONAL_TABLES}
    if unknown:
        raise ConfigError(f"--ebsperf-tables={settings.tables} (from "
                          f"{o.get('tables', 'default')}) names {', '.join(sorted(unknown))}; "
                          f"pick from {', '.join(OPTIONAL_TABLES)}, all or none.")
    block = settings.block
    if block is not None and not 1.0 <= block <= 3600.0:
        raise ConfigError(f"--ebsperf-block={block:g} (from {o.get('block', 'default')}) is the "
                          "measuring seconds of one block of a comparison: pass 1 to 3,600.")
    if not 0.0 < settings.false_alarm < 1.0:
        raise ConfigError(f"--ebsperf-false-alarm is a probability between 0 and 1 (0.001: one "
                          f"red run in 1,000 on a healthy volume), got {settings.false_alarm:g} "
                          f"(from {o.get('false_alarm', 'default')}).")
    if settings.miss_spell < 1.0:
        raise ConfigError(f"--ebsperf-miss-spell is a mean length in seconds, at least 1 "
                          f"(independent seconds), got {settings.miss_spell:g} "
                          f"(from {o.get('miss_spell', 'default')}).")
    if settings.ramp is not None and settings.ramp < 0:
        raise ConfigError(f"--ebsperf-ramp must be 0 or more, got {settings.ramp} "
                          f"(from {o['ramp']}).")
    balance = settings.burst_balance
    if balance is not None and not 0 <= balance <= 100:
        raise ConfigError(f"--burst-balance is a percentage (CloudWatch BurstBalance, 0-100), "
                          f"got {balance:g} (from {o['burst_balance']}).")
    if settings.emulate and settings.device:
        raise ConfigError(f"--emulate and --device={settings.device} (from {o['device']}) "
                          "exclude each other: --emulate creates its own volume. Pass one.")
    if settings.emulate_factor != 1.0 and not settings.emulate:
        raise ConfigError("--emulate-factor only applies with --emulate.")
    _check_emulation(settings)
    _check_emulation_aids(settings)
    _check_set(settings)
    if settings.fio_options or settings.job_file:
        settings.user_fio_options  # noqa: B018 (parsed now: a bad option stops the run at once)
    sizes = settings.sweep_sizes_bytes if settings.sweep_sizes is not None else ()
    if settings.sweep_sizes is not None and not sizes:
        raise ConfigError("--ebsperf-sweep-sizes is empty: give block sizes such as "
                          "4k,16k,64k,256k,1M.")
    if any(size % 512 for size in sizes):
        raise ConfigError(f"--ebsperf-sweep-sizes={settings.sweep_sizes}: every block size "
                          "must be a multiple of 512 bytes (direct I/O).")


def _check_emulation(settings: Settings) -> None:
    """The emulation options' values and that they come with --emulate (their parsers are
    loaded only when one is given: a plain pytest start needs none of them)."""
    if str(settings.emulate_latency or "").strip().lower() not in ("", "none", "0") or \
            settings.emulate_device_latency is not None or settings.emulate_misses:
        _check_emulated_latency_and_misses(settings)
    if parse_timescale(settings.emulate_timescale) is not None and not settings.emulate:
        raise ConfigError("--emulate-timescale only applies with --emulate (a real volume's "
                          "credits run on real time).")


def _check_emulated_latency_and_misses(settings: Settings) -> None:
    o = settings.origin
    from pytest_ebsperf.emulate.latency import parse as parse_latency

    if parse_latency(settings.emulate_latency) is not None and not settings.emulate:
        raise ConfigError(f"--emulate-latency={settings.emulate_latency} (from "
                          f"{o.get('emulate_latency', 'default')}) only applies with --emulate "
                          "(a real volume's I/O takes its own time).")
    if settings.emulate_device_latency is not None:
        where = f"--emulate-device-latency (from {o.get('emulate_device_latency', 'default')})"
        if not settings.emulate:
            raise ConfigError(f"{where} only applies with --emulate.")
        if parse_latency(settings.emulate_device_latency, "--emulate-device-latency") in (
                None, "auto"):
            raise ConfigError(f"{where}: give a mean in milliseconds, e.g. 2 or 0.5.")
    from pytest_ebsperf.emulate.misses import parse as parse_misses

    origin = f"--emulate-misses (from {o.get('emulate_misses', 'default')})"
    if parse_misses(settings.emulate_misses, origin) is not None and not settings.emulate:
        raise ConfigError(f"{origin} only applies with --emulate (a real volume misses on its "
                          "own).")


#: testinfra's connection backends (``<backend>://...``).
HOST_BACKENDS = ("local", "ssh", "paramiko", "docker", "podman", "kubectl", "openshift",
                 "ansible", "salt", "winrm", "lxc")


def _check_host_spec(spec: str, where: str) -> None:
    """``--ebsperf-host``: a testinfra host spec with a host name and a port in range."""
    from urllib.parse import urlsplit

    scheme = spec.split("://", 1)[0] if "://" in spec else "ssh"
    hint = "Pass a spec such as ssh://root@10.0.0.3:22 or local://."
    if scheme not in HOST_BACKENDS:
        raise ConfigError(f"--ebsperf-host={spec} (from {where}) names no connection backend "
                          f"testinfra knows ({', '.join(HOST_BACKENDS)}). {hint}")
    if scheme not in ("ssh", "paramiko"):
        return
    parts = urlsplit(spec if "://" in spec else f"ssh://{spec}")
    try:
        port = parts.port
    except ValueError:
        raise ConfigError(f"--ebsperf-host={spec} (from {where}) has a port that is not a "
                          f"number from 1 to 65535. {hint}") from None
    if not parts.hostname:
        raise ConfigError(f"--ebsperf-host={spec} (from {where}) names no host. {hint}")
    if port is not None and not 1 <= port <= 65535:
        raise ConfigError(f"--ebsperf-host={spec} (from {where}): port {port} is outside 1 to "
                          f"65535. {hint}")


#: Shortest and longest fio run time one check may be given (seconds).
MIN_RUNTIME_S = 1.0
MAX_RUNTIME_S = 7 * 24 * 3600

#: Most volumes one set may hold (AWS attaches at most 28 to most Nitro instances; the seed
#: documents striped 4, and seed 002 used 24 to find an instance's ceiling).
MAX_VOLUME_COUNT = 28
#: Most runs of one stability check (each is a whole fio run).
MAX_RUNS = 50


def _check_set(settings: Settings) -> None:
    """--ebsperf-era, --volume-count, --device=A,B and --emulate-member-factors together."""
    o = settings.origin
    if settings.era != "now":
        _check_era(settings)
    if not 4 <= settings.runs <= MAX_RUNS:
        raise ConfigError(f"--ebsperf-runs={settings.runs} (from {o.get('runs', 'default')}) must "
                          f"be between 4 and {MAX_RUNS}: the first run is dropped and a "
                          "coefficient of variation needs three more.")
    count, devices = settings.volume_count, settings.devices
    if count is not None and not 1 <= count <= MAX_VOLUME_COUNT:
        raise ConfigError(f"--volume-count={count} (from {o['volume_count']}) must be between 1 "
                          f"and {MAX_VOLUME_COUNT} (volumes measured together as one set).")
    if len(set(devices)) != len(devices):
        raise ConfigError(f"--device={','.join(devices)} names a device twice: each member of "
                          "a set is a different volume.")
    if count is not None and len(devices) > 1 and count != len(devices):
        raise ConfigError(f"--volume-count={count} (from {o['volume_count']}) but --device "
                          f"names {len(devices)} devices: drop --volume-count (the devices "
                          "make the set) or name that many devices.")
    factors = settings.member_factors
    if factors and not settings.emulate:
        raise ConfigError("--emulate-member-factors only applies with --emulate (it slows "
                          "emulated members, not volumes).")
    if factors and len(factors) != (count or 1):
        raise ConfigError(f"--emulate-member-factors={settings.emulate_member_factors} gives "
                          f"{len(factors)} factors for --volume-count={count or 1}: give one "
                          "per member, e.g. 1,1,1,0.75 for four.")


def _check_era(settings: Settings) -> None:
    from pytest_ebsperf.models.ebs import ERAS

    if settings.era not in ERAS:
        raise ConfigError(f"{settings.era!r} (from {settings.origin.get('era', 'default')}) is "
                          f"not an era for --ebsperf-era: give one of {', '.join(ERAS)} (now: "
                          "today's specs).")


def parse_timescale(text: str, where: str = "--emulate-timescale") -> float | None:
    """``"auto"`` -> None, ``"100"`` -> 100.0; anything else is a sentence (ConfigError)."""
    value = text.strip().lower()
    if value in ("", "auto"):
        return None
    try:
        scale = float(value)
    except ValueError:
        scale = math.nan
    if not math.isfinite(scale) or scale < 1:
        raise ConfigError(f"{text!r} is not a time scale for {where}: give 'auto' or a number "
                          "of 1 or more (100 turns a 2,000 s burst into 20 s).")
    return scale


def _check_emulation_aids(settings: Settings) -> None:
    """The testing aids that shape an emulated burst bucket (only with --emulate)."""
    factor, start = settings.emulate_bucket_factor, settings.emulate_burst_balance
    if (factor is not None or start is not None) and not settings.emulate:
        raise ConfigError("--emulate-bucket-factor and --emulate-burst-balance only apply "
                          "with --emulate: they change the emulated bucket, not a volume.")
    if factor is not None and (not math.isfinite(factor) or factor <= 0):
        raise ConfigError(f"--emulate-bucket-factor must be a positive number, got "
                          f"{factor:g} (0.7 gives a bucket 30 % smaller than the model's).")
    if start is not None and not 0 <= start <= 100:
        raise ConfigError(f"--emulate-burst-balance is a percentage (0-100), got {start:g}.")
    for name, value in (("--emulate-device-factor", settings.emulate_device_factor),
                        ("--emulate-first-write-factor", settings.emulate_first_write_factor)):
        if value is None:
            continue
        if not settings.emulate:
            raise ConfigError(f"{name} only applies with --emulate: it slows an emulated "
                              "volume, not a real one.")
        if not math.isfinite(value) or not 0 < value <= 10:
            raise ConfigError(f"{name} is a share of the emulated volume's rates, above 0 and "
                              f"at most 10, got {value:g} (0.9: 10 % slower).")
