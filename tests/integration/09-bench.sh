#!/usr/bin/env bash
# fsvol-bench: short runs (-W0, 1 s) against a file, a mounted raid0
# MNT/volume (the below-the-mapping section and its conservation line) and
# a raid5 opened in-process (--members: the write cost ratios), the JSON
# document against the text, and bad flags (exit 2, message naming the flag).
. "$(dirname "$0")/../lib.sh"
requires jq
BENCH=$FSVOL_BUILD/bin/fsvol-bench
[[ -x $BENCH ]] || fail "$BENCH not built"

# total_row FILE SECTION: "bytes ios mb_s iops" of the section's total row
total_row() {
	awk -v s="$2" '$0 == s { on = 1 } on && /^total:/ { gsub(/\|/, ""); print $2, $3, $4, $5; exit }' "$1"
}

# --- a file: -c creates it; figures reconcile; JSON equals text
"$BENCH" -q -b 4K -r -w 30 -o 4 -t 2 -d 1 -W0 -Sh -L -c 16M "$T/f" >"$T/f.txt" 2>"$T/f.err" ||
	fail "run against a file failed: $(cat "$T/f.err")"
[[ $(size_of "$T/f") -eq $((16 * MiB)) ]] || fail "-c 16M did not create a 16M file"
for s in "Command Line:" "Input parameters:" "actual test time:" "CPU |  Usage" "Total IO" "Read IO" \
	"Write IO" "  %-ile |  Read (ms) | Write (ms) | Total (ms)" "9-nines" "performing mix test (read/write ratio: 70/30)"; do
	grep -qF -- "$s" "$T/f.txt" || fail "report lacks '$s'"
done
! grep -q "below the mapping layer" "$T/f.txt" || fail "a plain file has no mapping layer"
read -r bytes ios mbs iops < <(total_row "$T/f.txt" "Total IO")
[[ $ios -gt 0 && $bytes -eq $((ios * 4096)) ]] || fail "bytes $bytes != I/Os $ios x 4096"
awk -v b="$bytes" -v m="$mbs" 'BEGIN { d = m * 1048576 - b; if (d < 0) d = -d; exit !(d <= 0.01 * 1048576 + 1e-9 * b) }' ||
	fail "MB/s x 1 s ($mbs) != bytes ($bytes)"
read -r rb _ < <(total_row "$T/f.txt" "Read IO")
read -r wb _ < <(total_row "$T/f.txt" "Write IO")
[[ $((rb + wb)) -eq $bytes && $wb -gt 0 ]] || fail "read $rb + write $wb != total $bytes"
# percentiles monotonic, min..max
awk '/^ *(min|[0-9]+th|[0-9]-nines|max) \|/ { gsub(/\|/, ""); if (NR0 && $4 + 0 < prev) bad = 1; prev = $4 + 0; NR0 = 1 }
	END { exit bad }' "$T/f.txt" || fail "total latency percentiles not monotonic"
! grep -qi "holes" "$T/f.err" "$T/f.txt" || fail "a file written out by -c was reported as holes"
# a sparse file reads holes: warned once; a write-only run reads nothing: not warned
truncate -s 8M "$T/sparse"
"$BENCH" -q -b 4K -r -o 2 -d 0.3 -W0 "$T/sparse" 2>&1 >/dev/null | grep -q "sparse: 100% of the range this run reads is holes" ||
	fail "no holes warning on a sparse file"
"$BENCH" -q -b 4K -s -w 100 -o 2 -d 0.3 -W0 -f 4M "$T/sparse" >"$T/sw.txt" 2>&1 || fail "write run on the sparse file failed"
! grep -qi "holes" "$T/sw.txt" || fail "a write-only run was warned about holes"
"$BENCH" -q -b 4K -r -o 2 -d 0.3 -W0 "$T/sparse" 2>&1 >/dev/null | grep -q "sparse: 50% of the range" ||
	fail "after writing the first half, half the range should be holes: $(cat "$T/sw.txt")"
"$BENCH" -q --json -b 4K -r -o 4 -d 1 -W0 -z5 -L "$T/f" >"$T/f.json" || fail "--json run failed"
jq -e '.results.total.total.ios > 0 and .results.total.total.bytes == .results.total.total.ios * 4096' \
	"$T/f.json" >/dev/null || fail "JSON totals do not reconcile"
jq -e '.params.seed == 5 and (.results.cpu | length) > 0 and .results.latency_ms.read["9-nines"] >= .results.latency_ms.read["50th"]' \
	"$T/f.json" >/dev/null || fail "JSON lacks seed, CPU or percentiles"

