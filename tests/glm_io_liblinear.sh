#!/bin/sh
#
# Strata's model files against LIBLINEAR's own predict (Debian's liblinear-tools, 2.3):
# models written by Strata (hand-made ones, strata-train's, and LIBLINEAR's models read
# and saved again by Strata) are read by liblinear-predict, whose output must equal
# strata-predict's line by line: labels, -b 1 probabilities, regression values
# (%.17g), and the accuracy line. Strata's copy of a LIBLINEAR model file whose
# solver Strata writes under LIBLINEAR's name is the same bytes. The test rows include empty rows (score 0: class -1
# for both) and features beyond the model's. Skipped (77) without liblinear-predict.
#
. "${top_srcdir}/tests/common.sh"
if ! command -v liblinear-predict >/dev/null 2>&1 ||
    ! command -v liblinear-train >/dev/null 2>&1; then
    echo "glm_io_liblinear: SKIP: liblinear-predict is not installed (liblinear-tools)"
    exit 77
fi
fail=0
dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-glm-liblinear.XXXXXX") || exit 99
trap 'rm -rf "$dir"' EXIT
P=tools/strata-predict

# run NAME COMMAND...: must succeed, silently on stderr (a hang is killed)
run() {
    what=$1; shift
    if ! timeout -k 10 "${ST_TEST_TIMEOUT:-300}" "$@" >"$dir/stdout" 2>"$dir/stderr" ||
        [ -s "$dir/stderr" ]; then
        echo "FAIL: $what: $*"; cat "$dir/stdout" "$dir/stderr"; fail=1
        return 1
    fi
    return 0
}
# same NAME GOT EXPECTED
same() {
    if ! cmp -s "$2" "$3"; then
        echo "FAIL: $1: $2 and $3 differ:"; diff "$3" "$2" | head -20; fail=1
    fi
}

# data: dense classification and regression sets; the test sets get empty rows and
# features beyond the training set's 15 (or 10) columns
tools/strata-gen dense -q -n 300 -d 15 -s 5 --test-rows 150 --test-out "$dir/core.svm" \
    "$dir/train.svm" || exit 99
# rows 151-155: empty (score 0 without a bias), beyond the model, ...
{ cat "$dir/core.svm"; printf '+1\n-1\n+1 20:1.5\n-1 3:0.25 16:2\n-1 1:0 2:0\n'; } \
    >"$dir/test.svm"
tools/strata-gen regression -q -n 300 -d 10 -s 6 --test-rows 100 --test-out "$dir/test.reg" \
    "$dir/train.reg" || exit 99
printf '0.5\n-1.25 12:3\n' >>"$dir/test.reg"
# the same training rows with 0/1 labels, a 0 first
{ grep '^-1' "$dir/train.svm"; grep -v '^-1' "$dir/train.svm"; } | sed 's/^-1 /0 /' \
    >"$dir/train01.svm"

# compare NAME MODEL TEST [-b]: Strata saves MODEL again; liblinear-predict on Strata's
# file must say what strata-predict says (on 1 and on 3 ranks) and what
# liblinear-predict says on MODEL itself
compare() {
    name=$1 model=$2 test=$3 b=$4
    run "$name: resave" tests/test_glm_io --resave "$model" "$dir/strata.model" || return
    run "$name: liblinear-predict on Strata's file" \
        liblinear-predict $b "$test" "$dir/strata.model" "$dir/ll.out" || return
    grep '^Accuracy' "$dir/stdout" >"$dir/ll.acc"
    run "$name: liblinear-predict on its own file" \
        liblinear-predict $b "$test" "$model" "$dir/ll_own.out" || return
    same "$name: liblinear-predict, its file vs Strata's" "$dir/ll.out" "$dir/ll_own.out"
    run "$name: strata-predict" $P $b "$test" "$dir/strata.model" "$dir/st.out" || return
    grep '^Accuracy' "$dir/stdout" >"$dir/st.acc"
    same "$name: labels, LIBLINEAR vs Strata" "$dir/st.out" "$dir/ll.out"
    same "$name: accuracy line, LIBLINEAR vs Strata" "$dir/st.acc" "$dir/ll.acc"
    run "$name: strata-predict on 3 ranks" $ST_MPIRUN -np 3 $P $b "$test" \
        "$dir/strata.model" "$dir/st3.out" || return
    same "$name: labels, LIBLINEAR vs Strata on 3 ranks" "$dir/st3.out" "$dir/ll.out"
}

