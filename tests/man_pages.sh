#!/bin/sh
#
# The man pages (man/NAME.1, installed by make install): each renders without a
# warning, and names every option its tool's --help prints (each -x and --long-name
# token of the help text), so that a page cannot silently fall behind its tool; and
# every tool has --help and --version (before: strata-train, -predict, -gen, -bench,
# -cluster and -cluster-agent had no --version; the agent took --help for an ssh
# option and ignored it). And README.md names every long option of --help, and its
# table of the STRATA_* knobs is strata-info -c's: the same names and defaults (the table had no check: a knob added, or a default
# changed, left the user's manual behind without a failure).
# Needs groff (Debian: groff-base); without it (and without man), skipped.
#
. "${top_srcdir}/tests/common.sh"
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")

# (0) README.md's table of the knobs ("Configuration") is strata-info -c's: every
# STRATA_* knob, with its default, and no row for a knob the library does not have;
# and the knobs its "The same on every rank" paragraph names as exceptions are those
# strata-info -c does not mark "same on every rank" (needs no groff: before the skip)
readme=$top_srcdir/README.md
st_program info tools/strata-info
if ! "$info" -c >"$tmp/knobs" 2>&1; then
    echo "FAIL: strata-info -c: exit $?"
    cat "$tmp/knobs"
    fail=1
fi
# NAME DEFAULT per knob, "(none)" for an empty default, as the README writes it
sed -n 's/^# default: \([^ ][^ ]*\) .*/\1/p; s/^# default:    .*/(none)/p; s/^\(STRATA_[A-Z_]*\)=.*/\1/p' \
    "$tmp/knobs" | paste - - | awk '{print $2, $1}' | sort >"$tmp/knobs.info"
sed -n 's/^| `\(STRATA_[A-Z_]*\)` | `\{0,1\}\([^`|]*[^`| ]\)`\{0,1\} |.*/\1 \2/p' "$readme" |
    sort >"$tmp/knobs.readme"
if [ ! -s "$tmp/knobs.info" ] || ! cmp -s "$tmp/knobs.info" "$tmp/knobs.readme"; then
    echo "FAIL: README.md's table of knobs (name, default) is not strata-info -c's:"
    diff "$tmp/knobs.info" "$tmp/knobs.readme" | sed -n 's/^</  strata-info -c:/p; s/^>/  README.md:    /p'
    fail=1
fi
awk '/^STRATA_[A-Z_]*=/ { if (!same) print substr($0, 1, index($0, "=") - 1); same = 0 }
     /^# default: .*same on every rank/ { same = 1 }' "$tmp/knobs" | sort >"$tmp/local.info"
sed -n '/^\*\*The same on every rank\.\*\*/,/^$/p' "$readme" | sed -n '1,/marks them/p' |
    grep -o 'STRATA_[A-Z_]*' | sort -u >"$tmp/local.readme"
if [ ! -s "$tmp/local.info" ] || ! cmp -s "$tmp/local.info" "$tmp/local.readme"; then
    echo "FAIL: README.md's knobs that may differ by rank are not those strata-info -c does" \
         "not mark 'same on every rank':"
    diff "$tmp/local.info" "$tmp/local.readme" | sed -n 's/^</  strata-info -c:/p; s/^>/  README.md:    /p'
    fail=1
fi
[ $fail -eq 0 ] && echo "README.md: its table names the $(wc -l <"$tmp/knobs.info") knobs" \
                       "of strata-info -c with their defaults"
TOOLS="strata-run strata-info strata-bench strata-train strata-predict strata-gen
       strata-cluster strata-cluster-agent"

# render PAGE: the page as plain text, one paragraph a line where it can (a wide
# line, no hyphenation, no bold or underline), for the options' check
if command -v groff >/dev/null 2>&1; then
    lint() { groff -man -Tutf8 -ww -z "$1" 2>&1; }
    render() { groff -man -Tascii -P-c -P-b -P-u -rLL=1000n -rHY=0 "$1" 2>/dev/null; }
elif command -v man >/dev/null 2>&1 && man -l "$top_srcdir/man/strata-run.1" >/dev/null 2>&1; then
    lint() { man --warnings -l "$1" 2>&1 >/dev/null; }
    render() { MANWIDTH=1000 MAN_KEEP_FORMATTING= man -l "$1" 2>/dev/null | sed 's/.\x08//g'; }
else
    echo "SKIP: neither groff nor man (Debian: groff-base)"
    exit 77
fi

# absent FILE TOKEN...: the tokens not in FILE as whole tokens ("--gpu" is not found
# in "--gpu-mem", nor "-p" in "-pq")
absent() {
    f=$1
    shift
    for o in "$@"; do
        grep -qE -- "(^|[^A-Za-z0-9-])$o([^A-Za-z0-9-]|\$)" "$f" || echo "$o"
    done
}

