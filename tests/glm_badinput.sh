#!/bin/sh
#
# The solver tools on input they must refuse, or train without a silent failure:
# an output named like an input (before: the data or the model overwritten), int
# options beyond an int (before: wrapped: -t 4294967298 ran 2 threads), a lambda
# whose 1 / (lambda n) overflows, an objective that overflows, features so large
# that L-BFGS's first steps were all too long (before: a zero model written, exit
# 0; now a first step no longer than Polyak's, and where even that cannot be, an
# error), a feature of 1e12 that L-BFGS could not converge with, a lasso run with
# a huge -r (before: out of memory for a trace of -r rounds), a pipe or a directory
# as the data (before: "Illegal seek"), a run that ends short of -e (a warning),
# more features than the host's memory holds (before: killed by the kernel), data
# of one class (a warning), --feature-order with a model or method that never uses it
# (before: accepted, left unused), ranks given other command lines (before: a hang).
#
. "${top_srcdir}/tests/common.sh"
fail=0
dir=$(mktemp -d)
out="$dir/out" err="$dir/err"
trap 'rm -rf "$dir"' EXIT
T=tools

$T/strata-gen dense --rows 200 --cols 5 --seed 2 -q --test-rows 50 --test-out "$dir/test.svm" \
    "$dir/train.svm" || { echo "FAIL: strata-gen"; exit 1; }
$T/strata-train -q "$dir/train.svm" "$dir/m.txt" >/dev/null || { echo "FAIL: a model"; exit 1; }
for f in train.svm test.svm m.txt; do cp "$dir/$f" "$dir/$f.orig"; done
same() { # the file is as it was
    cmp -s "$dir/$1" "$dir/$1.orig" || { echo "FAIL: $1 was changed"; fail=1; }
}

# 1. nothing written over an input
expect 2 "train: model file = training file" $T/strata-train -q "$dir/train.svm" "$dir/train.svm"
contains "train: model = training named" "is the training file"
expect 2 "train: model file = test file (./)" \
    sh -c "cd '$dir' && exec '$PWD/$T/strata-train' -q --test test.svm train.svm ./test.svm"
contains "train: model = test named" "is the test file"
ln "$dir/train.svm" "$dir/link.svm"
expect 2 "train: model file = a hard link of the data" \
    $T/strata-train -q "$dir/train.svm" "$dir/link.svm"
expect 2 "predict: output = test file" $T/strata-predict "$dir/test.svm" "$dir/m.txt" "$dir/test.svm"
contains "predict: output = test named" "is the test file"
expect 2 "predict: output = model file" $T/strata-predict "$dir/test.svm" "$dir/m.txt" "$dir/m.txt"
contains "predict: output = model named" "is the model file"
same train.svm; same test.svm; same m.txt
expect 2 "gen: --test-out = the output (./)" \
    sh -c "cd '$dir' && exec '$PWD/$T/strata-gen' dense --rows 10 --test-rows 5 -q --test-out g.svm ./g.svm"
contains "gen: --test-out = output named" "is the output file"
test ! -e "$dir/g.svm" || { echo "FAIL: gen wrote g.svm"; fail=1; }
# an empty file name: a usage error naming it (before: ": cannot open", exit 1)
expect 2 "train: empty training file name" $T/strata-train -q "" "$dir/o.model"
contains "train: empty training file name named" "the training file name is empty"
expect 2 "train: empty --test" $T/strata-train -q --test "" "$dir/train.svm" "$dir/o.model"
contains "train: empty --test named" "the test file name is empty"
expect 2 "gen: empty output" $T/strata-gen dense --rows 10 -q ""
contains "gen: empty output named" "the output file name is empty"
expect 2 "gen: empty -o" $T/strata-gen dense --rows 10 -q -o ""
contains "gen: empty -o named" "the output file name is empty"
expect 2 "gen: empty --test-out" \
    $T/strata-gen dense --rows 10 --test-rows 5 -q --test-out "" "$dir/g.svm"