# hand-made: logistic and svm, weight 0 on most features (so many rows score exactly 0
# without a bias), with and without a bias
{
    printf 'solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 15\nbias -1\nw\n'
    printf '0.75\n0\n-0.5\n'
    i=4; while [ $i -le 15 ]; do printf '0\n'; i=$((i + 1)); done
} >"$dir/hand_lr.model"
compare "hand-made logistic" "$dir/hand_lr.model" "$dir/test.svm"
compare "hand-made logistic, -b 1" "$dir/hand_lr.model" "$dir/test.svm" "-b 1"
sed -e 's/L2R_LR/L2R_L1LOSS_SVC_DUAL/' -e 's/^bias -1$/bias 2/' "$dir/hand_lr.model" \
    >"$dir/hand_svm.model"
printf '0.125\n' >>"$dir/hand_svm.model"
compare "hand-made svm, bias 2" "$dir/hand_svm.model" "$dir/test.svm"
if ! grep -q '^1$' "$dir/ll.out" || ! grep -q '^-1$' "$dir/ll.out"; then
    echo "FAIL: the hand-made svm does not predict both classes"; fail=1
fi

# models trained by strata-train (alone and on 2 ranks), as it wrote them (-e 0 for
# the hinge: its 200 rounds, short of the default gap, without the warning)
for spec in "-s logistic" "-s svm -B 1 -e 0" "-s sqsvm" "-s logistic -B 0.5 -np 2" \
    "-s ridge -B 1 reg" "-s l1-sqsvm -B 1" "-s l1-sqsvm -np 2"; do
    np=1 data="$dir/train.svm" test="$dir/test.svm" args=""
    for a in $spec; do
        case $a in
        -np) ;;
        2) np=2 ;;
        reg) data="$dir/train.reg" test="$dir/test.reg" ;;
        *) args="$args $a" ;;
        esac
    done
    # shellcheck disable=SC2086
    run "strata-train $spec" $ST_MPIRUN -np $np tools/strata-train -q $args "$data" \
        "$dir/st.model" || continue
    compare "strata-train $spec" "$dir/st.model" "$test"
    same "strata-train $spec: the file saved again" "$dir/strata.model" "$dir/st.model"
    case $spec in
    *logistic*) compare "strata-train $spec, -b 1" "$dir/st.model" "$test" "-b 1" ;;
    esac
done

# LIBLINEAR's models of the problems Strata has, read and saved by Strata
for s in 0 3 1 6 7 2 5; do
    for B in -1 1; do
        run "liblinear-train -s $s -B $B" liblinear-train -q -s $s -B $B "$dir/train.svm" \
            "$dir/ll.model" || continue
        compare "-s $s -B $B" "$dir/ll.model" "$dir/test.svm"
        # the solvers Strata writes under LIBLINEAR's name: the very same bytes
        case $s in
        0 | 3 | 1 | 6 | 5) same "-s $s -B $B: Strata's file" "$dir/strata.model" "$dir/ll.model" ;;
        esac
        case $s in
        0 | 6 | 7) compare "-s $s -B $B, -b 1" "$dir/ll.model" "$dir/test.svm" "-b 1" ;;
        esac
    done
done
for s in 11 12 13; do
    for B in -1 0.5; do
        run "liblinear-train -s $s -B $B" liblinear-train -q -s $s -B $B -p 0 \
            "$dir/train.reg" "$dir/ll.model" || continue
        compare "-s $s -B $B" "$dir/ll.model" "$dir/test.reg"
        # -s 11 is read as ridge (its problem at -p 0), 12 and 13 as sqsvr and svr: each
        # written back under LIBLINEAR's name
        same "-s $s -B $B: Strata's file" "$dir/strata.model" "$dir/ll.model"
    done
done

