#!/bin/sh
#
# strata-gen convert: text to binary and back gives the same rows, bit for bit (the
# rows' hash, the bytes of strata-gen's own binary sets, a text written twice), the
# same labels (-1/+1 and 0/1 classes: the same model from strata-train, "label 1 0"
# included; regression targets, 0/1 ones too), -p 32 rounds to floats; rows without
# features, comments, CRLF, explicit zeros and the largest index survive; bad input
# exits 1 naming file and line and leaves the old output as it was; the input as
# output, options that do nothing with convert and other bad usage exit 2.
#
. "${top_srcdir}/tests/common.sh"
fail=0
dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-convert-test.XXXXXX") || exit 99
out="$dir/out"
trap 'rm -rf "$dir"' EXIT
gen=tools/strata-gen
load=tests/test_data
train=tools/strata-train

hash() { # the rows' hash of $1 read by test_data (further arguments: its options)
    f=$1; shift
    if $load --load "$f" "$@" >"$dir/hash.out" 2>&1; then
        sed -n 's/.* hash \([0-9a-f]*\) zero_one \([01]\).*/\1 \2/p' "$dir/hash.out"
    else
        echo "FAIL: test_data --load $f $*:" >&2; cat "$dir/hash.out" >&2; echo "error"
    fi
}
same_hash() { # name file1 file2 [test_data options]: the same rows
    name=$1 f1=$2 f2=$3; shift 3
    h1=$(hash "$f1" "$@") h2=$(hash "$f2" "$@")
    if [ "$h1" != "$h2" ] || [ "$h1" = error ]; then
        echo "FAIL: $name: rows differ ($h1 vs $h2)"; fail=1
    fi
}
same_file() { # name file1 file2
    cmp -s "$2" "$3" || { echo "FAIL: $1: $2 and $3 differ"; fail=1; }
}
version() { od -An -tu4 -j8 -N4 "$1" | tr -d ' '; }
kind() { od -An -tu2 -j20 -N2 "$1" | tr -d ' '; }

# strata-gen's sets: the text converted is strata-gen's binary set, byte for byte (64
# and 32 bits: the decimals rounded once, as the generator stores them; criteo's rows,
# its file says 4096 columns where its text's largest index is less); back to text,
# the same rows, and that text converted again is the same binary file (bit-exact
# round trip); the text written from it is a fixed point
for k in criteo dense regression; do
    opts="--rows 2000 --seed 5"
    lopts=""
    [ $k = criteo ] && opts="$opts --cols 4096"
    [ $k = regression ] && { opts="$opts --density 0.3 --cols 300"; lopts="--regression"; }
    expect 0 "$k svm" $gen $k $opts -q -o "$dir/$k.svm"
    expect 0 "$k bin" $gen $k $opts -q -f bin -o "$dir/$k.bin"
    expect 0 "$k bin 32" $gen $k $opts -q -f bin -p 32 -o "$dir/$k.32.bin"
    expect 0 "$k: convert to bin" $gen convert "$dir/$k.svm" "$dir/$k.c.bin"
    contains "$k: summary" "convert, svm to bin (64-bit values)"
    contains "$k: summary counts" "$k.c.bin: 2000 rows, "
    expect 0 "$k: convert to bin 32" $gen convert -p 32 "$dir/$k.svm" -o "$dir/$k.c32.bin"
    if [ $k = criteo ]; then
        same_hash "$k: converted vs generated binary" "$dir/$k.c.bin" "$dir/$k.bin"
        same_hash "$k: converted vs generated 32-bit binary" "$dir/$k.c32.bin" \
            "$dir/$k.32.bin"
    else
        same_file "$k: converted vs generated binary" "$dir/$k.c.bin" "$dir/$k.bin"
        same_file "$k: converted vs generated 32-bit binary" "$dir/$k.c32.bin" \
            "$dir/$k.32.bin"
    fi
    expect 0 "$k: back to svm" $gen convert -q "$dir/$k.c.bin" "$dir/$k.back.svm"
    [ -s "$out" ] && { echo "FAIL: $k: -q printed"; cat "$out"; fail=1; }
    same_hash "$k: the text back" "$dir/$k.svm" "$dir/$k.back.svm" $lopts
    same_hash "$k: the text back, as targets" "$dir/$k.svm" "$dir/$k.back.svm" --regression
    expect 0 "$k: the text back to bin" $gen convert -q "$dir/$k.back.svm" "$dir/$k.back.bin"
    same_file "$k: round trip" "$dir/$k.back.bin" "$dir/$k.c.bin"
    expect 0 "$k: svm to svm" $gen convert -q -f svm "$dir/$k.back.svm" "$dir/$k.again.svm"
    same_file "$k: the text written twice" "$dir/$k.again.svm" "$dir/$k.back.svm"
    # 32-bit values to text: their exact values, read back the same at either precision
    expect 0 "$k: 32-bit bin to svm" $gen convert -q "$dir/$k.32.bin" "$dir/$k.32.svm"
    same_hash "$k: 32-bit text, 32 bits" "$dir/$k.32.svm" "$dir/$k.32.bin" $lopts --prec 32
    same_hash "$k: 32-bit text, 64 bits" "$dir/$k.32.svm" "$dir/$k.32.bin" $lopts --prec 64
    expect 0 "$k: 32-bit text to bin" $gen convert -q -p 32 "$dir/$k.32.svm" "$dir/$k.32b.bin"
    same_file "$k: 32-bit round trip" "$dir/$k.32b.bin" "$dir/$k.c32.bin"
    # binary to binary: the precision asked for (as the reader converts it)
    expect 0 "$k: bin 64 to bin 32" $gen convert -q -f bin -p 32 "$dir/$k.bin" "$dir/$k.b32.bin"
    same_hash "$k: bin to bin 32" "$dir/$k.b32.bin" "$dir/$k.bin" $lopts --prec 32
    [ "$(od -An -tu4 -j16 -N4 "$dir/$k.b32.bin" | tr -d ' ')" = 32 ] ||
        { echo "FAIL: $k: bin to bin 32: not 32 bits"; fail=1; }