contains "gen: empty --test-out named" "the --test-out file name is empty"
expect 2 "gen: convert, empty input" $T/strata-gen convert "" "$dir/g.svm"
contains "gen: convert, empty input named" "convert: the input file name is empty"
test ! -e "$dir/o.model" && test ! -e "$dir/g.svm" || { echo "FAIL: an empty name wrote"; fail=1; }
# "-" as strata-gen takes it: standard output for strata-predict's predictions (the
# metrics then on stderr); refused by name where it cannot be (before: "-: cannot open",
# a file named "-" read as the data or the model, or the model and predictions written
# to a file named "-" in the current directory)
for args in "-q - o.model" "-q $dir/train.svm -" "-q --test - $dir/train.svm o.model" \
            "-q --checkpoint - --checkpoint-every 2 $dir/train.svm o.model"; do
    expect 2 "train $args" sh -c "cd '$dir' && exec '$PWD/$T/strata-train' $args </dev/null"
    contains "train $args: named" "cannot be standard .*('-')\|cannot be '-'"
done
for args in "- $dir/m.txt" "$dir/test.svm -"; do
    expect 2 "predict $args" sh -c "cd '$dir' && exec '$PWD/$T/strata-predict' $args p </dev/null"
    contains "predict $args: named" "cannot be standard input ('-')"
done
$T/strata-predict "$dir/test.svm" "$dir/m.txt" "$dir/p.txt" >"$dir/metrics" 2>"$err" &&
    (cd "$dir" && exec "$OLDPWD/$T/strata-predict" test.svm m.txt -) >"$out" 2>"$err"
check "predict to '-': the predictions on stdout" cmp -s "$out" "$dir/p.txt"
check "predict to '-': the metrics on stderr" cmp -s "$err" "$dir/metrics"
test ! -e "$dir/-" && test ! -e "$dir/o.model" && test ! -e "$dir/p" ||
    { echo "FAIL: '-' wrote a file"; ls "$dir"; fail=1; }

# 2. int options beyond an int: refused, not wrapped
for o in "-t 4294967298" "-r 4294967297" "-E 4294967297" "-r 2147483648" "-p 4294967328"; do
    expect 2 "train $o" $T/strata-train -q $o "$dir/train.svm" "$dir/o.model"
    contains "train $o: out of range" "out of range"
done

# class weights on a regression model: refused (before: silently ignored)
expect 2 "ridge --weight-pos" $T/strata-train -q -s ridge --weight-pos 2 "$dir/train.svm" "$dir/o.model"
contains "ridge --weight-pos named" "(--weight-pos and --weight-neg) apply to the classification models"
# ... and LIBLINEAR's -wLABEL, named as given (before: as --weight-pos)
expect 2 "-s 11 -w1" $T/strata-train -q -s 11 -w1 2 "$dir/train.svm" "$dir/o.model"
contains "-s 11 -w1 named" "class weights (-wLABEL) apply to the classification models, not to sqsvr"
# the -wLABEL pairs are taken off the command line, not rewritten as an option of
# strata-train's own (before: "--class-weights-given 3", or "--class 3", was accepted,
# set no weight, and refused ridge as if a weight were given)
for o in --class-weights-given --class; do
    expect 2 "train $o" $T/strata-train -q -s ridge $o 3 "$dir/train.svm" "$dir/o.model"
    contains "train $o: unknown" "unknown or ambiguous option '$o'"
done
expect 0 "-w1 2 -w-1 0.5 between the other options" \
    $T/strata-train -q -c 2 -w1 2 -s 2 -w-1 0.5 -e 0.01 "$dir/train.svm" "$dir/o.model"
rm -f "$dir/o.model"

# options that would do nothing where they are given: refused, naming what they
# need (before: accepted and ignored; with -l and -c, -c won silently)
refused_combo() { # what pattern option... (not "name": expect sets it)
    what=$1 pat=$2; shift 2
    expect 2 "train $what" $T/strata-train -q "$@" "$dir/train.svm" "$dir/o.model"
    contains "train $what named" "$pat"
    test ! -e "$dir/o.model" || { echo "FAIL: train $what wrote a model"; fail=1; }
    rm -f "$dir/o.model"
}
refused_combo "--gpu-mem without --gpu" "--gpu-mem applies only with --gpu" --gpu-mem 1M
refused_combo "--gpu-rows without --gpu" "--gpu-rows applies only with --gpu" --gpu-rows 4
refused_combo "--inner-rounds without --hierarchical" \
    "--inner-rounds applies only with --hierarchical" --inner-rounds 3
refused_combo "--eta with ridge" "--eta applies only to -s elastic-net, not to -s ridge" \
    -s ridge --eta 0.3