# strata-train on LIBLINEAR's command line (-s N, -c C or LIBLINEAR's default C = 1,
# -B 1): the weights liblinear-train finds, within 1e-5 of the largest (the same
# objective, lambda = 1/(C n)), and the same header but for solver_type (Strata's
# name of the model: -s 2 writes L2R_L2LOSS_SVC_DUAL).
# same_weights SPEC DATA WEIGHTS: both tools' models of DATA under -s SPEC
same_weights() {
    spec=$1 data=$2 nw=$3
    # shellcheck disable=SC2086
    run "liblinear-train -s $spec" liblinear-train -q -s $spec -e 1e-8 -B 1 \
        "$data" "$dir/ll.model" || return 1
    # shellcheck disable=SC2086
    run "strata-train -s $spec" tools/strata-train -q -s $spec -e 1e-12 -r 100000 -B 1 \
        "$data" "$dir/st.model" || return 1
    sed -n '2,5p' "$dir/ll.model" >"$dir/ll.head"
    sed -n '2,5p' "$dir/st.model" >"$dir/st.head"
    same "-s $spec: the header" "$dir/st.head" "$dir/ll.head"
    awk -v nw="$nw" 'FNR == 1 { f++ } /^w$/ { w[f] = 1; i = 0; next }
         w[f] { if (f == 1) a[i++] = $1; else { d = $1 - a[i]; x = a[i++]
                if (d < 0) d = -d; if (x < 0) x = -x; if (d > m) m = d; if (x > big) big = x } }
         END { exit !(i == nw && m <= 1e-5 * big) }' "$dir/ll.model" "$dir/st.model" ||
        { echo "FAIL: -s $spec: Strata's weights are not LIBLINEAR's:"
          paste "$dir/ll.model" "$dir/st.model" | tail -"$nw"; fail=1; }
}
# C = 0.05 for LIBLINEAR's dual solvers (-s 1, 3): at C = 1 they stop at their 1000
# iterations 1% short here
for spec in "0" "2" "6" "7" "0 -c 0.05" "1 -c 0.05" "2 -c 0.05" "3 -c 0.05" "6 -c 4" \
    "7 -c 4" "5" "5 -c 4"; do
    same_weights "$spec" "$dir/train.svm" 16
done
# support vector regression (-s 11 and 12: sqsvr, 13: svr), LIBLINEAR's -p its epsilon
# (default 0.1 in both); C = 0.05 for -s 13, whose dual solver stops at its 1000
# iterations short of the optimum at C = 1; and each model in both predicts
for spec in "11" "12" "11 -p 0.5 -c 4" "12 -p 0" "13 -c 0.05" "13 -p 0.3 -c 0.02"; do
    same_weights "$spec" "$dir/train.reg" 11 &&
        compare "strata-train -s $spec" "$dir/st.model" "$dir/test.reg"
done

# "label 0 1": LIBLINEAR keeps the order of first appearance (it swaps only -1/+1, to
# "label 1 -1"), so 0/1 data starting with a 0 gives a w that scores label 0 positive.
# Strata reads 0 as -1 and negates the weights, and a score of 0 is then label[1], +1,
# as in LIBLINEAR; its file says "label 0 1" with the weights as they came, and its
# predictions name the classes 1 and 0, as LIBLINEAR's.
run "liblinear-train, 0/1 labels, 0 first" liblinear-train -q -s 0 "$dir/train01.svm" \
    "$dir/l01.model" &&
    if ! grep -q '^label 0 1$' "$dir/l01.model"; then
        echo "FAIL: LIBLINEAR did not write 'label 0 1':"; head -5 "$dir/l01.model"; fail=1
    fi
run "label 0 1: resave" tests/test_glm_io --resave "$dir/l01.model" "$dir/s01.model"
run "label 0 1: liblinear-predict on Strata's file" liblinear-predict "$dir/test.svm" \
    "$dir/s01.model" "$dir/ll_s01.out"
run "label 0 1: strata-predict on LIBLINEAR's file" $P "$dir/test.svm" "$dir/l01.model" \
    "$dir/st01.out"
same "label 0 1: LIBLINEAR on Strata's file vs Strata on LIBLINEAR's" "$dir/st01.out" \
    "$dir/ll_s01.out"
run "label 0 1: liblinear-predict on its own file" liblinear-predict "$dir/test.svm" \
    "$dir/l01.model" "$dir/ll01.out"
# the same classes on every row, the empty rows 151, 152, 153 and 155 (a score of 0)
# too: label[1], 1 (before: Strata said -1 there whatever the file's label order)
same "label 0 1: LIBLINEAR vs Strata on their own files" "$dir/st01.out" "$dir/ll01.out"
row154=$(sed -n '154p' "$dir/st01.out")
st_rows=$(sed -n '151,155p' "$dir/st01.out" | tr '\n' ' ')
if [ "$st_rows" != "1 1 1 $row154 1 " ]; then
    echo "FAIL: label 0 1, rows 151-155: Strata '$st_rows', expected 1 1 1 $row154 1"; fail=1
