#!/usr/bin/env bash
# scripts/test-cpu.sh FILE... — the exact CPU time of one `bun test` run of the given test
# files: every process the run starts, the job supervisors that leave its session included,
# counted by a cgroup-v1 cpuacct group of its own (Linux, as root), so runs side by side do
# not mix. Process accounting rounds each short process down to 10 ms and /usr/bin/time
# misses the detached ones; the suite starts ~38,000 processes, so both mislead here.
# The whole suite keeps both cores busy from start to end: its wall time is its CPU / 2.
#
#   npm run build && bash scripts/test-cpu.sh test/e2e/outlive.test.ts
set -euo pipefail
cd "$(dirname "$0")/.."
root=/sys/fs/cgroup/cpuacct
[ -w "$root" ] || { echo "test-cpu: needs a writable cgroup-v1 cpuacct hierarchy at $root (Linux, root)" >&2; exit 2; }
cg="$root/dl-test-cpu.$$"
mkdir "$cg"
log=$(mktemp)
trap 'rm -f "$log"; rmdir "$cg" 2>/dev/null || true' EXIT
export PATH="$PWD/node_modules/.bin:$PATH"
start=$(date +%s%N)
set +e
(echo "$BASHPID" > "$cg/cgroup.procs"; exec bun test --timeout 60000 "$@" > "$log" 2>&1)
rc=$?
set -e
end=$(date +%s%N)
# Supervisors may outlive the run by a moment: wait until the group is empty (at most 10 s).
for _ in $(seq 100); do [ -z "$(cat "$cg/cgroup.procs")" ] && break; sleep 0.1; done
grep -E '^ *[0-9]+ (pass|fail)$|expect\(\) calls|^\(fail\)' "$log" || true
left=$(wc -l < "$cg/cgroup.procs")
echo "cpu $(awk -v u="$(cat "$cg/cpuacct.usage")" 'BEGIN { printf "%.2f", u / 1e9 }') s, wall $(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", (e - s) / 1e9 }') s, exit $rc, still running $left"
exit "$rc"
