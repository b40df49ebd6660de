#!/bin/sh
#
# The tools' output files are written whole or not at all: strata-gen's text and
# binary sets and strata-predict's predictions are written next to the file and
# renamed over it, so a write that fails half-way (the file size limit, as a full
# disk) leaves the old file as it was and no temporary behind (in /dev/shm too);
# standard output and named pipes are written in place; a training set is renamed in
# only once its --test-out set is written too. A binary set whose
# header was never written is named as such (not read as text). Outputs that would
# overwrite an input are refused on every rank, with no hang, also when only one
# rank sees it (ranks with files of their own) and through a dangling symbolic link.
# An output that is a directory is refused before the work. A writer ended by SIGTERM,
# SIGINT or SIGHUP leaves the old file and no temporary.
#
. "${top_srcdir}/tests/common.sh"
fail=0
dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-outputs.XXXXXX") || exit 99
out="$dir/out"
trap 'rm -rf "$dir"' EXIT
gen=tools/strata-gen
run="timeout -k 5 120 $ST_MPIRUN"

# unchanged NAME FILE COPY: FILE still holds what COPY holds, and no temporary of
# FILE is left next to it
unchanged() {
    cmp -s "$2" "$3" || { echo "FAIL: $1: $(basename "$2") changed"; fail=1; }
    if ls "$2".tmp.* >/dev/null 2>&1; then
        echo "FAIL: $1: a temporary was left: $(ls "$2".tmp.*)"; fail=1
    fi
}

# 1. strata-gen over an existing set, failing half-way (a 100-block file size limit)
for fmt in bin svm; do
    expect 0 "gen $fmt" $gen dense -n 200 -d 5 -f $fmt -q "$dir/old.$fmt"
    cp "$dir/old.$fmt" "$dir/keep.$fmt"
    expect 1 "gen $fmt past the size limit" \
        sh -c "trap '' XFSZ; ulimit -f 100; exec $gen dense -n 3000 -d 100 -f $fmt -q $dir/old.$fmt"
    unchanged "gen $fmt past the size limit" "$dir/old.$fmt" "$dir/keep.$fmt"
done

# 1b. a training and a test set, the test set failing (its rows past the size limit):
# both files as they were (before: the new training rows beside the old test rows,
# drawn from another planted model, exit 1 after the first was renamed in)
for fmt in bin svm; do
    echo "old training rows" >"$dir/pair.$fmt"
    echo "old test rows" >"$dir/pair-test.$fmt"
    cp "$dir/pair.$fmt" "$dir/pair.keep"
    cp "$dir/pair-test.$fmt" "$dir/pair-test.keep"
    expect 1 "gen $fmt, the test set past the size limit" \
        sh -c "trap '' XFSZ; ulimit -f 100; exec $gen dense -n 20 -d 100 -f $fmt -q \
        --test-rows 3000 --test-out $dir/pair-test.$fmt $dir/pair.$fmt"
    unchanged "gen $fmt, the test set past the size limit: training set" "$dir/pair.$fmt" \
        "$dir/pair.keep"
    unchanged "gen $fmt, the test set past the size limit: test set" "$dir/pair-test.$fmt" \
        "$dir/pair-test.keep"
    expect 0 "gen $fmt, a training and a test set" $gen dense -n 20 -d 100 -f $fmt -q \
        --test-rows 30 --test-out "$dir/pair-test.$fmt" "$dir/pair.$fmt"
    expect 0 "gen $fmt, the pair trains" tools/strata-train -q "$dir/pair.$fmt" "$dir/pair.model"
    if ls "$dir"/pair*.tmp.* >/dev/null 2>&1; then
        echo "FAIL: gen $fmt, a training and a test set: a temporary was left"; fail=1
    fi
done

# 2. a binary set whose header is zero (an older writer killed before writing it)
cp "$dir/old.bin" "$dir/zero.bin"
dd if=/dev/zero of="$dir/zero.bin" bs=128 count=1 conv=notrunc 2>/dev/null
expect 1 "zero header" tools/strata-train -q "$dir/zero.bin" "$dir/zero.model"
contains "zero header named" "zero.bin: starts with zero bytes.*incomplete binary file"

# 3. strata-predict over existing predictions, failing half-way
expect 0 "train" tools/strata-train -q "$dir/old.svm" "$dir/m.model"
expect 0 "gen test rows" $gen dense -n 3000 -d 5 -q -s 2 "$dir/test.svm"
echo "old predictions" >"$dir/p.txt"
cp "$dir/p.txt" "$dir/p.keep"
expect 1 "predict past the size limit" $run -np 1 sh -c "trap '' XFSZ; ulimit -f 2; exec \
    tools/strata-predict -q $dir/test.svm $dir/m.model $dir/p.txt"
