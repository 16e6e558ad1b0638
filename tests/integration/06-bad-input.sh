#!/usr/bin/env bash
# 06-bad-input: every refusal exits non-zero without crashing, names the
# culprit, leaves the member files unchanged (md5sum) and leaves no mount or
# daemon behind. Member order on the command line does not matter.
. "$(dirname "$0")/../lib.sh"

MNT=$T/mnt
mkdir -p "$MNT"
A=("$T/a0" "$T/a1" "$T/a2" "$T/a3")
B=("$T/b0" "$T/b1" "$T/b2" "$T/b3")
"$FSVOL" create -l raid5 -c 64K -s 8M "${A[@]}" >/dev/null || fail "create a"
"$FSVOL" create -l raid5 -c 64K -s 8M "${B[@]}" >/dev/null || fail "create b"

# soft FN ARGS...: run one case in a subshell; a failure is counted, the other
# cases still run, and the test fails at the end.
SOFT_FAILS=0
soft() { ( "$@" ) || SOFT_FAILS=$((SOFT_FAILS + 1)); }
sums() { md5sum "$T"/a? "$T"/b? 2>/dev/null; }
# mounts under $T and fsvol processes naming $T: must not change on a refusal
state() {
	awk -v t="$T/" 'index($2, t) == 1 { print $2 }' /proc/self/mounts
	pgrep -af "fsvol.* $T/" | grep -v pgrep || true
}
# refused WHAT SUBSTRING CMD...: fails, names SUBSTRING, changes nothing
refused() {
	local what=$1 want=$2 before st
	shift 2
	before=$(sums)
	st=$(state)
	expect_fail_msg "$want" "$@"
	[[ $(sums) == "$before" ]] || fail "$what: member files changed by a refused command"
	[[ $(state) == "$st" ]] || fail "$what: left a mount or process behind: $(state)"
	note "$what: $LAST_ERR"
}

# --- assembly ---------------------------------------------------------------
rm -f "$T/gone"
refused "missing member file" "$T/gone" "$FSVOL" mount "$MNT" "${A[0]}" "$T/gone" "${A[2]}" "${A[3]}"
refused "members of two volumes" "${B[1]}" "$FSVOL" mount "$MNT" "${A[0]}" "${B[1]}" "${A[2]}" "${A[3]}"
refused "same member twice" "${A[1]}" "$FSVOL" mount "$MNT" "${A[0]}" "${A[1]}" "${A[1]}" "${A[2]}" "${A[3]}"
refused "same member twice, other spelling" "a1" "$FSVOL" mount "$MNT" "${A[@]}" "$T/./a1"

cp "${A[2]}" "$T/trunc"
truncate -s 5M "$T/trunc"
refused "truncated member" "$T/trunc" "$FSVOL" mount "$MNT" "${A[0]}" "${A[1]}" "$T/trunc" "${A[3]}"
cp "${A[1]}" "$T/flip"
byte=$(od -An -tu1 -j100 -N1 "$T/flip")
printf "\\x$(printf %02x $(((byte ^ 0xff) & 0xff)))" | dd of="$T/flip" bs=1 seek=100 conv=notrunc status=none
cmp -s "$T/flip" "${A[1]}" && fail "could not flip byte 100"
refused "corrupted superblock" "$T/flip" "$FSVOL" mount "$MNT" "${A[0]}" "$T/flip" "${A[2]}" "${A[3]}"
[[ $LAST_ERR == *checksum* ]] || fail "corrupted superblock: message does not say checksum: $LAST_ERR"
refused "examine of a corrupted superblock" "$T/flip" "$FSVOL" examine "$T/flip"
rm -f "$T/trunc" "$T/flip"

# --- shuffled order assembles correctly ----------------------------------------
fsvol_mount "$MNT" "${A[2]}" "${A[0]}" "${A[3]}" "${A[1]}"
cap=$(size_of "$MNT/volume")
random_file "$T/ref" "$cap"
dd if="$T/ref" of="$MNT/volume" bs=1M oflag=direct conv=notrunc status=none || fail "write"
fsvol_umount "$MNT"
fsvol_mount "$MNT" "${A[3]}" "${A[1]}" "${A[2]}" "${A[0]}"
cmp "$MNT/volume" "$T/ref" || fail "shuffled member order: data differs"
"$FSVOL" status "$MNT" | grep -Eq "^ *m0: .*a0 active" || fail "slot 0 is not a0: $("$FSVOL" status "$MNT")"

# --- busy: the mount point, and the members ------------------------------------
mkdir -p "$T/mnt2"
refused "busy mount point" "$MNT" "$FSVOL" mount "$MNT" "${B[@]}"
fsvol_umount "$MNT"
# members in use by a mounted volume: a second daemon on them would corrupt
# the volume (mdadm: "device or resource busy"). Volume B, so a wrongly
# successful second mount cannot disturb the cases below.
busy_members() {
	local rc=0
	fsvol_mount "$T/mntb" "${B[@]}"
	( refused "members already mounted" "${B[0]}" "$FSVOL" mount "$T/mnt2" "${B[@]}" ) || rc=1
	if mountpoint -q "$T/mnt2"; then
		"$FSVOL" umount "$T/mnt2" >/dev/null 2>&1 || umount -l "$T/mnt2"
	fi
	fsvol_umount "$T/mntb"
	return $rc
}
soft busy_members