fi
grep -q '^label 0 1$' "$dir/s01.model" ||
    { echo "FAIL: label 0 1: Strata's file lacks 'label 0 1'"; head -5 "$dir/s01.model"; fail=1; }

# strata-train on 0/1 data (a 1 first): its file says "label 1 0", so LIBLINEAR's
# predict names the classes 1 and 0 as the test rows do, and counts as strata-predict
# does (before: "label 1 -1", and LIBLINEAR counted every 0 row wrong: 50% where
# Strata said 100%)
sed 's/^-1 /0 /; s/^+1 /1 /' "$dir/train.svm" >"$dir/t01.svm"
sed 's/^-1/0/; s/^+1/1/' "$dir/test.svm" >"$dir/test01.svm"
run "strata-train, 0/1 labels" tools/strata-train -q "$dir/t01.svm" "$dir/st_t01.model"
grep -q '^label 1 0$' "$dir/st_t01.model" ||
    { echo "FAIL: strata-train on 0/1: no 'label 1 0'"; head -5 "$dir/st_t01.model"; fail=1; }
for b in "" "-b 1"; do
    run "0/1 labels $b: liblinear-predict" liblinear-predict $b "$dir/test01.svm" \
        "$dir/st_t01.model" "$dir/ll_t01.out" && cp "$dir/stdout" "$dir/ll_t01.acc"
    run "0/1 labels $b: strata-predict" $P $b "$dir/test01.svm" "$dir/st_t01.model" \
        "$dir/sp_t01.out"
    same "0/1 labels $b: the predictions" "$dir/sp_t01.out" "$dir/ll_t01.out"
    grep '^Accuracy' "$dir/stdout" >"$dir/sp_t01.acc"
    grep '^Accuracy' "$dir/ll_t01.acc" >"$dir/ll_t01.acc2"
    same "0/1 labels $b: the accuracy" "$dir/sp_t01.acc" "$dir/ll_t01.acc2"
done

# the same 0/1 sets converted to the binary format (tests/test_data --to-bin; format
# version 2, its 0/1 flag set) train the text's model, byte for byte, "label 1 0"
# included, on 1 and 2 ranks, and strata-predict on the binary test set prints 1 and 0
# as LIBLINEAR's predict does on the text (before: the format kept no 0/1, the model
# said "label 1 -1", predicted -1 for the 0 rows, and LIBLINEAR counted them wrong).
# A -1/+1 set converted stays version 1 and trains the text's model, "label 1 -1".
run "0/1 labels: to binary" tests/test_data --load "$dir/t01.svm" --to-bin "$dir/t01.bin"
run "0/1 labels: test set to binary" tests/test_data --load "$dir/test01.svm" \
    --to-bin "$dir/test01.bin"
run "0/1 binary: strata-train" tools/strata-train -q "$dir/t01.bin" "$dir/st_b01.model"
same "0/1 binary: the model, binary vs text" "$dir/st_b01.model" "$dir/st_t01.model"
run "0/1 text: strata-train on 2 ranks" $ST_MPIRUN -np 2 tools/strata-train -q \
    "$dir/t01.svm" "$dir/st_t01_2.model"
run "0/1 binary: strata-train on 2 ranks" $ST_MPIRUN -np 2 tools/strata-train -q \
    "$dir/t01.bin" "$dir/st_b01_2.model"
same "0/1 binary: the model on 2 ranks, binary vs text" "$dir/st_b01_2.model" \
    "$dir/st_t01_2.model"
grep -q '^label 1 0$' "$dir/st_b01_2.model" ||
    { echo "FAIL: 0/1 binary, 2 ranks: no 'label 1 0'"; head -5 "$dir/st_b01_2.model"; fail=1; }