refused_combo "-l with -c" "-l/--lambda and -c/--cost both set lambda" -l 1e-3 -c 2
# --feature-order where no method of the model, or the method given, uses it (before:
# accepted and left unused); with --method auto an L2 model may still run cd or newton
refused_combo "--feature-order with lasso" \
    "--feature-order applies to the L2 models (methods cd and newton), not to -s lasso" \
    -s lasso --feature-order frequency
refused_combo "--feature-order with -s 6, cd" \
    "--feature-order applies to the L2 models (methods cd and newton), not to -s l1-logistic" \
    -s 6 --method cd --feature-order given
refused_combo "--feature-order with lbfgs" \
    "--feature-order applies to methods cd and newton, not to --method lbfgs" \
    --method lbfgs --feature-order given
for m in auto cd newton; do
    expect 0 "train --method $m --feature-order given" \
        $T/strata-train -q --method $m --feature-order given "$dir/train.svm" "$dir/o.model"
done
rm -f "$dir/o.model"
# a tolerance that underflows to 0 (or is subnormal) is refused; -e 0 is "all rounds"
refused_combo "-e 1e-400" "--tol must be 0 (run all -r rounds) or a positive normal" -e 1e-400
refused_combo "-e 1e-310" "--tol must be 0 (run all -r rounds) or a positive normal" -e 1e-310
expect 0 "train -e 0 -r 2" $T/strata-train -q -e 0 -r 2 "$dir/train.svm" "$dir/o.model"
rm -f "$dir/o.model"

# 3. numbers the solvers cannot work with: an error, never a model of zeros
expect 1 "lambda 1e-320" $T/strata-train -q -l 1e-320 "$dir/train.svm" "$dir/o.model"
contains "lambda 1e-320 named" "is too small for 200 rows"
printf '1e200 1:1\n-1 2:1\n3 1:2\n' >"$dir/big_label.svm"
for m in auto cd newton lbfgs; do
    expect 1 "ridge, a label of 1e200, method $m" \
        $T/strata-train -q -s ridge --method $m "$dir/big_label.svm" "$dir/o.model"
    contains "ridge, method $m: overflow named" "the objective overflows"
done
awk '{ print $0, "6:1e300" }' "$dir/train.svm" >"$dir/f300.svm"
expect 1 "lbfgs, a feature of 1e300" $T/strata-train -q --method lbfgs "$dir/f300.svm" "$dir/o.model"
contains "lbfgs, 1e300: the feature named" "feature 6: its values are too large"
# a bias whose square overflows, or whose column's sum of squares does: the bias named,
# feature 6 of these 5 (before: "feature 1", the row's first, for -B 1e200)
for m in auto cd newton lbfgs; do
    expect 1 "-B 1e200, method $m" $T/strata-train -q -B 1e200 --method $m "$dir/train.svm" \
        "$dir/o.model"
    contains "-B 1e200, method $m: the bias named" "the bias, feature 6 (-B 1e+200): its values"
done
expect 1 "-B 1e154, lbfgs" $T/strata-train -q -B 1e154 --method lbfgs "$dir/train.svm" \
    "$dir/o.model"
contains "-B 1e154, lbfgs: the bias named" "the bias, feature 6 (-B): its values are too large"
# every method and model, on 2 ranks too (before: exit 0 with the feature's weight 0,
# or a model worse than w = 0, and an infinite gap)
for args in "-s svm" "-s l1-logistic" "-s logistic --method cd" "-s logistic" \
    "-s sqsvm --method newton" "-s lasso"; do
    s=logistic
    case $args in *lasso*) s=ridge ;; esac
    f="$dir/f300.svm"
    [ $s = ridge ] && f="$dir/big_feat.svm" && printf '2 1:1\n-1 2:1e200\n3 1:2\n' >"$f"
    expect 1 "$args, a feature too large" $ST_MPIRUN -np 2 $T/strata-train -q $args "$f" \
        "$dir/o.model"
    contains "$args, a feature too large: named" "feature [26]: its values are too large"
    [ ! -e "$dir/o.model" ] || { echo "FAIL: $args: a model written"; fail=1; rm -f "$dir/o.model"; }
done
for f in 1733000000000 1e150; do   # a time in ms; far beyond
    awk -v f=$f '{ print $0, "6:" f }' "$dir/train.svm" >"$dir/f12.svm"
    expect 0 "auto, a feature of $f" $T/strata-train -q -r 30 "$dir/f12.svm" "$dir/f12.model"
    if grep -q "after 0 rounds" "$out"; then
        echo "FAIL: auto, $f: no round taken"; cat "$out"; fail=1
    fi
    awk 'w { if ($1 != 0) nz++ } /^w$/ { w = 1 } END { exit !(nz > 0) }' "$dir/f12.model" ||
        { echo "FAIL: auto, $f: every weight 0"; fail=1; }