# --- a stale member (older event count) --------------------------------------------
fsvol_mount --run "$MNT" "${A[0]}" "${A[1]}" "${A[3]}"
head -c $MiB /dev/urandom >"$T/p"
dd if="$T/p" of="$MNT/volume" bs=1M seek=2 oflag=direct conv=notrunc status=none || fail "degraded write"
dd if="$T/p" of="$T/ref" bs=1M seek=2 conv=notrunc status=none
fsvol_umount "$MNT"
refused "stale member" "${A[2]}" "$FSVOL" mount "$MNT" "${A[@]}"
[[ $LAST_ERR == *stale* ]] || fail "stale member: message does not say stale: $LAST_ERR"
# shuffled, the same answer
refused "stale member, other order" "${A[2]}" "$FSVOL" mount "$MNT" "${A[2]}" "${A[3]}" "${A[1]}" "${A[0]}"
# the volume still assembles without it, with the newest data
fsvol_mount "$MNT" "${A[3]}" "${A[0]}" "${A[1]}"
cmp "$MNT/volume" "$T/ref" || fail "data after the stale refusal differs"
fsvol_umount "$MNT"

# --- create: geometry and sizes -----------------------------------------------
C=("$T/c0" "$T/c1" "$T/c2")
# refused_create WHAT SUBSTRING ARGS... -- MEMBERS: new member files must not appear
# (WANT: substrings separated by '|', all must be in the message)
refused_create() {
	local what=$1 want=$2 f w
	shift 2
	IFS='|' read -ra w <<<"$want"
	refused "$what" "${w[0]}" "$FSVOL" create "$@"
	for f in "${w[@]:1}"; do
		[[ $LAST_ERR == *"$f"* ]] || fail "$what: message lacks '$f': $LAST_ERR"
	done
	for f in "$T"/c? "$T"/d?; do
		if [[ -e $f ]]; then
			rm -f "$T"/c? "$T"/d?
			fail "$what: refused create left member file $f behind"
		fi
	done
}
soft refused_create "raid6 with 3 members" "raid6|4" -l raid6 -s 8M "${C[@]}"
soft refused_create "raid5 with 2 members" "raid5|3" -l raid5 -s 8M "${C[0]}" "${C[1]}"
soft refused_create "raid4 with 2 members" "raid4" -l raid4 -s 8M "${C[0]}" "${C[1]}"
soft refused_create "raid1 with 1 member" "raid1" -l raid1 -s 8M "${C[0]}"
soft refused_create "raid10 with 1 member" "raid10" -l raid10 -s 8M "${C[0]}"
soft refused_create "chunk not a power of two" "3000" -l raid5 -c 3000 -s 8M "${C[@]}"
soft refused_create "chunk below 4K" "2K" -l raid5 -c 2K -s 8M "${C[@]}"
soft refused_create "size overflow" "99999999999T" -l raid5 -s 99999999999T "${C[@]}"
soft refused_create "size overflow, bytes" "18446744073709551616" -l raid0 -s 18446744073709551616 "${C[@]}"
soft refused_create "size not a size" "12X" -l raid0 -s 12X "${C[@]}"
soft refused_create "unknown level" "raid7" -l raid7 -s 8M "${C[@]}"
soft refused_create "unknown raid5 layout" "zigzag" -l raid5 --layout zigzag -s 8M "${C[@]}"
soft refused_create "unknown raid10 layout" "q9" -l raid10 --layout q9 -s 8M "${C[@]}"
soft refused_create "member in a missing directory" "$T/nodir/c2" -l raid5 -s 8M "${C[0]}" "${C[1]}" "$T/nodir/c2"
soft refused "map offset overflow" "99999999999T" "$FSVOL" map -l raid0 -n 4 -c 64K 99999999999T
refused "map offset beyond capacity" "capacity" "$FSVOL" map -l raid0 -n 4 -c 64K -s 1M 4M 1
refused "layout unknown level" "raid7" "$FSVOL" layout -l raid7 -n 4

# create must refuse a member that already carries a superblock, naming it,
# and create nothing; with -f it overwrites
create_over_member() {
	refused "create over an existing member" "${A[1]}" "$FSVOL" create -l raid1 -s 8M "$T/d0" "${A[1]}"
	[[ $LAST_ERR == *--force* || $LAST_ERR == *-f* ]] ||
		fail "create over an existing member: message does not mention -f/--force: $LAST_ERR"
	if [[ -e $T/d0 ]]; then
		rm -f "$T/d0"
		fail "create over an existing member: refused create left $T/d0 behind"
	fi
}
soft create_over_member
"$FSVOL" create -f -l raid1 -s 8M "$T/d0" "${A[1]}" >/dev/null || fail "create -f over an existing member failed"
"$FSVOL" examine "${A[1]}" | grep -Eq 'Raid Level *: *raid1' || fail "create -f did not rewrite ${A[1]}"

# --- mount points ------------------------------------------------------------------
refused "mount point does not exist" "$T/nowhere" "$FSVOL" mount "$T/nowhere" "${B[@]}"
touch "$T/afile"
refused "mount point is a file" "$T/afile" "$FSVOL" mount "$T/afile" "${B[@]}"
refused "umount of a non-mount" "$T/mnt2" "$FSVOL" umount "$T/mnt2"
refused "status of a non-mount" "$T/mnt2" "$FSVOL" status "$T/mnt2"
refused "unknown read policy" "sideways" "$FSVOL" mount --read-policy sideways "$MNT" "${B[@]}"
refused "unknown stats level" "lots" "$FSVOL" mount --stats lots "$MNT" "${B[@]}"
refused "mount with no members" "member" "$FSVOL" mount "$MNT"

[[ $SOFT_FAILS -eq 0 ]] || fail "$SOFT_FAILS case(s) failed (see above)"
