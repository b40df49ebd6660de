#!/bin/sh
#
# strata-train -v N, cross-validation (LIBLINEAR's train -v): LIBLINEAR's result lines
# ("Cross Validation Accuracy = ...%", for regression "... Mean squared error = ..." and
# "... Squared correlation coefficient = ...")
# and the other metrics; a line per fold unless -q; the same folds and result on 1 and
# 3 ranks; no model file written; 32-bit values. Usage errors (exit 2, naming the
# problem): -v 1, -v with a MODEL_FILE, with checkpoints, with --test. More folds than
# examples: leave-one-out with a warning, as LIBLINEAR's. Where LIBLINEAR's train is
# installed, its -v on the same data and C gives an accuracy within 1.5 points (other
# folds). -C: LIBLINEAR's
# lines, from LIBLINEAR's first C (compared where it is installed) to 1024, every C;
# a fold stopped by -r is told; with -q only the result; -l or a MODEL_FILE with -C
# are usage errors.
#
. "${top_srcdir}/tests/common.sh"
fail=0
dir=$(mktemp -d)
out="$dir/out"
trap 'rm -rf "$dir"' EXIT
train="$(pwd)/tools/strata-train"
run="timeout -k 5 120 $ST_MPIRUN"

tools/strata-gen criteo --rows 3000 --cols 4096 --seed 3 -q "$dir/c.svm" &&
    tools/strata-gen regression -n 1500 -d 40 --seed 4 -q "$dir/r.svm" ||
    { echo "FAIL: strata-gen"; exit 1; }

# in a directory of its own: nothing but the data may appear there
cd "$dir" || exit 1
expect 0 "logistic, 5 folds" "$train" -v 5 c.svm
contains "logistic: header" "^strata-train: logistic, lambda 0.0001, 5 folds, 3000 examples"
for k in 1 2 3 4 5; do
    contains "logistic: fold $k" "^fold $k of 5: converged after [0-9]* rounds: primal"
done
contains "logistic: accuracy" "^Cross Validation Accuracy = 9[0-9.]*%$"
contains "logistic: AUC, log loss" \
    "^Cross Validation AUC = 0\.[0-9]*, log loss = 0\.[0-9]* (3000 examples, 5 folds)$"
acc1=$(sed -n 's/^Cross Validation Accuracy = \(.*\)%$/\1/p' "$out")
auc1=$(sed -n 's/^Cross Validation AUC = \([^,]*\),.*/\1/p' "$out")
check "no model file written" test "$(ls | sort | tr '\n' ' ')" = "c.svm out r.svm "
# the folds are the rows' whatever the rank count: 3 ranks, the same result
expect 0 "logistic, 5 folds, 3 ranks" $run -np 3 "$train" -q -v 5 c.svm
check "3 ranks: two result lines" test "$(wc -l < "$out")" -eq 2
contains "3 ranks: the same accuracy ($acc1)" "^Cross Validation Accuracy = $acc1%$"
near "3 ranks: the same AUC" "$(sed -n 's/^Cross Validation AUC = \([^,]*\),.*/\1/p' "$out")" \
    "$auc1" 1e-4
# another seed deals other folds
expect 0 "logistic, seed 2" "$train" -q -v 5 --seed 2 c.svm
check "seed 2: another AUC than $auc1" test "$(sed -n 's/^Cross Validation AUC = \([^,]*\),.*/\1/p' \
    "$out")" != "$auc1"
# the L1 models, regression, 32-bit values
expect 0 "l1-logistic, 2 ranks" $run -np 2 "$train" -q -s l1-logistic -v 3 c.svm
contains "l1-logistic: accuracy" "^Cross Validation Accuracy = 9[0-9.]*%$"
expect 0 "ridge" "$train" -q -s ridge -v 4 r.svm
contains "ridge: MSE" "^Cross Validation Mean squared error = 0\.0[0-9.e-]*$"
contains "ridge: RMSE" "^Cross Validation RMSE = 0\.[0-9.e-]* (1500 examples, 4 folds)$"
# LIBLINEAR's second line (its train -s 11 -p 0 -v 4 on this set: 0.989)
contains "ridge: squared correlation coefficient" \
    "^Cross Validation Squared correlation coefficient = 0\.9[0-9.e-]*$"
mse=$(sed -n 's/^Cross Validation Mean squared error = //p' "$out")
scc=$(sed -n 's/^Cross Validation Squared correlation coefficient = //p' "$out")
expect 0 "ridge, 3 ranks" $run -np 3 "$train" -q -s ridge -v 4 r.svm
near "ridge, 3 ranks: the squared correlation coefficient" \
    "$(sed -n 's/^Cross Validation Squared correlation coefficient = //p' "$out")" "$scc" 1e-4
