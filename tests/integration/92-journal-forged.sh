#!/usr/bin/env bash
# Issue 30 A2: a write-journal record with good checksums whose write would
# land outside the member's data area. Offset 2^64 - 1 MiB (member offset 0
# once data_offset is added), 1 MiB + 4 KiB: the old bound off + len <=
# data_size wrapped to 4096 and passed, and the replay wrote over m0's
# superblock, bitmap zone and bad-block list. Now the record is refused
# (named: the journal, its block, the write), nothing of it is written, the
# other records are replayed, and the volume stays dirty: whole, it mounts
# and resyncs; degraded, it is refused as a dirty degraded start (--force
# starts it). m0's metadata zone is the same bytes before and after but the
# superblock (rewritten by the mount: events, clean), the bad-block list
# reads, `fsvol examine` works, and the data written before the crash reads
# back. A forged write to a slot past the members, one inside the offsets
# but past the data area, and a record larger than the ring are refused the
# same way.
. "$(dirname "$0")/../lib.sh"
requires jq

FORGE=$(dirname "$0")/../tools/jnl_forge.py
ONE_MIB_BELOW_ZERO=-1048576 # 2^64 - 1 MiB, taken mod 2^64 by the forger

# crashed DIR: a raid5 x4 with a journal, 6 MiB written, then kill -9
crashed() {
	local d=$1 pid i
	mkdir -p "$d"
	"$FSVOL" create -l raid5 -c 64K -s 4M --write-journal "$d/j" "$d"/m{0,1,2,3} >/dev/null || fail "create"
	# safe mode off: on a loaded machine 200 ms idle before the kill would mark
	# the volume clean, and a clean volume replays no journal
	fsvol_mount --ctl="safe_mode_delay 0" "$d/mnt" "$d"/m{0,1,2,3} "$d/j"
	random_file "$d/src" $((6 * MiB))
	dd if="$d/src" of="$d/mnt/volume" bs=256K oflag=direct conv=notrunc status=none || fail "write"
	pid=$(daemon_pid "$d/mnt")
	kill -9 "$pid"
	wait_for 30 "daemon $pid gone after kill -9" eval '! _alive '"$pid"
	"$FSVOL" umount "$d/mnt" >/dev/null 2>&1 || true
	_drop_cleanup fsvol "$d/mnt" "$pid"
	cp "$d/m0" "$d/m0.before"
}

# zone_same DIR: m0's bytes [4096, 1 MiB + 4 KiB) unchanged since the crash
# (the superblock block aside), and none of its blocks the forger's 0xaa
zone_same() {
	cmp -s -i 4096 -n $((MiB)) "$1/m0" "$1/m0.before" || fail "m0's metadata zone or first data block changed"
	/usr/bin/python3 - "$1/m0" <<'EOF' || fail "m0 holds blocks of the forged record"
import sys
d = open(sys.argv[1], "rb").read((1 << 20) + 4096)
sys.exit(any(d[i:i + 4096] == b"\xaa" * 4096 for i in range(0, len(d), 4096)))
EOF
}

examine_ok() { # MEMBER: examine works and the bad-block list reads
	local out
	out=$("$FSVOL" examine "$1" 2>&1) || fail "fsvol examine $1 after the replay: $out"
	grep -q "Bad Block Log : 0 entries" <<<"$out" || fail "$1's bad-block list: $(grep -i "bad" <<<"$out")"
}

# --- the issue's record, all members present: refused, the rest replayed, a resync runs
d=$T/whole
crashed "$d"
"$FORGE" "$d/j" 0 "$ONE_MIB_BELOW_ZERO" $((MiB + 4096)) >"$d/forge.out" || fail "forge: $(cat "$d/forge.out")"
read -r _ _ _ _ block _ seq <"$d/forge.out"
fsvol_mount "$d/mnt" "$d"/m{0,1,2,3} "$d/j" 2>"$d/mount.err"
grep -q "journal: $d/j: record at block $block refused: bad write 0 (slot 0, offset 18446744073708503040 + 1052672 bytes is past 2^63)" "$d/mount.err" ||
	fail "no refusal naming the journal and the record (block $block): $(cat "$d/mount.err")"
