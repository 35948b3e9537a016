"""``python3 -m pytest_ebsperf judge FILE ...``: judge a fio report without pytest;
``python3 -m pytest_ebsperf plan-fleet ...``: how long a fleet run takes."""

from __future__ import annotations

import sys


def _main() -> int:
    if len(sys.argv) >= 2 and sys.argv[1] == "plan-fleet":
        from pytest_ebsperf.fleet import plan_main

        return plan_main(sys.argv[2:])
    if len(sys.argv) < 2 or sys.argv[1] != "judge":
        print("usage: python3 -m pytest_ebsperf judge FILE.json --volume-type=TYPE "
              "[--volume-size=GIB] [--volume-iops=N] ... (judge --help)\n"
              "       python3 -m pytest_ebsperf plan-fleet --hosts=N --checks=N "
              "[--workers=N] [--engine=ssh|fio-servers] ... (plan-fleet --help)",
              file=sys.stderr)
        return 4
    from pytest_ebsperf.judge import main

    return main(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(_main())
