#!/bin/bash
# Reproduces bench/GLM.md: Strata's GLM solver against LIBLINEAR, scikit-learn, Snap ML.
#
#   bench/glm/run.sh [--small] [--rows N] [--install]
#
#   --small     a quick check of the whole pipeline (30k rows, 2^16 columns, ~5 min)
#   --rows N    Criteo-like training rows (default 300000; test rows = N/10)
#   --install   apt-get/pip install the peers first (liblinear-tools, liblinear-dev,
#               scikit-learn, numpy, scipy, matplotlib, snapml)
#   --no-dense  skip the dense data set (200k x 100)
#   --strata-only  measure Strata again (throughput and every configuration), keep
#               the peers' results of an earlier run in the same WORK/OUT (a
#               configuration measured again replaces its earlier result)
#
# Environment: STRATA_BUILD (default: the checkout this script is in) is a built Strata
# tree (tools/.libs/strata-train, tools/strata-gen, tools/strata-run, .libs/*.so); its
# binaries are copied to WORK/bin first, so a rebuild of that tree during the run
# cannot change them. WORK (default bench/glm/work, git-ignored) holds data, models
# and logs; results end in WORK/OUT/results.md, results.json, runs.jsonl.
# LAMBDAS (default "1e-6 1e-5"), REPEATS (default 3), CAP (seconds of fits a Python
# peer may spend looking for its budget, default 240), SCAP (seconds a Strata trace run
# may take, default 150), LBFGS_CRITEO (1: Strata's --method lbfgs on the Criteo-like
# set too; default 0: on the dense set only).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
STRATA_BUILD=${STRATA_BUILD:-$ROOT}
WORK=${WORK:-$HERE/work}
LAMBDAS=${LAMBDAS:-"1e-6 1e-5"}
REPEATS=${REPEATS:-3}
ROWS=300000
SMALL=0
INSTALL=0
STRATA_ONLY=0
DENSE_SET=1
while [ $# -gt 0 ]; do
    case "$1" in
        --small) SMALL=1 ;;
        --rows) ROWS=$2; shift ;;
        --install) INSTALL=1 ;;
        --strata-only) STRATA_ONLY=1 ;;
        --no-dense) DENSE_SET=0 ;;
        -h|--help) sed -n 2,20p "$0"; exit 0 ;;
        *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

if [ "$INSTALL" = 1 ]; then
    apt-get update && apt-get install -y liblinear-tools liblinear-dev openmpi-bin
    pip install scikit-learn numpy scipy matplotlib snapml
fi

if [ "$SMALL" = 1 ]; then
    ROWS=30000; COLS=65536; OUT=$WORK/small; PLOT=$OUT/glm-objective.png
    MAXR=400; CAP=60; SCAP=60
else
    COLS=1048576; OUT=$WORK/r$ROWS; PLOT=$HERE/glm-objective-r$ROWS.png
    MAXR=5000; CAP=${CAP:-240}; SCAP=${SCAP:-150}
fi
TROWS=$((ROWS / 10))
mkdir -p "$OUT" "$WORK/data" "$WORK/bin/tools" "$WORK/bin/.libs"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

# --- Strata's binaries, frozen for the run
for f in "$STRATA_BUILD/tools/.libs/strata-train" "$STRATA_BUILD/tools/strata-gen" \
         "$STRATA_BUILD/tools/strata-run"; do
    [ -x "$f" ] || { echo "run.sh: $f missing: build Strata first" >&2; exit 1; }
done
cp "$STRATA_BUILD/tools/.libs/strata-train" "$STRATA_BUILD/tools/strata-gen" \
   "$STRATA_BUILD/tools/strata-run" "$WORK/bin/tools/"
cp -P "$STRATA_BUILD"/.libs/libstrata.so* "$STRATA_BUILD"/.libs/libstrata_glm.so* \
   "$WORK/bin/.libs/"
export LD_LIBRARY_PATH="$WORK/bin/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
BIN=$WORK/bin/tools

# --- versions and the machine
{
    echo "date: $(date -u +%FT%TZ)"
    echo "strata: $(cd "$STRATA_BUILD" && git rev-parse --short HEAD 2>/dev/null || echo '?')" \
         "$(cd "$STRATA_BUILD" && git status --porcelain 2>/dev/null | grep -qv '^??' && echo '(dirty tree)' || true)"
    echo "strata-train sha256: $(sha256sum "$BIN/strata-train" | cut -c1-16)"
    echo "liblinear: $(dpkg-query -W -f '${Version}' liblinear4 2>/dev/null || echo '?')"
    python3 - <<'PY'
import importlib.metadata as m, sys
print("python:", sys.version.split()[0])
for p in ("numpy", "scipy", "scikit-learn", "snapml", "matplotlib"):
    try:
        print(f"{p}: {m.version(p)}")
    except m.PackageNotFoundError:
        print(f"{p}: not installed")
PY
    echo "mpirun: $(mpirun --version 2>/dev/null | head -1)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(getconf _NPROCESSORS_ONLN) cores"
    echo "kernel: $(uname -r)"
} > "$OUT/versions.txt"
cat "$OUT/versions.txt"

