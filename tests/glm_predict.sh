#!/bin/sh
#
# strata-predict on a hand-made test set whose scores, labels, metrics and output lines
# were worked out by hand (below): alone, under mpirun on 1 to 3 ranks (the output file
# the same, in the file's row order), with -b 1, on a regression model; and its usage
# and run-time errors (exit 2 and 1, with a message naming the problem).
#
. "${top_srcdir}/tests/common.sh"
fail=0
dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-glm-predict.XXXXXX") || exit 99
trap 'rm -rf "$dir"' EXIT
out="$dir/stdout"
err="$dir/stderr"
P=tools/strata-predict

# expect RC NAME COMMAND...: exit status RC; a success writes nothing on stderr (a hang
# is killed: 124)
expect() {
    want=$1 name=$2; shift 2
    timeout -k 10 "${ST_TEST_TIMEOUT:-300}" "$@" >"$out" 2>"$err"
    rc=$?
    if [ $rc -ne "$want" ]; then
        echo "FAIL: $name: exit $rc, expected $want"; cat "$out" "$err"; fail=1
    elif [ "$want" -eq 0 ] && [ -s "$err" ]; then
        echo "FAIL: $name: stderr not empty:"; cat "$err"; fail=1
    fi
}
# says NAME FILE PATTERN: FILE (stdout or stderr of the last command) has a line
# matching PATTERN
says() {
    if ! grep -q -- "$3" "$2"; then
        echo "FAIL: $1: no line matching '$3' in:"; cat "$2"; fail=1
    fi
}
# same NAME FILE EXPECTED-FILE
same() {
    if ! cmp -s "$2" "$3"; then
        echo "FAIL: $1: $2 differs from the expected:"; diff "$3" "$2"; fail=1
    fi
}

# The model: logistic, 4 features, bias 1, w = (0.5, -0.25, 0.125, 1), bias weight -0.5.
cat >"$dir/lr.model" <<'EOF'
solver_type L2R_LR
nr_class 2
label 1 -1
nr_feature 4
bias 1
w
0.5
-0.25
0.125
1
-0.5
EOF
# The rows, their scores and predicted classes (features 5, 7 and 9 are beyond the
# model and ignored; a score of 0 is class -1):
#   +1 1:1 2:2        0.5 - 0.5 - 0.5      = -0.5    -1
#   -1 1:-1 3:4      -0.5 + 0.5 - 0.5      = -0.5    -1
#   +1 (no features)                       = -0.5    -1
#   -1 2:0.5 9:100   -0.125 - 0.5          = -0.625  -1
#   +1 4:0.5          0.5 - 0.5            =  0      -1
#   +1 1:4            2 - 0.5              =  1.5     1
#   -1 4:2 7:3        2 - 0.5              =  1.5     1
#   +1 3:8 5:1        1 - 0.5              =  0.5     1
# Accuracy 4/8. AUC: 5 positives, 3 negatives (-0.5, -0.625, 1.5); for each positive,
# 2 x (negatives below) + (ties): 3 + 3 + 4 + 5 + 4 = 19, so 19/30 = 0.633333.
# Log loss: mean of log(1 + exp(-y z)) = 0.740123.
cat >"$dir/test.svm" <<'EOF'
+1 1:1 2:2
-1 1:-1 3:4
+1
-1 2:0.5 9:100
+1 4:0.5
+1 1:4
-1 4:2 7:3
+1 3:8 5:1
EOF
printf -- '-1\n-1\n-1\n-1\n-1\n1\n1\n1\n' >"$dir/want.labels"
cat >"$dir/want.prob" <<'EOF'
labels 1 -1
-1 0.377541 0.622459
-1 0.377541 0.622459
-1 0.377541 0.622459
-1 0.348645 0.651355
-1 0.5 0.5
1 0.817574 0.182426
1 0.817574 0.182426
1 0.622459 0.377541
EOF

expect 0 "predict" $P "$dir/test.svm" "$dir/lr.model" "$dir/pred"
says "accuracy" "$out" '^Accuracy = 50% (4/8)$'
says "AUC" "$out" '^AUC = 0.633333$'
says "log loss" "$out" '^Log loss = 0.740123$'
same "predicted labels" "$dir/pred" "$dir/want.labels"
expect 0 "predict -b 1" $P -b 1 "$dir/test.svm" "$dir/lr.model" "$dir/pred"
same "probabilities" "$dir/pred" "$dir/want.prob"
expect 0 "predict -q" $P -q "$dir/test.svm" "$dir/lr.model"
if [ -s "$out" ]; then
    echo "FAIL: -q printed:"; cat "$out"; fail=1
