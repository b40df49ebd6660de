#!/bin/sh
#
# STRATA_STATS in a job that makes and frees communicators by the hundred
# (tests/test_churn): the report at MPI_Finalize stays a few lines, one for all
# the freed communicators, not one per communicator ever made.
#
. "${top_srcdir}/tests/common.sh"
fail=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
churn="tests/test_churn --cycles 600 --warmup 500"

# rank 0: the freed communicators' line and the job's (the test reduces on no
# communicator it keeps alive)
STRATA_STATS=1 timeout -k 5 120 $ST_MPIRUN -np 2 $churn >"$out" 2>"$err"
check "STRATA_STATS=1: the run succeeds" test $? -eq 0
check "STRATA_STATS=1: two lines" test "$(wc -l <"$err")" -eq 2
check "STRATA_STATS=1: the freed communicators in one line" \
    grep -Eq '^\[strata 0\] \(([5-9][0-9]{2}|[0-9]{4,}) freed comms\) +ranks - +fast [1-9]' "$err"
check "STRATA_STATS=1: the job's totals" \
    grep -Eq '^\[strata job\] all ranks, all comms +ranks 2 +fast [1-9]' "$err"

# every rank: its freed line, and the job's
STRATA_STATS=2 timeout -k 5 120 $ST_MPIRUN -np 2 $churn >"$out" 2>"$err"
check "STRATA_STATS=2: the run succeeds" test $? -eq 0
check "STRATA_STATS=2: three lines" test "$(wc -l <"$err")" -eq 3
check "STRATA_STATS=2: rank 1's freed communicators" \
    grep -q '^\[strata 1\] ([0-9]* freed comms)' "$err"
exit $fail