# --- data (strata-gen is deterministic: same options and seed, same bytes)
D=$WORK/data
TRAIN=$D/criteo-r$ROWS-c$COLS.train.svm
TEST=$D/criteo-r$ROWS-c$COLS.test.svm
if [ ! -s "$TRAIN" ] || [ ! -s "$TEST" ]; then
    "$BIN/strata-gen" criteo --rows "$ROWS" --cols "$COLS" --test-rows "$TROWS" \
        --test-out "$TEST" "$TRAIN"
fi
DENSE=$D/dense-r200000-c100.train.svm
if [ "$SMALL" = 0 ] && [ "$DENSE_SET" = 1 ] && [ ! -s "$DENSE" ]; then
    "$BIN/strata-gen" dense --rows 200000 --cols 100 --test-rows 20000 \
        --test-out "$D/dense-r200000-c100.test.svm" "$DENSE"
fi

# --- LIBLINEAR driver (the system's liblinear: the library liblinear-train uses)
cc -O2 -o "$WORK/bin/ll_bench" "$HERE/ll_bench.c" -llinear -lm

B="python3 $HERE/bench.py"
S="--strata-train $BIN/strata-train --strata-run $BIN/strata-run"

run_set() {  # TAG TRAIN LAMBDA COLS TEST
    local tag=$1 train=$2 lam=$3 cols=$4 test=$5
    local c="--out $OUT --tag $tag --data $train --lambda $lam --cols $cols --repeats $REPEATS"
    if [ "$STRATA_ONLY" = 0 ] || [ ! -s "$OUT/ref-$tag.json" ]; then
        $B reference $c --ll-bench "$WORK/bin/ll_bench" --eps 1e-7
    fi
    local cfgs=("1 1 1 replicas cd" "1 1 3 replicas cd" "1 2 1 replicas cd" "1 2 1 shared cd"
                "2 1 1 replicas cd" "2 1 3 replicas cd" "1 2 1 replicas newton"
                "2 1 1 replicas newton")
    # L-BFGS where --method auto picks it (the dense set); on the Criteo-like rows it
    # needs hundreds of iterations (minutes): there with LBFGS_CRITEO=1 only
    if [[ $tag != criteo* ]] || [ "${LBFGS_CRITEO:-0}" = 1 ]; then
        cfgs+=("1 2 1 replicas lbfgs" "2 1 1 replicas lbfgs")
    fi
    for cfg in "${cfgs[@]}"; do
        set -- $cfg
        $B strata $c $S --ranks "$1" --threads "$2" --epochs "$3" --thread-mode "$4" \
            --method "$5" --max-rounds "$MAXR" --cap "$SCAP"
    done
    if [ "$STRATA_ONLY" = 0 ]; then
        run_peers "$c"
    fi
    # every solver's model at its budget, on the held-out rows
    $B testeval --out "$OUT" --tag "$tag" --test "$test" --cols "$cols"
}

run_peers() {  # the common bench.py arguments
    local c=$1
    $B liblinear $c --ll-bench "$WORK/bin/ll_bench" --solver 0
    $B liblinear $c --ll-bench "$WORK/bin/ll_bench" --solver 7
    for k in sklearn-liblinear sklearn-lbfgs sklearn-saga; do
        $B python $c --kind $k --cap "$CAP"
    done
    $B python $c --kind snapml --threads 1 --cap "$CAP"
    $B python $c --kind snapml --threads 2 --cap "$CAP"
}

# --- Strata's SDCA throughput: -E 3 minus -E 1 per round = 2 SDCA epochs
for cfg in "1 1 replicas" "1 2 replicas" "1 2 shared" "2 1 replicas"; do
    set -- $cfg
    $B throughput --out "$OUT" --tag "criteo-r$ROWS" --data "$TRAIN" --lambda 1e-6 \
        --cols "$COLS" --repeats "$REPEATS" $S --ranks "$1" --threads "$2" \
        --thread-mode "$3" --rounds 6
done
if [ "$SMALL" = 0 ] && [ "$DENSE_SET" = 1 ]; then
    $B throughput --out "$OUT" --tag "dense-r200000" --data "$DENSE" --lambda 1e-5 \
        --cols 100 --repeats "$REPEATS" $S --ranks 1 --threads 1 --rounds 6
fi

for lam in $LAMBDAS; do
    run_set "criteo-r$ROWS-l$lam" "$TRAIN" "$lam" "$COLS" "$TEST"
done
if [ "$SMALL" = 0 ] && [ "$DENSE_SET" = 1 ]; then
    run_set "dense-r200000-l1e-5" "$DENSE" 1e-5 100 "$D/dense-r200000-c100.test.svm"
fi

$B report --out "$OUT" --plot "$PLOT"
echo "results: $OUT/results.md, plot: $PLOT"
