#!/bin/sh
#
# A memory limit below Strata's segment (a batch job's or a container's memory
# cgroup): inside a cgroup, reserving a tmpfs file's pages does not fail but calls
# the cgroup's OOM killer, so the segment is not made where it would leave less than
# 32 MB of what the cgroup (or the host) has free; the communicator falls back to Open
# MPI's allreduce with one warning, and the job computes the same answer. (Before, a
# rank was killed and the job ended with 137.) Runs the job in a memory cgroup of
# 256 MB of its own (cgroup v1's memory controller, or v2 where this process may make
# one); skipped where that is not allowed.
#
. "${top_srcdir}/tests/common.sh"
fail=0
out=$(mktemp) err=$(mktemp)
cg=
trap 'rm -f "$out" "$err"; [ -n "$cg" ] && rmdir "$cg" 2>/dev/null' EXIT
limit=$((256 * 1024 * 1024))
if [ -d /sys/fs/cgroup/memory ] && mkdir "/sys/fs/cgroup/memory/strata-test.$$" 2>/dev/null; then
    cg=/sys/fs/cgroup/memory/strata-test.$$
    echo $limit >"$cg/memory.limit_in_bytes" 2>/dev/null || cg_bad=1
elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null &&
     mkdir "/sys/fs/cgroup/strata-test.$$" 2>/dev/null; then
    cg=/sys/fs/cgroup/strata-test.$$
    echo $limit >"$cg/memory.max" 2>/dev/null || cg_bad=1
fi
if [ -z "$cg" ] || [ -n "$cg_bad" ] || ! sh -c "echo \$\$ >'$cg/cgroup.procs'" 2>/dev/null; then
    echo "SKIP: no memory cgroup of our own here"
    exit 77
fi
demo="examples/allreduce_demo 300000 4"
strip() { sed 's/allreduce time.*//' "$1"; }
# in_cgroup COMMAND...: run it in the 256 MB cgroup
in_cgroup() {
    sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}
mpirun2="timeout -k 5 120 $ST_MPIRUN -np 2"

in_cgroup $mpirun2 $demo >"$out" 2>"$err"
check "Open MPI alone" test $? -eq 0
ref=$(strip "$out")

# a segment of 64 MB chunks (402 MB for 2 ranks) in 256 MB: falls back, says why once
STRATA_SHM_CHUNK=64M STRATA_STATS=1 in_cgroup tools/strata-run $mpirun2 $demo >"$out" 2>"$err"
check "segment above the cgroup's limit: the job succeeds" test $? -eq 0
check "same answer as Open MPI" test "$(strip "$out")" = "$ref"
check "one warning naming the reason" \
    test "$(grep -c 'WARN: no shared-memory segment .*Cannot allocate memory' "$err")" -eq 1
check "every call fell back for that reason" grep -q '\[strata job\].* fast 0 calls.*fallback shm=8' "$err"

# the default segment fits: the fast path, silently
STRATA_STATS=1 in_cgroup tools/strata-run $mpirun2 $demo >"$out" 2>"$err"
check "default segment in the cgroup: the job succeeds" test $? -eq 0
check "same answer (default segment)" test "$(strip "$out")" = "$ref"
check "the fast path (default segment)" grep -q '\[strata job\].* fast 8 calls.*fallback none' "$err"
check "no warning (default segment)" test "$(grep -c WARN "$err")" -eq 0
exit $fail
