#!/usr/bin/env bash
# Metadata I/O is counted below the mapping layer (DISKPERF's blind spot,
# issue 30 item 3): on an idle raid5 x4 with md's bitmap, marked clean by
# safe mode, one 4 KiB write to a clean bitmap region shows in MNT/stats,
# stats.json, diskstats and metrics as each member's data and parity writes
# (what `fsvol map` says the request needs) plus the bitmap's own block
# writes (status.json's bitmap.block_writes) plus the superblock writes of the
# dirty mark (one per member per mark: status.json's safe_mode_marks), and
# `fsvol trace` labels each (sb, bitmap) under that write; the clean mark
# that follows is one more superblock write on every member. Nothing is
# hard-coded where the geometry decides it.
. "$(dirname "$0")/../lib.sh"
requires jq

N=4
"$FSVOL" create -l raid5 -c 64K -s 64M --bitmap-chunk 1M "$T"/m{0,1,2,3} >/dev/null
fsvol_mount "$T/mnt" "$T"/m{0,1,2,3}
M=$T/mnt
st() { jq -r "$1" "$M/status.json"; }
wait_for 20 "the idle volume marked clean" jq_true '.array_state == "clean"' "$M/status.json"
# the dirty mark this test counts, and no clean mark before the counts are read
echo "safe_mode_delay 3600" >"$M/ctl"
"$FSVOL" detail "$M" | grep -q "State : clean" || fail "detail of the clean volume: $("$FSVOL" detail "$M" | grep State)"

# a clean bitmap region: region 5 (1M chunk) has never been written
OFF=$((5 * MiB + 8192))
[[ $(st .bitmap.dirty) == 0 ]] || fail "bitmap not clean before the write: $(st .bitmap)"
bw0=$(st .bitmap.block_writes)
marks0=$(st .safe_mode_marks)
echo reset >"$M/ctl"
"$FSVOL" trace --json -n 1 "$M" >"$T/trace.json" &
tracer=$!
track_pid "$tracer"
tracing() { ls -l "/proc/$tracer/fd" 2>/dev/null | grep -qF -- "-> $M/trace.json"; } # its stdout is $T/trace.json
wait_for 10 "the tracer to open MNT/trace.json" tracing
dd if=/dev/urandom of="$M/volume" bs=4K count=1 seek=$((OFF / 4096)) oflag=direct conv=notrunc status=none
timeout 30 tail --pid="$tracer" -f /dev/null || fail "fsvol trace -n 1 did not end after the write: $(cat "$T/trace.json")"
# every view at once: seconds later the bitmap's daemon clears the bit (one
# more block write on each member, labelled bitmap too)
S=$T/snap
mkdir "$S"
cp "$M/stats.json" "$M/status.json" "$M/diskstats" "$M/metrics" "$S/"
"$FSVOL" stat --json "$M" >"$S/stat.json" || fail "fsvol stat"
[[ $(jq -r .bitmap.dirty "$S/status.json") == 1 ]] || fail "the write left no dirty region: $(jq -c .bitmap "$S/status.json")"
st() { jq -r "$1" "$S/status.json"; }
[[ $(st .array_state) == active ]] || fail "array_state after a write: $(st .array_state)"
bitmap_writes=$(($(st .bitmap.block_writes) - bw0))
marks=$(($(st .safe_mode_marks) - marks0))
((bitmap_writes >= N)) || fail "the write to a clean region wrote $bitmap_writes bitmap blocks (want >= one per member)"
((marks == 1)) || fail "$marks clean/dirty marks for one write from clean (want the dirty mark alone)"

