"""``python3 -m pytest_ebsperf COMMAND``: the plugin's tools without pytest.

    judge FILE ...        judge a fio report someone already has (judge --help)
    history --db PATH     trends, change points and a drift gate over a history database
    compare A B           two runs' verdicts as --ebsperf-compare gives them; --matrix
    plan-fleet ...        how long a fleet run takes
"""

from __future__ import annotations

import sys

USAGE = """usage: python3 -m pytest_ebsperf COMMAND ...
  judge FILE.json --volume-type=TYPE [--volume-size=GIB] [--volume-iops=N] ...  (judge --help)
  history --db PATH [--since N] [--html FILE] [--import FILE ...]          (history --help)
  compare BASELINE CANDIDATE | --db PATH --matrix CLAIM [--by instance_type] (compare --help)
  plan-fleet --hosts=N --checks=N [--workers=N] [--engine=ssh|fio-servers]  (plan-fleet --help)"""


def _main() -> int:
    command, rest = (sys.argv[1], sys.argv[2:]) if len(sys.argv) >= 2 else ("", [])
    if command == "plan-fleet":
        from pytest_ebsperf.fleet import plan_main

        return plan_main(rest)
    if command == "judge":
        from pytest_ebsperf.judge import main

        return main(rest)
    if command == "history":
        from pytest_ebsperf.trends.cli import history_main

        return history_main(rest)
    if command == "compare":
        from pytest_ebsperf.trends.cli import compare_main

        return compare_main(rest)
    print(USAGE, file=sys.stderr)
    return 4


if __name__ == "__main__":
    sys.exit(_main())
