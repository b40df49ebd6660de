#!/bin/bash
#
# The fault cases of RELIABILITY.md, each run once, with what happened and how long
# the job took to end: bench/faults/run.sh (from a built tree, as root; the
# /dev/shm case needs mount namespaces). Prints a markdown table.
#
cd "$(dirname "$0")/../.." || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
MPIRUN="mpirun --bind-to none"
long="allreduce_demo 300000 $((100000000 + $$))"
err=$(mktemp)
trap 'rm -f "$err"' EXIT
shm_count() { ls /dev/shm 2>/dev/null | grep -c -i strata; }
row() { printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4"; }
since() { awk -v a="$1" -v b="$(date +%s.%N)" -v d="${2:-0}" 'BEGIN { printf "%.1f", b - a - d }'; }
first_line() { grep -m1 -E "$1" "$err" | cut -c1-110 | sed 's/|/\\|/g'; }

# kill_case NAME NP DELAY [ENV...]: SIGKILL one rank of a long job after DELAY s
kill_case() {
    local name=$1 np=$2 delay=$3 t0 rc victim
    shift 3
    env "$@" tools/strata-run $MPIRUN -np "$np" examples/$long >/dev/null 2>"$err" &
    job=$!
    sleep "$delay"
    victim=$(pgrep -f "^examples/$long" | tail -n 1)
    kill -KILL "$victim"
    t0=$(date +%s.%N)
    ( sleep 90; kill -KILL $job 2>/dev/null ) &
    wd=$!
    wait $job
    rc=$?
    kill $wd 2>/dev/null
    sleep 1
    row "$name" "exit $rc; $(first_line 'noticed|Strata|strata|ERROR|error' )" \
        "$(since "$t0" 1)" "$(shm_count)"
}

echo "| case | outcome (exit code; first message) | seconds to exit | left in /dev/shm |"
echo "|---|---|---|---|"
kill_case "rank SIGKILLed mid-allreduce, one node, memfd segment" 3 3 STRATA_SHM_METHOD=memfd
kill_case "rank SIGKILLed mid-allreduce, one node, POSIX segment" 3 3 STRATA_SHM_METHOD=posix
kill_case "rank SIGKILLed mid-allreduce, 2 virtual nodes (UCX lanes)" 4 4 STRATA_VIRTUAL_NODES=2

if unshare -m true 2>/dev/null; then
    t0=$(date +%s.%N)
    STRATA_SHM_METHOD=posix STRATA_STATS=1 unshare -m sh -c 'mount -t tmpfs -o size=256k tmpfs /dev/shm &&
        exec tools/strata-run mpirun --bind-to none --mca btl_vader_backing_directory /tmp -np 2 examples/allreduce_demo 300000 4' \
        >/dev/null 2>"$err"
    rc=$?
    row "/dev/shm full (256 KB), POSIX segment" "exit $rc; $(first_line WARN); $(first_line 'strata job' | sed 's/.*fast/fast/')" \
        "$(since "$t0")" "$(shm_count)"
fi

t0=$(date +%s.%N)
STRATA_VIRTUAL_NODES=2 STRATA_STATS=1 UCX_TLS=no_such_transport tools/strata-run $MPIRUN -np 4 \
    examples/allreduce_demo 300000 4 >/dev/null 2>"$err"
rc=$?
row "UCX cannot start (UCX_TLS=no_such_transport), 2 virtual nodes" \
    "exit $rc; $(first_line 'strata job' | sed 's/.*fast/fast/')" \
    "$(since "$t0")" "$(shm_count)"

t0=$(date +%s.%N)
STRATA_SHM_SIZE=lots STRATA_STATS=1 tools/strata-run $MPIRUN -np 2 examples/allreduce_demo 300000 4 \
    >/dev/null 2>"$err"
rc=$?
row "malformed STRATA_SHM_SIZE=lots" "exit $rc; $(first_line 'STRATA_SHM_SIZE')" \
    "$(since "$t0")" "$(shm_count)"
