#!/bin/sh
#
# Strata's optimum against scikit-learn's on scikit-learn's bundled data sets
# (breast cancer, digits, wine, diabetes; exported to svmlight by
# tests/data/sklearn/make.py, which also found and certified each optimum P* with
# scikit-learn at the same regularization: solver/MODELS.md 1.1's lambda <-> C
# mapping, class weights, liblinear's regularized intercept = -B 1). Every model
# kind: strata-train's converged primal (-e 1e-10) must be within 1e-8 of P*,
# relative (the issue asks 1e-6; the runs here land within 1e-10), on one rank with
# the default method and, for the L2 models, with coordinate descent on 2 ranks too.
#
. "${top_srcdir}/tests/common.sh"
fail=0
dir=$(mktemp -d)
out="$dir/out"
trap 'rm -rf "$dir"' EXIT
data="${top_srcdir}/tests/data/sklearn"

n=0
while read -r ds kind lam opts pstar <&3; do
    case $ds in "#"*|"") continue ;; esac
    [ "$opts" = "-" ] && opts="" || opts=$(echo "$opts" | tr ',' ' ')
    runs="1"
    case $kind in logistic|svm|sqsvm|ridge) runs="1 2cd" ;; esac
    for r in $runs; do
        what="$ds $kind -l $lam $opts ($r)"
        if [ "$r" = 2cd ]; then
            # shellcheck disable=SC2086
            expect 0 "$what" $ST_MPIRUN -np 2 tools/strata-train -q --method cd -s "$kind" \
                -l "$lam" $opts -e 1e-10 -r 200000 "$data/$ds.svm" "$dir/m"
        else
            # shellcheck disable=SC2086
            expect 0 "$what" tools/strata-train -q -s "$kind" -l "$lam" $opts -e 1e-10 \
                -r 200000 "$data/$ds.svm" "$dir/m"
        fi
        contains "$what converged" "^converged after"
        near "$what: primal against scikit-learn's optimum" "$(converged_primal)" "$pstar" 1e-8
        n=$((n + 1))
    done
done 3< "$data/refs.txt"   # not stdin: mpirun reads it
[ "$n" -ge 16 ] || { echo "FAIL: only $n runs from $data/refs.txt"; fail=1; }
echo "glm_sklearn: $n runs against scikit-learn's optima"
exit $fail
