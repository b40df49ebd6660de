#!/bin/sh
#
# Nothing survives a job: no shared-memory segment or file after a normal exit,
# after mpirun is told to stop, or after a rank is killed with SIGKILL; and a
# killed rank ends the job instead of hanging it. Both segment methods; and a rank
# killed in a job of two virtual nodes (the inter-node level over UCX).
#
. "${top_srcdir}/tests/common.sh"
# A /dev/shm of its own (a mount namespace, where one is allowed): the suite runs two
# tests at once (quickstart: make -j2 check), and another's segments or files there
# (churn-3's POSIX segments, glm_outputs' directory) would count as this test's.
if [ -z "${ST_CLEANUP_OWN_SHM:-}" ] &&
   unshare -m sh -c 'mount -t tmpfs tmpfs /dev/shm' 2>/dev/null; then
    ST_CLEANUP_OWN_SHM=1 exec unshare -m sh -c 'mount -t tmpfs tmpfs /dev/shm && exec sh "$0"' \
        "$0"
fi
fail=0
err=$(mktemp)
trap 'rm -f "$err"' EXIT
# a step count of our own, so pgrep finds this test's ranks and nobody else's
long="allreduce_demo 300000 $((100000000 + $$))"

shm_count() { ls /dev/shm 2>/dev/null | grep -c -i strata; }
before=$(shm_count)

check() {
    name="$label: $1"; shift
    if ! "$@"; then
        echo "FAIL: $name"; cat "$err"; fail=1
    fi
}

# kill_a_rank NP DELAY: start a long job on NP ranks, SIGKILL one rank after DELAY
# seconds; the job must end within 60 s and fail, no rank may survive, and nothing
# may be left in /dev/shm
kill_a_rank() {
    tools/strata-run $ST_MPIRUN -np "$1" examples/$long >/dev/null 2>"$err" &
    job=$!
    sleep "$2"
    victim=$(pgrep -f "^examples/$long" | tail -n 1)
    if [ -n "$victim" ]; then
        kill -KILL "$victim"
        t0=$(date +%s)
        ( sleep 60; kill -KILL $job 2>/dev/null ) &
        watchdog=$!
        wait $job
        rc=$?
        kill $watchdog 2>/dev/null
        check "SIGKILL of a rank ends the job within 60 s" test $(( $(date +%s) - t0 )) -lt 60
        check "the job reports failure" test $rc -ne 0
    else
        echo "FAIL: $label: no rank process found"; fail=1
        kill -KILL $job 2>/dev/null
    fi
    sleep 1
    check "no rank survives" test -z "$(pgrep -f "$long")"
    check "SIGKILL leaves nothing in /dev/shm" test "$(shm_count)" -eq "$before"
}

for STRATA_SHM_METHOD in memfd posix; do
    export STRATA_SHM_METHOD
    label=$STRATA_SHM_METHOD

    # 1. normal exit; the statistics prove the shared-memory path ran
    STRATA_STATS=1 tools/strata-run $ST_MPIRUN -np 3 examples/allreduce_demo 300000 3 \
        >/dev/null 2>"$err"
    check "normal run" test $? -eq 0
    check "fast path used" grep -q '\[strata job\].* fast 9 calls' "$err"
    check "normal run leaves nothing in /dev/shm" test "$(shm_count)" -eq "$before"

    # 2. mpirun stopped with SIGTERM in the middle of a long run
    tools/strata-run $ST_MPIRUN -np 3 examples/$long >/dev/null 2>"$err" &
    job=$!
    sleep 3
    kill -TERM $job
    t0=$(date +%s)
    wait $job
    check "SIGTERM ends the job within 60 s" test $(( $(date +%s) - t0 )) -lt 60
    sleep 1
    check "SIGTERM leaves nothing in /dev/shm" test "$(shm_count)" -eq "$before"

    # 3. one rank killed with SIGKILL mid-collective: the job must end, not hang
    kill_a_rank 3 3
done

# 4. across (virtual) nodes: a rank killed while the UCX lanes carry its slices
unset STRATA_SHM_METHOD
label="virtual nodes"
STRATA_VIRTUAL_NODES=2
export STRATA_VIRTUAL_NODES
kill_a_rank 4 4
exit $fail
