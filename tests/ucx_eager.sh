#!/bin/sh
#
# The lanes' protocol over TCP: on 2 virtual nodes (the inter-node level over UCX,
# whose only network transport here is TCP) Strata makes its UCX context with the
# eager protocol for every size (UCX_RNDV_THRESH=inf, said at debug level), unless
# the user set UCX_RNDV_THRESH, which stays; the answers are right either way,
# 8 B to 4 MB (eager sends of whole 256 KB segments and blocks, unexpected at the
# receiver while its window is full), and nothing on stderr at the default log
# level. Skipped without UCX.
#
. "${top_srcdir}/tests/common.sh"
fail=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
skip_without_ucx
st_program bench tools/strata-bench
bench="$bench -b 8 -e 4M -r 1 -i 2 -w 1"
run() { # VAR=VALUE...: local ranks inherit the environment (strata-run also -x its STRATA_*)
    env "$@" STRATA_VIRTUAL_NODES=2 STRATA_LOG_LEVEL=debug STRATA_STATS=1 \
        tools/strata-run $ST_MPIRUN -np 4 $bench >"$out" 2>"$err"
}

run
check "2 virtual nodes: the run succeeds" test $? -eq 0
check "all 20 sizes checked ok" test "$(grep -v '^#' "$out" | grep -c ' ok$')" -eq 20
check "the lanes took the network path" grep -q 'ucx: lane' "$err"
check "eager over TCP" grep -q 'TCP only: eager protocol' "$err"

# silent: the context made twice says nothing at the default log level
STRATA_VIRTUAL_NODES=2 tools/strata-run $ST_MPIRUN -np 4 $bench >"$out" 2>"$err"
check "default log level: the run succeeds" test $? -eq 0
check "default log level: empty stderr" test ! -s "$err"

run UCX_RNDV_THRESH=32K
check "with UCX_RNDV_THRESH set: the run succeeds" test $? -eq 0
check "with UCX_RNDV_THRESH set: all 20 sizes ok" \
    test "$(grep -v '^#' "$out" | grep -c ' ok$')" -eq 20
check "the user's UCX_RNDV_THRESH stays" sh -c "! grep -q 'eager protocol' '$err'"
# UCX_TLS naming no transport that reports a peer's failure (shared memory only):
# UCX cannot make the lanes' endpoints; Strata falls back (multinode) with the
# right answers and nothing on stderr (before: UCX's "no active messages
# transport ... no peer failure handler" error line, on every rank for every
# communicator, on standard output); its reason at debug level names UCX's words
STRATA_VIRTUAL_NODES=2 UCX_TLS=sm,self STRATA_STATS=1 tools/strata-run $ST_MPIRUN -np 4 \
    -x UCX_TLS $bench >"$out" 2>"$err"
check "UCX_TLS=sm,self: the run succeeds" test $? -eq 0
check "UCX_TLS=sm,self: all 20 sizes ok" test "$(grep -v '^#' "$out" | grep -c ' ok$')" -eq 20
check "UCX_TLS=sm,self: fallback multinode" grep -q 'fallback multinode=' "$err"
check "UCX_TLS=sm,self: no UCX error" sh -c "! grep -q 'UCX  *ERROR' '$out' '$err'"
run UCX_TLS=sm,self
check "UCX_TLS=sm,self: the reason at debug level" grep -q 'no UCX endpoint to lane rank .*peer failure' "$err"
exit $fail
