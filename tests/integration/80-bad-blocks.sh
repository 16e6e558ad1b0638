#!/usr/bin/env bash
# Bad-block lists (md's bad block log, docs/format.md "Bad-block list"): a bad
# range on one member of raid1, raid5 and raid10, driven by the fault wrapper
# (badw=: reads and writes fail there; bad=: reads fail until a write heals).
#  - the member stays active, reads return the right data, the list shows the
#    blocks (status, status.json, detail, metrics, examine --examine-badblocks);
#  - writes go around the listed blocks; the list is on the member: after a
#    remount without the fault the stale blocks are still never read;
#  - a bad= range is rewritten from redundancy and leaves the list again;
#  - a rebuild completes: around the listed blocks of a source (raid1), onto
#    the listed member's role (raid10), and with a unit no member can recover
#    (raid5, the listed member's stripe partner failed) listed on the new member,
#    whose reads fail there and nowhere else;
#  - errors that are not sector-local (error=read) still fail the member.
. "$(dirname "$0")/../lib.sh"
requires jq

SCHEMA=$(cd "$(dirname "$0")/../../docs" && pwd)/status.schema.json
K=1024
bad_blocks() { jq ".members[] | select(.slot == $2) | .bad_blocks" "$1/status.json"; }
slot_state() { jq -r ".members[] | select(.slot == $2) | .state" "$1/status.json"; }
has_bad() { (($(bad_blocks "$1" "$2") >= 1)); }
no_bad() { (($(bad_blocks "$1" "$2") == 0)); }
recovered() { ! grep -q rebuilding "$1/status" && grep -q "recovery done" "$1/status"; }
read_all() { dd if="$1/volume" of="$2" bs=64K iflag=direct status=none; }
write_all() { dd if="$2" of="$1/volume" bs=64K oflag=direct conv=notrunc status=none; }
valid_status() {
	/usr/bin/python3 - "$SCHEMA" "$1/status.json" <<'PY' || fail "$1/status.json does not validate"
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
PY
}

# setup LEVEL N [create args]: $d/m0..m(N-1) with random data written
setup() {
	local level=$1 n=$2
	shift 2
	d=$T/$level
	mkdir -p "$d"
	# shellcheck disable=SC2046
	"$FSVOL" create -l "$level" -c 64K -s 8M "$@" $(members "$d/m" "$n") >/dev/null || fail "$level: create"
	"$FSVOL" examine "$d/m0" | grep -q "Bad Block Log : 0 entries (508 available)" ||
		fail "$level: a new member has no empty bad-block list: $("$FSVOL" examine "$d/m0" | grep -i bad)"
}

# listed LEVEL MNT SLOT: the bad range on SLOT served from redundancy and listed
listed() {
	local level=$1 mnt=$2 slot=$3
	"$FSVOL" ctl "$mnt" fault "$slot" badw=1M+64K || fail "$level: ctl fault"
	read_all "$mnt" "$d/back" || fail "$level: a read of the volume failed with a bad range on m$slot"
	cmp -s "$d/data1" "$d/back" || fail "$level: wrong data read around the bad range"
	wait_for 30 "$level: m$slot lists no bad block: $(cat "$mnt/status")" has_bad "$mnt" "$slot"
	[[ $(slot_state "$mnt" "$slot") == active ]] || fail "$level: m$slot is not active: $(cat "$mnt/status")"
	grep -q "m$slot: .* active (bad blocks: 1, 128 sectors)" "$mnt/status" ||
		fail "$level: status does not show the list: $(grep "m$slot:" "$mnt/status")"
	valid_status "$mnt"
	grep -q "^fsvol_member_bad_blocks{.*member=\"$slot\"[,}].*} 1$" "$mnt/metrics" ||
		fail "$level: metrics: $(grep fsvol_member_bad_blocks "$mnt/metrics")"
	"$FSVOL" detail "$mnt" | grep -q "active sync .*m$slot   (1 bad blocks)" ||
		fail "$level: detail: $("$FSVOL" detail "$mnt")"
	# writes go around the listed blocks (they fail on the member: badw)
	random_file "$d/data2" "$(size_of "$d/data1")"
	write_all "$mnt" "$d/data2" || fail "$level: a write over the bad range failed"
	read_all "$mnt" "$d/back" || fail "$level: a read after the write failed"
	cmp -s "$d/data2" "$d/back" || fail "$level: wrong data read after writing around the bad range"
	[[ $(slot_state "$mnt" "$slot") == active ]] || fail "$level: m$slot failed on the write"
	# acknowledged writes wait for the list: it is on the member now
	"$FSVOL" examine --examine-badblocks "$d/m$slot" | grep -Eq "^ +2048 for 128 sectors$" ||
		fail "$level: examine: $("$FSVOL" examine --examine-badblocks "$d/m$slot")"
}

