#!/usr/bin/env bash
# Installs the Debian packages flagtune needs to build and test, when they are missing.
# Sourced or run by tests/demo.sh, tests/run.sh and .ci/run.
set -eu
need=(build-essential cmake pkg-config liblua5.4-dev libsqlite3-dev libuv1-dev libcjson-dev
      sqlite3 dash zsh tmux # tmux: the live view's terminal test (tests/e2e/test_progress.sh)
      ksh fish # every shell `export` names is sourced by tests/e2e/test_export_shells.sh
      chromium # tests/e2e/test_report.sh opens the HTML report in headless Chromium
      slurmctld slurmd slurm-client munge) # the Slurm executor's tests (tests/slurm/local.sh)
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "flagtune: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi
