"""Record the golden credit series: real fio runs on emulated volumes with a credit bucket.

    sudo python3 tests/data/credits/capture.py          # about 2 minutes

Each JSON file holds the per-second series the runner built from fio's logs (``t_s``,
``values`` in ``unit``), the model's knee (``expected_knee_s``) and the true knee: when the
emulated bucket switched the throttle to its baseline, measured from the first I/O the
cgroup counted (``true_knee_s``, None when the run had none). The tests compare what the
analysis finds with those recorded facts, never with numbers typed in.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2] / "benchmarks"))

from bench_credits import knee_run

RECORDINGS = {
    # A full 100 GiB gp2 at time scale 200: 3,000 IOPS for 10 s, then 300.
    "gp2_knee": {"scale": 200.0},
    # The same with fio stopped (SIGSTOP) for 2 s after 3 s: a short dip mid-burst.
    "gp2_knee_dip": {"scale": 200.0, "dip": (3.0, 2.0)},
    # A bucket 30 % smaller than the model's: the knee comes at 7 s, not 10.
    "gp2_small_bucket": {"scale": 200.0, "bucket_factor": 0.7},
    # Stopped long before the knee: burst level throughout, no knee.
    "gp2_no_knee_burst": {"scale": 50.0, "extra_s": -30.0},
    # An empty bucket the model did not expect: baseline throughout, no knee.
    "gp2_empty_start": {"scale": 200.0, "start_pct": 0.0, "extra_s": -2.0},
    # st1 2 TiB, sequential 1 MiB reads: 500 MiB/s, then 80 MiB/s.
    "st1_knee": {"volume_type": "st1", "scale": 500.0, "pattern": "read", "bs": "1m"},
}


def main() -> None:
    for name, options in RECORDINGS.items():
        run = knee_run(**options)  # type: ignore[arg-type]
        (HERE / f"{name}.json").write_text(json.dumps(run, indent=1) + "\n")
        print(f"{name}: {len(run['values'])} windows, true knee {run['true_knee_s']}")


if __name__ == "__main__":
    main()