grep -q "records* replayed" "$d/mount.err" || fail "the other records were not replayed: $(cat "$d/mount.err")"
grep -q "bad-block list unreadable" "$d/mount.err" "$DAEMON_LOG" && fail "the replay damaged a bad-block list"
cmp -n $((6 * MiB)) "$d/src" "$d/mnt/volume" || fail "the data written before the crash does not read back"
wait_resync "$d/mnt"
fsvol_umount "$d/mnt"
zone_same "$d"
for m in "$d"/m{0,1,2,3}; do examine_ok "$m"; done
note "record seq $seq at block $block: refused, the volume resynced, m0's metadata intact"

# --- the same on a degraded start: refused as dirty degraded, nothing written
d=$T/degraded
crashed "$d"
"$FORGE" "$d/j" 0 "$ONE_MIB_BELOW_ZERO" $((MiB + 4096)) >/dev/null || fail "forge"
expect_fail_msg "cannot start a dirty degraded raid5" "$FSVOL" mount --log "$DAEMON_LOG" "$d/mnt" "$d"/m{0,1,2} "$d/j"
[[ $LAST_ERR == *"journal: $d/j: record at block "*" refused: bad write 0"* ]] ||
	fail "the refused degraded start does not name the record: $LAST_ERR"
zone_same "$d"
examine_ok "$d/m0"
fsvol_mount --force "$d/mnt" "$d"/m{0,1,2} "$d/j"
cmp -n $((6 * MiB)) "$d/src" "$d/mnt/volume" || fail "degraded --force: the data does not read back"
fsvol_umount "$d/mnt"
zone_same "$d"

# --- a slot that is no member (the journal's own), and an offset past the data area
d=$T/slots
crashed "$d"
"$FORGE" "$d/j" 4 0 4096 >/dev/null || fail "forge slot 4"
fsvol_mount "$d/mnt" "$d"/m{0,1,2,3} "$d/j" 2>"$d/mount.err"
grep -q "journal: $d/j: record at block [0-9]* (seq [0-9]*, stripe 0) refused: its write 0 (no role, no member, offset 0, 4096 bytes) is outside the volume's members" "$d/mount.err" ||
	fail "slot 4: $(cat "$d/mount.err")"
wait_resync "$d/mnt"
fsvol_umount "$d/mnt"
"$FORGE" "$d/j" 1 $((4 * MiB - 4096)) 8192 >/dev/null || fail "forge past the data area"
sb_set "$d/m1" 120 0 # dirty again (clean = 0; the features word after it too: a raid5 mount sets md_q again)
for m in m0 m2 m3 j; do sb_set "$d/$m" 120 0; done
fsvol_mount "$d/mnt" "$d"/m{0,1,2,3} "$d/j" 2>"$d/mount.err"
grep -q "refused: its write 0 (m1, $d/m1, offset $((4 * MiB - 4096)), 8192 bytes) is outside the member's data area" "$d/mount.err" ||
	fail "past the data area: $(cat "$d/mount.err")"
cmp -n $((6 * MiB)) "$d/src" "$d/mnt/volume" || fail "the data does not read back"
fsvol_umount "$d/mnt"
"$FORGE" "$d/j" 1 0 $((4 * MiB + 4096)) >/dev/null || fail "forge a record larger than the ring"
for m in m0 m1 m2 m3 j; do sb_set "$d/$m" 120 0; done
fsvol_mount "$d/mnt" "$d"/m{0,1,2,3} "$d/j" 2>"$d/mount.err"
grep -q "journal: $d/j: record at block [0-9]* (seq [0-9]*) refused: 1026 blocks, the ring has 1024" "$d/mount.err" ||
	fail "larger than the ring: $(cat "$d/mount.err")"
fsvol_umount "$d/mnt"
zone_same "$d"
echo "PASS"
