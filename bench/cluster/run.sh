#!/bin/bash
# Strata's inter-node level on a cluster of network namespaces (tools/strata-cluster),
# against Open MPI's own allreduce: tuned (the default), and HAN (coll_han_priority
# 100), each in the same run as Strata (strata-bench --compare interleaves them).
#
#   bench/cluster/run.sh [--hosts N] [--ppn P] [--rates "2gbit none"] [--min SIZE]
#                        [--max SIZE] [--reps N] [--out DIR]
#
# Needs root (namespaces) and a built tree (tools/strata-bench, tools/strata-run).
# Results: DIR (default bench/cluster/out)/<hosts>x<ppn>-<rate>-<comp>.csv and .txt;
# the cluster is taken down on every exit path.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
HOSTS=2 PPN=2 RATES="2gbit none" MIN=8 MAX=64M REPS=5 OUT=$HERE/out
while [ $# -gt 0 ]; do
    case "$1" in
        --hosts) HOSTS=$2; shift ;;
        --ppn) PPN=$2; shift ;;
        --rates) RATES=$2; shift ;;
        --min) MIN=$2; shift ;;
        --max) MAX=$2; shift ;;
        --out) OUT=$2; shift ;;
        --reps) REPS=$2; shift ;;
        -h|--help) sed -n 2,11p "$0"; exit 0 ;;
        *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
CL="$ROOT/tools/strata-cluster"
P=sbench-
mkdir -p "$OUT" || exit 1
"$CL" check || { echo "run.sh: namespaces cannot be made here" >&2; exit 77; }
trap '"$CL" down --prefix $P >/dev/null 2>&1' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
hostlist=$(seq -s, -f "h%g:$PPN" 1 "$HOSTS")
np=$((HOSTS * PPN))
for rate in $RATES; do
    "$CL" down --prefix $P >/dev/null 2>&1
    if [ "$rate" = none ]; then
        "$CL" up "$HOSTS" --prefix $P >/dev/null || exit 1
    else
        "$CL" up "$HOSTS" --prefix $P --rate "$rate" >/dev/null || exit 1
    fi
    args=$("$CL" mpirun-args --prefix $P)
    for comp in tuned han; do
        extra=""
        [ "$comp" = han ] && extra="--mca coll_han_priority 100"
        tag="$HOSTS"x"$PPN-$rate-$comp"
        echo "== $tag: mpirun -np $np --host $hostlist $extra strata-run strata-bench --compare -b $MIN -e $MAX -r $REPS"
        # shellcheck disable=SC2086
        timeout 900 "$ROOT/tools/strata-run" mpirun $args $extra --host "$hostlist" -np "$np" \
            ${LD_LIBRARY_PATH:+-x LD_LIBRARY_PATH} "$ROOT/tools/strata-bench" --compare -b "$MIN" -e "$MAX" -r "$REPS" \
            --csv "$OUT/$tag.csv" 2>&1 | tee "$OUT/$tag.txt"
    done
done