# --- a mounted raid0: below the mapping layer, reads conserved
"$FSVOL" create -l raid0 -c 64K -s 16M "$T"/a{0,1,2,3} >/dev/null
fsvol_mount "$T/r0" "$T"/a{0,1,2,3}
"$BENCH" -q -b 64K -r -o 4 -d 1 -W0 -Sh "$T/r0/volume" >"$T/r0.txt" || fail "run against MNT/volume failed"
grep -q "below the mapping layer: raid0, 4 members" "$T/r0.txt" || fail "no below-the-mapping section: $(tail -5 "$T/r0.txt")"
for m in m0 m1 m2 m3; do grep -Eq "^ +$m \| +[0-9.]+ \|" "$T/r0.txt" || fail "member row $m missing"; done
grep -Eq '^conservation: member read bytes / volume read bytes = ([0-9]+) / \1 = 1.00 \(raid0: each byte read once\)$' \
	"$T/r0.txt" || fail "raid0 read conservation line wrong: $(grep conservation "$T/r0.txt")"
"$BENCH" -q --json -b 64K -s -o 2 -d 1 -W0 -Sh "$T/r0/volume" >"$T/r0.json" || fail "--json on MNT/volume failed"
jq -e '.results.targets[0].below.conservation[0] | .what == "reads" and .ok and .member_bytes == .volume_bytes and .volume_bytes > 0' \
	"$T/r0.json" >/dev/null || fail "JSON conservation: $(jq -c '.results.targets[0].below' "$T/r0.json" | head -c 400)"
jq -e '[.results.targets[0].below.devices[] | select(.name != "volume") | .r_s] | length == 4 and min > 0' \
	"$T/r0.json" >/dev/null || fail "sequential 64K reads over 4 members should reach every member"
# -B BASE:LENGTH confines the I/O: the third 64K chunk lives on member 2 alone
# (short-stroking, as on a real disk); -f MAX keeps it below MAX: the first chunk, member 0
for run in "-B 128K:64K 2" "-f 64K 0"; do
	read -r flag range want <<<"$run"
	echo reset >"$T/r0/ctl"
	"$BENCH" -q --json -b 4K -r -o 4 -d 0.5 -W0 -Sh "$flag" "$range" "$T/r0/volume" >"$T/bounds.json" ||
		fail "$flag $range on MNT/volume failed"
	v=$(jq '.volume.reads' "$T/r0/stats.json")
	got=$(jq -c '[.members[] | .reads]' "$T/r0/stats.json")
	[[ $v -gt 0 && $(jq ".[$want]" <<<"$got") == "$v" ]] ||
		fail "$flag $range: $v volume reads, member reads $got (all on member $want)"
done

# --- holes: a fresh volume reads never-written blocks; fsvol-bench says so once (stderr and
# report) unless a model sets the timing, and stops saying so once the volume is written
"$FSVOL" create -l raid0 -c 64K -s 8M "$T"/h{0,1} >/dev/null
hm=$T/h0,$T/h1
"$BENCH" -q -b 64K -r -o 2 -d 0.3 -W0 --members "$hm" >"$T/h.txt" 2>"$T/h.err" || fail "holes run failed: $(cat "$T/h.err")"
[[ $(grep -c "warning: .*never written (holes on m0,m1)" "$T/h.err") -eq 1 ]] ||
	fail "no single holes warning on stderr: $(cat "$T/h.err")"
grep -q "^WARNING: .*100% of the member blocks under this run's range were never written" "$T/h.txt" ||
	fail "report lacks the holes warning"
"$BENCH" -q --json -b 64K -r -o 2 -d 0.3 -W0 --members "$hm" 2>/dev/null | jq -e '.results.targets[0].holes_warning | test("never written")' 	>/dev/null || fail "JSON lacks holes_warning"
# -f 64K reads only the first chunk: member 0
"$BENCH" -q -b 64K -r -o 1 -d 0.3 -W0 -f 64K --members "$hm" 2>&1 >/dev/null | grep -q "(holes on m0)" ||
	fail "a window on member 0 should name m0 alone"
# a model sets the timing: no warning
"$BENCH" -q -b 64K -r -o 2 -d 0.3 -W0 --members "$hm" --model ssd >"$T/hm.txt" 2>"$T/hm.err" || fail "model run failed"
! grep -qi "never written" "$T/hm.txt" "$T/hm.err" || fail "warned although a model sets the timing"
# written once through a mount (dd over the whole volume): no warning, in-process or on MNT/volume
fsvol_mount "$T/hmnt" "$T"/h{0,1}
"$BENCH" -q -b 64K -r -o 2 -d 0.3 -W0 -Sh "$T/hmnt/volume" 2>&1 >/dev/null | grep -q "never written (holes on m0,m1)" ||
	fail "no holes warning on a fresh MNT/volume"
