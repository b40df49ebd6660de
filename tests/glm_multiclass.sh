#!/bin/sh
#
# More than two classes, and classes named otherwise than 1 and -1 (or 0), as LIBLINEAR
# takes them: strata-train trains one model per class against the rest (one model for
# two classes, the first in the file positive) and writes LIBLINEAR's model file
# ("nr_class 4", "label 3 1 7 -2", a weight per class on each line); strata-predict
# predicts the class of the largest score, and with -b 1 the classes' probabilities
# after a "labels ..." line; the same model and predictions on 1 and 3 ranks; -v and
# -C report the accuracy. Errors: a label that is not an integer (file and line), one
# class named otherwise, --weight-pos and checkpoints with more than two classes.
# Where LIBLINEAR is installed: its predict reads Strata's model and predicts the same
# labels, Strata's predict reads LIBLINEAR's, and the weights agree with LIBLINEAR's
# to 1e-4 at tight tolerances (-s 0, 1, 2, 5, 6; -s 3 stops at its iteration limit),
# with LIBLINEAR's class weights (-w7 5 -w1 0.5) too.
#
. "${top_srcdir}/tests/common.sh"
fail=0
dir=$(mktemp -d)
out="$dir/out"
err="$dir/out"
trap 'rm -rf "$dir"' EXIT
train="$(pwd)/tools/strata-train"
predict="$(pwd)/tools/strata-predict"
run="timeout -k 5 120 $ST_MPIRUN"
same() { # name file1 file2: the same bytes
    cmp -s "$2" "$3" || { echo "FAIL: $1: $2 and $3 differ"; fail=1; }
}
within() { # name value reference abs: |value - reference| <= abs
    awk -v a="$2" -v b="$3" -v e="$4" \
        'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && d <= e) }' ||
        { echo "FAIL: $1: $2, expected $3 within $4"; fail=1; }
}

# four classes named 3, 1, 7, -2 around four centres in 12 dimensions, about 70 % of
# the entries stored; the generator is awk's arithmetic alone (an LCG whose products
# stay below 2^53), so every awk writes the same bytes
gen() { # rows seed names...
    awk -v rows="$1" -v seed="$2" -v names="$3" 'BEGIN {
        k = split(names, name, ",");  d = 12;  x = seed
        for (c = 1; c <= k; c++) for (j = 1; j <= d; j++) {
            x = (x * 69069 + 1) % 4294967296; ctr[c, j] = (x / 4294967296 - 0.5) * 3 }
        for (i = 0; i < rows; i++) {
            x = (x * 69069 + 1) % 4294967296; c = 1 + int(x / 4294967296 * k)
            line = name[c]
            for (j = 1; j <= d; j++) {
                x = (x * 69069 + 1) % 4294967296; keep = x / 4294967296
                x = (x * 69069 + 1) % 4294967296; u = x / 4294967296
                x = (x * 69069 + 1) % 4294967296; v = x / 4294967296
                if (keep < 0.7)
                    line = line sprintf(" %d:%.4f", j, ctr[c, j] + (u + v - 1) * 2.2)
            }
            print line
        } }'
}
gen 1600 7 "3,1,7,-2" >"$dir/all.svm"
head -n 1200 "$dir/all.svm" >"$dir/train.svm"
tail -n 400 "$dir/all.svm" >"$dir/test.svm"
rm -f "$dir/all.svm"
gen 600 12 "5,2" >"$dir/two.svm"

# in a directory of its own: nothing but the data and the models may appear there
cd "$dir" || exit 1
expect 0 "4 classes: train" "$train" -s 0 -c 1 train.svm m4
contains "4 classes: header" "^strata-train: 4 classes: a model for each against the rest$"
for c in 3 1 7 -2; do
    contains "class $c trained" "^class $c ([1-4] of 4) against the rest$"
done
check "4 classes: nr_class" grep -qx "nr_class 4" m4
check "4 classes: labels in the order of their first rows" grep -qx "label 3 1 7 -2" m4
check "4 classes: 12 lines of 4 weights" \
    test "$(sed '1,/^w$/d' m4 | awk 'NF == 4' | wc -l)" -eq 12
expect 0 "4 classes: predict" "$predict" -b 1 test.svm m4 p4
contains "4 classes: accuracy" "^Accuracy = [89][0-9.]*% ([0-9]*/400)$"
check "4 classes: no AUC line" sh -c "! grep -q AUC '$out'"
check "4 classes: -b 1 header" test "$(head -1 p4)" = "labels 3 1 7 -2"
check "4 classes: a label and 4 probabilities a line" \
    test "$(sed 1d p4 | awk 'NF == 5 && ($1 == 3 || $1 == 1 || $1 == 7 || $1 == -2)' | wc -l)" -eq 400
