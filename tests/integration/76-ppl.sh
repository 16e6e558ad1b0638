#!/usr/bin/env bash
# The raid5 write hole closed by md's partial parity log (docs/experiments.md,
# "The write hole"; docs/format.md, "Partial parity log"). A degraded raid5
# (5 members, one missing) under half-stripe writes (two 16K chunks of a 64K
# stripe) meets a power cut placed with `ctl powercut-after K`:
# - without the log, the restart (md's --force) shows data that nobody was
#   writing damaged: the missing member's chunk, read as parity xor the rest;
# - with --consistency-policy ppl, 20 cuts (K = 1..20, so every point of a
#   stripe update: log record, data, parity) damage none: the dirty degraded
#   start needs no --force, the log is replayed, no resync is owed. Only a
#   write that was in flight may read torn, when a chunk it modified lives on
#   the missing member (md's rule: PPL protects what is not being written).
# The writer is fsvol-ackwrite: every block holds known data, so damage is
# named; "in flight" counts mismatches in blocks whose last write was never
# acknowledged.
. "$(dirname "$0")/../lib.sh"

ACKW=$FSVOL_BUILD/bin/fsvol-ackwrite
[[ -x $ACKW ]] || fail "$ACKW not built (make $ACKW)"
BLOCKS=96 # 32K blocks: 3 MiB, 48 stripes of 4 data chunks

# one run: POLICY (ppl or resync), a cut after K member writes; DAMAGED gets
# the damaged sectors outside the writes in flight, INFLIGHT those inside
cut() { # POLICY K
	local d=$T/$1-k$2 pid out start=(--force)
	mkdir -p "$d"
	"$FSVOL" create -l raid5 -c 16K -s 768K --consistency-policy "$1" "$d"/m{0,1,2,3,4} >/dev/null ||
		fail "create $1"
	fsvol_mount --run "$d/mnt" "$d"/m{0,1,2,3} 2>/dev/null
	pid=$(daemon_pid "$d/mnt")
	"$ACKW" write -j 2 -b 32K -F -n $((BLOCKS / 2)) "$d/mnt/volume" "$d/log" >/dev/null || fail "$1 K=$2: fill"
	"$FSVOL" ctl "$d/mnt" powercut-after "$2" || fail "$1 K=$2: ctl powercut-after"
	"$ACKW" write -j 2 -b 32K -t 60 "$d/mnt/volume" "$d/log" >"$d/w.out" 2>&1 || true
	grep -q "stopped" "$d/w.out" && fail "$1 K=$2: the writer did not meet the cut: $(cat "$d/w.out")"
	wait_for 30 "$1 K=$2: the daemon survived the cut" eval '! _alive '"$pid"
	"$FSVOL" umount "$d/mnt" >/dev/null 2>&1 || fail "$1 K=$2: umount of the dead mount"
	_drop_cleanup fsvol "$d/mnt" "$pid"
	# md starts a dirty degraded raid5 with a PPL as it is; without, only forced
	[[ $1 == ppl ]] && start=()
	fsvol_mount "${start[@]}" "$d/mnt" "$d"/m{0,1,2,3} 2>"$d/mount.err" ||
		fail "$1 K=$2: the dirty degraded start: $(cat "$d/mount.err")"
	if [[ $1 == ppl ]]; then
		grep -q "resync pending" "$d/mnt/status" && fail "$1 K=$2: a resync is owed after the log's replay"
		grep -q '"consistency_policy":"ppl"' "$d/mnt/status.json" || fail "$1 K=$2: status.json's policy"
	fi
	out=$("$ACKW" verify -b 32K "$d/mnt/volume" "$d/log" 2>"$d/verify.err" || true)
	fsvol_umount "$d/mnt"
	[[ $out =~ mismatches\ ([0-9]+) ]] || fail "$1 K=$2: verify said: $out"
	INFLIGHT=0
	[[ $out =~ in\ flight\ ([0-9]+) ]] && INFLIGHT=${BASH_REMATCH[1]}
	local m=${out#*mismatches }
	DAMAGED=$((${m%%,*} - INFLIGHT))
	rm -rf "$d"
}

# without the log: the hole shows (a cut between a stripe's writes)
# Whether cut K splits a stripe's writes depends on which blocks the writers
# drew and how their member writes interleaved: at least 10 cuts, and more,
# up to 60, until one has shown the hole (ten alone all missed it once in CI).
shown="" damaged=0
for ((k = 2; k <= 61; k++)); do
	cut resync $k
	shown+=" K=$k:$DAMAGED"
	((DAMAGED > 0)) && damaged=$((damaged + 1))
	((k >= 11 && damaged > 0)) && break
done
note "resync, damaged sectors (not in flight) after a cut after K member writes:$shown"
((damaged > 0)) || fail "no cut damaged a block without the log: the write hole was not shown ($shown)"

# with the log: 20 cuts, nothing damaged
shown="" torn=0
for k in $(seq 1 20); do
	cut ppl $k
	shown+=" K=$k:$DAMAGED/$INFLIGHT"
	((DAMAGED == 0)) || fail "ppl: a cut after $k member writes damaged $DAMAGED sectors nobody was writing ($shown)"
	torn=$((torn + INFLIGHT))
done
note "ppl, damaged/in-flight sectors after a cut after K member writes:$shown"

# mdadm's words: detail, examine; refusals where md refuses
d=$T/words
mkdir -p "$d"
"$FSVOL" create -l raid5 -c 16K -s 768K --consistency-policy ppl "$d"/m{0,1,2} >/dev/null || fail "create"
"$FSVOL" examine "$d/m0" | grep -q "Consistency Policy : ppl" || fail "examine: $("$FSVOL" examine "$d/m0")"
"$FSVOL" examine "$d/m0" | grep -q "PPL : 1036288 bytes at offset 4096" || fail "examine shows no PPL area"
fsvol_mount "$d/mnt" "$d"/m{0,1,2}
"$FSVOL" detail "$d/mnt" | grep -q "Consistency Policy : ppl" || fail "detail: $("$FSVOL" detail "$d/mnt")"
grep -q "consistency policy: ppl" "$d/mnt/status" || fail "status: $(cat "$d/mnt/status")"
fsvol_umount "$d/mnt"
expect_fail_msg "raid5 only" "$FSVOL" create -f -l raid6 -s 768K --consistency-policy ppl "$d"/m{0,1,2,3}
expect_fail_msg "md refuses both" "$FSVOL" create -f -l raid5 -s 768K --consistency-policy ppl --bitmap internal "$d"/m{0,1,2}
expect_fail_msg "larger --data-offset" "$FSVOL" create -f -l raid5 -c 1M -s 2M --consistency-policy ppl "$d"/m{0,1,2}
echo "PASS"
