#!/bin/sh
#
# A Fortran program ("use mpi") gets Strata through strata-run: Open MPI's own
# Fortran bindings call PMPI_Allreduce directly, so this fails without Strata's
# Fortran entry points (no fast calls, and no statistics from MPI_FINALIZE).
#
. "${top_srcdir}/tests/common.sh"
command -v mpifort >/dev/null 2>&1 || { echo "no mpifort: skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if ! mpifort -o "$dir/fortran_allreduce" "$top_srcdir/tests/fortran_allreduce.f90" \
        >"$dir/build.log" 2>&1; then
    cat "$dir/build.log"
    echo "mpifort cannot build a Fortran MPI program here: skipped"
    exit 77
fi
fail=0
STRATA_STATS=1 tools/strata-run $ST_MPIRUN -np 2 "$dir/fortran_allreduce" \
    >"$dir/out" 2>"$dir/err"
rc=$?
if [ $rc -ne 0 ] || ! grep -q 'fortran_allreduce: OK' "$dir/out"; then
    echo "FAIL: the Fortran program (exit $rc)"; fail=1
fi
# 4 calls on each of 2 ranks, all on the fast path; printed by Strata's finalize
if ! grep -q '\[strata job\].* fast 8 calls.*fallback none' "$dir/err"; then
    echo "FAIL: expected 8 fast calls and no fallback in the statistics"; fail=1
fi
if [ $fail -ne 0 ]; then
    echo "--- stdout"; cat "$dir/out"; echo "--- stderr"; cat "$dir/err"
fi
exit $fail