check "4 classes: the probabilities sum to 1, the label's the largest" \
    test "$(sed 1d p4 | awk '{ s = $2 + $3 + $4 + $5; m = 2
        for (c = 3; c <= 5; c++) if ($c > $m) m = c
        split("3 1 7 -2", n, " ")
        if (s < 0.99999 || s > 1.00001 || n[m - 1] != $1) bad++ } END { print bad + 0 }')" -eq 0
# labels of ten digits: written whole (%.17g; LIBLINEAR's lines say 1.23457e+06)
awk '{ if ($1 == 3) $1 = 1234567; else if ($1 == 7) $1 = 2000000001; print }' \
    train.svm >big.svm
expect 0 "ten-digit classes: train" "$train" -q -s 0 -c 1 big.svm mbig
check "ten-digit classes: the label line" grep -qx "label 1234567 1 2000000001 -2" mbig
expect 0 "ten-digit classes: predict" "$predict" -b 1 big.svm mbig pbig
check "ten-digit classes: the -b 1 header" test "$(head -1 pbig)" = \
    "labels 1234567 1 2000000001 -2"
check "ten-digit classes: the labels predicted" \
    test "$(sed 1d pbig | cut -d' ' -f1 | LC_ALL=C sort -u | tr '\n' ' ')" = "-2 1 1234567 2000000001 "
rm -f big.svm mbig pbig
# the header's lines in another order (the label line before nr_class): the same
awk 'NR == 2 { two = $0; next } NR == 3 { print; print two; next } { print }' m4 >m4r
check "4 classes: label line first" test "$(sed -n 2p m4r)" = "label 3 1 7 -2"
expect 0 "4 classes: predict, label line first" "$predict" -b 1 test.svm m4r p4r
same "4 classes: label line first, the same predictions" p4r p4
rm -f m4r p4r
# the same model and the same predictions on 3 ranks
expect 0 "4 classes: 3 ranks" $run -np 3 "$train" -q -s 0 -c 1 train.svm m4.3
within "4 classes, 3 ranks: the first weight" "$(sed -n '/^w$/{n;p}' m4.3 | cut -d' ' -f1)" \
    "$(sed -n '/^w$/{n;p}' m4 | cut -d' ' -f1)" 1e-3
expect 0 "4 classes: predict on 3 ranks" $run -np 3 "$predict" -b 1 test.svm m4 p4.3
same "4 classes: the same predictions on 3 ranks" p4.3 p4
# the dual models and the L1 models too, one and two ranks
for s in svm sqsvm l1-logistic l1-sqsvm; do
    expect 0 "4 classes: $s" $run -np 2 "$train" -q -s $s -c 1 train.svm m.$s
    expect 0 "4 classes: $s predicts" "$predict" test.svm m.$s
    contains "4 classes: $s's accuracy" "^Accuracy = [89][0-9.]*% "
done

# two classes named 5 and 2 (5 first): one weight vector, 5 scored positive
check "5 first in two.svm" test "$(head -c 2 two.svm)" = "5 "
expect 0 "classes 5 and 2" "$train" -q -s 0 -c 1 two.svm m2
check "classes 5 and 2: nr_class 2" grep -qx "nr_class 2" m2
check "classes 5 and 2: label 5 2" grep -qx "label 5 2" m2
expect 0 "classes 5 and 2: predict" "$predict" -b 1 two.svm m2 p2
contains "classes 5 and 2: AUC" "^AUC = 0\.[0-9]*$"
check "classes 5 and 2: -b 1 header" test "$(head -1 p2)" = "labels 5 2"
check "classes 5 and 2: labels predicted" \
    test "$(sed 1d p2 | awk '$1 != 5 && $1 != 2' | wc -l)" -eq 0

# cross-validation and -C
expect 0 "4 classes: -v 4" "$train" -q -s 0 -c 1 -v 4 train.svm
contains "4 classes: CV accuracy" "^Cross Validation Accuracy = [89][0-9.]*%$"
contains "4 classes: CV summary" "^Cross Validation: 1200 examples, 4 classes, 4 folds$"
acc=$(sed -n 's/^Cross Validation Accuracy = \(.*\)%$/\1/p' "$out")
expect 0 "4 classes: -v 4 on 3 ranks" $run -np 3 "$train" -q -s 0 -c 1 -v 4 train.svm
contains "4 classes: the same CV accuracy on 3 ranks ($acc)" \
    "^Cross Validation Accuracy = $acc%$"