dd if=/dev/urandom of="$T/hmnt/volume" bs=1M count=16 oflag=direct conv=notrunc status=none || fail "dd over the volume failed"
"$BENCH" -q -b 64K -r -o 2 -d 0.3 -W0 -Sh "$T/hmnt/volume" >"$T/hw.txt" 2>&1 || fail "run on the written mount failed"
! grep -qi "never written" "$T/hw.txt" || fail "warned after the volume was written: $(grep -i warn "$T/hw.txt")"
fsvol_umount "$T/hmnt"
"$BENCH" -q -b 64K -r -o 2 -d 0.3 -W0 --members "$hm" >"$T/hw2.txt" 2>&1 || fail "run after the write failed"
! grep -qi "never written" "$T/hw2.txt" || fail "warned in-process after the volume was written"
# a fresh volume mounted with a model: the model sets the timing, no warning
"$FSVOL" create -l raid0 -c 64K -s 8M "$T"/g{0,1} >/dev/null
fsvol_mount --model=ssd "$T/gmnt" "$T"/g{0,1}
"$BENCH" -q -b 64K -r -o 2 -d 0.3 -W0 -Sh "$T/gmnt/volume" >"$T/gm.txt" 2>&1 || fail "run on a modelled mount failed"
! grep -qi "never written" "$T/gm.txt" || fail "warned on a mount whose model sets the timing"
echo "model none" >"$T/gmnt/ctl"
"$BENCH" -q -b 64K -r -o 2 -d 0.3 -W0 -Sh "$T/gmnt/volume" 2>&1 >/dev/null | grep -q "never written" ||
	fail "no warning after 'model none' on the mount"
fsvol_umount "$T/gmnt"

# --- raid5 in-process: small random writes cost member writes and reads
"$FSVOL" create -l raid5 -c 64K -s 16M "$T"/c{0,1,2,3} >/dev/null
"$BENCH" -q -b 4K -r -w 100 -o 2 -d 1 -W0 --members "$T/c0,$T/c1,$T/c2,$T/c3" >"$T/r5.txt" 2>"$T/r5.err" ||
	fail "in-process raid5 run failed: $(cat "$T/r5.err")"
grep -q "below the mapping layer: raid5, 4 members" "$T/r5.txt" || fail "no raid5 section"
grep -Eq '^conservation: member write bytes / volume write bytes = [0-9]+ / [0-9]+ = 2.00 \(raid5: data \+ parity\)$' \
	"$T/r5.txt" || fail "raid5 write ratio line: $(grep conservation "$T/r5.txt")"
grep -Eq '^conservation: member read bytes / volume write bytes = [0-9]+ / [0-9]+ = 2.00 \(raid5: read-modify-write or reconstruct-write\)$' \
	"$T/r5.txt" || fail "raid5 reads for writes line: $(grep conservation "$T/r5.txt")"

# --- bad flags: exit 2 and a message naming the flag
bad() { # bad MESSAGE ARGS...
	local want=$1 rc=0
	shift
	expect_fail_msg "$want" "$BENCH" "$@"
	"$BENCH" "$@" >/dev/null 2>&1 || rc=$?
	[[ $rc -eq 2 ]] || fail "fsvol-bench $*: exit $rc, want 2"
}
bad "-b 3X: not a size" -b 3X "$T/f"
bad "-w 120: must be 0..100" -w 120 "$T/f"
bad "-o 0: must be 1..1024" -o 0 "$T/f"
bad "-t 0: must be 1..256" -t0 "$T/f"
bad "-d 0: must be > 0" -d0 "$T/f"
bad "--dist zipf:x: THETA is not a number" --dist zipf:x "$T/f"
bad "--dist hot:10: expected hot:DATA%/IO%" --dist hot:10 "$T/f"
bad "unknown option '-Y'" -Y "$T/f"
bad "no TARGET given" -b 4K
bad "--model hdd: needs --members" --model hdd "$T/f"
expect_fail_msg "$T/nonexistent" "$BENCH" -q -d 1 -W0 "$T/nonexistent"
"$BENCH" --help >"$T/help.txt"; grep -q -- "--dist D" "$T/help.txt" || fail "--help lacks --dist"
note "fsvol-bench: file, mounted raid0, in-process raid5, bad flags"
