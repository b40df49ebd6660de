#!/bin/sh
#
# Knobs the ranks' algorithms depend on, set differently on some ranks (as a plain
# mpirun does with the launching shell's variables on a multi-host job: only the
# ranks of its own host get them): every rank takes rank 0's value, rank 0 names
# the knob once, and the job neither hangs nor gives a wrong answer (before: a
# hang at the first call where the paths differ, at MPI_Init with virtual nodes,
# or at MPI_Finalize with the statistics). Launched MPMD: "A : B". Where MPI was
# initialized without Strata's MPI_Init, a communicator whose ranks differ uses
# PMPI_Allreduce.
#
. "${top_srcdir}/tests/common.sh"
fail=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
bench="tools/strata-bench -b 8 -e 256K -r 1"
demo="tools/strata-run examples/allreduce_demo 200000 5"   # preloaded
run() { timeout -k 5 120 $ST_MPIRUN "$@" >"$out" 2>"$err"; }
warned() { # variable: named once, by rank 0
    test "$(grep -c "^\[strata 0\] WARN: STRATA_$1 is not the same on every rank" "$err")" -eq 1 &&
        test "$(grep -c "STRATA_$1" "$err")" -eq 1
}

# 1. the latency path's threshold on two ranks of four: 32 KB took two paths
run -np 2 env STRATA_SMALL_MSG=64K $bench : -np 2 $bench
check "SMALL_MSG on 2 of 4 ranks: the job ends well" test $? -eq 0
check "SMALL_MSG: every size checked ok" test "$(grep -c ' ok$' "$out")" -eq 16
check "SMALL_MSG: named once, by rank 0" warned SMALL_MSG
check "SMALL_MSG: rank 0's value said" grep -q "all use rank 0's, 64K" "$err"

# 2. virtual nodes on two ranks of four (rank 0 has none): MPI_Init's split
run -np 2 $bench : -np 2 env STRATA_VIRTUAL_NODES=2 $bench
check "VIRTUAL_NODES on 2 of 4 ranks: the job ends well" test $? -eq 0
check "VIRTUAL_NODES: every size checked ok" test "$(grep -c ' ok$' "$out")" -eq 16
check "VIRTUAL_NODES: named once, by rank 0" warned VIRTUAL_NODES

# 3. statistics on rank 0 only: its reduction at MPI_Finalize
run -np 1 env STRATA_STATS=1 $demo : -np 1 $demo
check "STATS on rank 0 only: the job ends well" test $? -eq 0
check "STATS: the job summary" grep -q '\[strata job\].* fast 10 calls' "$err"
check "STATS: named once, by rank 0" warned STATS

# 4. disabled on rank 0 only: disabled everywhere, nothing counted
run -np 1 env STRATA_ENABLE=n STRATA_STATS=1 $demo : -np 2 env STRATA_STATS=1 $demo
check "ENABLE=n on rank 0: the job ends well" test $? -eq 0
check "ENABLE: named once, by rank 0" warned ENABLE
check "ENABLE: no statistics (disabled everywhere)" test "$(grep -c 'fast' "$err")" -eq 0
check "ENABLE: the same answer" grep -q 'distance to optimum' "$out"

# 5. a knob each rank may hold for itself: silent
run -np 1 env STRATA_SPIN_COUNT=5 STRATA_SHM_NT=y $bench : -np 1 $bench
check "SPIN_COUNT, SHM_NT on one rank: the job ends well" test $? -eq 0
check "SPIN_COUNT, SHM_NT: nothing said" test ! -s "$err"

# 6. MPI initialized behind Strata's back (tests/test_lazy_init calls PMPI_Init): no
# agreement at MPI_Init, so each new communicator checks its ranks' knobs (before: a
# threshold on one rank gave wrong sums, a chunk size a bus error)
lazy=tests/test_lazy_init
run -np 2 $lazy
check "PMPI_Init, the same knobs: Strata's path" grep -qx "fast 12 config 0" "$out"
check "PMPI_Init, the same knobs: nothing said" test ! -s "$err"
# (CHECK_ARGS on one rank, ENABLE=n on another: before, a hang at the first call)
for knob in SMALL_MSG=1M SHM_CHUNK=4K CHECK_ARGS=y ENABLE=n; do
    if [ "$knob" = ENABLE=n ]; then   # rank 0 enabled, to count and say it
        run -np 2 $lazy : -np 1 env STRATA_$knob $lazy
    else
        run -np 1 env STRATA_$knob $lazy : -np 2 $lazy
    fi
    check "PMPI_Init, $knob on one rank only: the job ends well" test $? -eq 0
    check "PMPI_Init, $knob: exact sums, handed to PMPI_Allreduce" grep -qx "fast 0 config 12" "$out"
    check "PMPI_Init, $knob: said once, by rank 0" \
        test "$(grep -c "^\[strata 0\] WARN: the ranks' STRATA_\* settings differ" "$err")" -eq 1