done
expect 0 "summary, bin to svm" $gen convert "$dir/dense.bin" "$dir/dense.s.svm"
contains "summary, bin to svm" "convert, bin to svm"
contains "summary, bin to svm: counts" "dense.s.svm: 2000 rows, 100 cols, "
contains "summary, bin to svm: labels" "classes -1/+1"
expect 0 "summary, regression targets" $gen convert "$dir/regression.svm" "$dir/r.bin"
contains "summary, regression targets" "real targets"
[ "$(kind "$dir/r.bin")" = 1 ] ||
    { echo "FAIL: regression converted: label kind $(kind "$dir/r.bin")"; fail=1; }
# a binary set's column count is not in its text: the summary says so (100 rows of
# 2^20 hashed columns do not reach the last one)
expect 0 "a wide binary set" $gen criteo --rows 100 -q -f bin "$dir/wide.bin"
expect 0 "a wide binary set to text" $gen convert "$dir/wide.bin" "$dir/wide.svm"
contains "a wide binary set: its columns" "100 rows, 1048576 cols"
contains "a wide binary set: the note" "the text has no column count: read back, it has"
printf '1 1:1\n-1 2:1\n' >"$dir/narrow.svm"
$gen convert -q "$dir/narrow.svm" "$dir/narrow.bin"
expect 0 "a narrow binary set to text" $gen convert "$dir/narrow.bin" "$dir/narrow2.svm"
contains "no note where the columns are the text's" "2 cols"
grep -q "column count" "$out" && { echo "FAIL: a note on the column count of 2"; fail=1; }

# 0/1 classes: the text converted is version 2 with its flag, trains the text's
# model ("label 1 0"), and reads back as 1 and 0; -1/+1 stays version 1, "label 1 -1"
sed 's/^-1 /0 /; s/^+1 /1 /' "$dir/dense.svm" >"$dir/d01.svm"
expect 0 "0/1 to bin" $gen convert "$dir/d01.svm" "$dir/d01.bin"
contains "0/1 to bin: summary" "classes 0/1"
[ "$(version "$dir/d01.bin")" = 2 ] ||
    { echo "FAIL: 0/1: version $(version "$dir/d01.bin")"; fail=1; }
same_hash "0/1: the classes" "$dir/d01.svm" "$dir/d01.bin"
same_hash "0/1: as targets" "$dir/d01.svm" "$dir/d01.bin" --regression
[ "$(hash "$dir/d01.bin" | cut -d' ' -f2)" = 1 ] || { echo "FAIL: 0/1: zero_one not set"; fail=1; }
expect 0 "0/1 back to svm" $gen convert -q "$dir/d01.bin" "$dir/d01.back.svm"
awk '{ print $1 }' "$dir/d01.svm" >"$dir/l1"
awk '{ print $1 }' "$dir/d01.back.svm" >"$dir/l2"
same_file "0/1: the labels written back" "$dir/l1" "$dir/l2"
expect 0 "0/1 text: strata-train" $train -q -r 50 "$dir/d01.svm" "$dir/m01.svm.model"
expect 0 "0/1 bin: strata-train" $train -q -r 50 "$dir/d01.bin" "$dir/m01.bin.model"
same_file "0/1: the model, converted vs text" "$dir/m01.bin.model" "$dir/m01.svm.model"
grep -q '^label 1 0$' "$dir/m01.bin.model" ||
    { echo "FAIL: 0/1 converted: no 'label 1 0'"; head -4 "$dir/m01.bin.model"; fail=1; }
