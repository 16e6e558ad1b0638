#!/usr/bin/env bash
# 15-mdadm-words: the CLI speaks mdadm's words and codes (issue 30 point 7).
# A usage error exits 2 wherever it is made (grow's chunk as create's, a
# member given twice however spelt); mdadm's short options -n, -x, -z, -p
# (and --parity, --spare-devices) with mdadm's meanings, the old spellings
# still taken; a bare size is mdadm's KiB and every message says what it was
# read as; examine's colons in one column; the member commands answer in
# device Numbers, not internal slots; a path is named once per message; the
# option tables carry it all to --help, the man page and the completion.
. "$(dirname "$0")/../lib.sh"
requires_root

# rc WANT CMD...: CMD exits WANT; its stderr in $T/err (a message when it fails)
rc() {
	local want=$1 got=0
	shift
	"$@" >"$T/out" 2>"$T/err" || got=$?
	[[ $got -eq $want ]] || fail "exit $got, expected $want: $*"$'\n'"stderr: $(cat "$T/err")"
	[[ $want -eq 0 || -s $T/err ]] || fail "exit $got without a message: $*"
	! grep -Eq "$SAN_PATTERN" "$T/err" || fail "sanitizer report from: $*"
}
says() { grep -qF -- "$1" "$T/err" || fail "stderr lacks '$1': $(cat "$T/err")"; }
cd "$T"

# --- a member given twice: a usage error, however spelt -------------------------------
rc 2 "$FSVOL" create -l raid5 -z 8M a b a
says "a given twice"
rc 2 "$FSVOL" create -l raid5 -z 8M a b ./a
says "a and ./a are the same path, given twice"
"$FSVOL" create -l raid5 -c 64K -z 8M m0 m1 m2 >/dev/null || fail "create m0 m1 m2"
ln -s m0 link
rc 2 "$FSVOL" create -f -l raid5 -z 8M m0 m1 link
says "m0 and link are the same file, given twice"
rc 2 "$FSVOL" create -f -l raid5 -z 8M m0 m1 "$T/m1"
[[ ! -e a && ! -e b ]] || fail "a refused create left files behind"

# --- mdadm's short options, mdadm's meanings ------------------------------------------
rc 0 "$FSVOL" create -l raid5 -n 3 -x 1 -z 8192 -p right-asymmetric -c64 d0 d1 d2 d3
"$FSVOL" examine d0 >ex || fail "examine d0"
for f in "Raid Devices : 3" "Spares : 1" "Chunk Size : 64K" "Layout : right-asymmetric" \
	"Data Size/Dev : 8388608 (8M)"; do
	grep -qF "$f" ex || fail "-n 3 -x 1 -z 8192 -p right-asymmetric -c64: examine lacks '$f':"$'\n'"$(cat ex)"
done
rc 0 "$FSVOL" create -f -l raid5 --raid-devices 3 --spare-devices 1 --parity la --size 8M d0 d1 d2 d3
"$FSVOL" examine d0 | grep -qF "Layout : left-asymmetric" || fail "--parity la not taken"
rc 0 "$FSVOL" create -f -l raid5 --spares 1 -s 8M d0 d1 d2 d3 # the old spellings
rc 2 "$FSVOL" create -f -l raid5 -n 3 -z 8M d0 d1 d2 d3
says "--raid-devices 3: 4 devices given"
says "-x K makes the last K spares"
rc 2 "$FSVOL" create -f -l raid5 -n 5 -z 8M d0 d1 d2 d3
says "--raid-devices 5: 4 devices given"
rc 0 "$FSVOL" layout -l raid5 -n 4 -c64 -z 1024 -p ra --rows 1
grep -q "chunk 64K" "$T/out" || fail "layout -c64 is not 64K: $(cat "$T/out")"
rc 0 "$FSVOL" map -l raid0 --raid-devices 4 -c 64 65536
grep -q "m1" "$T/out" || fail "map -c 64: 64K is on m1: $(cat "$T/out")"