fi
expect 0 "predict --probability=0, no output file" $P --probability=0 "$dir/test.svm" \
    "$dir/lr.model"
says "metrics without an output file" "$out" '^Accuracy = 50% (4/8)$'
# the model as Strata saves it predicts the same
expect 0 "resave" tests/test_glm_io --resave "$dir/lr.model" "$dir/lr.saved"
expect 0 "predict with the saved model" $P -b 1 "$dir/test.svm" "$dir/lr.saved" "$dir/pred"
same "probabilities, saved model" "$dir/pred" "$dir/want.prob"

# the same weights negated in a file that says "label 0 1", as LIBLINEAR writes a model
# of 0/1 data whose first row is a 0: class 0 is the first, that of positive scores
# (the rows above of negative scores), class 1 that of the others (the rows above of
# positive scores, and the tie); -b 1 writes the classes and their probabilities in the
# file's order, as LIBLINEAR's predict (before: "labels 1 0", P(1) first). The rows'
# labels +1 -> 1, -1 -> 0: right are rows 2, 4, 5 (the tie), 6 and 8.
sed 's/^label 1 -1$/label 0 1/' "$dir/lr.model" |
    awk 'w { print -$1; next } /^w$/ { w = 1 } { print }' >"$dir/lr01.model"
sed 's/^+1 /1 /; s/^+1$/1/; s/^-1 /0 /' "$dir/test.svm" >"$dir/test01.svm"
cat >"$dir/want01.prob" <<'EOF2'
labels 0 1
0 0.622459 0.377541
0 0.622459 0.377541
0 0.622459 0.377541
0 0.651355 0.348645
1 0.5 0.5
1 0.182426 0.817574
1 0.182426 0.817574
1 0.377541 0.622459
EOF2
expect 0 "predict -b 1, label 0 1" $P -b 1 "$dir/test01.svm" "$dir/lr01.model" "$dir/pred"
says "accuracy, label 0 1" "$out" '^Accuracy = 62.5% (5/8)$'
same "probabilities, label 0 1" "$dir/pred" "$dir/want01.prob"
expect 0 "predict -b 1, label 0 1, 2 ranks" $ST_MPIRUN -np 2 $P -b 1 "$dir/test01.svm" \
    "$dir/lr01.model" "$dir/pred"
same "probabilities, label 0 1, 2 ranks" "$dir/pred" "$dir/want01.prob"
# a model of the classes 1 and -1 on rows of 1 and 0, and one of 0 and 1 on rows of 1
# and -1: a row of the class the model has not is counted wrong, as LIBLINEAR's predict
# counts it (its label is not the one predicted; before: 0 and -1 were taken for each
# other, 4/8): right are rows 6 and 8 (predicted 1), and rows 5 (the tie), 6 and 8
expect 0 "the classes 1 -1 on 1/0 rows" $P "$dir/test01.svm" "$dir/lr.model"
says "the classes 1 -1 on 1/0 rows: LIBLINEAR's accuracy" "$out" '^Accuracy = 25% (2/8)$'
says "the classes 1 -1 on 1/0 rows: no AUC" "$out" '^AUC = nan '
expect 0 "the classes 0 1 on 1/-1 rows" $P "$dir/test.svm" "$dir/lr01.model"
says "the classes 0 1 on 1/-1 rows: LIBLINEAR's accuracy" "$out" '^Accuracy = 37.5% (3/8)$'
# ... and "label -1 1" (the rows' own labels)
sed 's/^label 0 1$/label -1 1/' "$dir/lr01.model" >"$dir/lrm1.model"
sed 's/^labels 0 1$/labels -1 1/; s/^0 /-1 /' "$dir/want01.prob" >"$dir/wantm1.prob"
expect 0 "predict -b 1, label -1 1" $P -b 1 "$dir/test.svm" "$dir/lrm1.model" "$dir/pred"
says "accuracy, label -1 1" "$out" '^Accuracy = 62.5% (5/8)$'
same "probabilities, label -1 1" "$dir/pred" "$dir/wantm1.prob"

