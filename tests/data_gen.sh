#!/bin/sh
#
# strata-gen: the same seed gives the same bytes, another seed other bytes; every
# kind loads (serially and on 2 ranks) and both formats load to the same rows (0/1
# text converted to binary too, and its version-2 flag);
# the click rate lands near its target; the held-out set has its rows; dense
# --classes K writes the labels 1..K, every class, the same rows in both formats and
# the classes kept (a binary file trains the text's model); bad options exit 2 naming
# the option, --help exits 0.
#
. "${top_srcdir}/tests/common.sh"
fail=0
dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-gen-test.XXXXXX") || exit 99
out="$dir/out"
trap 'rm -rf "$dir"' EXIT
gen=tools/strata-gen
load=tests/test_data

field() { # the number after word $1 in $out
    sed -n "s/.*$1 \([-0-9a-f.x]*\).*/\1/p" "$out" | head -n 1
}
near() { # name value target tolerance
    if ! awk -v v="$2" -v t="$3" -v e="$4" \
            'BEGIN { d = v - t; if (d < 0) d = -d; exit !(v != "" && d <= e) }'; then
        echo "FAIL: $1: $2, expected $3 +- $4"; fail=1
    fi
}

# determinism
expect 0 "criteo a" $gen criteo --rows 20000 --seed 7 -o "$dir/a.svm"
expect 0 "criteo b" $gen criteo --rows 20000 --seed 7 "$dir/b.svm"
expect 0 "criteo c" $gen criteo --rows 20000 --seed 8 -o "$dir/c.svm"
cmp -s "$dir/a.svm" "$dir/b.svm" || { echo "FAIL: same seed, different bytes"; fail=1; }
cmp -s "$dir/a.svm" "$dir/c.svm" && { echo "FAIL: another seed, same bytes"; fail=1; }
expect 0 "criteo to stdout" $gen criteo --rows 20000 --seed 7 -o -
cmp -s "$dir/a.svm" "$out" || { echo "FAIL: standard output differs from the file"; fail=1; }

# the click rate: 20000 rows, target 0.25 (binomial sd 0.003, calibration ~0.001)
expect 0 "criteo 0.25" $gen criteo --rows 20000 --seed 3 --click-rate 0.25 --cols 4096 \
    --test-rows 5000 --test-out "$dir/t.svm" -o "$dir/r.svm"
contains "criteo report" "click rate target 0.250000"
near "reported click rate" "$(field 'click rate')" 0.25 0.015
expect 0 "load criteo" $load --load "$dir/r.svm"
contains "criteo rows" "rows 20000 cols 4096 "
pos=$(field pos)
near "loaded click rate" "$(awk -v p="$pos" 'BEGIN { print p / 20000 }')" 0.25 0.015
expect 0 "load criteo test set" $load --load "$dir/t.svm"
contains "test set rows" "rows 5000 cols 4096 "
near "test click rate" "$(awk -v p="$(field pos)" 'BEGIN { print p / 5000 }')" 0.25 0.03

# the default click rate on the default 2^20 columns
expect 0 "criteo 0.03" $gen criteo --rows 30000 --seed 5 --format bin -o "$dir/d.bin"
expect 0 "load criteo 0.03" $load --load "$dir/d.bin"
contains "criteo default columns" "cols 1048576 "
near "default click rate" "$(awk -v p="$(field pos)" 'BEGIN { print p / 30000 }')" 0.03 0.006

# both formats give the same rows (hash), serially and on 2 ranks
for kind in criteo dense regression; do
    opts="--rows 3000 --seed 11"
    lopts=""
    [ $kind = regression ] && { opts="$opts --density 0.2 --cols 500"; lopts="--regression"; }
    expect 0 "$kind svm" $gen $kind $opts -o "$dir/$kind.svm"
    expect 0 "$kind bin" $gen $kind $opts --format bin -o "$dir/$kind.bin"
    expect 0 "$kind bin 32" $gen $kind $opts --format bin --prec 32 -o "$dir/$kind.32.bin"
    expect 0 "load $kind svm" $load --load "$dir/$kind.svm" $lopts
    contains "$kind svm rows" "rows 3000 "
    h_svm=$(field hash)
    expect 0 "load $kind bin" $load --load "$dir/$kind.bin" $lopts
    contains "$kind bin detected" "binary"
    [ "$(field hash)" = "$h_svm" ] || { echo "FAIL: $kind: svm and bin differ"; fail=1; }
    expect 0 "load $kind svm as 32" $load --load "$dir/$kind.svm" $lopts --prec 32
    h_svm32=$(field hash)
    expect 0 "load $kind bin 32" $load --load "$dir/$kind.32.bin" $lopts
    [ "$(field hash)" = "$h_svm32" ] || { echo "FAIL: $kind: 32-bit svm and bin differ"; fail=1; }
    expect 0 "load $kind on 2 ranks" $ST_MPIRUN -np 2 $load --mpi --load "$dir/$kind.bin" $lopts
    [ "$(field hash)" = "$h_svm" ] || { echo "FAIL: $kind: 2-rank load differs"; fail=1; }
    expect 0 "load $kind svm on 2 ranks" $ST_MPIRUN -np 2 $load --mpi --load "$dir/$kind.svm" $lopts
    [ "$(field hash)" = "$h_svm" ] || { echo "FAIL: $kind: 2-rank text load differs"; fail=1; }