done

# 7. the same, MPI_Allreduce on all ranks but the last (test_lazy_init --split), the
# statistics asked for: MPI_Finalize reduces them over every rank, whether Strata
# was set up there or not (before: a hang), and also when only one rank asks
run -np 3 env STRATA_STATS=1 $lazy --split
check "PMPI_Init, statistics, a split: the job ends well" test $? -eq 0
check "PMPI_Init, statistics, a split: exact sums" grep -qx "ok" "$out"
check "PMPI_Init, statistics, a split: the job's line" \
    grep -q "^\[strata job\] all ranks, all comms *ranks 3 *fast 24 calls" "$err"
# (its bytes: 2 ranks, each 12 sums of 486385 doubles in all: 7782160 bytes)
check "PMPI_Init, statistics, a split: the job's bytes" \
    grep -q "^\[strata job\] all ranks, all comms .* fast 24 calls 7\.782 MB " "$err"
run -np 1 $lazy --split : -np 1 env STRATA_STATS=1 $lazy --split : -np 1 $lazy --split
check "PMPI_Init, statistics on rank 1 only: the job ends well" test $? -eq 0
check "PMPI_Init, statistics on rank 1 only: exact sums" grep -qx "ok" "$out"

# 8. STRATA_SMALL_MSG=auto from each rank's own facts: 2 ranks see 8 CPUs
# (tests/fake/libnprocs.so: a rank each, 8K for 4 ranks), 2 see the machine's 2
# (oversubscribed: 16K); the segment's ranks take the least, so 8-16 KB calls take
# one path (before: a hang)
np8="env LD_PRELOAD=${ST_SAN_RUNTIME:+$ST_SAN_RUNTIME:}tests/fake/libnprocs.so FAKE_NPROCS=8"
run -np 2 $np8 tools/strata-info --topo : -np 2 tools/strata-info --topo
check "CPUs seen differently: the layout" grep -q "latency path up to 8192 bytes" "$out"
run -np 2 $np8 tools/strata-bench -b 4K -e 32K -r 1 : -np 2 tools/strata-bench -b 4K -e 32K -r 1
check "CPUs seen differently: the job ends well" test $? -eq 0
check "CPUs seen differently: every result checked" \
    test "$(grep -c ' ok$' "$out")" -eq 4

# 9. an invalid value and an unknown name on rank 1 only (another host's shell, say):
# rank 1 says them itself (before: only rank 0's own were said, so these were lost);
# the same mistake on every rank is said once, by rank 0
run -np 1 $bench : -np 1 env STRATA_SHM_NT=perhaps STRATA_SPIN_CNT=5 $bench
check "invalid on rank 1 only: the job ends well" test $? -eq 0
check "invalid on rank 1 only: every size checked ok" test "$(grep -c ' ok$' "$out")" -eq 16
check "invalid on rank 1 only: rank 1 says the value" \
    test "$(grep -c '^\[strata 1\] WARN: invalid STRATA_SHM_NT' "$err")" -eq 1
check "invalid on rank 1 only: rank 1 says the unknown name" \
    test "$(grep -c '^\[strata 1\] WARN: unknown variable STRATA_SPIN_CNT' "$err")" -eq 1
check "invalid on rank 1 only: nothing else" test "$(wc -l <"$err")" -eq 2
run -np 2 env STRATA_SHM_NT=perhaps $bench
check "invalid on every rank: the job ends well" test $? -eq 0
check "invalid on every rank: said once, by rank 0" \
    test "$(grep -c '^\[strata 0\] WARN: invalid STRATA_SHM_NT' "$err")" -eq 1
check "invalid on every rank: nothing else" test "$(wc -l <"$err")" -eq 1

exit $fail