# --- raid1 x3: listed on m0; the list survives a remount; a rebuild of m2 reads around it
setup raid1 3
random_file "$d/data1" $((8 * K * K))
fsvol_mount --read-policy=prefer:0 "$d/mnt" "$d/m0" "$d/m1" "$d/m2"
write_all "$d/mnt" "$d/data1"
listed raid1 "$d/mnt" 0
# a bad= range (reads fail, a write heals): rewritten from redundancy, off the list again
"$FSVOL" ctl "$d/mnt" fault 0 bad=3M+4K || fail "raid1: ctl fault bad="
dd if="$d/mnt/volume" of="$d/back1" bs=4K skip=768 count=1 iflag=direct status=none || fail "raid1: read of a bad= range"
cmp -s -n 4096 -i 3M:0 "$d/data2" "$d/back1" || fail "raid1: wrong data read from a bad= range"
wait_for 30 "raid1: a healed range stays listed: $(cat "$d/mnt/status")" grep -q "m0: .* active (bad blocks: 1, 128 sectors)$" "$d/mnt/status"
wait_for 30 "raid1: no 'read error corrected' in the log" grep -q "read error corrected" "$DAEMON_LOG"
fsvol_umount "$d/mnt"
"$FSVOL" examine "$d/m0" | grep -q "Bad Block Log : 1 entries (508 available), 128 sectors" ||
	fail "raid1: examine: $("$FSVOL" examine "$d/m0" | grep -i bad)"
# remounted without the fault: m0's stale unit (it missed data2) is still never read
fsvol_mount --read-policy=prefer:0 "$d/mnt" "$d/m0" "$d/m1" "$d/m2"
read_all "$d/mnt" "$d/back" || fail "raid1: read after remount"
cmp -s "$d/data2" "$d/back" || fail "raid1: after a remount the listed blocks were read (stale data)"
"$FSVOL" ctl "$d/mnt" fault 0 badw=1M+64K
truncate -s 9M "$d/s0"
"$FSVOL" add "$d/mnt" "$d/s0" >/dev/null || fail "raid1: add"
"$FSVOL" fail "$d/mnt" 2 >/dev/null || fail "raid1: fail 2"
wait_for 120 "raid1: the recovery did not complete: $(cat "$d/mnt/status")" recovered "$d/mnt"
[[ $(slot_state "$d/mnt" 0) == active ]] || fail "raid1: m0 failed during the rebuild"
no_bad "$d/mnt" 2 || fail "raid1: the rebuilt member lists blocks although m1 had them: $(cat "$d/mnt/status")"
"$FSVOL" fail "$d/mnt" 1 >/dev/null || fail "raid1: fail 1" # the rebuilt copy must hold everything
read_all "$d/mnt" "$d/back" || fail "raid1: read after the rebuild"
cmp -s "$d/data2" "$d/back" || fail "raid1: wrong data after the rebuild"
fsvol_umount "$d/mnt"

