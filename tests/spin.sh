#!/bin/sh
#
# STRATA_SPIN_COUNT=auto: waits yield at once when the job's ranks on this
# machine's cores outnumber them, counted by the kernel the ranks share (its boot
# id), not by MPI's hosts: virtual nodes, and hosts that are network namespaces or
# containers of one machine, share its cores. Before: only a node's own ranks were
# counted, so 4 ranks as 2 virtual nodes (or 2 namespace hosts x 2 ranks) on 2 cores
# spun 1000 polls per wait, and 8 B took 170-210 us on 4 namespace hosts against
# 60-80 us yielding. And where the ranks do not outnumber the cores, waits spin.
#
. "${top_srcdir}/tests/common.sh"
fail=0
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
ncpu=$(getconf _NPROCESSORS_ONLN)

# the spin counts the segments and lanes of a job print (STRATA_LOG_LEVEL=debug)
spins() {
    sed -n 's/.*\(segment\|ucx: lane\) .*spin \([0-9]*\).*/\2/p' "$err" | sort -u | tr '\n' ' '
}
# NP EXPECTED WHAT ENV...: every segment and lane of a small job spins EXPECTED
job() {
    np=$1 want=$2 what=$3; shift 3
    timeout -k 5 120 $ST_MPIRUN -np "$np" env STRATA_LOG_LEVEL=debug "$@" \
        tools/strata-bench -b 8 -e 64K -r 1 >"$out" 2>"$err"
    check "$what: the job ends well" test $? -eq 0
    got=$(spins)
    check "$what: every wait spins $want (got: $got)" test "$got" = "$want "
}

if [ "$ncpu" -lt 4 ]; then
    job 4 0 "4 ranks, 2 virtual nodes, $ncpu cores" STRATA_VIRTUAL_NODES=2 UCX_TLS=tcp,self
else
    echo "$ncpu cores: 4 ranks do not outnumber them (not checked)"
fi
if [ "$ncpu" -ge 2 ]; then
    job 2 1000 "2 ranks, one node, $ncpu cores"
fi
# a set count is kept, oversubscribed or not
job 4 7 "4 ranks, 2 virtual nodes, STRATA_SPIN_COUNT=7" STRATA_VIRTUAL_NODES=2 STRATA_SPIN_COUNT=7
[ $fail -eq 0 ] && echo "spin: PASS"
exit $fail
