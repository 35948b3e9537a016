"""Make tests/durations.json (each test's seconds, what tests/conftest.py deals the tests of
scripts/test.sh's passes out by, longest first) from a run that recorded them:

    EBSPERF_TEST_DURATIONS=/tmp/seconds.txt bash scripts/test.sh
    python3 scripts/test_durations.py /tmp/seconds.txt

Each test's setup, call and teardown are added up; a test the run did not record keeps the
seconds it had, a test that is gone from the tree is dropped."""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "tests" / "durations.json"


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_file():
        print("usage: python3 scripts/test_durations.py SECONDS_FILE (written by a run of "
              "scripts/test.sh with EBSPERF_TEST_DURATIONS=SECONDS_FILE)", file=sys.stderr)
        return 2
    seen: collections.Counter[str] = collections.Counter()
    for line in Path(argv[0]).read_text().splitlines():
        nodeid, _, seconds = line.rpartition(" ")
        if nodeid:
            seen[nodeid] += float(seconds)
    known = json.loads(TARGET.read_text()) if TARGET.exists() else {}
    known.update({nodeid: round(total, 1) for nodeid, total in seen.items()})
    files = {nodeid.split("::")[0] for nodeid in known}
    gone = {f for f in files if not (ROOT / f).exists()}
    kept = {n: s for n, s in known.items() if n.split("::")[0] not in gone and s >= 0.5}
    TARGET.write_text(json.dumps(dict(sorted(kept.items(), key=lambda kv: -kv[1])), indent=0)
                      + "\n")
    print(f"{TARGET.relative_to(ROOT)}: {len(kept)} tests of 0.5 s or more")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
