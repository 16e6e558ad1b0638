#!/usr/bin/env bash
# 81-device-numbers: md's device Numbers (issue 21 point 9). A member's Number
# stays with the device across fail, add, remove, re-add and replace (a new
# device takes the lowest free one), names it in MNT/status, status.json,
# stats.json, MNT/metrics (device="NAME.mN", member="N", plus uuid= and the
# role in fsvol_member_info) and fsvol detail (Number, with the role as
# RaidDevice), so a metrics series never changes disk; a healthy raid6 after
# a replace lists no missing or removed entries; every view says "failed" for
# a failed member (DESIGN.md's word; fsvol detail, as mdadm --detail, "faulty"); member paths given relative are stored, shown and taken
# absolute or relative alike; a slot table that gives two members one Number
# is refused, naming both.
. "$(dirname "$0")/../lib.sh"
requires_root
requires jq

cd "$T"
mkdir -p v mnt r5 mnt5

wait_healthy() { # MNT
	local i
	for ((i = 0; i < 1200; i++)); do
		[[ $(jq -r .state "$1/status.json") == healthy && $(jq -r '.sync.state // "none"' "$1/status.json") != running ]] &&
			return 0
		sleep 0.05
	done
	fail "$1: not healthy: $(cat "$1/status")"
}
line() { grep -E "^ +m$2: " "$1/status"; }                  # MNT N: member mN's status line
jnum() { jq -c ".members[] | select(.number == $2)" "$1/status.json"; } # MNT N
suuid() { jq -r ".members[] | select(.index == $2) | .uuid" "$1/stats.json"; } # MNT N
# MNT N: the uuid label of member N's read counter series (empty: no series)
muuid() {
	sed -n "s/^fsvol_disk_reads_completed_total{device=\"$name\\.m$2\",.*uuid=\"\\([^\"]*\\)\".*/\\1/p" "$1/metrics"
}
minfo() { grep "^fsvol_member_info{device=\"$name\\.m$2\"" "$1/metrics"; } # MNT N
# MNT N WORD: every view gives member N the same state word
same_word() {
	local w=$3
	line "$1" "$2" | grep -Eq " $w( |$)" || fail "status m$2 is not $w: $(line "$1" "$2")"
	[[ $(jnum "$1" "$2" | jq -r .state) == "$w" ]] || fail "status.json m$2 is not $w: $(jnum "$1" "$2")"
	[[ $(jq -r ".members[] | select(.index == $2) | .state" "$1/stats.json") == "$w" ]] ||
		fail "stats.json m$2 is not $w"
	minfo "$1" "$2" | grep -q "state=\"$w\"" || fail "metrics m$2 is not $w: $(minfo "$1" "$2")"
	local dw=$w # fsvol detail speaks mdadm --detail's words
	[[ $w == failed ]] && dw=faulty
	"$FSVOL" detail "$1" | grep -Eq "^ +$2 +- +- +[-0-9]+ +$dw" || fail "detail m$2 is not $dw: $("$FSVOL" detail "$1")"
}

# --- raid6, relative paths throughout: fail + add + remove + replace ---------------------
"$FSVOL" create -l raid6 -c 64K -s 8M --name num6 v/d0 v/d1 v/d2 v/d3 v/d4 >/dev/null || fail "create raid6"
truncate -s 9M v/n0 v/n1
fsvol_mount mnt v/d0 v/d1 v/d2 v/d3 v/d4
name=num6
random_file data $((24 * MiB))
dd if=data of=mnt/volume bs=1M oflag=direct status=none
for i in 0 1 2 3 4; do # created: Number = role = slot, paths absolute
	line mnt "$i" | grep -qx " *m$i: $T/v/d$i active" || fail "m$i at create: $(cat mnt/status)"
done
u2=$(suuid mnt 2)
[[ $u2 =~ ^[0-9a-f-]{36}$ && $(muuid mnt 2) == "$u2" && $(jnum mnt 2 | jq -r .uuid) == "$u2" ]] ||
	fail "m2's uuid: stats.json '$u2', metrics '$(muuid mnt 2)', status.json $(jnum mnt 2)"
minfo mnt 2 | grep -q "role=\"2\"" || fail "m2's role: $(minfo mnt 2)"

