#!/bin/bash
# The data behind strata-train's --method auto rule: cd and lbfgs, one after the other,
# on sets on both sides of it (dense and sparse, rows vs columns), and what auto picks.
#
#   bench/glm/method.sh [CAP]
#
# CAP (default 120): seconds a run may take (a slower one is reported as "> CAP").
# Each set: strata-train -l 1e-5 -e 1e-4 -r 5000 -q, one rank, one thread; the times
# are strata-train's own training time (reading the file excluded), one run each.
# WORK (default bench/glm/work) holds the data (bench/glm/work/method).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CAP=${1:-120}
W=${WORK:-$HERE/work}/method
GEN=$ROOT/tools/strata-gen
TRAIN=$ROOT/tools/strata-train
mkdir -p "$W"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

gen() {  # NAME strata-gen args...
    local name=$1; shift
    [ -s "$W/$name.svm" ] || "$GEN" "$@" -q "$W/$name.svm"
}
gen dense-20k-100   dense -n 20000 -d 100
gen dense-20k-1000  dense -n 20000 -d 1000
gen dense-2k-100    dense -n 2000 -d 100
gen reg-20k-1000-d0.1 regression -n 20000 -d 1000 --density 0.1
gen criteo-100k-1k  criteo -n 100000 -d 1024
gen criteo-100k-16k criteo -n 100000 -d 16384
if [ ! -s "$W/dense-20k-50x2.svm" ]; then   # 50 columns and 50 near copies of them
    python3 - "$W/dense-20k-100.svm" "$W/dense-20k-50x2.svm" <<'PY'
import random, sys
random.seed(1)
with open(sys.argv[1]) as src, open(sys.argv[2], "w") as out:
    for line in src:
        p = line.split()
        f = [(int(a), float(b)) for a, b in (x.split(":") for x in p[1:])]
        f = [(j, v) for j, v in f if j <= 50]
        g = f + [(50 + j, v + 0.001 * random.gauss(0, 1)) for j, v in f]
        out.write(p[0] + " " + " ".join("%d:%.6g" % (j, v) for j, v in g) + "\n")
PY
fi

# seconds NAME SOLVER METHOD: the training time of one run, or "> CAP"
seconds() {
    local log=$W/$1.$3.log t
    if timeout "$CAP" "$TRAIN" -s "$2" -l 1e-5 -e 1e-4 -r 5000 --method "$3" \
            "$W/$1.svm" "$W/$1.$3.model" >"$log" 2>&1; then
        t=$(awk '/^converged after|^stopped after/ { for (i = 1; i < NF; i++)
                   if ($(i + 1) == "s") { print $i; exit } }' "$log")
        echo "${t:-?}"
    else
        echo "> $CAP"
    fi
}

printf '| data | rows x columns, stored | cd (s) | lbfgs (s) | cd / lbfgs | auto picks |\n'
printf '|---|---|---|---|---|---|\n'
for set in dense-20k-100:logistic dense-20k-1000:logistic dense-2k-100:logistic \
           dense-20k-50x2:logistic reg-20k-1000-d0.1:ridge criteo-100k-1k:logistic \
           criteo-100k-16k:logistic; do
    name=${set%%:*} solver=${set#*:}
    cd_s=$(seconds "$name" "$solver" cd)
    lb_s=$(seconds "$name" "$solver" lbfgs)
    pick=$("$TRAIN" -s "$solver" -l 1e-5 -r 1 "$W/$name.svm" /dev/null 2>&1 |
           awk '/^method auto:/ { print $3; sub(/^[^(]*\(/, ""); sub(/\)$/, "");
                                  print; exit }')
    shape=$(echo "$pick" | sed -n 2p)
    ratio=$(awk -v a="$cd_s" -v b="$lb_s" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0)
                                                  printf "%.2f", a / b; else print "-" }')
    printf '| %s (%s) | %s | %s | %s | %s | %s |\n' "$name" "$solver" "$shape" "$cd_s" \
        "$lb_s" "$ratio" "$(echo "$pick" | sed -n 1p)"
done
