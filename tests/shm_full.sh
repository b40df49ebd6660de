#!/bin/sh
#
# A full /dev/shm: Strata's segment cannot be had, so the communicator falls back
# to Open MPI's allreduce, with one warning that says why, and the job computes the
# same answer. (Before the pages were reserved at setup, the first allreduce died
# of SIGBUS.) Runs in a mount namespace of its own with a 256 KB /dev/shm; skipped
# where that is not allowed. Open MPI's own segment goes to /tmp meanwhile.
#
. "${top_srcdir}/tests/common.sh"
fail=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
if ! unshare -m sh -c 'mount -t tmpfs -o size=256k tmpfs /dev/shm' 2>/dev/null; then
    echo "SKIP: no mount namespace with a tmpfs of our own here"
    exit 77
fi
demo="examples/allreduce_demo 300000 4"
strip() { sed 's/allreduce time.*//' "$1"; }
# small_shm COMMAND...: run it where /dev/shm holds 256 KB
small_shm() {
    unshare -m sh -c 'mount -t tmpfs -o size=256k tmpfs /dev/shm && exec "$@"' sh "$@"
}
mpirun_tmp="$ST_MPIRUN --mca btl_vader_backing_directory /tmp -np 2"

$mpirun_tmp $demo >"$out" 2>"$err"
check "Open MPI alone" test $? -eq 0
ref=$(strip "$out")

# a named POSIX segment (in /dev/shm): falls back, says why once, same answer
STRATA_SHM_METHOD=posix STRATA_STATS=1 small_shm tools/strata-run $mpirun_tmp $demo \
    >"$out" 2>"$err"
check "posix segment, /dev/shm full: the job succeeds" test $? -eq 0
check "same answer as Open MPI" test "$(strip "$out")" = "$ref"
check "one warning naming the reason" \
    test "$(grep -c 'WARN: no shared-memory segment .*No space left on device' "$err")" -eq 1
check "every call fell back for that reason" grep -q '\[strata job\].* fast 0 calls.*fallback shm=8' "$err"

# an anonymous memfd segment does not live in /dev/shm: the fast path, silently
STRATA_STATS=1 small_shm tools/strata-run $mpirun_tmp $demo >"$out" 2>"$err"
check "memfd segment, /dev/shm full: the job succeeds" test $? -eq 0
check "same answer (memfd)" test "$(strip "$out")" = "$ref"
check "the fast path (memfd)" grep -q '\[strata job\].* fast 8 calls.*fallback none' "$err"
check "no warning (memfd)" test "$(grep -c WARN "$err")" -eq 0
exit $fail