done
expect 0 "load dense" $load --load "$dir/dense.svm"
contains "dense columns" "cols 100 nnz"

# the binary format's version: strata-gen's sets (-1/+1 classes) are version 1, which
# builds that read no other version read; the -1/+1 text converted (tests/test_data
# --to-bin) is the same bytes. 0/1 text converted is version 2 with its 0/1 flag: it
# loads as 0/1 (zero_one 1, the text's rows), written and read by 1 or 2 ranks, and as
# regression targets 1 and 0, as the text (before: version 1, read back as -1/+1)
version() { od -An -tu4 -j8 -N4 "$1" | tr -d ' '; }
[ "$(version "$dir/dense.bin")" = 1 ] ||
    { echo "FAIL: strata-gen's binary set is version $(version "$dir/dense.bin")"; fail=1; }
expect 0 "dense svm to bin" $load --load "$dir/dense.svm" --to-bin "$dir/dense-conv.bin"
cmp -s "$dir/dense-conv.bin" "$dir/dense.bin" ||
    { echo "FAIL: the -1/+1 text converted differs from strata-gen's binary set"; fail=1; }
sed 's/^-1 /0 /; s/^+1 /1 /' "$dir/dense.svm" >"$dir/dense01.svm"
expect 0 "dense 0/1 svm to bin" $load --load "$dir/dense01.svm" --to-bin "$dir/dense01.bin"
contains "dense 0/1 text" "zero_one 1"
h01=$(field hash)
[ "$(version "$dir/dense01.bin")" = 2 ] ||
    { echo "FAIL: 0/1 converted: version $(version "$dir/dense01.bin"), expected 2"; fail=1; }
expect 0 "dense 0/1 svm to bin, 2 ranks" $ST_MPIRUN -np 2 $load --mpi \
    --load "$dir/dense01.svm" --to-bin "$dir/dense01-2.bin"
cmp -s "$dir/dense01-2.bin" "$dir/dense01.bin" ||
    { echo "FAIL: 0/1 converted on 2 ranks differs from 1 rank's"; fail=1; }
for np in 1 2; do
    expect 0 "load dense 0/1 bin, $np rank(s)" $ST_MPIRUN -np $np $load --mpi \
        --load "$dir/dense01.bin"
    contains "dense 0/1 bin, $np rank(s): binary" "binary"
    contains "dense 0/1 bin, $np rank(s): 0/1" "zero_one 1"
    [ "$(field hash)" = "$h01" ] || { echo "FAIL: dense 0/1: svm and bin differ"; fail=1; }
done
expect 0 "load dense 0/1 svm, targets" $load --load "$dir/dense01.svm" --regression
contains "dense 0/1 svm, targets: no negative" "neg 0 "
h01r=$(field hash)
expect 0 "load dense 0/1 bin, targets" $load --load "$dir/dense01.bin" --regression
contains "dense 0/1 bin, targets: not 0/1" "zero_one 0"
[ "$(field hash)" = "$h01r" ] || { echo "FAIL: dense 0/1 targets: svm and bin differ"; fail=1; }

# usage
expect 0 "--help" $gen --help
contains "--help" "Usage: strata-gen"
expect 0 "kind --help" $gen dense --help
expect 2 "no kind" $gen
contains "no kind" "missing the dataset kind"
expect 2 "bad kind" $gen bogus -o "$dir/x"
contains "bad kind" "bogus"
expect 2 "bad option" $gen criteo --bogus -o "$dir/x"
contains "bad option" "bogus"
# a flag given a value is named as given (before: "unknown option '-q'")
expect 2 "a value for a flag" $gen criteo --quiet=1 -o "$dir/x"
contains "a value for a flag" "option '--quiet' takes no value"
# -p takes 32 or 64 and says so for any other value (before: 16 got "an integer
# from 32 to 64", 48 "32 or 64")
for p in 16 48; do
    expect 2 "-p $p" $gen dense -n 5 -f bin -p $p -o "$dir/x"
    contains "-p $p named" "-p/--prec: expected 32 or 64, got '$p'"