# under mpirun: the same metrics from rank 0 only, the same file in row order
for np in 1 2 3; do
    expect 0 "predict on $np rank(s)" $ST_MPIRUN -np $np $P "$dir/test.svm" "$dir/lr.model" \
        "$dir/pred.$np"
    same "labels on $np rank(s)" "$dir/pred.$np" "$dir/want.labels"
    says "accuracy on $np rank(s)" "$out" '^Accuracy = 50% (4/8)$'
    says "AUC on $np rank(s)" "$out" '^AUC = 0.633333$'
    if [ "$(grep -c Accuracy "$out")" -ne 1 ]; then
        echo "FAIL: $np rank(s): the metrics printed more than once:"; cat "$out"; fail=1
    fi
    expect 0 "predict -b 1 on $np rank(s)" $ST_MPIRUN -np $np $P -b 1 "$dir/test.svm" \
        "$dir/lr.model" "$dir/prob.$np"
    same "probabilities on $np rank(s)" "$dir/prob.$np" "$dir/want.prob"
done

# a long output (6 MB with -b 1: several pieces of rank 0's 4 MB buffer), alone and on
# 3 ranks; the labels against scores computed here by awk
tools/strata-gen dense -q -n 300000 -d 3 -s 9 "$dir/big.svm" || exit 99
printf 'solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 3\nbias -1\nw\n0.5\n-1\n2\n' \
    >"$dir/big.model"
awk 'BEGIN { w[1] = 0.5; w[2] = -1; w[3] = 2 }
     { z = 0; for (i = 2; i <= NF; i++) { split($i, p, ":"); z += w[p[1]] * p[2] }
       print (z > 0) ? 1 : -1 }' "$dir/big.svm" >"$dir/big.want"
expect 0 "long output" $P -q "$dir/big.svm" "$dir/big.model" "$dir/big.1"
same "long output" "$dir/big.1" "$dir/big.want"
expect 0 "long output on 3 ranks" $ST_MPIRUN -np 3 $P -q "$dir/big.svm" "$dir/big.model" \
    "$dir/big.3"
same "long output on 3 ranks" "$dir/big.3" "$dir/big.want"
expect 0 "long output, -b 1" $P -q -b 1 "$dir/big.svm" "$dir/big.model" "$dir/big.b1"
expect 0 "long output, -b 1, on 3 ranks" $ST_MPIRUN -np 3 $P -q -b 1 "$dir/big.svm" \
    "$dir/big.model" "$dir/big.b3"
same "long output, -b 1, 3 ranks vs 1" "$dir/big.b3" "$dir/big.b1"
if [ "$(wc -l <"$dir/big.b1")" -ne 300001 ] || [ "$(grep -c labels "$dir/big.b1")" -ne 1 ] ||
    [ "$(wc -c <"$dir/big.b1")" -le 4194304 ]; then
    echo "FAIL: long output, -b 1: $(wc -lc <"$dir/big.b1") lines and bytes"; fail=1
fi
rm -f "$dir"/big.*

# regression: ridge, w = (0.5, -0.25, 0.125, 1), no bias; the same rows with real
# targets. Scores 0 0 0 -0.125 0.5 2 2 1; squared errors 2.25 4 0.0625 0.765625 6.25
# 0 0.25 0: RMSE sqrt(13.578125 / 8) = 1.30279, LIBLINEAR's mean squared error 13.578125 / 8
# = 1.69727; its squared correlation coefficient, from the sums of the values 5.375, the
# targets 6.25, the values' squares 9.265625, the targets' 23.5625 and their products
# 9.625: (8 9.625 - 5.375 6.25)^2 / ((8 9.265625 - 5.375^2) (8 23.5625 - 6.25^2))
# = 0.278725.
cat >"$dir/ridge.model" <<'EOF'
solver_type L2R_L2LOSS_SVR
nr_class 2
nr_feature 4
bias -1
w
0.5
-0.25
0.125
1
EOF
cat >"$dir/test.reg" <<'EOF'
1.5 1:1 2:2
-2 1:-1 3:4
0.25
-1 2:0.5 9:100
3 4:0.5
2 1:4
1.5 4:2 7:3
1 3:8 5:1
EOF
printf '0\n0\n0\n-0.125\n0.5\n2\n2\n1\n' >"$dir/want.values"
expect 0 "predict ridge" $P "$dir/test.reg" "$dir/ridge.model" "$dir/pred"
says "RMSE" "$out" '^RMSE = 1.30279 '
says "LIBLINEAR's mean squared error" "$out" '^Mean squared error = 1.69727 (regression)$'
says "LIBLINEAR's squared correlation coefficient" "$out" \
    '^Squared correlation coefficient = 0.278725 (regression)$'
same "predicted values" "$dir/pred" "$dir/want.values"
expect 0 "predict ridge on 3 ranks" $ST_MPIRUN -np 3 $P "$dir/test.reg" "$dir/ridge.model" \
    "$dir/pred"
