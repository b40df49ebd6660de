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

exit $fail