contains "predict past the size limit named" "p.txt: .*(the file is unchanged)"
unchanged "predict past the size limit" "$dir/p.txt" "$dir/p.keep"

# outputs that are no regular file are written in place, not replaced: standard output
# through /dev/stdout (before: "No such file or directory"), a named pipe (before:
# replaced by a file, its reader left waiting)
tools/strata-predict -q "$dir/test.svm" "$dir/m.model" /dev/stdout >"$dir/stdout.txt" 2>"$out"
rc=$?
[ $rc -eq 0 ] && [ "$(wc -l <"$dir/stdout.txt")" -eq 3000 ] ||
    { echo "FAIL: predictions to /dev/stdout: exit $rc, $(wc -l <"$dir/stdout.txt") lines"; cat "$out"; fail=1; }
mkfifo "$dir/fifo"
timeout 60 cat "$dir/fifo" >"$dir/fifo.txt" &
reader=$!
expect 0 "predictions into a named pipe" timeout 60 tools/strata-predict -q "$dir/test.svm" \
    "$dir/m.model" "$dir/fifo"
wait $reader
[ -p "$dir/fifo" ] && cmp -s "$dir/fifo.txt" "$dir/stdout.txt" ||
    { echo "FAIL: predictions into a named pipe: not received, or the pipe replaced"; fail=1; }

# 4. the test rows through a dangling link to the training rows' file: refused
ln -s "$dir/new.svm" "$dir/t.svm"
expect 2 "--test-out linked to the output" $gen dense -n 100 -d 5 --test-rows 10 \
    --test-out "$dir/t.svm" "$dir/new.svm"
[ ! -e "$dir/new.svm" ] || { echo "FAIL: a refused strata-gen wrote its output"; fail=1; }

# 5. an output that is the input on rank 1 only (each rank in a directory of its own,
# rank 1's output a link to its training file): both ranks refuse, and rank 1's data
# stays. one_rank NAME TOOL ARGS PATTERN: TOOL run in each rank's directory with ARGS
one_rank() {
    expect 2 "$1" $run -np 2 sh -c \
        'cd "$0/d$OMPI_COMM_WORLD_RANK" && exec "$@"' "$dir" "$PWD/$2" $3
    contains "$1: named" "$4"
    cmp -s "$dir/d1/train.svm" "$dir/d1.keep" || { echo "FAIL: $1: rank 1's data changed"; fail=1; }
}
mkdir "$dir/d0" "$dir/d1"
cp "$dir/old.svm" "$dir/d0/train.svm"
cp "$dir/old.svm" "$dir/d1/train.svm"
cp "$dir/old.svm" "$dir/d1.keep"
ln -s train.svm "$dir/d1/m.model"
one_rank "the model file is the data on one rank" tools/strata-train "-q train.svm m.model" \
    "the model file m.model is the training file on another rank"
rm "$dir/d1/m.model"
cp "$dir/m.model" "$dir/d0/m.model"
cp "$dir/m.model" "$dir/d1/m.model"
ln -s train.svm "$dir/d1/p.txt"
one_rank "the predictions are the data on one rank" tools/strata-predict \
    "-q train.svm m.model p.txt" "the output file p.txt is the test file on another rank"

# 6. a file name near NAME_MAX (255 bytes) still gets a temporary (its name cut to
# fit): a model write that fails half-way leaves the old model (before: written in
# place, truncated, "(the file is unchanged)" all the same); one that succeeds leaves
# no temporary
long=$(printf 'm%.0s' $(seq 1 245))
printf 'old model\n' >"$dir/$long"
cp "$dir/$long" "$dir/long.keep"
expect 0 "gen wide rows" $gen dense -n 50 -d 2000 -q -s 3 "$dir/wide.svm"
expect 1 "a long model name past the size limit" $run -np 1 sh -c "trap '' XFSZ; ulimit -f 4; \
    exec tools/strata-train -q -r 5 $dir/wide.svm $dir/$long"
contains "a long model name past the size limit named" "cannot write the model: .*(the file is unchanged)"
unchanged "a long model name past the size limit" "$dir/$long" "$dir/long.keep"
expect 0 "a long model name" tools/strata-train -q "$dir/old.svm" "$dir/$long"
cmp -s "$dir/$long" "$dir/m.model" || { echo "FAIL: a long model name: not the model"; fail=1; }
if ls "$dir"/mmmm*.tmp.* >/dev/null 2>&1; then
    echo "FAIL: a long model name: a temporary was left"; fail=1
fi