for t in $TOOLS; do
    before=$fail
    page=$top_srcdir/man/$t.1
    if [ ! -f "$page" ]; then
        echo "FAIL: $t: no man page man/$t.1"
        fail=1
        continue
    fi

    # (1) it renders without warnings
    warn=$(lint "$page")
    if [ -n "$warn" ]; then
        echo "FAIL: $t: man/$t.1 renders with warnings:"
        echo "$warn"
        fail=1
    fi
    if ! render "$page" >"$tmp/$t.txt" || [ ! -s "$tmp/$t.txt" ]; then
        echo "FAIL: $t: man/$t.1 does not render"
        fail=1
        continue
    fi
    if ! grep -q "^NAME" "$tmp/$t.txt" || ! grep -q "^SYNOPSIS" "$tmp/$t.txt" ||
       ! grep -q "^OPTIONS" "$tmp/$t.txt" || ! grep -q "^EXIT STATUS" "$tmp/$t.txt"; then
        echo "FAIL: $t: man/$t.1 lacks NAME, SYNOPSIS, OPTIONS or EXIT STATUS"
        fail=1
    fi

    # (2) every option of --help is in it: the tokens -x, -wLABEL, --long-name of the
    # help text, each after a blank, a bracket, a comma, a slash or a quote (not the
    # "-1" of "+1/-1", nor the "-logistic" of "l1-logistic"), somewhere in the page;
    # and those the help defines (the options that start its lines: "  -s, --solver
    # NAME", "      --eta X") in its OPTIONS section
    # (the shell scripts strata-cluster and its agent are not built: in the sources)
    if [ -x "tools/$t" ]; then
        st_program prog "tools/$t"
    else
        prog=$top_srcdir/tools/$t
    fi
    if [ "$t" = strata-cluster-agent ]; then
        # mpirun runs the agent as its ssh (plm_rsh_agent): "agent [--prefix P] [ssh
        # options] HOST COMMAND...": called without a host, it prints its usage line,
        # as ssh would, with exit 255 (its --help, below, is its own option: before,
        # it was taken for an ssh option and ignored)
        "$prog" >"$tmp/$t.usage" 2>&1
        rc=$?
        if [ $rc -ne 255 ] || ! grep -q "usage: $t " "$tmp/$t.usage"; then
            echo "FAIL: $t without arguments: exit $rc, not 255 with its usage line"
            cat "$tmp/$t.usage"
            fail=1
        fi
    fi
    # (3) --version: "TOOL VERSION", exit 0, the version configure gave the package
    # (the shell scripts strata-cluster and its agent carry it written out)
    v=$("$prog" --version 2>&1)
    rc=$?
    want="$t $version"
    [ "$t" = strata-info ] && want="strata $version"   # (the library's version)
    if [ $rc -ne 0 ] || [ -z "$version" ] || [ "$v" != "$want" ]; then
        echo "FAIL: $t --version: '$v' (exit $rc), not '$want' with exit 0"
        fail=1
    fi
    if ! "$prog" --help >"$tmp/$t.help" 2>&1; then
        echo "FAIL: $t --help: exit $?"
        cat "$tmp/$t.help"
        fail=1
        continue
    fi
    opts=$(sed 's/^/ /' "$tmp/$t.help" |
           grep -oE "[][ (,/|\"'](--?[A-Za-z][A-Za-z0-9-]*)" |
           sed 's/^.//; s/-*$//' | sort -u)
    defined=$(sed -nE 's/^ +(--?[A-Za-z][A-Za-z0-9-]*)(, (--[A-Za-z][A-Za-z0-9-]*))?( .*|$)/\1 \3/p' \
              "$tmp/$t.help" | tr ' ' '\n' | sed '/^$/d' | sort -u)
    if [ -z "$opts" ] || [ -z "$defined" ]; then
        echo "FAIL: $t --help: no options found in it"
        cat "$tmp/$t.help"
        fail=1
        continue
    fi
    # the OPTIONS section: from its heading to the next one
    sed -n '/^OPTIONS/,/^[A-Z][A-Z ]*$/p' "$tmp/$t.txt" | sed '1d; $d' >"$tmp/$t.options"
    n=$(echo "$opts" | wc -w) d=$(echo "$defined" | wc -w)
    for o in $(absent "$tmp/$t.txt" $opts); do
        echo "FAIL: $t: '$o' (in $t --help) is not in man/$t.1"
        fail=1
    done
    for o in $(absent "$tmp/$t.options" $defined); do
        echo "FAIL: $t: option '$o' (defined by $t --help) is not in man/$t.1's OPTIONS"
        fail=1
    done
    # (4) README.md, the user's manual, names every long option of --help too (before:
    # strata-train's --solver, --tol, ..., strata-bench's, strata-predict's
    # --probability were in --help and the man pages only)
    for o in $(absent "$readme" $(echo "$opts" | grep -- '^--')); do
        echo "FAIL: $t: '$o' (in $t --help) is not in README.md"
        fail=1
    done
    [ $fail -eq $before ] &&
        echo "$t: man/$t.1 renders cleanly, names the $n option token(s) of --help," \
             "its $d option(s) in OPTIONS; README.md its long options"
done
exit $fail