# --- a bare size is KiB, and the messages say what it was read as ----------------------
rc 2 "$FSVOL" create -f -l raid5 -c 2 -z 8M d0 d1 d2
says "--chunk 2 (read as 2K: a bare number is KiB, as mdadm's): below the 4K minimum"
rc 2 "$FSVOL" create -f -l raid5 -c 3K -z 8M d0 d1 d2
says "--chunk 3K: not a power of two"
rc 2 "$FSVOL" create -f -l raid5 -z 8 d0 d1 d2
says "--size 8 (read as 8K: a bare number is KiB, as mdadm's): 8K per member, less than one chunk (512K)"
rc 2 "$FSVOL" create -f -l raid5 --data-offset 6 -z 8M d0 d1 d2
says "--data-offset 6 (read as 6K"
rc 2 "$FSVOL" map -l raid0 -n 4 somewhere # neither an offset nor a member: usage
says "somewhere: not a size for OFFSET"
rc 2 "$FSVOL" ctl m0 "$(head -c 300 /dev/zero | tr '\0' x)"
says "command too long"

# --- examine: mdadm --examine's shape, every colon in one column -----------------------
awk '/ : / { c = index($0, " : "); if (!col) col = c; if (c != col) { print "ragged: " $0; bad = 1 } }
	END { exit bad }' ex || fail "examine's fields are ragged:"$'\n'"$(cat ex)"

# --- on a mounted volume: grow's usage errors are 2, answers name Numbers ---------------
fsvol_mount mnt m0 m1 m2
truncate -s 9M sp
"$FSVOL" add mnt sp >/dev/null || fail "add sp"
rc 2 "$FSVOL" grow --chunk 3K mnt
says "--chunk 3K: not a power of two"
rc 2 "$FSVOL" grow -c 3 mnt
says "--chunk 3 (read as 3K: a bare number is KiB, as mdadm's): not a power of two"
rc 2 "$FSVOL" grow -c 2G mnt
says "above the 1G maximum"
rc 2 "$FSVOL" grow --parity diagonal mnt
says "--layout diagonal: expected a raid10 layout"
rc 1 "$FSVOL" replace mnt m9
says "replace m9: expected an active member, its Number (mN, as fsvol status names it) or its path (active: m0 m1 m2)"
! grep -qi "slot" "$T/err" || fail "replace m9 answers in slots: $(cat "$T/err")"
rc 1 "$FSVOL" fail mnt m3 # m3 is the spare
says "fail m3: expected a member in a raid role: its Number"
! grep -qi "slot" "$T/err" || fail "fail m3 answers in slots: $(cat "$T/err")"
rc 1 "$FSVOL" add mnt "$T/m1"
says "already in the volume (m1)"
rc 1 "$FSVOL" grow -n 5 mnt
says "needs a spare for raid device 4"
fsvol_umount mnt

# --- one path, named once -----------------------------------------------------------
mkdir notmnt
for c in scrub status detail stat; do
	rc 1 "$FSVOL" "$c" "$T/notmnt"
	[[ $(grep -o "$T/notmnt: " "$T/err" | wc -l) -eq 1 ]] || fail "fsvol $c names the path twice: $(cat "$T/err")"
done

# --- the tables carry the words to --help, the man page, the completion ----------------
"$FSVOL" create --help >h || fail "create --help"
for o in "-z, -s, --size" "-p, --layout, --parity" "-x, --spare-devices, --spares" "-n, --raid-devices" \
	"a bare number is KiB"; do
	grep -qF -- "$o" h || fail "create --help lacks '$o'"
done
[[ $(awk 'length > 80' h | wc -l) -eq 0 ]] || fail "create --help is wider than 80 columns"
[[ $("$FSVOL" --help | awk 'length > 80' | wc -l) -eq 0 ]] || fail "fsvol --help is wider than 80 columns"
"$FSVOL" --man >man || fail "--man"
grep -qF '\fB\-p\fR, \fB\-\-layout\fR, \fB\-\-parity\fR' man || fail "the man page lacks --parity"
"$FSVOL" --bash-completion >comp || fail "--bash-completion"
bash -n comp || fail "the completion is not valid bash"
grep -q -- "-x --spare-devices --spares" comp || fail "the completion lacks -x --spare-devices --spares"
note "mdadm's words and codes ok"