done
# a feature of 1e12 next to ones of 1: L-BFGS (what auto runs on dense data) to a
# certified gap, as Newton (before: P's optimum to 11 digits, then 200 rounds of a
# gradient too large for the gap: relative gap 3e8; the steps were not scaled per
# feature and the line search asked a decrease below P's rounding)
awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^3:/) { split($i, a, ":"); $i = "3:" a[2] * 1e12 }
       print }' "$dir/train.svm" >"$dir/s12.svm"
for m in lbfgs newton; do
    expect 0 "$m, feature 3 times 1e12" \
        $T/strata-train -s logistic --method $m -e 1e-4 -r 200 "$dir/s12.svm" "$dir/s12.model"
    contains "$m, feature 3 times 1e12: converged" "^converged after"
done

# a gap that stays beyond the objective (two features of 1e150 on one row): the
# warning says the certificate is far off (before: "a larger -e is within reach")
printf '+1 1:1e150 2:1e150\n-1 3:0.5\n' >"$dir/h150.svm"
expect 0 "lbfgs, a gap beyond the objective" $T/strata-train -q --method lbfgs \
    "$dir/h150.svm" "$dir/o.model"
contains "lbfgs, a gap beyond the objective: said" "the certificate is far off"
rm -f "$dir/o.model"

# features so large that no Newton step lowers P from w = 0: an error (before: 0
# rounds, a model of zeros, exit 0); their squares overflow, which every method
# refuses first
printf '+1 1:1e308 2:1\n-1 1:1e308 2:-1\n' >"$dir/f308.svm"
expect 1 "newton, a feature of 1e308" $T/strata-train -q --method newton "$dir/f308.svm" "$dir/o.model"
contains "newton, 1e308: named" "feature 1: its values are too large"
# L-BFGS where double precision has no progress left ends (before: the same round
# again and again until -r: a step too short to change w passed the slope test)
awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^3:/) { split($i, a, ":"); $i = sprintf("3:%.17g", a[2] * 1e12) }
       print }' "$dir/train.svm" >"$dir/t12.svm"
expect 0 "lbfgs, -e 1e-14 out of reach" $T/strata-train --method lbfgs -l 1e-3 -e 1e-14 -r 400 \
    "$dir/t12.svm" "$dir/o.model"
contains "lbfgs, -e 1e-14: stopped" "^stopped after"
if grep -q "^stopped after 400 rounds" "$out"; then
    echo "FAIL: lbfgs ran to -r without progress"; fail=1
fi
contains "lbfgs, -e 1e-14: the warning" "warning: the relative gap .* did not reach -e 1e-14 .* a larger -e is within reach"
# a run that stops at -r short of -e says so on stderr, and what helps (before: exit 0,
# and a model worse than w = 0 from coordinate descent on these scales, unflagged)
$T/strata-train --method cd -l 1e-4 -r 20 "$dir/t12.svm" "$dir/o.model" >"$out" 2>"$err"
check "cd, 20 rounds on t12: exit 0" test $? -eq 0
check "cd, 20 rounds: the warning" grep -q "^strata-train: warning: the relative gap .* did not reach -e 0.001 in 20 rounds: raise -r, or try --method newton or lbfgs" "$err"
# L-BFGS (auto's pick for dense rows outnumbering the columns) stopped at -r: newton
# suggested (before: "raise -r to go on" alone, where newton converges in far fewer)
$T/strata-train -q --method lbfgs -l 1e-4 -r 3 "$dir/train.svm" "$dir/o.model" >"$out" 2>"$err"
check "lbfgs, 3 rounds: newton suggested" grep -q "in 3 rounds: raise -r, or try --method newton (fewer rounds where classes" "$err"
$T/strata-train -q -s svm -r 3 "$dir/train.svm" "$dir/o.model" >"$out" 2>"$err"
check "svm, 3 rounds: the warning without --method" grep -q "in 3 rounds: raise -r to go on$" "$err"
# the methods suggested must take the run's options: neither primal method takes
# checkpoints (before: "try --method newton or lbfgs", both then refused)
$T/strata-train -q --method cd -l 1e-4 -r 4 --checkpoint-every 2 "$dir/t12.svm" \
    "$dir/ck.model" >"$out" 2>"$err"
