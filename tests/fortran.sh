#!/bin/sh
#
# A Fortran program gets Strata through strata-run, with "use mpi" and with
# "use mpi_f08". Open MPI's own Fortran bindings call PMPI_Init, PMPI_Allreduce
# and PMPI_Finalize directly, so without Strata's Fortran entry points: no fast
# calls and no statistics from MPI_FINALIZE (mpi_f08: none of either before its
# back-ends were taken), and a knob set on some ranks only hung the job (MPI_INIT
# skipped the ranks' agreement on the knobs). A Fortran MPI_COMM_FREE marks the dying
# communicator as the C one does.
#
. "${top_srcdir}/tests/common.sh"
command -v mpifort >/dev/null 2>&1 || { echo "no mpifort: skipped"; exit 77; }
dir=$(mktemp -d)
out="$dir/out" err="$dir/err"
trap 'rm -rf "$dir"' EXIT
fail=0 ran=0

# each binding with MPI_INIT, and with MPI_INIT_THREAD
for variant in mpi mpi_f08 mpi+thread mpi_f08+thread; do
    prog="$dir/fortran_$variant"
    binding=${variant%+thread}
    def="" what="use $binding"
    [ "$binding" = mpi_f08 ] && def="-DST_F08"
    if [ "$variant" != "$binding" ]; then
        def="$def -DST_THREAD" what="$what, MPI_INIT_THREAD"
    fi
    if ! mpifort $def -o "$prog" "$top_srcdir/tests/fortran_allreduce.F90" \
            >"$dir/build.log" 2>&1; then
        cat "$dir/build.log"
        echo "mpifort cannot build a '$what' program here: not checked"
        continue
    fi
    ran=$((ran + 1))

    # 4 calls on each of 2 ranks, all on the fast path; printed by Strata's finalize
    STRATA_STATS=1 timeout -k 5 120 tools/strata-run $ST_MPIRUN -np 2 "$prog" >"$out" 2>"$err"
    check "$what: the program ends well" test $? -eq 0
    check "$what: right answers" grep -q 'fortran_allreduce: OK' "$out"
    check "$what: 8 fast calls, no fallback" \
        grep -q '\[strata job\].* fast 8 calls.*fallback none' "$err"

    # a knob on rank 0 only: MPI_INIT agrees on rank 0's (800 KB took two paths)
    timeout -k 5 120 tools/strata-run $ST_MPIRUN -np 1 env STRATA_SMALL_MSG=1M "$prog" : \
        -np 1 "$prog" >"$out" 2>"$err"
    check "$what: SMALL_MSG on rank 0 only: the job ends well" test $? -eq 0
    check "$what: SMALL_MSG: right answers" grep -q 'fortran_allreduce: OK' "$out"
    check "$what: SMALL_MSG: named once, by rank 0" \
        test "$(grep -c '^\[strata 0\] WARN: STRATA_SMALL_MSG is not the same' "$err")" -eq 1
done

# MPI_COMM_FREE of communicators whose attribute's delete callback (a C library's)
# calls MPI_Allreduce on them: the job ends well (before: MPI_FINALIZE aborted)
prog="$dir/fortran_commfree"
if mpicc -c -o "$dir/commfree_lib.o" "$top_srcdir/tests/fortran_commfree_lib.c" \
        >"$dir/build.log" 2>&1 &&
   mpifort -o "$prog" "$top_srcdir/tests/fortran_commfree.F90" "$dir/commfree_lib.o" \
        >>"$dir/build.log" 2>&1; then
    ran=$((ran + 1))
    timeout -k 5 120 tools/strata-run $ST_MPIRUN -np 2 "$prog" >"$out" 2>"$err"
    check "MPI_COMM_FREE with a delete callback: the job ends well" test $? -eq 0
    check "MPI_COMM_FREE with a delete callback: right answers" \
        grep -q 'fortran_commfree: OK' "$out"
else
    cat "$dir/build.log"
    echo "cannot build the MPI_COMM_FREE program here: not checked"
fi
if [ $ran -eq 0 ]; then
    echo "no Fortran binding could be built: skipped"
    exit 77
fi
exit $fail
