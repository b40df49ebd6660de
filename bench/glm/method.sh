#!/bin/bash
# The data behind strata-train's --method auto rule: cd, lbfgs and newton, one after
# the other, on sets on both sides of it (dense and sparse, rows vs columns, the
# dual's condition number), and what auto picks.
#
#   bench/glm/method.sh [CAP]
#
# CAP (default 120): seconds a run may take (a slower one is reported as "> CAP").
# Each set: strata-train -l LAMBDA (1e-5 unless the set says) -e 1e-4 -r 5000 -q, one
# rank, one thread; the times are strata-train's own training time (reading the file
# excluded) to a certified relative gap of 1e-4, one run each.
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

if [ ! -s "$W/dense-20k-100-x1e12.svm" ]; then   # feature 3 of dense-20k-100 times 1e12
    awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^3:/) { split($i, a, ":"); $i = "3:" a[2] * 1e12 }
           print }' "$W/dense-20k-100.svm" >"$W/dense-20k-100-x1e12.svm"
fi

# seconds NAME SOLVER METHOD LAMBDA: the training time of one run, or "> CAP"
seconds() {
    local log=$W/$1.$3.l$4.log t
    if timeout "$CAP" "$TRAIN" -s "$2" -l "$4" -e 1e-4 -r 5000 --method "$3" \
            "$W/$1.svm" "$W/$1.$3.model" >"$log" 2>&1; then
        t=$(awk '/^converged after|^stopped after/ { for (i = 1; i < NF; i++)
                   if ($(i + 1) == "s") { print $i; exit } }' "$log")
        echo "${t:-?}"
    else
        echo "> $CAP"
    fi
}

# the fastest of the times given (numbers), for the "fastest" column
fastest() {
    awk 'BEGIN { best = -1 }
         { for (i = 1; i <= NF; i += 2) if ($(i + 1) ~ /^[0-9.]+$/ &&
               (best < 0 || $(i + 1) + 0 < best)) { best = $(i + 1) + 0; name = $i } }
         END { print (best < 0) ? "-" : name }' <<<"$*"
}

printf '| data | lambda | rows x columns, stored, kappa | cd (s) | lbfgs (s) | newton (s) | fastest | auto picks |\n'
printf '|---|---|---|---|---|---|---|---|\n'
for set in dense-20k-100:logistic dense-20k-1000:logistic dense-2k-100:logistic \
           dense-20k-50x2:logistic dense-20k-100-x1e12:logistic reg-20k-1000-d0.1:ridge criteo-100k-1k:logistic \
           criteo-100k-16k:logistic criteo-100k-16k:logistic:1e-4 \
           criteo-100k-16k:logistic:3e-5; do
    IFS=: read -r name solver lam <<<"$set"
    lam=${lam:-1e-5}
    cd_s=$(seconds "$name" "$solver" cd "$lam")
    lb_s=$(seconds "$name" "$solver" lbfgs "$lam")
    nt_s=$(seconds "$name" "$solver" newton "$lam")
    pick=$("$TRAIN" -s "$solver" -l "$lam" -r 1 "$W/$name.svm" /dev/null 2>&1 |
           awk '/^method auto:/ { print $3; sub(/^[^(]*\(/, ""); sub(/\)$/, "");
                                  print; exit }')
    shape=$(echo "$pick" | sed -n 2p)
    printf '| %s (%s) | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$solver" "$lam" \
        "$shape" "$cd_s" "$lb_s" "$nt_s" "$(fastest cd "${cd_s// /}" lbfgs "${lb_s// /}" newton "${nt_s// /}")" \
        "$(echo "$pick" | sed -n 1p)"
done
