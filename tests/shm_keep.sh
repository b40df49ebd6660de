#!/bin/sh
#
# A communicator's node segment is kept when it is freed and taken by the next
# communicator over the same ranks (coll/st_shm.c): tests/test_shm_keep on 3 ranks,
# its sums checked, and the debug log's count of segments made and kept. Before,
# every communicator made its own (the reservation of its pages 0.85 ms of a 2-rank
# plan's 1.4 ms set-up, bench/RESULTS.md).
#
. "${top_srcdir}/tests/common.sh"
fail=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

kept() { grep -c "^\[strata $1:[0-9]*\] DEBUG .*segment [0-9]* bytes (kept from a communicator freed)" "$err"; }
made() { grep "^\[strata $1:[0-9]*\] DEBUG .*segment [0-9]* bytes" "$err" | grep -vc "(kept from"; }

for method in memfd posix; do
    STRATA_LOG_LEVEL=debug STRATA_SHM_METHOD=$method timeout -k 5 120 $ST_MPIRUN -np 3 \
        -x STRATA_LOG_LEVEL -x STRATA_SHM_METHOD tests/test_shm_keep --cycles 6 >"$out" 2>"$err"
    check "$method: the sums are right" test $? -eq 0
    check "$method: test_shm_keep passed" grep -q "^test_shm_keep: PASS" "$out"
    # 12 communicators: the first of step 1 makes a segment, its 5 others take it;
    # step 2's first takes it, its second makes one (rank 1 still holds the first);
    # step 3's first two: one taken, one made (one was kept by every rank), then both
    # of the next two taken
    for r in 0 1 2; do
        check "$method: rank $r: 3 segments made" test "$(made $r)" -eq 3
        check "$method: rank $r: 9 segments kept and taken" test "$(kept $r)" -eq 9
    done
    check "$method: a segment not held by every rank is said" \
        grep -q "a kept segment of [0-9]* bytes is not on every rank: a new one" "$err"
done
exit $fail