done
expect 2 "bad rows" $gen criteo --rows 12X -o "$dir/x"
contains "bad rows" "rows"
expect 2 "negative rows" $gen criteo --rows -5 -o "$dir/x"
contains "negative rows" "rows"
expect 2 "cols too large" $gen criteo --cols 16777217 -o "$dir/x"
contains "cols too large" "cols"
expect 2 "bad click rate" $gen criteo --click-rate 1.5 -o "$dir/x"
contains "bad click rate" "click-rate"
expect 2 "click rate for dense" $gen dense --click-rate 0.1 -o "$dir/x"
contains "click rate for dense" "click-rate"
expect 2 "bad format" $gen criteo --format csv -o "$dir/x"
contains "bad format" "format"
expect 2 "bad seed" $gen criteo --seed -1 -o "$dir/x"
contains "bad seed" "seed"
expect 2 "missing argument" $gen criteo --rows
contains "missing argument" "rows"
expect 2 "test rows without a file" $gen criteo --test-rows 10 -o "$dir/x"
contains "test rows without a file" "test-out"
expect 2 "no output" $gen criteo
contains "no output" "output"
[ -e "$dir/x" ] && { echo "FAIL: a rejected command wrote its output"; fail=1; }
expect 1 "unwritable output" $gen dense --rows 10 -o "$dir/no/such/dir/x.svm"
contains "unwritable output" "no/such/dir"
# a --test-out in a missing directory: refused before the training set is written,
# whose old file stays (before: the training set was replaced, then the test set
# failed)
echo keep >"$dir/keep.svm"
expect 1 "--test-out in a missing directory" $gen dense --rows 10 --test-rows 5 \
    --test-out "$dir/no/such/dir/t.svm" -q "$dir/keep.svm"
contains "--test-out in a missing directory, named" "t.svm: cannot create: .*no/such/dir does not exist"
check "--test-out in a missing directory: the training file kept" test "$(cat "$dir/keep.svm")" = keep

# dense --classes: labels 1..K, each class present, the summary says so; a binary file
# of the same set trains the same model (its classes come back as targets, then
# classes); two classes stay -1/+1, the same bytes as without the option
expect 0 "4 classes" $gen dense --rows 2000 --cols 20 --classes 4 --seed 3 "$dir/k4.svm"
contains "4 classes: summary" "2000 rows, 20 cols, .* 4 classes$"
check "4 classes: the labels" test "$(cut -d' ' -f1 "$dir/k4.svm" | sort -u | tr '\n' ' ')" = \
    "1 2 3 4 "
expect 0 "4 classes, again" $gen dense --rows 2000 --cols 20 --classes 4 --seed 3 -q \
    "$dir/k4b.svm"
check "4 classes: the same bytes again" cmp -s "$dir/k4.svm" "$dir/k4b.svm"
expect 0 "4 classes, binary" $gen dense --rows 2000 --cols 20 --classes 4 --seed 3 -q \
    -f bin "$dir/k4.bin"
expect 0 "4 classes: train the text" tools/strata-train -q -r 20 "$dir/k4.svm" "$dir/k4.m"
expect 0 "4 classes: train the binary" tools/strata-train -q -r 20 "$dir/k4.bin" "$dir/k4b.m"
check "4 classes: the same model from either file" cmp -s "$dir/k4.m" "$dir/k4b.m"
check "4 classes: nr_class 4" grep -qx "nr_class 4" "$dir/k4.m"
expect 0 "2 classes" $gen dense --rows 300 --cols 20 --classes 2 --seed 3 -q "$dir/k2.svm"
expect 0 "no --classes" $gen dense --rows 300 --cols 20 --seed 3 -q "$dir/k0.svm"
check "--classes 2: the default's bytes" cmp -s "$dir/k2.svm" "$dir/k0.svm"
expect 2 "--classes 1" $gen dense --classes 1 -o "$dir/x"
contains "--classes 1" "classes"
expect 2 "--classes for criteo" $gen criteo --classes 3 -o "$dir/x"
contains "--classes for criteo" "--classes applies to dense only"
expect 2 "--classes x --cols too large" $gen dense --classes 1000 --cols 1048576 -o "$dir/x"
contains "--classes x --cols too large" "at most 2^28 planted weights"
[ -e "$dir/x" ] && { echo "FAIL: a rejected --classes wrote its output"; fail=1; }
exit $fail
