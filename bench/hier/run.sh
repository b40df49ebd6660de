#!/bin/bash
# Hierarchical vs flat CoCoA+ on a cluster of network namespaces (tools/strata-cluster):
# the time each takes to the same relative duality gap, and a plot of gap vs time.
#
#   bench/hier/run.sh [--hosts 4] [--ppn 2] [--rate 250mbit] [--rows 50000]
#                     [--cols 1048576] [--lambda 1e-3] [--tol 1e-3] [--reps 1]
#                     [--inner N]
#
# Both runs: strata-train under strata-run (Strata's allreduce, its node level), the
# same data, lambda and tolerance; flat is plain CoCoA+ over all ranks, hierarchical
# adds --hierarchical (inner rounds chosen from the measured costs, or --inner N).
# With --reps R the two alternate R times (this machine is shared and noisy).
# Needs root (namespaces) and a built tree. Results in bench/hier/out/: the runs'
# logs, times.csv (run, schedule, round, seconds, relative gap), summary.txt and
# hier.png. The cluster is taken down on every exit path.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
HOSTS=4 PPN=2 RATE=250mbit ROWS=50000 COLS=1048576 LAMBDA=1e-3 TOL=1e-3 REPS=1 INNER=0
MAXR=2000
while [ $# -gt 0 ]; do
    case "$1" in
        --hosts) HOSTS=$2; shift ;;
        --ppn) PPN=$2; shift ;;
        --rate) RATE=$2; shift ;;
        --rows) ROWS=$2; shift ;;
        --cols) COLS=$2; shift ;;
        --lambda) LAMBDA=$2; shift ;;
        --tol) TOL=$2; shift ;;
        --reps) REPS=$2; shift ;;
        --inner) INNER=$2; shift ;;
        -h|--help) sed -n 2,15p "$0"; exit 0 ;;
        *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
CL="$ROOT/tools/strata-cluster"
P=shier-
OUT=$HERE/out
mkdir -p "$OUT"
"$CL" check || { echo "run.sh: namespaces cannot be made here" >&2; exit 77; }
python3 -c "import matplotlib" 2>/dev/null ||
    { [ "$(id -u)" = 0 ] && apt-get install -y -q --no-install-recommends python3-matplotlib \
          >/dev/null; } ||
    { echo "run.sh: needs python3-matplotlib for the plot" >&2; exit 1; }
trap '"$CL" down --prefix $P >/dev/null 2>&1' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

data="$OUT/criteo-$ROWS-$COLS.bin"
[ -s "$data" ] || "$ROOT/tools/strata-gen" criteo --rows "$ROWS" --cols "$COLS" --seed 7 \
    --format bin -q "$data" || exit 1
"$CL" down --prefix $P >/dev/null 2>&1
"$CL" up "$HOSTS" --prefix $P --rate "$RATE" || exit 1
args=$("$CL" mpirun-args --prefix $P)
hostlist=$(seq -s, -f "h%g:$PPN" 1 "$HOSTS")
np=$((HOSTS * PPN))
hier="--hierarchical"
[ "$INNER" != 0 ] && hier="--hierarchical --inner-rounds $INNER"

echo "run,schedule,round,seconds,rel_gap" >"$OUT/times.csv"
: >"$OUT/commands.txt"
for rep in $(seq 1 "$REPS"); do
    for sched in flat hierarchical; do
        opt=""
        [ $sched = hierarchical ] && opt=$hier
        log="$OUT/$sched-$rep.log"
        cmd="strata-run mpirun --host $hostlist -np $np strata-train -l $LAMBDA -e $TOL -r $MAXR $opt DATA"
        echo "== $sched, run $rep: $cmd" | tee -a "$OUT/commands.txt"
        # shellcheck disable=SC2086
        timeout 1800 "$ROOT/tools/strata-run" mpirun $args --host "$hostlist" -np "$np" \
            ${LD_LIBRARY_PATH:+-x LD_LIBRARY_PATH} "$ROOT/tools/strata-train" -l "$LAMBDA" -e "$TOL" -r "$MAXR" \
            $opt "$data" "$OUT/$sched.model" >"$log" 2>&1 ||
            { echo "run.sh: the $sched run failed:" >&2; tail -5 "$log" >&2; exit 1; }
        grep -E "^(hierarchical|converged|stopped)" "$log"
        awk -v run="$rep" -v s="$sched" '/^round/ { print run "," s "," $2 "," $12 "," $10 }' \
            "$log" >>"$OUT/times.csv"
    done
done
python3 "$HERE/plot.py" "$OUT" "$HERE/hier.png" \
    "$HOSTS hosts x $PPN ranks, links $RATE; Criteo-like $ROWS x $COLS, lambda $LAMBDA" \
    "$TOL" | tee "$OUT/summary.txt"