expect 0 "-1/+1 text: strata-train" $train -q -r 50 "$dir/dense.svm" "$dir/mpm.svm.model"
expect 0 "-1/+1 bin: strata-train" $train -q -r 50 "$dir/dense.c.bin" "$dir/mpm.bin.model"
same_file "-1/+1: the model, converted vs text" "$dir/mpm.bin.model" "$dir/mpm.svm.model"
grep -q '^label 1 -1$' "$dir/mpm.bin.model" || { echo "FAIL: -1/+1: no 'label 1 -1'"; fail=1; }
[ "$(version "$dir/dense.c.bin")" = 1 ] || { echo "FAIL: -1/+1 converted: not version 1"; fail=1; }

# regression targets: the same ridge model from the text and the converted file;
# 0/1 targets too (stored as 0/1 classes, read back as 1 and 0)
expect 0 "targets: strata-train text" $train -q -s ridge -r 50 "$dir/regression.svm" \
    "$dir/mr.svm.model"
expect 0 "targets: strata-train bin" $train -q -s ridge -r 50 "$dir/r.bin" "$dir/mr.bin.model"
same_file "targets: the model, converted vs text" "$dir/mr.bin.model" "$dir/mr.svm.model"
expect 0 "0/1 targets: strata-train text" $train -q -s ridge -r 50 "$dir/d01.svm" \
    "$dir/mr01.svm.model"
expect 0 "0/1 targets: strata-train bin" $train -q -s ridge -r 50 "$dir/d01.bin" \
    "$dir/mr01.bin.model"
same_file "0/1 targets: the model, converted vs text" "$dir/mr01.bin.model" "$dir/mr01.svm.model"

# a binary file of regression targets that are all 0/1 (tests/test_data --to-bin keeps
# the label kind it read) trains the text's classifier, "label 1 0" (before: refused,
# "label 0 is not -1 or +1", where the text was read), and converts to 1/0 text
expect 0 "0/1 targets file" $load --load "$dir/d01.svm" --regression --to-bin "$dir/t01.bin"
[ "$(kind "$dir/t01.bin")" = 1 ] ||
    { echo "FAIL: t01.bin: label kind $(kind "$dir/t01.bin")"; fail=1; }
expect 0 "0/1 targets file: strata-train" $train -q -r 50 "$dir/t01.bin" "$dir/mt01.model"
same_file "0/1 targets file: the classifier" "$dir/mt01.model" "$dir/m01.svm.model"
expect 0 "0/1 targets file to svm" $gen convert -q "$dir/t01.bin" "$dir/t01.svm"
same_file "0/1 targets file to svm" "$dir/t01.svm" "$dir/d01.back.svm"
printf '0 1:1\n-1 2:1\n1 1:2\n' >"$dir/mix.svm"
expect 0 "mixed -1/0 labels: converted as targets" $gen convert "$dir/mix.svm" "$dir/mix.bin"
contains "mixed -1/0 labels" "real targets"
# (three classes to strata-train, as to LIBLINEAR: one model each against the rest;
# before: refused, "label -1 after label 0", which tests/test_data still checks of the
# data layer's binary classes)
expect 0 "mixed -1/0 labels: three classes from the text" $train -q "$dir/mix.svm" "$dir/mm"
grep -qx "label 0 -1 1" "$dir/mm" ||
    { echo "FAIL: mixed labels: text: no line 'label 0 -1 1' in the model"; fail=1; }
expect 0 "mixed -1/0 labels: three classes from the binary" $train -q "$dir/mix.bin" \
    "$dir/mm.bin"
same_file "mixed labels: the binary's model" "$dir/mm.bin" "$dir/mm"

# every accepted spelling: comments, blank lines, CRLF, tabs, no final newline,
# rows without features, explicit zeros (-0 too), the largest index, long decimals;
# "-0" as a label is a target (it reads back as -0)
printf '# a comment\n+1 1:1.0 3:+2.50 7:-0 9:.5\t10:1e-310 # after\r\n\n0.0\n1.0 4294967295:3.\n' \
    >"$dir/odd.svm"