# what the request itself writes, per member: fsvol map (the layout and plan)
map=$("$FSVOL" map --json -l raid5 -n $N -c 64K -s 64M "$OFF" 4096)
write_id=$(jq -r 'select(.dev == -1) | .seq' "$T/trace.json")
[[ -n $write_id ]] || fail "no volume request in the trace: $(cat "$T/trace.json")"
total_bitmap=0
for ((i = 0; i < N; i++)); do
	want_data=$(jq "[.extents[], .parity[] | select(.member == $i)] | length" <<<"$map")
	tr_sb=$(jq -s "[.[] | select(.dev == $i and .op == \"write\" and .why == \"sb\")] | length" "$T/trace.json")
	tr_bm=$(jq -s "[.[] | select(.dev == $i and .op == \"write\" and .why == \"bitmap\")] | length" "$T/trace.json")
	tr_dp=$(jq -s "[.[] | select(.dev == $i and .op == \"write\" and (.why == \"data\" or .why == \"parity_write\"))] | length" "$T/trace.json")
	tr_w=$(jq -s "[.[] | select(.dev == $i and .op == \"write\")] | length" "$T/trace.json")
	tr_r=$(jq -s "[.[] | select(.dev == $i and .op == \"read\")] | length" "$T/trace.json")
	tr_f=$(jq -s "[.[] | select(.dev == $i and .op == \"flush\")] | length" "$T/trace.json")
	w=$(member_stat "$S" $i writes)
	r=$(member_stat "$S" $i reads)
	f=$(member_stat "$S" $i flushes)
	note "m$i: $w writes = $want_data data/parity + $tr_bm bitmap + $tr_sb sb (dirty mark); $r reads, $f flushes"
	((tr_dp == want_data)) || fail "m$i: $tr_dp data/parity writes traced, fsvol map says $want_data"
	((tr_sb == marks)) || fail "m$i: $tr_sb superblock writes traced for $marks mark(s)"
	((w == want_data + tr_bm + tr_sb)) ||
		fail "m$i: $w member writes, want $want_data data/parity + $tr_bm bitmap + $tr_sb sb; trace:"$'\n'"$(cat "$T/trace.json")"$'\n'"stats: $(jq -c '.members[]' "$S/stats.json")"
	((w == tr_w && r == tr_r && f == tr_f)) ||
		fail "m$i: counters (r $r w $w f $f) differ from the trace (r $tr_r w $tr_w f $tr_f)"
	total_bitmap=$((total_bitmap + tr_bm))
	# the same count in diskstats (field 8: writes completed) and the metrics
	name=$(jq -r ".members[] | select(.index == $i) | .name" "$S/stats.json")
	ds=$(awk -v d="$name" '$3 == d { print $8 }' "$S/diskstats")
	((ds == w)) || fail "m$i: diskstats says $ds writes, stats.json $w"
	pm=$(awk -v d="device=\"$name\"" 'index($0, "fsvol_disk_writes_completed_total{") == 1 && index($0, d) { print $2 }' "$S/metrics")
	[[ ${pm%.*} == "$w" ]] || fail "m$i: metrics say $pm writes, stats.json $w"
done
((total_bitmap == bitmap_writes)) || fail "trace labels $total_bitmap bitmap writes, the bitmap counted $bitmap_writes"
# every member request of the write, metadata included, shows under it
orphans=$(jq -s "[.[] | select(.dev >= 0 and .parent != $write_id)] | length" "$T/trace.json")
((orphans == 0)) || fail "$orphans member requests not under the write: $(cat "$T/trace.json")"
# fsvol stat's figures since the reset count it too: w/s x interval
for ((i = 0; i < N; i++)); do
	got=$(jq --argjson i $i '.interval_s as $t | .devices[] | select(.index == $i) | (."w/s" * $t) | round' "$S/stat.json")
	((got == $(member_stat "$S" $i writes))) || fail "fsvol stat: m$i w/s x interval = $got, stats.json $(member_stat "$S" $i writes)"
done

# the clean mark: idle for safe_mode_delay, one superblock write on every
# member (the bitmap's clearing, due meanwhile, is counted apart by the bitmap)
wait_for 30 "the bit cleared once idle" jq_true '.bitmap.dirty == 0' "$M/status.json"
echo reset >"$M/ctl"
bw0=$(jq .bitmap.block_writes "$M/status.json")
echo "safe_mode_delay 0.050" >"$M/ctl"
wait_for 20 "clean again once idle" jq_true '.array_state == "clean"' "$M/status.json"
bw=$(($(jq .bitmap.block_writes "$M/status.json") - bw0))
for ((i = 0; i < N; i++)); do
	w=$(member_stat "$M" $i writes)
	((w == 1 + bw / N)) || fail "m$i: the clean mark made $w writes (want 1 superblock, bitmap $bw)"
done
"$FSVOL" detail "$M" | grep -q "State : clean" || fail "detail once idle: $("$FSVOL" detail "$M" | grep State)"
fsvol_umount "$M"
"$FSVOL_VERIFY" "$T"/m{0,1,2,3} || fail "parity does not match the data"
echo "PASS"