# a class of one example, and a fold whose training rows are of one class: as LIBLINEAR's
# folds, which know their training rows' classes alone, the class a fold's training rows
# lack is never predicted for its rows (leave-one-out, the same folds for LIBLINEAR:
# 60 % and 75 %, liblinear-train -v's; before: 80 % and 100 %, the lone row's class
# predicted by a model that never saw it)
printf '5 1:-1 2:-1\n2 1:1 2:0.5\n3 1:0.5 2:1\n3 1:1 2:1\n3 1:1 2:1.2\n' >lone.svm
printf '1 1:-1 2:-1\n-1 1:1 2:0.5\n-1 1:0.5 2:1\n-1 1:1 2:1\n' >lone2.svm
for np in 1 2; do
    expect 0 "a class of one example, -v 5, $np rank(s)" $run -np $np "$train" -q -s 0 -v 5 \
        lone.svm
    contains "a class of one example, -v 5, $np rank(s)" "^Cross Validation Accuracy = 60%$"
    expect 0 "a fold of one class, -v 4, $np rank(s)" $run -np $np "$train" -q -s 0 -v 4 \
        lone2.svm
    contains "a fold of one class, -v 4, $np rank(s)" "^Cross Validation Accuracy = 75%$"
done
expect 0 "a class of one example, -C -v 5" "$train" -q -s 0 -C -v 5 lone.svm
contains "a class of one example, -C -v 5" "^Best C = [0-9.e-]*  CV accuracy = 60%$"
rm -f lone.svm lone2.svm
expect 0 "4 classes: -C" "$train" -q -s 2 -C train.svm
contains "4 classes: -C's best C" "^Best C = [0-9.e-]*  CV accuracy = [89][0-9.]*%$"
# the smallest C's: every class's model resolved, not w = 0 nor a start left at the
# last C's scale (before: 30.6 % at C = 2^-18, every row the first class; then 73 %
# at 2^-16 with the classes' models at two scales)
"$(dirname "$train")/strata-gen" dense -n 3000 -d 20 --classes 4 -q g4.svm ||
    { echo "FAIL: strata-gen --classes"; fail=1; }
expect 0 "4 classes: -C from the data's C" "$train" -s 0 -C g4.svm
check "4 classes: -C: every C's rate above 80 %" \
    test "$(awk '/^log2c=/ { n++; if ($2 + 0 < 80) bad++ } END { print n + 0, bad + 0 }' \
        FS='rate=' "$out")" = "29 0"
rm -f g4.svm
check "nothing but the data and the models here" \
    test "$(ls | sort | tr '\n' ' ')" = "m.l1-logistic m.l1-sqsvm m.sqsvm m.svm m2 m4 m4.3 out p2 p4 p4.3 test.svm train.svm two.svm "

# warnings: a class stopped at -r (the summary's rounds and gap are the classes' sums);
# integer targets read as classes, fewer than 10 rows each
expect 0 "4 classes, -r 1" "$train" -q -s 0 -c 1 --method newton -r 1 train.svm mr
contains "4 classes, -r 1: warned" "warning: the training of a class (of 4, each against the rest) stopped before its relative gap reached -e 0.001 (all classes: 4 rounds"
awk '{ $1 = NR % 200; print }' train.svm >many.svm
expect 0 "200 classes in 1200 rows" "$train" -q -r 5 many.svm mm
contains "200 classes: warned" "warning: 200 classes in 1200 examples (fewer than 10 each): regression targets?"
rm -f mr mm many.svm

# errors
printf '3 1:1\n1.5 2:1\n' >bad.svm
expect 1 "a label of 1.5" "$train" -q bad.svm mb
contains "a label of 1.5: file and line" "bad.svm:2: label '1.5' is not a class label"
expect 1 "a label of 1.5 to predict" "$predict" bad.svm m4
contains "a label of 1.5 to predict: file and line" "bad.svm:2: label '1.5' is not a class"
# one class named 5: LIBLINEAR's model of it (nr_class 1), 5 for every row, P 1 (before:
# refused, "a classifier needs two classes")
printf '5 1:1\n5 2:1\n' >one.svm
printf '5 1:-1\n3 2:-1\n' >one_test.svm
expect 0 "one class named 5" "$train" -q -s 0 one.svm m1
contains "one class named 5: warned" "warning: every training example is of class 5: .*predicts that class for every row"
[ "$(sed -n 2,3p m1 | tr '\n' ' ')" = "nr_class 1 label 5 " ] ||
    { echo "FAIL: one class named 5: not 'nr_class 1', 'label 5'"; head -3 m1; fail=1; }