# 7. a directory that takes no new file (not the user's) holding a file the user may
# write: rewritten in place, as fopen would; a write failing half-way says that what
# the file held is lost (before: "(the file is unchanged)"). As root, a user of no
# privilege (setpriv), where there is one.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 &&
    setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
    mkdir "$dir/ro"
    cp "$dir/p.keep" "$dir/ro/p.txt"
    chown 65534:65534 "$dir/ro/p.txt"
    chmod 755 "$dir" "$dir/ro"
    chmod 644 "$dir/test.svm" "$dir/m.model"
    expect 1 "predict in place past the size limit" setpriv --reuid=65534 --regid=65534 \
        --clear-groups $run -np 1 sh -c "trap '' XFSZ; ulimit -f 2; exec tools/strata-predict \
        -q $dir/test.svm $dir/m.model $dir/ro/p.txt"
    contains "predict in place past the size limit named" \
        "p.txt: .*rewritten in place.*what it held is lost"
    expect 0 "predict in place" setpriv --reuid=65534 --regid=65534 --clear-groups \
        tools/strata-predict -q "$dir/test.svm" "$dir/m.model" "$dir/ro/p.txt"
    cmp -s "$dir/ro/p.txt" "$dir/stdout.txt" || { echo "FAIL: predict in place: not the predictions"; fail=1; }
fi

# 8. a file in /dev/shm is a file like any other: written next to it and renamed
# (before: every path in /dev was written in place, as /dev/stdout is, and a run
# that failed half-way left the user's file half written)
if [ -d /dev/shm ] && shm=$(mktemp -d /dev/shm/strata-outputs.XXXXXX 2>/dev/null); then
    trap 'rm -rf "$dir" "$shm"' EXIT
    cp "$dir/keep.svm" "$shm/old.svm"
    expect 1 "gen in /dev/shm past the size limit" \
        sh -c "trap '' XFSZ; ulimit -f 100; exec $gen dense -n 3000 -d 100 -q $shm/old.svm"
    unchanged "gen in /dev/shm past the size limit" "$shm/old.svm" "$dir/keep.svm"
    rm -rf "$shm"
fi

# 9. an output that is a directory: refused before the work, naming it (before:
# strata-train trained, then failed to write the model; strata-predict printed the
# metrics first)
mkdir "$dir/adir"
expect 1 "train, the model a directory" tools/strata-train -q "$dir/old.svm" "$dir/adir"
contains "train, the model a directory: named" "adir: cannot write the model: .*adir is a directory"
if grep -q "after .* rounds" "$out"; then
    echo "FAIL: train, the model a directory: refused after the training"; cat "$out"; fail=1
fi
expect 1 "predict, the output a directory" tools/strata-predict "$dir/test.svm" "$dir/m.model" \
    "$dir/adir"
contains "predict, the output a directory: named" \
    "adir: cannot write the predictions: .*adir is a directory"
if grep -q "^Accuracy" "$out"; then
    echo "FAIL: predict, the output a directory: refused after the predictions"; cat "$out"
    fail=1
fi

# 10. a writer ended by a signal while its temporary is being written (stopped there,
# then SIGTERM, SIGINT, SIGHUP): the old file as it was and no temporary left (before:
# "<file>.tmp.<pid>.<n>", as large as what was written). env --default-signal: a
# background job's SIGINT is otherwise ignored, as a shell sets it, and SIGHUP where
# the suite runs under nohup.
for sig in TERM INT HUP; do
    echo "old set" >"$dir/sig.svm"
    cp "$dir/sig.svm" "$dir/sig.keep"
    env --default-signal=TERM,INT,HUP $gen dense -n 300000 -d 50 -q "$dir/sig.svm" >"$out" 2>&1 &
    job=$!
    i=0
    while ! ls "$dir"/sig.svm.tmp.* >/dev/null 2>&1 && [ $i -lt 3000 ]; do
        sleep 0.01
        i=$((i + 1))
    done
    kill -STOP $job 2>/dev/null
    if ls "$dir"/sig.svm.tmp.* >/dev/null 2>&1; then
        kill -$sig $job
        kill -CONT $job
        wait $job
        rc=$?
        [ $rc -gt 128 ] || { echo "FAIL: SIG$sig while writing: exit $rc"; cat "$out"; fail=1; }
        unchanged "SIG$sig while writing" "$dir/sig.svm" "$dir/sig.keep"
    else
        kill -CONT $job 2>/dev/null
        wait $job
        echo "SIG$sig while writing: the write ended before the signal (not checked)"
    fi
    rm -f "$dir"/sig.svm*
done

[ $fail -eq 0 ] && echo "glm_outputs: PASS"
exit $fail
