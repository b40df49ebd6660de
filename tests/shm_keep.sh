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

# A segment of all 4 ranks, then the two halves at once: with STRATA_SHM_SIZE=240K the
# 4 ranks' segment has the bytes of a half's, and every rank of each half held it.
# Only the ranks that shared it, all of them, may take it: each half makes its own
# (before, both took the one segment and reduced in it at the same time: wrong sums)
STRATA_LOG_LEVEL=debug STRATA_SHM_SIZE=240K timeout -k 5 120 $ST_MPIRUN -np 4 \
    -x STRATA_LOG_LEVEL -x STRATA_SHM_SIZE tests/test_shm_keep --halves --cycles 2 \
    >"$out" 2>"$err"
check "halves: the sums are right" test $? -eq 0
check "halves: test_shm_keep passed" grep -q "^test_shm_keep: PASS" "$out"
for r in 0 1 2 3; do
    check "halves: rank $r: 2 segments made, none taken" \
        test "$(made $r)" -eq 2 -a "$(kept $r)" -eq 0
done

# The same over 2 virtual nodes (ranks 0 1 | 2 3) on UCX's TCP: each plan's lane
# (ranks 0 2, ranks 1 3) is kept too (coll/st_ucx.c, st_ucx_lane_keep) and taken by
# the next plan over the same ranks, so of the 12 communicators ranks 0 and 2 make 2
# lanes (step 3's second alive at once), ranks 1 and 3 make 3 (step 2: rank 1 holds
# its old plan, so rank 3's kept lane is not taken, and goes; step 3: rank 1's copy
# of it then goes the same way). Before, every communicator made its lanes.
if tools/strata-info | grep -q 'UCX yes'; then
    STRATA_LOG_LEVEL=debug STRATA_VIRTUAL_NODES=2 UCX_TLS=tcp,self timeout -k 5 120 \
        $ST_MPIRUN -np 4 -x STRATA_LOG_LEVEL -x STRATA_VIRTUAL_NODES -x UCX_TLS \
        -x UCX_NET_DEVICES tests/test_shm_keep --cycles 6 >"$out" 2>"$err"
    check "lanes: the sums are right" test $? -eq 0
    check "lanes: test_shm_keep passed" grep -q "^test_shm_keep: PASS" "$out"
    lines() { grep "^\[strata $1:[0-9]*\] DEBUG .*ucx: lane [0-9]*: rank [0-9]* of" "$err"; }
    for r in 0 1 2 3; do
        made=$((2 + r % 2))
        check "lanes: rank $r: $made lanes made" \
            test "$(lines $r | grep -vc "(kept from a communicator freed)")" -eq $made
        check "lanes: rank $r: $((12 - made)) lanes kept and taken" \
            test "$(lines $r | grep -c "(kept from a communicator freed)")" -eq $((12 - made))
    done
    check "lanes: a kept lane not held by every rank is said" \
        grep -q "ucx: lane [0-9]*: kept, not on every rank of the lane: a new one" "$err"
else
    echo "lanes: SKIP: built without UCX"
fi
exit $fail
