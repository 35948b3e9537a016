#!/usr/bin/env bash
# Installs everything pytest-ebsperf and its tests need on a fresh Debian/Ubuntu machine:
# fio and the block-device tools from apt, the package (editable) and its test extras from pip.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
need_apt=0
for tool in fio losetup blkid mkfs.ext4 sfdisk ip nsenter ssh /usr/sbin/sshd gcc pkg-config \
            chromium-headless-shell; do
  command -v "$tool" >/dev/null 2>&1 || need_apt=1
done
# emulated latency builds a small FUSE daemon (pytest_ebsperf/emulate/latfs.c) with libfuse3
[ -e /usr/include/fuse3/fuse_lowlevel.h ] || need_apt=1
if [ "$need_apt" -eq 1 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq fio util-linux e2fsprogs fdisk iproute2 openssh-client openssh-server gcc pkg-config libfuse3-dev >/dev/null
  # the history page's charts are checked in a real headless browser (Debian's package);
  # without it that one test is skipped, saying so
  command -v chromium-headless-shell >/dev/null 2>&1 ||
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium-headless-shell >/dev/null ||
    echo "pytest-ebsperf: chromium-headless-shell is not in this machine's apt sources; the browser test will be skipped"
fi
# The interpreter the package goes into: $PYTHON, else the first python3 on PATH (a
# virtualenv's when one is active). Said, so a CI log shows where it went.
PY=${PYTHON:-python3}
echo "pytest-ebsperf: installing into $("$PY" -c 'import sys; print(sys.executable)') ($("$PY" --version 2>&1))"
# Once per checkout and interpreter: the second of the README's two commands finds the
# package already installed from here (same setup.cfg, same interpreter) and skips pip (16 s).
stamp=".install-stamp"
want="$("$PY" -c 'import sys; print(sys.executable)') $(cksum < setup.cfg)"
here="$(cd / && "$PY" -c 'import os, pytest_ebsperf; print(os.path.dirname(os.path.dirname(pytest_ebsperf.__file__)))' 2>/dev/null || true)"
if [ "$here" != "$PWD" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  "$PY" -m pip install -q --disable-pip-version-check -e ".[test]"
  echo "$want" > "$stamp"
fi
# An editable install is not byte-compiled, and where PYTHONDONTWRITEBYTECODE is set no run
# writes the cache either: every pytest, guardian and CLI process would compile the package
# again (0.3 s of CPU each). Compiled once here; a changed source is recompiled as usual.
"$PY" -m compileall -q pytest_ebsperf >/dev/null
