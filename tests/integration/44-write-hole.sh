#!/usr/bin/env bash
# The raid5 write hole, shown (docs/experiments.md, "The write hole"): on a
# degraded raid5 a one-chunk write is two member writes, the chunk and the
# parity; the missing member's chunk of that stripe is read as parity xor the
# others. `ctl powercut-after K` lets exactly K more member writes land, then
# the power goes: a cut between a stripe's two writes leaves parity that no
# longer matches, and the missing member's chunk, never written by anyone,
# reads back wrong after the restart. No scrub can see it (there is no
# redundancy left to check against). The writer is fsvol-ackwrite: every
# block holds known data, so a damaged block is named.
. "$(dirname "$0")/../lib.sh"

ACKW=$FSVOL_BUILD/bin/fsvol-ackwrite
[[ -x $ACKW ]] || fail "$ACKW not built (make $ACKW)"
BLOCKS=384 # 16K blocks: 6 MiB, 128 stripes of 3 data chunks

# one run: a degraded raid5 filled with known data, a cut after K member writes
# under one-chunk writes, the restart; DAMAGED gets the damaged sectors
hole() { # K
	local d=$T/k$1 pid out
	mkdir -p "$d"
	"$FSVOL" create -l raid5 -c 16K -s 2M "$d"/m{0,1,2,3} >/dev/null || fail "create"
	fsvol_mount --run "$d/mnt" "$d"/m{0,1,2} 2>/dev/null
	pid=$(daemon_pid "$d/mnt")
	"$ACKW" write -j 1 -b 16K -F -n $BLOCKS "$d/mnt/volume" "$d/log" >/dev/null || fail "K=$1: fill"
	"$FSVOL" ctl "$d/mnt" powercut-after "$1" || fail "K=$1: ctl powercut-after"
	"$ACKW" write -j 1 -b 16K -t 60 "$d/mnt/volume" "$d/log" >"$d/w.out" 2>&1 || true
	grep -q "stopped" "$d/w.out" && fail "K=$1: the writer did not meet the power cut: $(cat "$d/w.out")"
	wait_for 30 "K=$1: the daemon survived the cut" eval '! _alive '"$pid"
	"$FSVOL" umount "$d/mnt" >/dev/null 2>&1 || fail "K=$1: umount of the dead mount"
	_drop_cleanup fsvol "$d/mnt" "$pid"
	# dirty and degraded: md's --force start
	fsvol_mount --force "$d/mnt" "$d"/m{0,1,2} 2>/dev/null
	out=$("$ACKW" verify -b 16K "$d/mnt/volume" "$d/log" 2>/dev/null || true)
	fsvol_umount "$d/mnt"
	[[ $out =~ mismatches\ ([0-9]+) ]] || fail "K=$1: verify said: $out"
	DAMAGED=${BASH_REMATCH[1]}
}

# A write is two member writes (chunk + parity) when both live, one when the
# missing member holds either: whether cut K splits a pair depends on which
# blocks the writer drew (measured: one cut in 4-6 damages). At least six
# cuts, and more, up to 60, until one has shown the hole (six alone can miss).
damaged=0 shown=""
for ((k = 1; k <= 60; k++)); do
	hole $k
	shown+=" K=$k:$DAMAGED"
	((DAMAGED > 0)) && damaged=$((damaged + 1))
	((k >= 6 && damaged > 0)) && break
done
note "sectors damaged after a cut after K member writes:$shown"
((damaged > 0)) || fail "no cut damaged a block: the write hole was not shown ($shown)"
echo "PASS"
