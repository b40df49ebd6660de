# Shared by the test scripts: how to launch MPI jobs quietly on this machine.
top_builddir=${top_builddir:-$(pwd)}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
MPIRUN=${MPIRUN:-mpirun}
# root in containers and CI; more ranks than cores; yield when idle
OMPI_ALLOW_RUN_AS_ROOT=1
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OMPI_MCA_rmaps_base_oversubscribe=1
OMPI_MCA_mpi_yield_when_idle=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
export OMPI_MCA_rmaps_base_oversubscribe OMPI_MCA_mpi_yield_when_idle
ST_MPIRUN="$MPIRUN --bind-to none"
# UCX over loopback only (unless the user chose devices): tests/cluster.sh makes and
# removes bridges on this machine (10.77.x.254) while other tests run; a UCX job in
# the root namespace that connected over one lost those connections when it went,
# breaking its lanes (a hang of ucx_rdb-3 in a full suite, before 2026-12-05).
# cluster.sh's own ranks, inside their namespaces, need their hosts' links: it
# drops this default again.
if [ -z "${UCX_NET_DEVICES+set}" ]; then
    UCX_NET_DEVICES=lo
    ST_UCX_NET_DEFAULT=1
    export UCX_NET_DEVICES
fi
# a sanitizer build: its options reach ranks on other (namespace) hosts too
if [ -n "${ST_SANITIZERS:-}" ]; then
    ST_MPIRUN="$ST_MPIRUN -x ASAN_OPTIONS -x LSAN_OPTIONS -x UBSAN_OPTIONS -x TSAN_OPTIONS"
    ST_MPIRUN="$ST_MPIRUN -x UCX_MEM_EVENTS"
fi
cd "$top_builddir" || exit 99
# st_program VAR PATH: VAR = the program itself where libtool made PATH a wrapper
# script (its .libs/ twin, the build's libraries on LD_LIBRARY_PATH, passed to the
# ranks), else PATH: the ranks' LD_PRELOAD reaches every process they start, and a
# wrapper's sed under a sanitizer's runtime reports sed's own leaks
st_program() {
    if [ -x "$(dirname "$2")/.libs/$(basename "$2")" ]; then
        eval "$1=\"\$(dirname \"\$2\")/.libs/\$(basename \"\$2\")\""
        case ":${LD_LIBRARY_PATH:-}:" in
        *":$top_builddir/.libs:"*) ;;
        *)
            LD_LIBRARY_PATH="$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
            export LD_LIBRARY_PATH
            ST_MPIRUN="$ST_MPIRUN -x LD_LIBRARY_PATH"
            ;;
        esac
    else
        eval "$1=\"\$2\""
    fi
}
# skip_without_ucx: exit 77 where Strata was built without UCX
skip_without_ucx() {
    if ! tools/strata-info | grep -q 'UCX yes'; then
        echo "SKIP: built without UCX"
        exit 77
    fi
}

# Checks for the script tests: run a command into $out, and look into $out. A
# failure prints why and sets fail=1 (the caller sets out and fail).
expect() { # expected-rc name command...
    want=$1 name=$2; shift 2
    "$@" >"$out" 2>&1
    rc=$?
    if [ $rc -ne "$want" ]; then
        echo "FAIL: $name: exit $rc, expected $want"; cat "$out"; fail=1
    fi
}
check() { # name condition...: the condition fails: why, with the run's $out and $err
    name=$1; shift
    if ! "$@"; then
        echo "FAIL: $name"
        echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"
        fail=1
    fi
}
contains() { # name pattern
    if ! grep -q -- "$2" "$out"; then
        echo "FAIL: $1: output lacks '$2'"; cat "$out"; fail=1
    fi
}
converged_primal() { # the primal of strata-train's "converged after" line in $out
    sed -n 's/^converged after .* primal \([^,]*\),.*/\1/p' "$out"
}
near() { # name value reference rel: |value - reference| <= rel * reference (> 0)
    awk -v a="$2" -v b="$3" -v r="$4" \
        'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && d <= r * b) }' ||
        { echo "FAIL: $1: $2, expected $3 within $4 relative"; fail=1; }
}