check "cd, checkpoints, 4 rounds: raise -r alone" grep -q "in 4 rounds: raise -r to go on$" "$err"
# ProxCoCoA+ (an L1 model, --method cd, across ranks) barely moves where C is large: the
# warning names --method newton, the default there (before: "raise -r to go on" alone);
# on one rank cd is the serial solver, and raising -r is the advice
$ST_MPIRUN -np 2 $T/strata-train -q -s l1-logistic -c 64 --method cd -r 3 "$dir/t12.svm" \
    "$dir/o.model" >"$out" 2>"$err"
check "l1-logistic, cd, 2 ranks, 3 rounds: newton suggested" grep -q "in 3 rounds: raise -r, or try --method newton (the L1 models' default across ranks" "$err"
$T/strata-train -q -s l1-logistic -c 64 --method cd -r 1 "$dir/t12.svm" "$dir/o.model" >"$out" 2>"$err"
check "l1-logistic, cd, 1 rank, 1 round: raise -r alone" grep -q "in 1 rounds: raise -r to go on$" "$err"
# -e 0 asks for exactly -r rounds: no warning
$T/strata-train -q --method cd -e 0 -r 20 "$dir/t12.svm" "$dir/o.model" >"$out" 2>"$err"
check "cd, -e 0: exit 0, nothing on stderr" test $? -eq 0 -a ! -s "$err"

# 4. a lasso run's -r is a bound, not an allocation
expect 0 "lasso -r 2000000000" $T/strata-train -q -s lasso -r 2000000000 "$dir/train.svm" "$dir/o.model"
contains "lasso -r 2000000000 converged" "^converged after"

# 5. data that is not a file
expect 1 "a pipe as data" sh -c "printf '+1 1:1\n-1 2:1\n' | '$PWD/$T/strata-train' -q /dev/stdin '$dir/o.model'"
contains "a pipe named" "not a regular file"
mkdir "$dir/adir"
expect 1 "a directory as data" $T/strata-train -q "$dir/adir" "$dir/o.model"
contains "a directory named" "a directory, not a data file"
expect 1 "a directory as test data" $T/strata-predict "$dir/adir" "$dir/m.txt"
contains "predict: a directory named" "a directory, not a data file"
# 6. a numbering whose largest index gives more features than the host can hold the
# vectors of: refused before training, naming the line of that index (before: a
# model of 2e9 features trained, then the kernel killed the run, 137; 4294967295
# got "out of memory" without the line). STRATA_GLM_MEM_AVAILABLE stands for a small
# host: method cd keeps 5 vectors of 999999 doubles on one rank, 40 MB
cp "$dir/train.svm" "$dir/wide.svm"
echo "+1 3:1 999999:0.5" >>"$dir/wide.svm"
line=$(wc -l <"$dir/wide.svm")
cat "$dir/test.svm" >>"$dir/wide.svm"
rm -f "$dir/o.model"
expect 1 "999999 features, 30 MB" env STRATA_GLM_MEM_AVAILABLE=30M $T/strata-train -q \
    --method cd "$dir/wide.svm" "$dir/o.model"
contains "999999 features: the line named" \
    "not enough memory: 999999 features (the largest index, at .*/wide.svm:$line) need 40 MB"
contains "999999 features: what helps" "renumber the features without gaps"
check "999999 features: no model" test ! -e "$dir/o.model"
expect 0 "999999 features, 50 MB" env STRATA_GLM_MEM_AVAILABLE=50M $T/strata-train -q \
    --method cd "$dir/wide.svm" "$dir/o.model"
rm -f "$dir/o.model"
# two ranks on the host need twice that (each rank would see the whole 50 MB free)
expect 1 "999999 features, 2 ranks, 50 MB" env STRATA_GLM_MEM_AVAILABLE=50M $ST_MPIRUN -np 2 \
    -x STRATA_GLM_MEM_AVAILABLE $T/strata-train -q --method cd "$dir/wide.svm" "$dir/o.model"
contains "999999 features, 2 ranks: the host's sum" "need 80 MB on host $(hostname) .*2 rank(s) in all"
# L-BFGS keeps 29 such vectors (the pairs), Newton 2
expect 1 "999999 features, lbfgs, 100 MB" env STRATA_GLM_MEM_AVAILABLE=100M $T/strata-train -q \
    --method lbfgs "$dir/wide.svm" "$dir/o.model"
