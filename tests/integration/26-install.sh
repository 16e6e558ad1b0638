#!/usr/bin/env bash
# 16-install: 'make install DESTDIR=...' installs the binaries, the man pages
# fsvol(8) and fsvol-bench(1) and the bash completions; the pages render
# without a groff warning and name every option of every command (they come
# from the same tables as --help); the completions load in bash and complete
# commands and options; 'make uninstall' removes it all.
. "$(dirname "$0")/../lib.sh"
requires groff
requires make

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
D=$T/dest
make -s -C "$ROOT" install DESTDIR="$D" PREFIX=/usr BUILD="$FSVOL_BUILD" SAN="${SAN:-0}" >"$T/make.out" 2>&1 ||
	fail "make install: $(tail -20 "$T/make.out")"
for f in usr/bin/fsvol usr/bin/fsvol-bench; do
	[[ -x $D/$f ]] || fail "make install did not install $f"
done
"$D/usr/bin/fsvol" --version | grep -q '^fsvol ' || fail "the installed fsvol does not run"
MAN8=$D/usr/share/man/man8/fsvol.8
MAN1=$D/usr/share/man/man1/fsvol-bench.1
COMP=$D/usr/share/bash-completion/completions
for f in "$MAN8" "$MAN1" "$COMP/fsvol" "$COMP/fsvol-bench"; do
	[[ -s $f ]] || fail "make install did not install $f"
done

# --- man pages: render cleanly, every option of every table is there --------------------
for m in "$MAN8" "$MAN1"; do
	groff -man -Tutf8 -ww -z "$m" 2>"$T/groff.err" || fail "groff failed on $m: $(cat "$T/groff.err")"
	[[ ! -s $T/groff.err ]] || fail "groff warns on $(basename "$m"): $(head -5 "$T/groff.err")"
	groff -man -Tascii "$m" 2>/dev/null | col -b >"$T/$(basename "$m").txt"
	for s in NAME SYNOPSIS DESCRIPTION "EXIT STATUS" "SEE ALSO"; do
		grep -q "^$s" "$T/$(basename "$m").txt" || fail "$(basename "$m") has no $s section"
	done
done
if command -v man >/dev/null; then
	MANWIDTH=80 man -l "$MAN8" 2>/dev/null | grep -q 'fsvol mount' || fail "man -l $MAN8 does not render"
fi
txt8=$T/fsvol.8.txt
"$FSVOL" --help | awk '/^commands:/ { on = 1; next } on && !NF { exit } on && /^  [a-z]/ { print $1 }' >"$T/cmds"
n=0
while read -r c; do
	grep -q "^ *fsvol $c" "$txt8" || fail "fsvol(8) has no synopsis of '$c'"
	# every long option the command's --help lists
	while read -r o; do
		grep -q -- "$o" "$txt8" || fail "fsvol(8) lacks $c's option $o"
		n=$((n + 1))
	done < <("$FSVOL" "$c" --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+')
done <"$T/cmds"
[[ $n -ge 30 ]] || fail "only $n options checked in fsvol(8)"
for o in $("$FSVOL_BUILD/bin/fsvol-bench" --help | grep -oE '^  (-[a-zA-Z]|--[a-z-]+)' ) \
	$("$FSVOL_BUILD/bin/fsvol-bench" sweep --help | grep -oE '^  --[a-z-]+'); do
	grep -q -- "$o" "$T/fsvol-bench.1.txt" || fail "fsvol-bench(1) lacks $o"
done
grep -Eq "Usage[[:space:]]+error" "$txt8" || fail "fsvol(8) does not explain exit status 2"

# --- completion ------------------------------------------------------------------------
# complete_words FILE CMD WORD...: what the completion offers for the last WORD
cat >"$T/comp.sh" <<'SH'
source "$1"
shift
complete -p "$1" >/dev/null || { echo "no completion for $1" >&2; exit 1; }
fn=$(complete -p "$1" | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
COMPREPLY=()
"$fn"
echo "${COMPREPLY[*]}"
SH
offers() { # WANT FILE WORDS...: the completion offers WANT
	local want=$1 file=$2 got
	shift 2
	got=$(bash "$T/comp.sh" "$file" "$@") || fail "completion of '$*' failed"
	[[ " $got " == *" $want "* ]] || fail "completing '$*' offers '$got', not $want"
}
bash -c "source '$COMP/fsvol' && complete -p fsvol" | grep -q -- '-F _fsvol fsvol' ||
	fail "sourcing the fsvol completion does not register it"
offers mount "$COMP/fsvol" fsvol mo
offers --page-cache "$COMP/fsvol" fsvol mount --pa
offers raid5 "$COMP/fsvol" fsvol create -l rai
offers volume "$COMP/fsvol" fsvol mount --stats ""
offers show "$COMP/fsvol" fsvol model ""
offers layout "$COMP/fsvol" fsvol help la
offers sweep "$COMP/fsvol-bench" fsvol-bench sw
offers --dist "$COMP/fsvol-bench" fsvol-bench --di
offers --levels "$COMP/fsvol-bench" fsvol-bench sweep --lev

# --- uninstall -------------------------------------------------------------------------
make -s -C "$ROOT" uninstall DESTDIR="$D" PREFIX=/usr BUILD="$FSVOL_BUILD" SAN="${SAN:-0}" >"$T/make.out" 2>&1 ||
	fail "make uninstall: $(tail -20 "$T/make.out")"
left=$(find "$D" -type f)
[[ -z $left ]] || fail "make uninstall left: $left"
note "install ok"
