#!/bin/sh
#
# UCX lanes under a small descriptor limit: over TCP each lane's endpoint is a socket
# to its peer and another accepted from it, and UCX that runs out of descriptors
# fails inside its progress (accept() errors on stderr, an assertion in its TCP
# transport: 4 ranks on 2 virtual nodes under ulimit -n 64, 50 communicators alive,
# aborted). A lane that would leave fewer than 64 descriptors free is not made, and
# its communicator goes to Open MPI: every result right, nothing printed; with room
# for about 20 lanes above the margin, some communicators have lanes and some not.
#
. "${top_srcdir}/tests/common.sh"
fail=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
skip_without_ucx
if [ -n "$ST_SANITIZERS" ]; then
    echo "SKIP: a sanitizer's runtime holds descriptors of its own"
    exit 77
fi
st_program churn tests/test_churn
# churn LIMIT: test_churn on 2 virtual nodes under ulimit -n LIMIT; $out, $err, $rc
churn_under() {
    (
        ulimit -n "$1" || exit 99
        STRATA_VIRTUAL_NODES=2 UCX_TLS=tcp,self STRATA_STATS=1 \
            timeout -k 5 240 tools/strata-run $ST_MPIRUN -np 4 -x STRATA_VIRTUAL_NODES \
            -x UCX_TLS -x STRATA_STATS $churn --cycles 160 --batch-every 80 --warmup 100 \
            --lanes-may-fail --verbose
    ) >"$out" 2>"$err"
    rc=$?
}
# the fallback count of the job's stats line
fell_back() { sed -n 's/^\[strata job\].*multinode=\([0-9]*\).*/\1/p' "$err"; }

# Open MPI alone must run under ulimit -n 64 here, or the limit tests nothing of ours
(STRATA_ENABLE=n && export STRATA_ENABLE && churn_under 64 && exit $rc)
if [ $? -ne 0 ]; then
    echo "SKIP: Open MPI alone does not run under ulimit -n 64 here"
    exit 77
fi
# 64: no room for any lane (before: UCX's accept() errors, then its assertion)
churn_under 64
check "ulimit -n 64: the job succeeds" test $rc -eq 0
check "ulimit -n 64: every result right" grep -q "^test_churn: PASS" "$out"
check "ulimit -n 64: nothing from UCX" test "$(grep -c 'UCX\|Assertion' "$err")" -eq 0
none=$(fell_back)
# the ranks' own descriptors without lanes (28 here), and room above the margin for
# about 20 lanes of a peer each (there: 100): lanes while there is room, Open MPI
# for the rest
base=$(awk '$3 == "warm-up" && $5 > max { max = $5 } END { print max + 0 }' "$out")
limit=$((base + 64 + 40))
echo "ranks' own descriptors: $base; second limit $limit"
churn_under $limit
check "ulimit -n $limit: the job succeeds" test $rc -eq 0
check "ulimit -n $limit: every result right" grep -q "^test_churn: PASS" "$out"
check "ulimit -n $limit: nothing from UCX" test "$(grep -c 'UCX\|Assertion' "$err")" -eq 0
some=$(fell_back)
check "ulimit -n $limit: some communicators without a lane ($some), fewer than at 64 ($none)" \
    test "${some:-0}" -gt 0 -a "${some:-0}" -lt "${none:-0}"
exit $fail
