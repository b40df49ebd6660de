#!/bin/bash
#
# Instructions per MPI_Allreduce call, rank 0 of 2 ranks on one node, under callgrind
# (a count, not a time: it holds on a shared, noisy machine), for Open MPI alone, for
# Strata with STRATA_ENABLE=n and for Strata. From the build directory:
#
#   bench/call_cost/run.sh [LIBDIR]          (LIBDIR: where libstrata.so is, .libs)
#
# N (200) calls counted per shape (BYTES: 8 64 64ip 4096); one line per shape:
#   total  everything inside MPI_Allreduce, per call
#   own    total less PMPI_Allreduce and st_shm_wait: Strata's own instructions
#   polls  opal_progress calls per call (about 1: rank 0 did not wait; a run is
#          repeated, up to 5 times, until at most 1.1; 4096 B in Open MPI waits for
#          its protocol's answer whatever the timing)
#
set -u
lib=$(cd "${1:-.libs}" && pwd)
src=$(cd "$(dirname "$0")" && pwd)
N=${N:-200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpicc -O2 "$src/call_cost.c" -o "$work/call_cost" || exit 1
cd "$work"
incl() { local v; v=$(callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
         awk -v f="$2" '$0 ~ f {gsub(",","",$1); print $1; exit}'); echo "${v:-0}"; }
calls() { callgrind_annotate --inclusive=yes --tree=calling "$1" 2>/dev/null |
          awk -v f="$2" '$0 ~ f && />/ {s=$0; sub(/.*\(/,"",s); sub(/x\).*/,"",s);
                          gsub(",","",s); t+=s} END {print t+0}'; }
for variant in ${VARIANTS:-ompi disabled strata}; do
    for mode in ${MODES:-8 64 64ip 4096}; do
        pre=(); tog=MPI_Allreduce
        case $variant in
        strata)   pre=(-x LD_PRELOAD="$lib/libstrata.so" -x STRATA_ENABLE=y) ;;
        disabled) pre=(-x LD_PRELOAD="$lib/libstrata.so" -x STRATA_ENABLE=n) ;;
        ompi)     tog=PMPI_Allreduce ;;   # (libmpi's MPI_Allreduce, as callgrind names it)
        esac
        for try in 1 2 3 4 5; do
            rm -f cg.*
            mpirun -np 2 --mca mpi_yield_when_idle 1 -x CG_DELAY_US="${CG_DELAY_US:-20000}" \
                "${pre[@]}" valgrind -q --tool=callgrind --toggle-collect=$tog \
                --callgrind-out-file='cg.%q{OMPI_COMM_WORLD_RANK}' ./call_cost "$mode" "$N" \
                2>/dev/null
            t=$(incl cg.0 ':main '); p=$(incl cg.0 ':PMPI_Allreduce ')
            w=$(incl cg.0 ':st_shm_wait '); pc=$(calls cg.0 ':opal_progress ')
            [ "$variant" = ompi ] && p=0
            awk -v c="$pc" -v n="$N" 'BEGIN {exit !(c <= 1.1 * n)}' && break
        done
        awk -v v="$variant" -v m="$mode" -v t="$t" -v p="$p" -v w="$w" -v pc="$pc" -v n="$N" \
            'BEGIN {printf "%-8s %-4s B: total %6.0f, own %5.0f, in PMPI_Allreduce %6.0f," \
                           " in waits %4.0f Ir/call; polls %.2f\n",
                           v, m, t / n, (t - p - w) / n, p / n, w / n, pc / n}'
    done
done
