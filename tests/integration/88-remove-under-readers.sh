#!/usr/bin/env bash
# 88-remove-under-readers: members leave their slots (remove, re-add) while
# MNT/status, status.json, stats.json and the events thread read the slots.
# A remove empties a slot and closes the member's backend; a reader that
# looked at the slot twice (once to test it, once to use it) could find it
# empty the second time: the events thread died once so (a NULL path, in
# 78). Readers now look once, and a remove waits until no status reader is
# inside the member's filters before closing them. Bounded loops: 30 spare
# add/remove rounds and 15 fail/remove/re-add rounds under three readers;
# the daemon must live, the data stay right and every reader's read succeed
# (a mount takes 64 members in its life: removed ones keep their counters).
. "$(dirname "$0")/../lib.sh"

cd "$T"
"$FSVOL" create -l raid1 -s 4M m0 m1 >create.out 2>&1 || fail "create: $(cat create.out)"
fsvol_mount "$T/mnt" m0 m1
pid=$(daemon_pid "$T/mnt")
random_file "$T/ref" $((4 * 1024 * 1024))
dd if="$T/ref" of="$T/mnt/volume" bs=1M oflag=direct conv=notrunc status=none || fail "writing the reference"

# readers: each reads its file until told to stop (at most 20000 reads)
for f in status status.json stats.json; do
	(
		for ((i = 0; i < 20000; i++)); do
			[[ -e $T/stop ]] && exit 0
			cat "$T/mnt/$f" >/dev/null || { echo "read of $f failed" >"$T/reader.$f.err"; exit 1; }
		done
	) &
	track_pid "$!"
	readers+=("$!")
done

truncate -s 8M s0
for ((r = 0; r < 30; r++)); do
	"$FSVOL" add "$T/mnt" "$T/s0" >add.out 2>&1 || fail "round $r: add a spare: $(cat add.out)"
	"$FSVOL" remove "$T/mnt" "$T/s0" >rm.out 2>&1 || fail "round $r: remove the spare: $(cat rm.out)"
done
note "30 spare add/remove rounds"
for ((r = 0; r < 15; r++)); do
	"$FSVOL" fail "$T/mnt" "$T/m1" >/dev/null 2>&1 || fail "round $r: fail m1"
	"$FSVOL" remove "$T/mnt" "$T/m1" >rm.out 2>&1 || fail "round $r: remove m1: $(cat rm.out)"
	"$FSVOL" add "$T/mnt" "$T/m1" >add.out 2>&1 || fail "round $r: re-add m1: $(cat add.out)"
	wait_for 60 "round $r: m1 back in sync" jq_true '.state == "healthy"' "$T/mnt/status.json"
done
note "15 fail/remove/re-add rounds"
touch "$T/stop"
for p in "${readers[@]}"; do wait "$p" || fail "a reader failed: $(cat "$T"/reader.*.err 2>/dev/null)"; done
_alive "$pid" || fail "the daemon died (log: $(tail -n 5 "$DAEMON_LOG"))"
vol_cmp "$T/ref" "$T/mnt/volume" $((4 * 1024 * 1024)) || fail "the data changed"
fsvol_umount "$T/mnt"
echo "PASS"