out=$("$FSVOL" fail mnt v/d2) || fail "fail v/d2: $out"
[[ $out == "fsvol: set v/d2 faulty in mnt" ]] || fail "fail printed '$out'"
same_word mnt 2 failed
[[ $(jq -r '.members[] | select(.index == 2) | .role' mnt/stats.json) == null ]] || fail "a failed member has a role"
"$FSVOL" add mnt v/n0 >/dev/null || fail "add v/n0"
wait_healthy mnt
# the failed disk keeps m2; the new one takes the lowest free Number, 5, and plays role 2
line mnt 2 | grep -qx " *m2: $T/v/d2 failed" || fail "after fail + add, m2: $(cat mnt/status)"
line mnt 5 | grep -qx " *m5: $T/v/n0 active (role 2)" || fail "after fail + add, m5: $(cat mnt/status)"
jnum mnt 5 | jq -e '.slot == 2 and .role == 2 and .state == "active"' >/dev/null || fail "status.json m5: $(jnum mnt 5)"
[[ $(muuid mnt 2) == "$u2" ]] || fail "the series of m2 changed disk: uuid $u2 -> $(muuid mnt 2)"
minfo mnt 2 | grep -q "path=\"$T/v/d2\",state=\"failed\",role=\"-\"" || fail "m2's info: $(minfo mnt 2)"
u5=$(jnum mnt 5 | jq -r .uuid)
[[ $(muuid mnt 5) == "$u5" && $u5 != "$u2" ]] || fail "m5's uuid label '$(muuid mnt 5)', status.json '$u5'"
minfo mnt 5 | grep -q "path=\"$T/v/n0\",state=\"active\",role=\"2\"" || fail "m5's info: $(minfo mnt 5)"
"$FSVOL" detail mnt | grep -Eq "^ +5 +- +- +2 +active sync +$T/v/n0$" || fail "detail m5: $("$FSVOL" detail mnt)"
"$FSVOL" detail mnt | grep -Eq "^ +2 +- +- +- +faulty +$T/v/d2$" || fail "detail m2: $("$FSVOL" detail mnt)"
same_word mnt 2 failed

out=$("$FSVOL" remove mnt ./v/d2) || fail "remove ./v/d2: $out"
! line mnt 2 >/dev/null || fail "m2 still listed after its removal: $(cat mnt/status)"
[[ -z $(jnum mnt 2) && -z $(muuid mnt 2) ]] || fail "m2 still in status.json or metrics after its removal"
! grep -Eq "\(missing\)|removed" mnt/status || fail "a healthy raid6 lists a removed entry: $(cat mnt/status)"

# replace role 4 by v/n1: it takes Number 2 (free again, as md), d4 keeps m4,
# marked faulty (md), until it is removed
"$FSVOL" replace --with v/n1 mnt m4 >/dev/null || fail "replace m4"
for ((i = 0; i < 1200; i++)); do grep -q "replace done" mnt/status && break; sleep 0.05; done
wait_healthy mnt
line mnt 2 | grep -qx " *m2: $T/v/n1 active (role 4)" || fail "after the replace, m2: $(cat mnt/status)"
line mnt 4 | grep -qx " *m4: $T/v/d4 failed" || fail "after the replace, m4: $(cat mnt/status)"
"$FSVOL" remove mnt m4 >/dev/null || fail "remove the replaced m4"
[[ $(muuid mnt 2) != "$u2" && $(muuid mnt 2) == $(jnum mnt 2 | jq -r .uuid) ]] ||
	fail "m2 is another disk now: its uuid label must say so ($(muuid mnt 2), was $u2)"
! grep -Eq "\(missing\)|removed|failed" mnt/status || fail "a healthy raid6 after a replace: $(cat mnt/status)"
jq -e '[.members[] | select(.state != "active" and .state != "spare")] | length == 0' mnt/status.json >/dev/null ||
	fail "status.json of a healthy raid6: $(jq -c .members mnt/status.json)"
[[ $(grep -c '^fsvol_member_info{' mnt/metrics) == 5 ]] || fail "metrics list $(grep -c '^fsvol_member_info{' mnt/metrics) members, not 5"
cmp data <(head -c $((24 * MiB)) mnt/volume) || fail "data differs after fail, add, remove, replace"
fsvol_umount mnt

# the Numbers are on disk: the same names after a remount (members in any order)
fsvol_mount mnt v/n1 v/d3 v/n0 v/d1 v/d0
line mnt 5 | grep -qx " *m5: $T/v/n0 active (role 2)" || fail "after a remount, m5: $(cat mnt/status)"
line mnt 2 | grep -qx " *m2: $T/v/n1 active (role 4)" || fail "after a remount, m2: $(cat mnt/status)"
! grep -q " m4: " mnt/status || fail "after a remount, the removed m4 is back: $(cat mnt/status)"
"$FSVOL" examine v/n0 | grep -Eq "^ +2 +5 +active .*<- this device" || fail "examine: $("$FSVOL" examine v/n0)"
fsvol_umount mnt