says "mean squared error on 3 ranks" "$out" '^Mean squared error = 1.69727 (regression)$'
says "squared correlation coefficient on 3 ranks" "$out" \
    '^Squared correlation coefficient = 0.278725 (regression)$'
same "predicted values on 3 ranks" "$dir/pred" "$dir/want.values"

# a model that does not fit the data
expect 1 "ridge on class labels" $P "$dir/test.svm" "$dir/ridge.model"
says "ridge on class labels" "$err" "classification set"
expect 0 "ridge on class labels, --force" $P --force "$dir/test.svm" "$dir/ridge.model"
expect 1 "logistic on real targets" $P "$dir/test.reg" "$dir/lr.model"
says "logistic on real targets: the reader's message" "$err" "test.reg:1: "
says "logistic on real targets: why" "$err" "needs class labels (integers)"
sed 's/L2R_LR/L2R_L1LOSS_SVC_DUAL/' "$dir/lr.model" >"$dir/svm.model"
expect 1 "-b 1 with an svm model" $P -b 1 "$dir/test.svm" "$dir/svm.model" "$dir/pred"
says "-b 1 with an svm model" "$err" "logistic models only"
expect 1 "-b 1 with an svm model on 2 ranks" $ST_MPIRUN -np 2 $P -b 1 "$dir/test.svm" \
    "$dir/svm.model"
if [ "$(grep -c "logistic models only" "$err")" -ne 1 ]; then
    echo "FAIL: 2 ranks: the message printed more than once:"; cat "$err"; fail=1
fi

# run-time failures: exit 1 and a message naming the file
expect 1 "missing test file" $P "$dir/nothing.svm" "$dir/lr.model"
says "missing test file" "$err" "nothing.svm"
expect 1 "missing model file" $P "$dir/test.svm" "$dir/nothing.model"
says "missing model file" "$err" "nothing.model"
sed 's/^nr_feature 4$/nr_feature 5/' "$dir/lr.model" >"$dir/short.model"
expect 1 "malformed model" $P "$dir/test.svm" "$dir/short.model"
says "malformed model" "$err" "short.model:11: end of file after 5 weights"
expect 1 "malformed model on 3 ranks" $ST_MPIRUN -np 3 $P "$dir/test.svm" "$dir/short.model"
if [ "$(grep -c "short.model:11:" "$err")" -ne 1 ]; then
    echo "FAIL: 3 ranks: the message printed more than once:"; cat "$err"; fail=1
fi
printf '+1 1:1\n-1 0:2\n' >"$dir/bad.svm"
expect 1 "malformed test file" $P "$dir/bad.svm" "$dir/lr.model"
says "malformed test file" "$err" "bad.svm:2: "
expect 1 "unwritable output" $P "$dir/test.svm" "$dir/lr.model" "$dir/no/such/dir/pred"
says "unwritable output" "$err" "no/such/dir/pred: cannot write the predictions: .*no/such/dir does not exist"
# (said before the work: before, the metrics were printed, then "(the file is unchanged)")
if grep -q "Accuracy" "$out"; then
    echo "FAIL: unwritable output: predicted before finding it"; fail=1
fi
expect 1 "unwritable output on 2 ranks" $ST_MPIRUN -np 2 $P "$dir/test.svm" "$dir/lr.model" \
    "$dir/no/such/dir/pred"

# usage: exit 2 and a message; --help exits 0
expect 0 "--help" $P --help
says "--help" "$out" "^Usage: strata-predict"
expect 2 "no arguments" $P
says "no arguments" "$err" "expected TEST_FILE and MODEL_FILE"
expect 2 "one argument" $P "$dir/test.svm"
expect 2 "four arguments" $P "$dir/test.svm" "$dir/lr.model" "$dir/pred" extra
says "four arguments" "$err" "unexpected argument 'extra'"
expect 2 "unknown option" $P --bogus "$dir/test.svm" "$dir/lr.model"
says "unknown option" "$err" "bogus"
expect 2 "unknown short option" $P -x "$dir/test.svm" "$dir/lr.model"
says "unknown short option" "$err" "'-x'"
# after a long flag, an unknown option in a cluster is still a short one (before:
# "unknown or ambiguous option '--force'"), and a flag given a value is named
expect 2 "unknown option in a cluster" $P --force -xq "$dir/test.svm" "$dir/lr.model"
says "unknown option in a cluster" "$err" "unknown option '-x'"
expect 2 "a value for a flag" $P --quiet=1 "$dir/test.svm" "$dir/lr.model"
says "a value for a flag" "$err" "option '--quiet' takes no value"
expect 2 "-b 2" $P -b 2 "$dir/test.svm" "$dir/lr.model"
says "-b 2" "$err" "invalid value '2' for -b"
expect 2 "-b without a value" $P "$dir/test.svm" "$dir/lr.model" -b
says "-b without a value" "$err" "needs a value"
expect 2 "unknown option under mpirun" $ST_MPIRUN -np 2 $P --bogus "$dir/test.svm" \
    "$dir/lr.model"