# --- raid10 x4 (near 2): listed on m0; m0 fails after all, its role is rebuilt whole
setup raid10 4
random_file "$d/data1" $((16 * K * K))
# shellcheck disable=SC2046
fsvol_mount --read-policy=prefer:0 "$d/mnt" $(members "$d/m" 4)
write_all "$d/mnt" "$d/data1"
listed raid10 "$d/mnt" 0
truncate -s 9M "$d/s0"
"$FSVOL" add "$d/mnt" "$d/s0" >/dev/null || fail "raid10: add"
"$FSVOL" fail "$d/mnt" 0 >/dev/null || fail "raid10: fail 0"
wait_for 120 "raid10: the recovery did not complete: $(cat "$d/mnt/status")" recovered "$d/mnt"
no_bad "$d/mnt" 0 || fail "raid10: the new member lists blocks: $(cat "$d/mnt/status")"
"$FSVOL" fail "$d/mnt" 1 >/dev/null || fail "raid10: fail 1" # m0's partner: the new member serves alone
read_all "$d/mnt" "$d/back" || fail "raid10: read after the rebuild"
cmp -s "$d/data2" "$d/back" || fail "raid10: wrong data after the rebuild"
fsvol_umount "$d/mnt"

# --- raid5 x4: listed on m0; m1 fails: the stripe both lose is listed on the new member
setup raid5 4
random_file "$d/data1" $((24 * K * K))
# shellcheck disable=SC2046
fsvol_mount "$d/mnt" $(members "$d/m" 4)
write_all "$d/mnt" "$d/data1"
listed raid5 "$d/mnt" 0
truncate -s 9M "$d/s0"
"$FSVOL" add "$d/mnt" "$d/s0" >/dev/null || fail "raid5: add"
"$FSVOL" fail "$d/mnt" 1 >/dev/null || fail "raid5: fail 1"
wait_for 120 "raid5: the recovery did not complete: $(cat "$d/mnt/status")" recovered "$d/mnt"
[[ $(slot_state "$d/mnt" 0) == active ]] || fail "raid5: m0 failed during the rebuild"
grep -q "m[0-9]*: .*s0 active (role 1) (bad blocks: 1, 128 sectors)" "$d/mnt/status" ||
	fail "raid5: the unit no member could recover is not listed on the new member: $(cat "$d/mnt/status")"
# stripe 16 (logical 3M, 192K) is lost on two members: its reads fail, the rest is right
! dd if="$d/mnt/volume" of=/dev/null bs=64K skip=48 count=1 iflag=direct status=none 2>/dev/null ||
	fail "raid5: a read of the stripe lost on two members succeeded"
dd if="$d/mnt/volume" of="$d/back" bs=64K count=48 iflag=direct status=none || fail "raid5: read below the lost stripe"
cmp -s -n $((3 * K * K)) "$d/data2" "$d/back" || fail "raid5: wrong data below the lost stripe"
dd if="$d/mnt/volume" of="$d/back" bs=64K skip=51 iflag=direct status=none || fail "raid5: read above the lost stripe"
cmp -s -i $((51 * 64 * K)):0 "$d/data2" "$d/back" || fail "raid5: wrong data above the lost stripe"
fsvol_umount "$d/mnt"

# --- errors that are not sector-local fail the member as before
d=$T/whole
mkdir -p "$d"
"$FSVOL" create -l raid1 -s 8M "$d/m0" "$d/m1" >/dev/null
fsvol_mount --read-policy=prefer:0 --fault=0=error=read "$d/mnt" "$d/m0" "$d/m1"
dd if="$d/mnt/volume" of=/dev/null bs=64K count=4 iflag=direct status=none || fail "whole: the mirror did not serve"
wait_for 30 "whole: a member whose every read fails was not failed: $(cat "$d/mnt/status")" \
	grep -q "m0: .* failed" "$d/mnt/status"
fsvol_umount "$d/mnt"