# every prediction the same (an epsilon beyond every target: w = 0 in every fold): the
# coefficient is 0/0, and LIBLINEAR's train -v (and strata-predict) still print its
# line, "-nan" (the line was left out, NaN taken for -C's "no such line")
expect 0 "svr, constant predictions" "$train" -q -s svr --epsilon 1e6 -v 4 r.svm
contains "svr, constant predictions: the squared correlation line" \
    "^Cross Validation Squared correlation coefficient = -\{0,1\}nan$"
expect 0 "ridge, 32-bit values" "$train" -q -s ridge -p 32 -v 4 r.svm
near "ridge, 32-bit values: the MSE" \
    "$(sed -n 's/^Cross Validation Mean squared error = //p' "$out")" "$mse" 1e-4
expect 0 "lasso, 3 ranks" $run -np 3 "$train" -q -s lasso -l 1e-3 -v 3 r.svm
contains "lasso: MSE" "^Cross Validation Mean squared error = 0\.0"
check "no model file written, after all" test "$(ls | sort | tr '\n' ' ')" = "c.svm out r.svm "

# usage errors
expect 2 "-v 1" "$train" -v 1 c.svm
contains "-v 1 named" "-v needs 2 folds or more, not '1'"
expect 2 "-v with a model file" "$train" -v 3 c.svm m.model
contains "-v with a model file named" "writes no model: no MODEL_FILE ('m.model')"
expect 2 "-v with checkpoints" "$train" -v 3 --checkpoint-every 5 c.svm
contains "-v with checkpoints named" "-v cross-validates: no checkpoints"
expect 2 "-v with --test" "$train" -v 3 --test r.svm c.svm
contains "-v with --test named" "no --test"
# more folds than examples: LIBLINEAR's leave-one-out, with a warning (before: exit 1),
# for -v and -C; one example is still an error
head -n 4 c.svm > tiny.svm
expect 0 "more folds than examples" "$train" -q -v 5 tiny.svm
contains "more folds than examples: warned" \
    "^strata-train: warning: 5 folds of 4 examples: leave-one-out cross-validation (4 folds)"
contains "more folds than examples: leave-one-out" "(4 examples, 4 folds)$"
expect 0 "-C, more folds than examples" "$train" -q -C -v 9 tiny.svm
contains "-C, more folds than examples: leave-one-out" "(4 examples, 4 folds)$"
head -n 1 c.svm > tiny.svm
expect 1 "one example" "$train" -q -v 5 tiny.svm
# (before: "5 folds of 1 examples: cross-validation needs 2 to 1 folds")
contains "one example named" "1 example(s): cross-validation needs 2 examples or more"
rm -f tiny.svm

# -C: LIBLINEAR's lines per C from the data's first C (2^-21 for this set) up to 1024,
# its result line, the best C's metrics
expect 0 "-C" "$train" -C -s 0 c.svm
contains "-C: the first C" "^log2c= -21.00	rate=9[0-9.]*$"
contains "-C: the last C" "^log2c=  10.00	rate=9[0-9.]*$"
contains "-C: the best C" "^Best C = [0-9.e+-]*  CV accuracy = 9[0-9.]*%$"
contains "-C: its metrics" "^Cross Validation AUC = .* (3000 examples, 5 folds)$"
first_c=$(grep -m 1 '^log2c=' "$out" | cut -f 1)
expect 0 "-C -q, from -c 4, 3 folds, 2 ranks" $run -np 2 "$train" -q -C -c 4 -v 3 -s ridge r.svm
check "-C -q: three lines" test "$(wc -l < "$out")" -eq 3
contains "-C -q: the best C" "^Best C = [0-9.e+-]*  CV MSE = 0\.0[0-9.e-]*$"
contains "-C -q: 3 folds" "^Cross Validation RMSE = .* (1500 examples, 3 folds)$"
# every C up to 1024, even after models of zeros (before: 5 C's of lasso's w = 0
# stopped the search at the first); a fold stopped by -r is told
expect 0 "-C, lasso from a C of zeros" "$train" -C -c 0.0001 -s lasso -v 3 r.svm
contains "-C, lasso: the last C" "^log2c=   9.71	MSE=0\.0"
check "-C, lasso: every C" test "$(grep -c '^log2c=' "$out")" -eq 24
expect 0 "-C, 2 rounds" "$train" -q -C -c 1 -s 2 -r 2 -e 1e-9 -v 3 c.svm
contains "-C, 2 rounds: told" "warning: from C = 1 on, folds stopped at -r 2 before the gap"
# -v: the first fold stopped by -r warns, the others are counted (before: a line each,
# thousands in a leave-one-out)
expect 0 "-v 30, 2 rounds" "$train" -q -s 2 -r 2 -e 1e-9 -v 30 c.svm
check "-v 30, 2 rounds: one fold's warning" test "$(grep -c 'warning: fold' "$out")" -eq 1
contains "-v 30, 2 rounds: the others counted" "warning: 29 more of the 30 folds stopped before"
# sqsvr (-s 11, 12): LIBLINEAR's search of C and epsilon, epsilon = k/20 of the largest
# |y| from k = 19 (or -p's k) down to 0, C from LIBLINEAR's start for -s 11 up to 2^20
# at each, ended once the folds' models stop moving (5 C's); its lines and result line
head -n 400 r.svm >r400.svm
expect 0 "-C -s 11" "$train" -C -s 11 -v 3 r400.svm
check "-C -s 11: 20 epsilons" test "$(grep '^log2c=' "$out" | cut -f 2 | sort -u | wc -l)" -eq 20
contains "-C -s 11: the last epsilon" "^log2c=[ 0-9.-]*	p=   0.00	Mean squared error=0\.[0-9e.-]*$"
contains "-C -s 11: the result" "^Best C = [0-9.e+-]* Best p = [0-9.e+-]*  CV MSE = 0\.0[0-9.e-]*$"
check "-C -s 11: stopped before 2^20 at each epsilon" \
    test "$(grep -c '^log2c=  20.00' "$out")" -lt 20