if [ "$(grep -c bogus "$err")" -ne 1 ]; then
    echo "FAIL: 2 ranks: the usage message printed more than once:"; cat "$err"; fail=1
fi

# a score of exactly 0 (a row with no feature the model knows) is the model file's
# second label, as in LIBLINEAR: +1 for "label -1 1" (before: always -1)
printf 'solver_type L2R_LR\nnr_class 2\nlabel -1 1\nnr_feature 2\nbias -1\nw\n0.5 \n-0.25 \n' \
    >"$dir/neg.model"
printf '1 1:1 3:100\n-1 2:1 4:7\n1 3:5\n' >"$dir/tie.svm"
expect 0 "a tie, label -1 1" $P "$dir/tie.svm" "$dir/neg.model" "$dir/tie.out"
if [ "$(tr '\n' ' ' <"$dir/tie.out")" != "-1 1 1 " ]; then
    echo "FAIL: a tie, label -1 1: predicted $(tr '\n' ' ' <"$dir/tie.out"), expected -1 1 1"
    fail=1
fi
contains "a tie, label -1 1: accuracy" "Accuracy = 33.3333% (1/3)"
sed 's/^label -1 1$/label 1 -1/; s/^0.5 $/-0.5 /; s/^-0.25 $/0.25 /' "$dir/neg.model" >"$dir/pos.model"
expect 0 "a tie, label 1 -1" $P "$dir/tie.svm" "$dir/pos.model" "$dir/tie.out"
if [ "$(tr '\n' ' ' <"$dir/tie.out")" != "-1 1 -1 " ]; then
    echo "FAIL: a tie, label 1 -1: predicted $(tr '\n' ' ' <"$dir/tie.out"), expected -1 1 -1"
    fail=1
fi

# ranks reading different models of one name (each rank in a directory of its own,
# without a shared file system): refused on every rank (before: a regression model
# on one rank and a classification one on the other hung the job)
mkdir "$dir/r0" "$dir/r1"
cp "$dir/lr.model" "$dir/r0/m.model"
sed 's/^solver_type L2R_LR$/solver_type L2R_L2LOSS_SVR/; /^label /d' "$dir/lr.model" \
    >"$dir/r1/m.model"
cp "$dir/test.svm" "$dir/r0/t.svm"
cp "$dir/test.svm" "$dir/r1/t.svm"
expect 1 "different models on the ranks" $ST_MPIRUN -np 2 sh -c \
    'cd "$0/r$OMPI_COMM_WORLD_RANK" && exec "$1" --force t.svm m.model' "$dir" "$PWD/$P"
says "different models named" "$err" "the ranks read different models from m.model"

# a row whose score is not a number (finite values whose terms overflow both ways:
# inf - inf): an error naming its line, on 2 ranks too, or its example in a binary
# file, and no predictions written (before: "-1 nan nan" printed, the row counted in
# the accuracy, the log loss line silently dropped, exit 0)
printf 'solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 5\nbias -1\nw\n-0.25\n0.95\n-0.04\n-0.29\n-2.37\n' \
    >"$dir/nan.model"
printf '# a comment\n\n+1 1:1\n-1 1:2\n+1 2:1.7e308 4:-1e308 5:1e308\n-1 2:1\n' >"$dir/nan.svm"
expect 1 "a score that is not a number" $ST_MPIRUN -np 2 $P -b 1 "$dir/nan.svm" "$dir/nan.model" \
    "$dir/nan.out"
says "a score that is not a number: its line" "$err" \
    "nan.svm:5: its score is not a number (its terms overflow double precision both ways)"
[ ! -e "$dir/nan.out" ] || { echo "FAIL: predictions written for a score that is not a number"; fail=1; }
tools/strata-gen convert -q "$dir/nan.svm" "$dir/nan.bin"
expect 1 "a score that is not a number, binary" $P "$dir/nan.bin" "$dir/nan.model"
says "a score that is not a number, binary: its example" "$err" "nan.bin: example 3: its score"

[ $fail -eq 0 ] && echo "glm_predict: PASS"
exit $fail