for b in "" "-b 1"; do
    run "0/1 binary $b: liblinear-predict" liblinear-predict $b "$dir/test01.svm" \
        "$dir/st_b01.model" "$dir/ll_b01.out" && grep '^Accuracy' "$dir/stdout" >"$dir/ll_b01.acc"
    run "0/1 binary $b: strata-predict" $P $b "$dir/test01.bin" "$dir/st_b01.model" \
        "$dir/sp_b01.out"
    grep '^Accuracy' "$dir/stdout" >"$dir/sp_b01.acc"
    same "0/1 binary $b: the predictions" "$dir/sp_b01.out" "$dir/ll_b01.out"
    same "0/1 binary $b: the accuracy" "$dir/sp_b01.acc" "$dir/ll_b01.acc"
    run "0/1 binary $b: strata-predict on 3 ranks" $ST_MPIRUN -np 3 $P $b "$dir/test01.bin" \
        "$dir/st_b01.model" "$dir/sp3_b01.out"
    same "0/1 binary $b: the predictions on 3 ranks" "$dir/sp3_b01.out" "$dir/ll_b01.out"
    # the classes printed: 1 and 0, both
    if [ -z "$b" ] && { grep -q -v -x -e 1 -e 0 "$dir/sp_b01.out" ||
        ! grep -q -x 0 "$dir/sp_b01.out" || ! grep -q -x 1 "$dir/sp_b01.out"; }; then
        echo "FAIL: 0/1 binary: strata-predict does not print 1 and 0:"
        sort "$dir/sp_b01.out" | uniq -c | head -5; fail=1
    fi
done
run "-1/+1: to binary" tests/test_data --load "$dir/train.svm" --to-bin "$dir/train.bin"
[ "$(od -An -tu4 -j8 -N4 "$dir/train.bin" | tr -d ' ')" = 1 ] ||
    { echo "FAIL: -1/+1 converted to binary is not version 1"; fail=1; }
run "-1/+1 text: strata-train" tools/strata-train -q "$dir/train.svm" "$dir/st_pm.model"
run "-1/+1 binary: strata-train" tools/strata-train -q "$dir/train.bin" "$dir/st_pmb.model"
same "-1/+1: the model, binary vs text" "$dir/st_pmb.model" "$dir/st_pm.model"
grep -q '^label 1 -1$' "$dir/st_pmb.model" ||
    { echo "FAIL: -1/+1 binary: no 'label 1 -1'"; head -5 "$dir/st_pmb.model"; fail=1; }

# LIBLINEAR's model of one class (training data of a single label: "nr_class 1", one
# weight a feature, which predicts that label for every row, with probability 1): read,
# its labels and probabilities liblinear-predict's; strata-train's model of such data
# (alone and on 2 ranks) is LIBLINEAR's, its header the same lines. (Before: the file
# refused, "nr_class 1: a model of one class"; strata-train wrote "label 1 -1" for 1,
# -1 or 0 alone, whose rows of negative score were the class never seen, P < 1, and
# refused other names, "a classifier needs two classes".)
for cls in 3 -1 0 1; do
    head -100 "$dir/train.svm" | sed "s/^[-+0-9]* /$cls /" >"$dir/one.svm"
    run "one class $cls: liblinear-train" \
        liblinear-train -q -s 0 "$dir/one.svm" "$dir/one_ll.model" || continue
    compare "one class $cls: LIBLINEAR's model, -b 1" "$dir/one_ll.model" "$dir/test.svm" \
        "-b 1"
    grep -q "^labels $cls\$" "$dir/st.out" && grep -q "^$cls 1\$" "$dir/st.out" ||
        { echo "FAIL: one class $cls: not 'labels $cls', '$cls 1'"; head -3 "$dir/st.out"; fail=1; }
    for np in 1 2; do
        if ! $ST_MPIRUN -np $np tools/strata-train -q -s 0 "$dir/one.svm" \
            "$dir/one_st.model" >"$dir/stdout" 2>"$dir/stderr"; then
            echo "FAIL: one class $cls, $np rank(s): strata-train:"; cat "$dir/stderr"; fail=1
            continue
        fi
        head -5 "$dir/one_ll.model" >"$dir/one_ll.head"
        head -5 "$dir/one_st.model" >"$dir/one_st.head"
        same "one class $cls, $np rank(s): the header, strata-train vs LIBLINEAR" \
            "$dir/one_st.head" "$dir/one_ll.head"
        compare "one class $cls, $np rank(s): strata-train's model, -b 1" \
            "$dir/one_st.model" "$dir/test.svm" "-b 1"
    done
done

[ $fail -eq 0 ] && echo "glm_io_liblinear: PASS"
exit $fail