first_p=$(grep -m 1 '^log2c=' "$out")
expect 0 "-C -s 12 -p 0.5" "$train" -C -s 12 -p 0.5 -c 1 -v 3 r400.svm
check "-C -s 12 -p 0.5: epsilons up to 0.5" \
    awk -F'\t' '/^log2c=/ { sub(/p= */, "", $2); if ($2 + 0 > 0.5) bad = 1; n++ }
                END { exit !(n > 0 && !bad) }' "$out"
contains "-C -s 12 -p 0.5: the first C" "^log2c=   0.00	p="
expect 2 "-C -s 11 --epsilon -1" "$train" -C -s 11 --epsilon -1 r400.svm
# an epsilon beyond every target: w = 0 at every C, the last C alone (LIBLINEAR's);
# features all 0 for another model: no C to start from, as before
expect 0 "-C -s svr, epsilon 100" "$train" -C -s svr --epsilon 100 -v 3 r400.svm
check "-C -s svr, epsilon 100: one C" test "$(grep -c '^log2c=' "$out")" -eq 1
contains "-C -s svr, epsilon 100: 1024" "^log2c=  10.00	MSE="
printf -- '1 1:0\n-1 2:0\n1 1:0\n-1 3:0\n1 1:0\n-1 2:0\n' >zero.svm
expect 1 "-C on features of zeros" "$train" -C -q -s sqsvm zero.svm
contains "-C on features of zeros: named" "no C to start from: every example's features"
rm -f zero.svm
# features whose squares overflow: named, for -C as for a training (before: "no C to
# start from: every example's features ... are 0", the rows' infinite norm read as none)
printf -- '1 1:1 2:1e200\n-1 1:2\n1 1:3\n-1 1:1 2:3\n1 1:2\n-1 1:0.5\n' >over.svm
for s in 0 11; do
    expect 1 "-C -s $s, features overflowing" "$train" -C -q -s $s over.svm
    contains "-C -s $s, features overflowing: named" "^strata-train: feature 2: its values are too large"
done
rm -f over.svm
expect 2 "-C with -l" "$train" -C -l 1e-3 c.svm
contains "-C with -l named" "-C searches C: give its start as -c C"
expect 2 "-C with a model file" "$train" -C c.svm m.model
contains "-C with a model file named" "-C cross-validates and writes no model"

# against LIBLINEAR's -v (its own folds: close, not equal) and -C (the same first C)
if command -v liblinear-train >/dev/null 2>&1; then
    expect 0 "LIBLINEAR -s 0 -c 3 -v 5" liblinear-train -s 0 -c 3 -v 5 c.svm
    ll=$(sed -n 's/^Cross Validation Accuracy = \(.*\)%$/\1/p' "$out")
    expect 0 "Strata -s 0 -c 3 -v 5" "$train" -q -s 0 -c 3 -e 1e-6 -v 5 c.svm
    st=$(sed -n 's/^Cross Validation Accuracy = \(.*\)%$/\1/p' "$out")
    check "LIBLINEAR's accuracy $ll%, Strata's $st%: within 1.5 points" \
        awk -v a="$ll" -v b="$st" 'BEGIN { d = a - b; exit !(a != "" && b != "" && d <= 1.5 && d >= -1.5) }'
    expect 0 "LIBLINEAR -C -s 0" liblinear-train -C -s 0 c.svm
    ll=$(grep -m 1 '^log2c=' "$out" | cut -f 1)
    check "-C -s 0: LIBLINEAR's first C ($ll)" test -n "$ll" -a "$first_c" = "$ll"
    # -s 11: LIBLINEAR's first pair, line for line (its start C at the first epsilon)
    expect 0 "LIBLINEAR -C -s 11" liblinear-train -C -s 11 -v 3 r400.svm
    ll=$(grep -m 1 '^log2c=' "$out" | cut -f 1,2)
    check "-C -s 11: LIBLINEAR's first C and epsilon ($ll)" \
        test -n "$ll" -a "$(echo "$first_p" | cut -f 1,2)" = "$ll"
fi
exit $fail