printf -- '-1e0 2:0.1000000000000000055511151231257827 5:1E22 6:-0.0\n+0 8:123456789012345678901' \
    >>"$dir/odd.svm"
expect 0 "odd text to bin" $gen convert "$dir/odd.svm" "$dir/odd.bin"
contains "odd text" "5 rows, 4294967295 cols, 10 nnz"
expect 1 "odd text: mixed classes" $load --load "$dir/odd.svm"
expect 0 "odd bin to svm" $gen convert -q "$dir/odd.bin" "$dir/odd2.svm"
same_hash "odd text: the rows" "$dir/odd.svm" "$dir/odd2.svm" --regression
same_hash "odd text: the rows of the binary" "$dir/odd.svm" "$dir/odd.bin" --regression
expect 0 "odd text back to bin" $gen convert -q "$dir/odd2.svm" "$dir/odd2.bin"
same_file "odd text: round trip" "$dir/odd2.bin" "$dir/odd.bin"
grep -q '^1 4294967295:3$' "$dir/odd2.svm" ||
    { echo "FAIL: the largest index"; cat "$dir/odd2.svm"; fail=1; }
grep -q ' 7:-0 ' "$dir/odd2.svm" || { echo "FAIL: an explicit -0"; cat "$dir/odd2.svm"; fail=1; }
grep -q '^0$' "$dir/odd2.svm" ||
    { echo "FAIL: a row with no features"; cat "$dir/odd2.svm"; fail=1; }
printf -- '-0 1:1\n1 2:1\n' >"$dir/nz.svm"
expect 0 "a -0 label" $gen convert "$dir/nz.svm" "$dir/nz.bin"
contains "a -0 label: a target" "real targets"
same_hash "a -0 label, as targets" "$dir/nz.svm" "$dir/nz.bin" --regression
same_hash "a -0 label, as classes" "$dir/nz.svm" "$dir/nz.bin"

# -p 32 rounds every value to the nearest float: 0.1 and 2^24 + 1 change, 0.5 not
printf '1 1:0.1 2:16777217 3:0.5\n' >"$dir/p.svm"
expect 0 "-p 32" $gen convert -p 32 "$dir/p.svm" "$dir/p32.bin"
contains "-p 32: summary" "32-bit values"
expect 0 "-p 32 back" $gen convert -q "$dir/p32.bin" -o -
contains "-p 32: 0.1 rounded" "^1 1:0.10000000149011612 2:16777216 3:0.5$"
expect 0 "-p 64" $gen convert -q "$dir/p.svm" "$dir/p64.bin"
expect 0 "-p 64 back" $gen convert -q "$dir/p64.bin" -o -
contains "-p 64: exact" "^1 1:0.1 2:16777217 3:0.5$"

