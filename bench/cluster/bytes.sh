#!/bin/bash
# Bytes each host of the namespace cluster sends per MPI_Allreduce, against the
# optimum (issue 8): every host must send at least 2(N-1)/N times the message.
#
#   bench/cluster/bytes.sh [--hosts N] [--ppn P] [--size SIZE] [--calls C]
#
# For Strata, Open MPI tuned and HAN (STRATA_ENABLE=n, coll_han_priority 100), two
# jobs of C and 2C calls of SIZE (strata-bench -i C|2C -r 1 -w 0); the difference of
# each host's eth0 tx_bytes between the two jobs is C calls' traffic, set-up and
# teardown cancelled. TCP/IP headers count (about 3-4 % at a 1500-byte MTU). Needs
# root and a built tree; the cluster is taken down on every exit path.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
HOSTS=2 PPN=2 SIZE=16M CALLS=10
while [ $# -gt 0 ]; do
    case "$1" in
        --hosts) HOSTS=$2; shift ;;
        --ppn) PPN=$2; shift ;;
        --size) SIZE=$2; shift ;;
        --calls) CALLS=$2; shift ;;
        -h|--help) sed -n 2,11p "$0"; exit 0 ;;
        *) echo "bytes.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
CL="$ROOT/tools/strata-cluster"
P=sbytes-
"$CL" check >/dev/null || { echo "bytes.sh: namespaces cannot be made here" >&2; exit 77; }
trap '"$CL" down --prefix $P >/dev/null 2>&1' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$CL" down --prefix $P >/dev/null 2>&1
"$CL" up "$HOSTS" --prefix $P >/dev/null || exit 1
args=$("$CL" mpirun-args --prefix $P)
hostlist=$(seq -s, -f "h%g:$PPN" 1 "$HOSTS")
np=$((HOSTS * PPN))
bytes=$(numfmt --from=iec "$SIZE")

tx() {  # the hosts' eth0 tx_bytes, space separated
    local i out=""
    for i in $(seq 1 "$HOSTS"); do
        out="$out $(ip netns exec "${P}h$i" cat /sys/class/net/eth0/statistics/tx_bytes)"
    done
    echo $out
}
job() {  # CALLS EXTRA...: run one job of CALLS calls, print the hosts' tx bytes
    local calls=$1 before after
    shift
    before=$(tx)
    # shellcheck disable=SC2086
    timeout 600 "$ROOT/tools/strata-run" mpirun $args "$@" --host "$hostlist" -np "$np" \
        "$ROOT/tools/strata-bench" -b "$SIZE" -e "$SIZE" -i "$calls" -r 1 -w 0 >/dev/null 2>&1 ||
        { echo "bytes.sh: job failed: $*" >&2; exit 1; }
    after=$(tx)
    paste -d' ' <(echo $after | tr ' ' '\n') <(echo $before | tr ' ' '\n') |
        awk '{printf "%s ", $1 - $2}'
}
opt=$(awk -v n="$HOSTS" -v b="$bytes" 'BEGIN { printf "%.0f", 2 * (n - 1) / n * b }')
echo "# $HOSTS hosts x $PPN ranks, $SIZE ($bytes bytes) per call, $CALLS calls"
echo "# optimum: each host sends 2(N-1)/N x the message = $opt bytes per call"
echo "# impl   per-host bytes per call (h1 .. h$HOSTS)   max / optimum"
for impl in strata tuned han; do
    extra=""
    case $impl in
        tuned) extra="-x STRATA_ENABLE=n" ;;
        han) extra="-x STRATA_ENABLE=n --mca coll_han_priority 100" ;;
    esac
    # shellcheck disable=SC2086
    one=$(job "$CALLS" $extra)
    # shellcheck disable=SC2086
    two=$(job $((2 * CALLS)) $extra)
    per=$(paste -d' ' <(echo $two | tr ' ' '\n') <(echo $one | tr ' ' '\n') |
        awk -v c="$CALLS" '{printf "%.0f ", ($1 - $2) / c}')
    echo "$impl $per" | awk -v o="$opt" '{m = 0; for (i = 2; i <= NF; i++) if ($i > m) m = $i;
        printf "%-6s", $1; for (i = 2; i <= NF; i++) printf " %11d", $i; printf "   %.3f\n", m / o}'
done
