#!/usr/bin/env bash
# Issue 30 A6: an option that names a member matches it by the file it names
# (st_dev/st_ino, or the resolved directory for a file create makes), however
# it is spelt: $PWD/b, ./b, b, through a symbolic link. create --write-mostly
# and --failfast (they took another spelling as one more member: "cannot
# create: File exists"), add's flags, and the daemon's fail / writemostly; a
# path that names no member is refused naming it.
. "$(dirname "$0")/../lib.sh"
cd "$T"

# flags_of MEMBER SLOT: the Flags column of slot SLOT in MEMBER's superblock
flags_of() { "$FSVOL" examine "$1" | awk -v s="$2" '$1 == s && $2 ~ /^[0-9]+$/ { print $0 }'; }
members_of() { "$FSVOL" examine "$1" | sed -n 's/^ *Raid Devices : //p'; }
fresh() { rm -rf "$T/c" && mkdir -p "$T/c" && cd "$T/c"; }

# create: every spelling of b is b (files create makes, then files that exist)
for spell in '$PWD/b' './b' 'b' '../c/b' 'sub/../b'; do
	fresh
	mkdir sub
	s=$(eval echo "$spell")
	out=$("$FSVOL" create -l raid1 -s 4M --write-mostly "$s" a b 2>&1) || fail "create --write-mostly $spell a b: $out"
	[[ $(members_of b) == 2 ]] || fail "--write-mostly $spell a b: not 2 members: $("$FSVOL" examine b)"
	flags_of b 1 | grep -q write-mostly || fail "--write-mostly $spell: b is not write-mostly: $("$FSVOL" examine b)"
	! flags_of b 0 | grep -q write-mostly || fail "--write-mostly $spell flagged a"
	# the files exist now: the same again over them, by their identity
	"$FSVOL" create -f -l raid1 -s 4M --failfast "$s" "$PWD/a" "$PWD/b" >/dev/null ||
		fail "create -f --failfast $spell over existing files"
	flags_of a 1 | grep -q failfast || fail "--failfast $spell (existing b): $("$FSVOL" examine a)"
done
# the member through a link to its directory, and a hard link
fresh
mkdir real
ln -s real lnk
"$FSVOL" create -l raid10 -s 4M --failfast lnk/m1 m0 real/m1 m2 >/dev/null || fail "create --failfast through a link"
flags_of m0 1 | grep -q failfast || fail "--failfast lnk/m1 did not flag real/m1: $("$FSVOL" examine m0)"
[[ $(members_of m0) == 3 ]] || fail "--failfast lnk/m1: not 3 members"
ln real/m1 hard
"$FSVOL" create -f -l raid1 -s 4M --write-mostly hard m0 real/m1 >/dev/null || fail "create --write-mostly by a hard link"
[[ $(members_of m0) == 2 ]] || fail "--write-mostly by a hard link: not 2 members"
# a flagged path that is no operand is one more member (mdadm's --write-mostly DEV)
fresh
"$FSVOL" create -l raid1 -s 4M a --write-mostly ./b >/dev/null || fail "create a --write-mostly ./b"
[[ $(members_of a) == 2 ]] && flags_of a 1 | grep -q write-mostly || fail "a --write-mostly ./b: $("$FSVOL" examine a)"
# ... but the write journal is not a member: refused, naming it
fresh
expect_fail_msg "--write-mostly ./j: that is the write journal" \
	"$FSVOL" create -l raid5 -s 4M --write-mostly ./j a b c --write-journal j
[[ ! -e a ]] || fail "a refused create made a file"

# a mounted volume: add's flags, fail and writemostly by another spelling
fresh
"$FSVOL" create -l raid1 -s 4M m0 m1 >/dev/null
truncate -s 6M s1
ln -s m1 m1link
fsvol_mount "$T/c/mnt" "$PWD/m0" "$PWD/m1"
out=$("$FSVOL" add mnt --write-mostly ./s1 "$PWD/s1" 2>&1) || fail "add --write-mostly ./s1 \$PWD/s1: $out"
[[ $(grep -c "s1" mnt/status) == 1 ]] || fail "s1 added twice: $(cat mnt/status)"
grep -q "m2: $PWD/s1 spare (W)" mnt/status || fail "s1 not a write-mostly spare: $(cat mnt/status)"
"$FSVOL" ctl mnt writemostly "$PWD/m1link" on || fail "writemostly through a link to m1"
grep -q "m1: $PWD/m1 active (W)" mnt/status || fail "writemostly m1link did not flag m1: $(cat mnt/status)"
"$FSVOL" fail mnt m1link >/dev/null || fail "fail through a link to m1"
grep -q "m1: $PWD/m1 failed" mnt/status || fail "fail m1link did not fail m1: $(cat mnt/status)"
# a path that names no member: refused, naming it
truncate -s 6M stranger
expect_fail_msg "stranger" "$FSVOL" fail mnt ./stranger
expect_fail_msg "writemostly $PWD/stranger: no member there" "$FSVOL" ctl mnt writemostly ./stranger on
fsvol_umount "$T/c/mnt"
cd "$T"
echo "PASS"
