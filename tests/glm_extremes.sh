#!/bin/sh
#
# The solvers at the edges of double precision: data, targets and options near its
# limits, whose models and messages must stay true (tests/glm_badinput.sh holds what
# is refused outright).
#
. "${top_srcdir}/tests/common.sh"
fail=0
dir=$(mktemp -d)
out="$dir/out" err="$dir/err"
trap 'rm -rf "$dir"' EXIT
T=tools

# 1. A primal below 1e-300: the relative gap is gap / primal (before: gap / 1e-300, so
# a gap as large as the primal printed as "relative 1.111e-06", and the warning said
# that 1.1e-06 "did not reach -e 0.001"). Feature 1 of 1e153 separates the classes:
# the optimum's objective is 1e-306, which Newton certifies no better than its size.
printf '+1 1:1e153 2:1\n-1 1:-1e153 2:2\n+1 1:5e152 2:-1\n-1 1:-2e153 2:0.5\n+1 1:3e152 2:1\n' \
    >"$dir/sep.svm"
$T/strata-train -s 1 -c 1 --method newton -r 100 "$dir/sep.svm" "$dir/m" >"$out" 2>"$err"
check "primal 1e-306: exit 0" test $? -eq 0
check "primal 1e-306: stopped, relative gap 1" \
    grep -q '^stopped after .* gap 1.111e-306 (relative 1.000e+00)' "$out"
check "primal 1e-306: the warning's gap 1" \
    grep -q 'warning: the relative gap 1.000e+00 did not reach -e 0.001' "$err"
check "primal 1e-306: no round's relative gap below 1" \
    test -z "$(sed -n 's/^round .* rel \([^ ]*\) .*/\1/p' "$out" | awk '$1 < 0.5')"

# 2. Coordinate descent where a row's curvature ||x||^2 / (lambda n) overflows (-l 1e-300,
# features of 1e10): refused, naming lambda (before: every step 0, a model of zeros, or
# logistic's of objective 5e10, exit 0 with a warning to raise -r); L-BFGS trains it.
printf '+1 1:1e10 2:1\n-1 1:-1e10 2:2\n+1 1:2e10 2:-1\n-1 1:1e9 2:0.5\n' >"$dir/e10.svm"
for s in logistic ridge sqsvm svm svr; do
    rm -f "$dir/m"
    expect 1 "-l 1e-300, cd, $s" $T/strata-train -q -s $s --method cd -l 1e-300 -r 50 \
        "$dir/e10.svm" "$dir/m"
    contains "-l 1e-300, cd, $s: named" "lambda 1e-300 is too small for coordinate descent"
    check "-l 1e-300, cd, $s: no model" test ! -e "$dir/m"
done
expect 1 "-c 1e300 -s 3 (svm), 2 ranks" $ST_MPIRUN -np 2 $T/strata-train -q -s 3 -c 1e300 \
    "$dir/e10.svm" "$dir/m"
contains "-c 1e300 -s 3, 2 ranks: named" "too small for coordinate descent"
expect 0 "-l 1e-300, lbfgs" $T/strata-train -q -s ridge --method lbfgs -l 1e-300 \
    "$dir/e10.svm" "$dir/m"

# -C: the C's from the one whose curvature overflows end the search, with a warning
# (before this refusal: scored as models of zeros; with it alone: the search failed)
$T/strata-train -q -C -s 3 "$dir/sep.svm" >"$out" 2>"$err"
check "-C -s 3, features of 1e153: exit 0" test $? -eq 0
check "-C -s 3: a best C" grep -q '^Best C = ' "$out"
said='warning: the search stopped short of C = 1024: C 64 and above: .*too small for coord'
check "-C -s 3: the search's end said" grep -q "$said" "$err"

# 3. lambda n beyond double precision (-l 1e308, 5 rows): refused, naming lambda, as
# LIBLINEAR refuses its C = 1/(lambda n) = 0 (before:
# coordinate descent's scale 1 / (lambda n) was 0, its updates 0 / 0, every objective NaN,
# refused as "the objective overflows (primal -nan) ... scale them"); C's side: -c 1e-309
printf '+1 1:1 2:0.5\n-1 1:-1 2:2\n+1 1:2 2:-1\n-1 1:0.1 2:0.5\n+1 1:1 2:0.5\n' >"$dir/small.svm"
for s in svm sqsvm logistic ridge svr lasso; do
    expect 1 "-l 1e308, $s" $T/strata-train -q -s $s -l 1e308 "$dir/small.svm" "$dir/m"
    contains "-l 1e308, $s: named" "lambda 1e+308 is too large for 5 rows (lambda n overflows)"
done
awk 'BEGIN { for (i = 0; i < 100; i++) printf "%+d 1:%g\n", (i % 2) ? 1 : -1, (i % 2) ? 1 : -1 }' \
    >"$dir/hundred.svm"
expect 1 "-s 3 -c 1e-309, 100 rows" \
    $T/strata-train -q -s 3 -c 1e-309 "$dir/hundred.svm" "$dir/m"
contains "-s 3 -c 1e-309: named" "is too large for 100 rows (lambda n overflows)"
expect 0 "-s svm -l 3e307, 5 rows" $T/strata-train -q -s svm -l 3e307 "$dir/small.svm" "$dir/m"

# 4. -C's first C where the rows' squares near double's limit (features of 1e153): LIBLINEAR's
# 0.01 sum e^2 / (8 (sum |y|)^2 max ||x||^2) and 1 / (2 n max ||x||^2) divided in turn, at
# least DBL_MIN (before: the product overflowed, the start C was 0, and the search refused:
# "no C to start from: every example's features ... are 0")
for s in 11 13; do
    $T/strata-train -q -C -s $s "$dir/sep.svm" >"$out" 2>"$err"
    check "-C -s $s, features of 1e153: exit 0" test $? -eq 0
    check "-C -s $s, features of 1e153: a best C" grep -q '^Best C = ' "$out"
done

# 5. L-BFGS warm-started (a -C search's next C) where no step lowers the objective: the
# start stays (before: "L-BFGS found no step that lowers the objective from w = 0", the
# search's error at C = 2^-935 on 1000 rows of 1e152)
awk 'BEGIN { for (i = 0; i < 1000; i++) { y = (i % 3) ? 1 : -1;
    printf "%+d 1:%.6g 2:%.6g\n", y, y * (0.5 + (i % 7) / 4) * 1e152, (i * 37 % 100) / 50 - 1 } }' \
    >"$dir/big.svm"
$T/strata-train -q -C -s 1 "$dir/big.svm" >"$out" 2>"$err"
check "-C -s 1, 1000 rows of 1e152: exit 0" test $? -eq 0
check "-C -s 1, 1000 rows of 1e152: a best C" grep -q '^Best C = ' "$out"

exit $fail
