#!/usr/bin/env bash
# The project's own tests: unit tests, pytester tests of the plugin, end-to-end runs of real
# fio on kernel-throttled loop devices (those need root and skip with a reason without it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec "${PYTHON:-python3}" -m pytest tests "$@"