# bad input: exit 1 naming file and line (the reader's messages); the old output stays,
# and no temporary is left beside it
printf '1 1:1\n-1 2:1\n+1 3:x\n' >"$dir/bad.svm"
echo "old" >"$dir/keep.bin"
expect 1 "bad value" $gen convert "$dir/bad.svm" "$dir/keep.bin"
contains "bad value: file and line" "bad.svm:3: "
expect 1 "bad value to text" $gen convert -f svm "$dir/bad.svm" "$dir/keep.bin"
[ "$(cat "$dir/keep.bin")" = old ] || { echo "FAIL: a failed convert changed its output"; fail=1; }
refused() { # what text file message: converting a FILE holding TEXT exits 1 with MESSAGE
    printf '%s' "$2" >"$dir/$3"
    expect 1 "$1" $gen convert "$dir/$3" "$dir/x.bin"
    contains "$1: file and line" "$4"
}
refused "qid" '1 qid:3 1:1
' qid.svm "qid.svm:1: "
refused "decreasing index" '1 3:1 2:1
' order.svm "order.svm:1: "
refused "index 0" '1 0:1
' zero.svm "zero.svm:1: index 0"
refused "index 2^32" '1 4294967296:1
' big.svm "big.svm:1: "
refused "empty file" '' empty.svm "empty.svm: "
expect 1 "missing file" $gen convert "$dir/none.svm" "$dir/x.bin"
contains "missing file" "none.svm: cannot open"
head -c 1000 "$dir/dense.bin" >"$dir/trunc.bin"
expect 1 "truncated binary" $gen convert "$dir/trunc.bin" "$dir/x.svm"
contains "truncated binary" "trunc.bin: truncated"
expect 1 "unwritable output" $gen convert "$dir/p.svm" "$dir/no/such/dir/x.bin"
contains "unwritable output" "no/such/dir"
expect 1 "unwritable text output" $gen convert "$dir/p64.bin" "$dir/no/such/dir/x.svm"
contains "unwritable text output" "no/such/dir"
# an input that is not a file to read, refused as strata-train refuses it whatever the
# output (before: a named pipe waited for a writer for ever in the format probe, and a
# missing input or a directory with -o - was "--format bin cannot go to standard
# output", exit 2)
mkfifo "$dir/fifo.svm"
expect 1 "a named pipe" timeout -k 5 30 $gen convert "$dir/fifo.svm" "$dir/x.bin"
contains "a named pipe" "fifo.svm: not a regular file"
expect 1 "a named pipe to text" timeout -k 5 30 $gen convert "$dir/fifo.svm" -o -
contains "a named pipe to text" "fifo.svm: not a regular file"
expect 1 "missing file to text" $gen convert "$dir/none.bin" -o -
contains "missing file to text" "none.bin: cannot open"
mkdir "$dir/adir"
expect 1 "a directory to text" $gen convert "$dir/adir" -o -
contains "a directory to text" "adir: a directory, not a data file"
[ -e "$dir/x.bin" ] || [ -e "$dir/x.svm" ] && { echo "FAIL: a failed convert wrote"; fail=1; }
ls "$dir" | grep -q '\.tmp\.' && { echo "FAIL: a temporary left:"; ls "$dir"; fail=1; }

# bad usage: exit 2, the input untouched
cp "$dir/p.svm" "$dir/p.orig"
expect 2 "onto itself" $gen convert "$dir/p.svm" "$dir/p.svm"
contains "onto itself" "is the input file"
ln "$dir/p.svm" "$dir/p.link"
expect 2 "onto a hard link" $gen convert -f svm "$dir/p.svm" -o "$dir/p.link"
contains "onto a hard link" "is the input file"
ln -s p.svm "$dir/p.sym"
expect 2 "onto a symbolic link" $gen convert "$dir/p.sym" "$dir/p.svm"
contains "onto a symbolic link" "is the input file"
same_file "the input after refusals" "$dir/p.svm" "$dir/p.orig"
for o in "-n 5" "--rows 5" "-d 10" "-s 3" "--seed 3" "--noise 0.1" "--density 0.5" \
         "--click-rate 0.1" "--zipf 1.5" "--test-rows 5" "--test-out $dir/t.svm"; do
    expect 2 "convert $o" $gen convert $o "$dir/p.svm" "$dir/x.bin"
    contains "convert $o" "does nothing with convert"
done
expect 2 "no input" $gen convert
contains "no input" "no input file"
expect 2 "no output" $gen convert "$dir/p.svm"
contains "no output" "no output file"
expect 2 "two outputs" $gen convert "$dir/p.svm" -o "$dir/x.bin" "$dir/y.bin"
contains "two outputs" "one output file"
expect 2 "standard input" $gen convert - "$dir/x.bin"
contains "standard input" "standard input"
expect 2 "bin to standard output" $gen convert "$dir/p.svm" -o -
contains "bin to standard output" "cannot go to standard output"
expect 2 "-p for text output" $gen convert -p 32 "$dir/p64.bin" "$dir/x.svm"
contains "-p for text output" "applies to --format bin only"
expect 2 "-p for text output, asked" $gen convert -f svm -p 32 "$dir/p.svm" "$dir/x.svm"
contains "-p for text output, asked" "applies to --format bin only"
expect 2 "bad format" $gen convert -f csv "$dir/p.svm" "$dir/x.bin"
contains "bad format" "expected svm or bin"
expect 2 "bad precision" $gen convert -p 16 "$dir/p.svm" "$dir/x.bin"
contains "bad precision" "-p/--prec"
[ -e "$dir/x.bin" ] || [ -e "$dir/x.svm" ] || [ -e "$dir/y.bin" ] &&
    { echo "FAIL: a refused convert wrote"; fail=1; }
expect 0 "--help" $gen --help
contains "--help: convert" "convert     read INPUT"
contains "--help: -p rounds" "32 rounds every value"
expect 0 "convert --help" $gen convert --help
contains "convert --help" "Usage: strata-gen"

[ $fail -eq 0 ] && echo "data_convert: PASS"
exit $fail