expect 0 "one class named 5: predict" "$predict" -b 1 one_test.svm m1 p1
contains "one class named 5: accuracy" "^Accuracy = 50% (1/2)$"
[ "$(tr '\n' ' ' <p1)" = "labels 5 5 1 5 1 " ] ||
    { echo "FAIL: one class named 5: predicted"; cat p1; fail=1; }
rm -f m1 p1 one_test.svm
expect 1 "--weight-pos with 4 classes" "$train" -q --weight-pos 2 train.svm mb
contains "--weight-pos with 4 classes" "class weights (weight_pos, weight_neg: --weight-pos, --weight-neg) with 4 classes: .*-wLABEL"
expect 1 "checkpoints with 4 classes" "$train" -q --checkpoint ck --checkpoint-every 1 \
    train.svm mb
contains "checkpoints with 4 classes" "checkpoints with 4 classes"
check "no model or checkpoint left by the errors" test ! -e mb -a ! -e ck

# LIBLINEAR: each reads the other's models and predicts the same labels; the weights
# agree at tight tolerances
if command -v liblinear-train >/dev/null 2>&1; then
    expect 0 "LIBLINEAR predicts with Strata's model" liblinear-predict test.svm m4 ll.p
    sed 1d p4 | cut -d' ' -f1 >st.p
    same "LIBLINEAR's labels from Strata's model" ll.p st.p
    for s in 0 1 2 5 6; do
        expect 0 "LIBLINEAR -s $s" liblinear-train -q -s $s -c 1 -e 1e-6 train.svm ll.m$s
        expect 0 "Strata -s $s" "$train" -q -s $s -c 1 -e 1e-9 -r 10000 train.svm st.m$s
        check "-s $s: the same header" test "$(sed '/^w$/q' ll.m$s | grep -v solver_type)" = \
            "$(sed '/^w$/q' st.m$s | grep -v solver_type)"
        d=$(paste -d' ' ll.m$s st.m$s | sed '1,/^w /d' | awk '{ n = NF / 2
            for (c = 1; c <= n; c++) { e = $c - $(c + n); if (e < 0) e = -e
                if (e > m) m = e } } END { print m + 0 }')
        check "-s $s: the weights within 1e-4 of LIBLINEAR's ($d)" \
            awk -v d="$d" 'BEGIN { exit !(d < 1e-4) }'
        expect 0 "Strata predicts with LIBLINEAR's -s $s model" "$predict" test.svm ll.m$s sp
        expect 0 "LIBLINEAR predicts with its -s $s model" liblinear-predict test.svm ll.m$s lp
        same "-s $s: the same labels from LIBLINEAR's model" sp lp
    done
    # LIBLINEAR's class weights: class 7's rows weigh 5 in its model, class 1's 0.5 in
    # its own, the rest 1; -w9 (no such class) warned about and left aside
    expect 0 "LIBLINEAR -w7 5 -w1 0.5" liblinear-train -q -s 0 -c 1 -e 1e-6 -w7 5 -w1 0.5 \
        train.svm ll.mw
    expect 0 "Strata -w7 5 -w1 0.5 -w9 2" "$train" -q -s 0 -c 1 -e 1e-9 -r 10000 -w7 5 \
        -w1 0.5 -w9 2 train.svm st.mw
    contains "-w9: warned" "warning: -w9: the data have no class 9 (their classes are 3, 1, 7 and -2): that weight is not used"
    d=$(paste -d' ' ll.mw st.mw | sed '1,/^w /d' | awk '{ n = NF / 2
        for (c = 1; c <= n; c++) { e = $c - $(c + n); if (e < 0) e = -e
            if (e > m) m = e } } END { print m + 0 }')
    check "-w7 5 -w1 0.5: the weights within 1e-4 of LIBLINEAR's ($d)" \
        awk -v d="$d" 'BEGIN { exit !(d < 1e-4) }'
    check "-w7 5 -w1 0.5: another model than without" test -n "$(cmp st.mw st.m0)"
else
    echo "SKIP: LIBLINEAR comparisons (liblinear-train not installed)"
fi
exit $fail