contains "lbfgs: its vectors" "need 232 MB on host $(hostname) (method lbfgs keeps 29 vectors"
expect 0 "999999 features, newton, 20 MB" env STRATA_GLM_MEM_AVAILABLE=20M $T/strata-train -q \
    --method newton "$dir/wide.svm" "$dir/o.model"
expect 1 "STRATA_GLM_MEM_AVAILABLE not a size" env STRATA_GLM_MEM_AVAILABLE=lots \
    $T/strata-train -q "$dir/train.svm" "$dir/o.model"
contains "not a size: named" "STRATA_GLM_MEM_AVAILABLE='lots' is not a size in bytes"
# class weights so large that the objective overflows: the message names them (before:
# it blamed the features alone)
expect 1 "--weight-pos 1e308" $T/strata-train -q --method lbfgs --weight-pos 1e308 \
    "$dir/train.svm" "$dir/o.model"
contains "--weight-pos 1e308: the weights named" "or lower the class weights"

# 7. training data of one class: trained, with a warning naming the class on stderr
# (before: nothing said; the model tells nothing apart); 0/1 data's 0, -1 on 2 ranks
printf '+1 1:0.5 2:1\n+1 2:1\n+1 1:0.2\n' >"$dir/one.svm"
$T/strata-train -q "$dir/one.svm" "$dir/o.model" >"$out" 2>"$err"
check "one class: exit 0" test $? -eq 0
check "one class: the warning" grep -q "^strata-train: warning: every training example is of class 1: the model never sees another class" "$err"
check "one class: said once" test "$(wc -l <"$err")" -eq 1
printf '0 1:0.5 2:1\n0 2:1\n' >"$dir/zero.svm"
$T/strata-train -q "$dir/zero.svm" "$dir/o.model" >"$out" 2>"$err"
check "one class of 0/1 data: named 0" grep -q "is of class 0:" "$err"
printf -- '-1 1:0.5 2:1\n-1 2:1\n-1 1:1\n' >"$dir/neg.svm"
$ST_MPIRUN -np 2 $T/strata-train -q "$dir/neg.svm" "$dir/o.model" >"$out" 2>"$err"
check "one class, 2 ranks: exit 0" test $? -eq 0
check "one class, 2 ranks: named -1, once" test "$(grep -c "is of class -1:" "$err")" -eq 1
# two classes, one on each rank's share: nothing said
printf -- '-1 1:0.5 2:1\n-1 2:1\n+1 1:1\n+1 2:3\n' >"$dir/two.svm"
$ST_MPIRUN -np 2 $T/strata-train -q "$dir/two.svm" "$dir/o.model" >"$out" 2>"$err"
check "a class on each rank: nothing said" test ! -s "$err"
$T/strata-train -q -s ridge "$dir/one.svm" "$dir/o.model" >"$out" 2>"$err"
check "regression targets all 1: nothing said" test ! -s "$err"

# ranks given other command lines (an MPMD launch, "A : B") are bad usage on every rank,
# said once (before: -v on one rank refused its model file alone and the other hung;
# -c 1 and -c 2 trained until the first rank's end and hung; strata-predict -b 1 on one
# rank hung, or wrote one rank's rows with probabilities)
mpmd() { # what, then each rank's options for the tool $1
    tool=$1 what=$2 a=$3 b=$4
    shift 4
    expect 2 "$what" timeout -k 5 60 $ST_MPIRUN -np 1 $T/$tool $a "$@" : \
        -np 1 $T/$tool $b "$@"
    contains "$what: said" "the ranks were not given the same command line"
    check "$what: said once" test "$(grep -c "same command line" "$out")" -eq 1
}
mpmd strata-train "train, -v 3 on one rank" "-q -v 3" "-q" "$dir/train.svm" "$dir/o.model"
mpmd strata-train "train, -c 1 and -c 2" "-q -c 1" "-q -c 2" "$dir/train.svm" "$dir/o.model"
mpmd strata-predict "predict, -b 1 on one rank" "-q" "-q -b 1" "$dir/test.svm" "$dir/m.txt" \
    "$dir/o.txt"
expect 0 "train, the same command line on 2 ranks" $ST_MPIRUN -np 2 $T/strata-train -q \
    "$dir/train.svm" "$dir/o.model"
exit $fail
