#!/bin/sh
#
# make fuzz-run: run each libFuzzer target of $FUZZ_TARGETS for $FUZZ_SECONDS seconds,
# one after the other, on a scratch copy of its seeds and regression inputs
# (fuzz-work/NAME/corpus: the committed corpus does not grow). Prints the executions
# of each; a crash, leak, timeout or failed check stops that target, leaves its input
# in fuzz-work/NAME/ (the path is printed) and makes the run fail.
#
#   FUZZ_SECONDS=60 FUZZ_TARGETS="svm bin" sh tests/fuzz/run.sh SRCDIR
#
# Extra libFuzzer flags may be given in FUZZ_FLAGS (e.g. -seed=1).
srcdir=${1:-.}
seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-svm bin model config coll}
# the coll target starts MPI as a singleton: root in containers and CI
OMPI_ALLOW_RUN_AS_ROOT=1
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM

failed=""
printf '%-8s %8s %12s %10s %8s  %s\n' target seconds execs execs/s corpus result
for t in $targets; do
    bin=tests/fuzz/fuzz-$t
    work=fuzz-work/$t
    if [ ! -x "$bin" ]; then
        echo "fuzz-run: $bin not built (make fuzz)" >&2
        exit 1
    fi
    rm -rf "$work"
    mkdir -p "$work/corpus"
    for d in "$srcdir/tests/fuzz/corpus/$t" "$srcdir/tests/fuzz/regress/$t"; do
        [ -d "$d" ] && find "$d" -maxdepth 1 -type f -exec cp {} "$work/corpus/" \;
    done
    dict=""
    [ -f "$srcdir/tests/fuzz/$t.dict" ] && dict="-dict=$srcdir/tests/fuzz/$t.dict"
    # shellcheck disable=SC2086
    "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
        -print_final_stats=1 -artifact_prefix="$work/" $dict $FUZZ_FLAGS "$work/corpus" \
        >"$work/log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -n 1)
    [ "${rate:-0}" -gt 0 ] 2>/dev/null || rate=$(( ${execs:-0} / seconds ))
    size=$(find "$work/corpus" -type f | wc -l)
    if [ $rc -eq 0 ]; then
        result=ok
    else
        crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$work/log" | tail -n 1)
        result="FAILED (exit $rc): ${crash:-no input written} (log: $work/log)"
        failed="$failed $t"
    fi
    printf '%-8s %8s %12s %10s %8s  %s\n' "$t" "$seconds" "${execs:-?}" "${rate:-?}" "$size" \
        "$result"
    if [ $rc -ne 0 ]; then
        # what failed, from the log (CI keeps the output, not fuzz-work/)
        grep -E 'fuzz check failed|ERROR:|runtime error|SUMMARY' "$work/log" | head -n 5 |
            sed "s/^/    $t: /" >&2
    fi
done
if [ -n "$failed" ]; then
    echo "fuzz-run: failed:$failed (reproduce: tests/fuzz/fuzz-NAME INPUT; add the input to" \
         "tests/fuzz/regress/NAME/ with the fix)" >&2
    exit 1
fi
