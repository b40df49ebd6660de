#!/bin/sh
#
# The shared libraries export their API and nothing else (visibility hidden by
# default): libstrata_glm.so strata_* alone; libstrata.so strata_* and the MPI entry
# points it takes the place of (MPI_*, PMPI_*, the Fortran manglings mpi_* and pmpi_*,
# and Open MPI's f08 back-ends ompi_*_f: coll/st_fortran.c). Every strata_ name
# exported is declared in include/. Before: libstrata_glm.so exported
# st_glm_perm_fill, the ifunc of GCC's target_clones, and its resolver.
#
. "${top_srcdir}/tests/common.sh"
fail=0
if ! command -v nm >/dev/null 2>&1; then
    echo "SKIP: no nm"
    exit 77
fi
for lib in libstrata.so libstrata_glm.so; do
    so=.libs/$lib
    if [ ! -f "$so" ]; then
        echo "SKIP: no $so (built without shared libraries)"
        exit 77
    fi
    case $lib in
    libstrata.so) allowed='^(strata_|MPI_|PMPI_|mpi_|pmpi_|ompi_[a-z_]+_f$)' ;;
    *)            allowed='^strata_' ;;
    esac
    # a sanitizer build's own: common/st_sanitize.c's dlclose, which keeps Open MPI's
    # plugins loaded for the leak report
    [ -n "${ST_SANITIZERS:-}" ] && allowed="$allowed|^dlclose\$"
    # (the names, without a version; the symbols the linker itself defines aside)
    syms=$(nm -D --defined-only "$so" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' |
           grep -Ev '^(_init|_fini|_edata|_end|__bss_start)$')
    if ! printf '%s\n' "$syms" | grep -q '^strata_'; then
        echo "FAIL: $lib: nm -D lists no strata_ symbol"
        fail=1
        continue
    fi
    extra=$(printf '%s\n' "$syms" | grep -Ev "$allowed")
    if [ -n "$extra" ]; then
        echo "FAIL: $lib exports symbols outside its API:"
        printf '    %s\n' $extra
        fail=1
    fi
    for s in $(printf '%s\n' "$syms" | grep '^strata_'); do
        if ! grep -qw "$s" "$top_srcdir/include/strata.h" "$top_srcdir/include/strata_glm.h"
        then
            echo "FAIL: $lib exports $s, which include/ does not declare"
            fail=1
        fi
    done
done
# The installed programs that do not link libstrata.so hold no interposer of their
# own. Before: strata-gen linked libst_core, whose MPI_Allreduce the data reader pulled
# in ahead of libmpi's, and with it the interposer, hwloc, UCX and the GPU kernels
# (1.2 MB, libucp needed to write a dataset).
for t in strata-gen strata-train strata-predict; do
    bin=tools/$t
    [ -f "tools/.libs/$t" ] && bin=tools/.libs/$t
    if nm --defined-only "$bin" | awk '$3 == "MPI_Allreduce" { f = 1 } END { exit !f }'; then
        echo "FAIL: $t defines MPI_Allreduce: it links Strata's interposer"
        fail=1
    fi
done
[ $fail -eq 0 ] && echo "PASS: libstrata.so and libstrata_glm.so export their API alone," \
                        "the tools without libstrata hold no interposer"
exit $fail
