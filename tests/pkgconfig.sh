#!/bin/sh
#
# strata.pc and strata_glm.pc (the build's, as configure wrote them) give a static
# link what each library needs: every -l of the libtool library's dependency_libs
# (libtool's own account of what it linked) is in `pkg-config --static --libs`.
# Before: no Libs.private, and a program linked with libstrata.a (configure
# --enable-static) lacked UCX's libraries: undefined ucp_tag_recv_nbx and more.
#
. "${top_srcdir}/tests/common.sh"
fail=0
if ! command -v pkg-config >/dev/null 2>&1; then
    echo "SKIP: no pkg-config"
    exit 77
fi
PKG_CONFIG_PATH=$top_builddir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
for pc in strata strata_glm; do
    if ! libs=$(pkg-config --static --libs "$pc" 2>&1); then
        echo "SKIP: pkg-config --static --libs $pc: $libs"
        exit 77
    fi
    if [ ! -f "lib$pc.la" ]; then
        echo "FAIL: no lib$pc.la in $top_builddir"
        fail=1
        continue
    fi
    deps=$(sed -n "s/^dependency_libs='\(.*\)'\$/\1/p" "lib$pc.la")
    for d in $deps; do
        case $d in
            -l*) ;;
            *) continue ;;
        esac
        case " $libs " in
            *" $d "*) ;;
            *) echo "FAIL: $pc.pc: pkg-config --static --libs $pc lacks $d, which" \
                    "lib$pc.la links"
               fail=1 ;;
        esac
    done
done
[ $fail -eq 0 ] && echo "PASS: strata.pc and strata_glm.pc name their libraries' dependencies"
exit $fail
