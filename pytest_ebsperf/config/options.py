"""Every setting of the plugin, declared once: its flag, ini key, environment variable, type and
help text (:data:`OPTIONS`), and the defaults that depend on no other setting.

The plugin registers these with pytest (``plugin/``); :mod:`pytest_ebsperf.config.settings`
resolves them into a :class:`~pytest_ebsperf.config.settings.Settings`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_ebsperf.awsmodel import volume_types

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
           "TYPE", "volume type: " + ", ".join(volume_types.names()) + "."),
    Option("volume_size", "--volume-size", "ebsperf_volume_size", "EBSPERF_VOLUME_SIZE", "int",
           "GIB", "volume size in GiB."),
    Option("volume_iops", "--volume-iops", "ebsperf_volume_iops", "EBSPERF_VOLUME_IOPS", "int",
           "N", "provisioned IOPS (gp3, io1, io2)."),
    Option("volume_throughput", "--volume-throughput", "ebsperf_volume_throughput",
           "EBSPERF_VOLUME_THROUGHPUT", "float", "MIBPS", "provisioned throughput in MiB/s (gp3)."),
    Option("volume_init_rate", "--volume-init-rate", "ebsperf_volume_init_rate",
           "EBSPERF_VOLUME_INIT_RATE", "float", "MIBPS", "the volume was restored from a "
           "snapshot with this Provisioned Rate for Volume Initialization (100-300 MiB/s; "
           "discovered on EC2): its first read of every block is checked against it (B-INIT)."),
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
           "run each, judged on the blocks' pairs. Default: 10 on a device, 1 on an "
           "emulated volume."),
    Option("runs", "--ebsperf-runs", "ebsperf_runs", "EBSPERF_RUNS", "int", "N",
           "runs of a run-to-run stability check (S1-09); the first is dropped, so at least "
           "4. With 10, a volume as steady as seed 001's (CV 1-2 percent) passes and one "
           "varying by 30 percent fails, each nearly always (docs/claims.md has the table).",
           10),
    Option("ramp", "--ebsperf-ramp", "ebsperf_ramp", "EBSPERF_RAMP", "float", "SECONDS",
           "warm-up before measuring. Default: 2 on a device, 0.5 on an emulated volume "
           "(0.25 before each block of emulated twins compared in turn)."),
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
           "after its first I/O.", None),
    Option("emulate_timescale", "--emulate-timescale", None, "EBSPERF_EMULATE_TIMESCALE", "str",
           "N", "shrink emulated burst buckets N times (rates unchanged) so a 2,000 s knee "
           "comes after 2,000/N s; the model's times shrink alike. 'auto' makes a full "
           "bucket last about 30 s.", "auto"),
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
