#!/bin/sh
#
# An unmodified MPI program (examples/allreduce_demo, built without Strata) gets
# Strata's MPI_Allreduce through strata-run, in both launch forms; it computes
# the same answer; a healthy run prints nothing on stderr; STRATA_STATS reports.
#
. "${top_srcdir}/tests/common.sh"
fail=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
demo="examples/allreduce_demo 200000 5"
strip() { sed 's/allreduce time.*//' "$1"; }

# reference: Open MPI alone
$ST_MPIRUN -np 2 $demo >"$out" 2>"$err"
check "plain run succeeds" test $? -eq 0
ref=$(strip "$out")

# 1. strata-run mpirun ...: every rank preloaded, STRATA_* forwarded
STRATA_STATS=1 tools/strata-run $ST_MPIRUN -np 2 $demo >"$out" 2>"$err"
check "strata-run mpirun succeeds" test $? -eq 0
check "same answer as Open MPI" test "$(strip "$out")" = "$ref"
check "stats: 10 fast calls over the job" grep -q '\[strata job\].* fast 10 calls' "$err"
check "stats: no fallback" grep -q 'fallback none' "$err"

# 2. mpirun ... strata-run prog
STRATA_STATS=1 $ST_MPIRUN -np 2 -x STRATA_STATS tools/strata-run $demo >"$out" 2>"$err"
check "mpirun strata-run succeeds" test $? -eq 0
check "same answer (inner form)" test "$(strip "$out")" = "$ref"
check "stats (inner form)" grep -q '\[strata job\].* fast 10 calls' "$err"

# 2b. an MPMD job ("A : B") and an appfile: every app context preloaded (mpirun's
# "-x NAME=VALUE" reaches the first context only, and no appfile line: the other
# ranks ran Open MPI's allreduce against Strata's, and hung)
STRATA_STATS=1 timeout -k 5 120 tools/strata-run $ST_MPIRUN -np 1 $demo : -np 1 $demo \
    >"$out" 2>"$err"
check "strata-run mpirun A : B succeeds" test $? -eq 0
check "same answer (A : B)" test "$(strip "$out")" = "$ref"
check "stats (A : B): both ranks" grep -q '\[strata job\].*ranks 2 .* fast 10 calls' "$err"
app=$(mktemp)
printf '# an appfile: a comment, then one line per app context\n-np 1 %s\n\n-np 1 %s\n' \
    "$demo" "$demo" >"$app"
STRATA_STATS=1 timeout -k 5 120 tools/strata-run $ST_MPIRUN --app "$app" >"$out" 2>"$err"
check "strata-run mpirun --app succeeds" test $? -eq 0
check "same answer (--app)" test "$(strip "$out")" = "$ref"
check "stats (--app): both ranks" grep -q '\[strata job\].*ranks 2 .* fast 10 calls' "$err"
rm -f "$app"
tools/strata-run $ST_MPIRUN --app "$app" >"$out" 2>"$err"
check "--app with no such file: refused" test $? -eq 2
check "--app with no such file: named" grep -q "$app: cannot read" "$err"

# 2c. the user's own -x LD_PRELOAD (mpirun keeps the last -x of a name): libstrata
# goes in front of it, on the command line and in an appfile (before: not loaded)
libc=$(ldd /bin/sh | awk '/libc\.so/ { print $3 }')
STRATA_STATS=1 tools/strata-run $ST_MPIRUN -np 2 -x "LD_PRELOAD=$libc" $demo >"$out" 2>"$err"
check "user's -x LD_PRELOAD: succeeds" test $? -eq 0
check "user's -x LD_PRELOAD: Strata loaded too" \
    grep -q '\[strata job\].*ranks 2 .* fast 10 calls' "$err"
app=$(mktemp)
printf -- '-np 2 -x LD_PRELOAD=%s %s\n' "$libc" "$demo" >"$app"
STRATA_STATS=1 timeout -k 5 120 tools/strata-run $ST_MPIRUN --app "$app" >"$out" 2>"$err"
check "appfile's -x LD_PRELOAD: Strata loaded too" \
    grep -q '\[strata job\].*ranks 2 .* fast 10 calls' "$err"
rm -f "$app"

# 3. silent by default
tools/strata-run $ST_MPIRUN -np 3 $demo >"$out" 2>"$err"
check "healthy 3-rank run succeeds" test $? -eq 0
check "healthy run: empty stderr" test ! -s "$err"

# 4. STRATA_ENABLE=n: pass-through, nothing reported
STRATA_ENABLE=n STRATA_STATS=1 tools/strata-run $ST_MPIRUN -np 2 $demo >"$out" 2>"$err"
check "disabled run succeeds" test $? -eq 0
check "disabled: no statistics" test ! -s "$err"

# 5. a malformed value is named, the default used, the job unharmed
STRATA_SMALL_MSG=lots tools/strata-run $ST_MPIRUN -np 2 $demo >"$out" 2>"$err"
check "bad value: job succeeds" test $? -eq 0
check "bad value: warning names the variable" grep -q 'STRATA_SMALL_MSG' "$err"
check "bad value: one warning, from rank 0 only" test "$(grep -c 'STRATA_SMALL_MSG' "$err")" -eq 1

# 6. the demo's own arguments: a dimension written 1e6, 10x or past an int is bad
# usage, named (before: atoi took 1e6 for 1 and 10x for 10, silently, and 3000000000
# overflowed into "dimension > 0")
for arg in 1e6 10x 3000000000 0; do
    expect 2 "allreduce_demo $arg" $ST_MPIRUN -np 1 examples/allreduce_demo "$arg" 2
    contains "allreduce_demo $arg: named" "allreduce_demo: invalid dimension '$arg'"
done
expect 2 "allreduce_demo 1000 2x" $ST_MPIRUN -np 1 examples/allreduce_demo 1000 2x
contains "allreduce_demo 1000 2x: named" "allreduce_demo: invalid steps '2x'"

# 7. an install with the runtime's file only (libstrata.so.0, as a distribution's
# runtime package has it, without the development link libstrata.so): strata-run
# preloads it by its soname (before: "libstrata.so not found")
inst=$(mktemp -d)
mkdir "$inst/bin" "$inst/lib"
cp tools/strata-run "$inst/bin/"
cp -P .libs/libstrata.so.[0-9]* "$inst/lib/"
soname=$(cd "$inst/lib" && ls libstrata.so.[0-9]* | sort | head -n 1)
installed=$(sed -n 's|^ *for c in "\$here/../.libs/libstrata.so" "\([^"]*\)".*|\1|p' tools/strata-run)
if [ -n "$installed" ] && [ -f "$installed" ]; then
    echo "note: $installed exists: the runtime-only install check skipped"
else
    got=$("$inst/bin/strata-run" --lib 2>"$err")
    check "runtime-only install: strata-run --lib finds $soname" \
        test "$got" = "$inst/lib/$soname"
    got=$("$inst/bin/strata-run" sh -c 'echo "$LD_PRELOAD"' 2>"$err")
    # (one of the list: a sanitizer build preloads its runtime first, and a preload
    # of the environment's stays after it)
    case ":$got:" in
        *":$inst/lib/$soname:"*) preloaded=1 ;;
        *) preloaded=0 ;;
    esac
    check "runtime-only install: the soname preloaded" test "$preloaded" -eq 1
fi
rm -rf "$inst"

exit $fail
