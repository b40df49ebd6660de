#!/bin/sh
#
# A Python program gets Strata through strata-run: mpi4py's Allreduce on numpy
# buffers (tests/mpi4py_allreduce.py: dtypes x ops x sizes x in place x
# communicators, checked against references made in the script and for the same
# bytes on every rank, a user-defined op). On 3 ranks of one node, then on 4 ranks
# as 2 virtual nodes over UCX's TCP. The calls must be Strata's (fast-path calls
# in the statistics; handed to Open MPI only the user-defined op and the one-rank
# halves), and nothing else may reach stderr. (Open MPI 4.1 alone fails the
# script: its int8 and uint8 sums saturate.) Skips without a python3 that has
# mpi4py and numpy (Debian: python3-mpi4py, python3-numpy).
#
. "${top_srcdir}/tests/common.sh"
py=""
for p in ${PYTHON:-} /usr/bin/python3 python3; do
    if "$p" -c 'import mpi4py.MPI, numpy' >/dev/null 2>&1; then py=$p; break; fi
done
[ -n "$py" ] || { echo "no python3 with mpi4py and numpy: skipped"; exit 77; }
# a sanitizer build: Python's own allocations at exit are no leak of Strata's (the
# other tests check Strata's); AddressSanitizer's other checks stay on
if [ -n "${ST_SANITIZERS:-}" ]; then
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    export ASAN_OPTIONS
fi
dir=$(mktemp -d)
out="$dir/out" err="$dir/err"
trap 'rm -rf "$dir"' EXIT
fail=0
script="$top_srcdir/tests/mpi4py_allreduce.py"

# NP ENV... : one run, its checks; WANT_FALLBACK the job line's fallback reasons
run() {
    np=$1 want=$2; shift 2
    STRATA_STATS=1 timeout -k 5 180 tools/strata-run $ST_MPIRUN -np "$np" env "$@" \
        "$py" "$script" >"$out" 2>"$err"
    rc=$?
    what="$np ranks${*:+ ($*)}"
    check "$what: the script ends well" test $rc -eq 0
    check "$what: every check held" grep -q "^mpi4py_allreduce: OK .* on $np ranks" "$out"
    check "$what: fast-path calls" \
        grep -Eq '^\[strata job\] all ranks, all comms +ranks '"$np"' +fast [1-9][0-9]* calls' "$err"
    check "$what: handed to Open MPI: $want" \
        grep -Eq "^\[strata job\] .*; fallback $want\$" "$err"
    check "$what: nothing but the statistics on stderr" \
        test "$(grep -vc '^\[strata ' "$err")" -eq 0
}
run 3 "comm-size-1=[0-9]+ user-op=3" STRATA_LOG_LEVEL=warn
run 4 "user-op=4" STRATA_VIRTUAL_NODES=2 UCX_TLS=tcp,self
[ $fail -eq 0 ] && echo "mpi4py: PASS"
exit $fail
