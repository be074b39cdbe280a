#!/usr/bin/env bash
# Installs the Debian packages flagtune needs, when they are missing:
#   bash tests/deps.sh          what the tests need: the build, and the tools the tests drive
#   bash tests/deps.sh --demo   only what building flagtune and running the demo need
# Run by tests/demo.sh (--demo), tests/run.sh and .ci/run.
set -eu
build=(build-essential cmake pkg-config liblua5.4-dev libsqlite3-dev libuv1-dev libcjson-dev)
tests=(sqlite3 dash zsh ksh fish # sqlite3 for the read tests; every shell `export` names is
                                 # sourced by tests/e2e/test_export_shells.sh
       tmux             # the live view's terminal test (tests/e2e/test_progress.sh)
       chromium         # tests/e2e/test_report.sh opens the HTML report in headless Chromium
       slurmctld slurmd slurm-client munge) # the Slurm executor's tests (tests/slurm/local.sh)
case "${1:-}" in
  --demo) need=("${build[@]}") ;;
  "") need=("${build[@]}" "${tests[@]}") ;;
  *)
    echo "usage: tests/deps.sh [--demo]" >&2
    exit 2
    ;;
esac
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