# --- raid5: fail + remove + re-add keeps the Number; a later add reuses a freed one ----------
"$FSVOL" create -l raid5 -c 64K -s 8M --name num5 r5/d0 r5/d1 r5/d2 r5/d3 >/dev/null || fail "create raid5"
truncate -s 9M r5/n0 r5/n1
fsvol_mount mnt5 r5/d0 r5/d1 r5/d2 r5/d3
name=num5
u1=$(suuid mnt5 1)
"$FSVOL" fail mnt5 m1 >/dev/null || fail "fail m1"
same_word mnt5 1 failed
out=$("$FSVOL" remove mnt5 m1) || fail "remove m1: $out"
[[ $out == "fsvol: removed m1 from mnt5" ]] || fail "remove printed '$out'"
line mnt5 1 | grep -qx " *m1: (missing) missing" || fail "the removed role: $(cat mnt5/status)"
"$FSVOL" re-add mnt5 r5/d1 >/dev/null || fail "re-add r5/d1"
wait_healthy mnt5
line mnt5 1 | grep -qx " *m1: $T/r5/d1 active" || fail "re-added d1 is not m1 again: $(cat mnt5/status)"
[[ $(muuid mnt5 1) == "$u1" ]] || fail "m1's series changed disk on re-add"
# fail + add: the new file is m4 in role 1, d1 stays m1; removed, m1 is free for the next add
"$FSVOL" fail mnt5 "$T/r5/d1" >/dev/null || fail "fail by absolute path"
"$FSVOL" add mnt5 r5/n0 >/dev/null || fail "add r5/n0"
wait_healthy mnt5
line mnt5 4 | grep -qx " *m4: $T/r5/n0 active (role 1)" || fail "m4: $(cat mnt5/status)"
[[ $(muuid mnt5 1) == "$u1" ]] || fail "m1's series changed disk after fail + add"
"$FSVOL" remove mnt5 1 >/dev/null || fail "remove 1"
"$FSVOL" add mnt5 r5/n1 >/dev/null || fail "add r5/n1"
line mnt5 1 | grep -qx " *m1: $T/r5/n1 spare" || fail "the next add does not take the lowest free Number: $(cat mnt5/status)"
[[ $(muuid mnt5 1) != "$u1" ]] || fail "a new disk under m1 kept the old uuid label"
# fsvol ctl takes relative paths too (made absolute, as the daemon stores them)
"$FSVOL" ctl mnt5 remove r5/n1 || fail "ctl remove r5/n1"
! line mnt5 1 >/dev/null || fail "ctl remove r5/n1 left m1: $(cat mnt5/status)"
"$FSVOL" ctl mnt5 add r5/n1 || fail "ctl add r5/n1"
line mnt5 1 | grep -qx " *m1: $T/r5/n1 spare" || fail "ctl add r5/n1: $(cat mnt5/status)"
# the CLI takes a Number in both spellings and refuses one that names nothing
expect_fail_msg "expected a member in a raid role" "$FSVOL" fail mnt5 m9
"$FSVOL" ctl mnt5 fault m4 delay=1ms || fail "ctl fault m4 (a Number with its m)"
grep -q "m4: $T/r5/n0 active (role 1) (faults: " mnt5/status || fail "fault m4 did not reach n0: $(cat mnt5/status)"
fsvol_umount mnt5

# --- a superblock whose slot table gives two members one Number is refused, naming both
cp r5/d0 r5/dup
/usr/bin/python3 - r5/dup <<'EOF'
import struct, sys
def crc32c(b):
    c = 0xffffffff
    for x in b:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ (0x82f63b78 if c & 1 else 0)
    return c ^ 0xffffffff
f = open(sys.argv[1], "r+b")
sb = bytearray(f.read(4096))
n0 = struct.unpack_from("<H", sb, 256 + 2)[0]
struct.pack_into("<H", sb, 256 + 48 * 2 + 2, n0)  # slot 2 records slot 0's Number
struct.pack_into("<I", sb, 8, 0)
struct.pack_into("<I", sb, 8, crc32c(bytes(sb)))
f.seek(0)
f.write(sb)
EOF
expect_fail_msg "bad slots[0] and slots[2]: both record Number 0 (members " "$FSVOL" examine r5/dup
mkdir -p mntd
expect_fail_msg "$T/r5/dup: cannot read superblock: bad slots[0] and slots[2]: both record Number 0" \
	"$FSVOL" mount mntd r5/dup r5/d1 r5/d2 r5/d3
echo "PASS"
