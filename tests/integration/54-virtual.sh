#!/usr/bin/env bash
# fsvol-bench --replay --virtual: one small trace replayed in-process on a
# raid5 of emulated hdd-legacy disks, live and in virtual time: every member
# serves the same reads and writes, the mean latency agrees within 5%, and a
# second virtual run gives exactly the same figures; so do a pattern run and a
# sweep in virtual time. --virtual without an in-process model is refused.
. "$(dirname "$0")/../lib.sh"
requires jq
BENCH=$FSVOL_BUILD/bin/fsvol-bench
[[ -x $BENCH ]] || fail "$BENCH not built"

"$FSVOL" create -l raid5 -c 64K -s 32M "$T"/m{0,1,2,3} >/dev/null
members=$(echo "$T"/m{0,1,2,3} | tr ' ' ,)
# 300 requests, ~15 ms apart (a fixed LCG: the same trace every run), 4K-64K,
# 70% reads, anywhere in the 96M volume: fio iolog v3, times in microseconds
awk 'BEGIN {
	x = 12345; t = 0
	print "fio version 3 iolog"; print "0 /v add"; print "0 /v open"
	for (i = 0; i < 300; i++) {
		x = (x * 1103515245 + 12345) % 2147483648; t += 1 + x % 29
		x = (x * 1103515245 + 12345) % 2147483648; op = x % 10 < 7 ? "read" : "write"
		x = (x * 1103515245 + 12345) % 2147483648; off = (x % 24000) * 4096
		x = (x * 1103515245 + 12345) % 2147483648; len = 4096 * 2 ^ (x % 5)
		print t * 1000, "/v", op, off, len
	}
	print t * 1000, "/v close"
}' >"$T/w.log"

run() { # OUT [ARGS...]
	local out=$1
	shift
	"$BENCH" --replay "$T/w.log" --members "$members" --model hdd-legacy -q --json "$@" >"$out" 2>"$out.err" ||
		fail "replay $*: $(cat "$out.err")"
}
run "$T/live.json"
run "$T/virt.json" --virtual
run "$T/virt2.json" --virtual

dev='.results.targets[0].below.devices[]'
counts() { jq -r "$dev | \"\\(.name) \\(.reads) \\(.writes)\"" "$1"; }
[[ $(counts "$T/live.json" | wc -l) -eq 5 ]] || fail "no member figures: $(counts "$T/live.json")"
diff <(counts "$T/live.json") <(counts "$T/virt.json") >"$T/diff" ||
	fail "live and virtual member op counts differ:"$'\n'"$(cat "$T/diff")"
lat() { jq -r "$dev | select(.name == \"volume\") | .avg_lat_ms" "$1"; }
live=$(lat "$T/live.json") virt=$(lat "$T/virt.json")
note "mean latency: live $live ms, virtual $virt ms"
awk -v a="$live" -v b="$virt" 'BEGIN { d = (a - b) / a; exit !(a > 0 && d < 0.05 && d > -0.05) }' ||
	fail "mean latency live $live ms, virtual $virt ms: more than 5% apart"
# the same inputs, the same numbers (the model's clock does not depend on the machine)
cmp -s <(jq -c "$dev" "$T/virt.json") <(jq -c "$dev" "$T/virt2.json") ||
	fail "two virtual runs differ: $(diff <(jq -c "$dev" "$T/virt.json") <(jq -c "$dev" "$T/virt2.json"))"

# a pattern run and a sweep in virtual time: the same seed, the same numbers
pat() { "$BENCH" --members "$members" --model hdd-legacy -r -b 16K -o 4 -w 30 -d 3 -W 1 -z7 --virtual -q --json; }
pat >"$T/p1.json" 2>"$T/p1.err" || fail "virtual pattern run: $(cat "$T/p1.err")"
pat >"$T/p2.json" 2>/dev/null || fail "virtual pattern run (again)"
ios=$(jq -r '.results.targets[0].below.devices[] | select(.name == "volume") | .reads + .writes' "$T/p1.json")
[[ $ios -gt 50 ]] || fail "virtual pattern run: only $ios I/Os in 3 emulated seconds"
cmp -s <(jq -c "$dev" "$T/p1.json") <(jq -c "$dev" "$T/p2.json") ||
	fail "two virtual pattern runs differ: $(diff <(jq -c "$dev" "$T/p1.json") <(jq -c "$dev" "$T/p2.json"))"
sw() { "$BENCH" sweep -q --level raid0 --members 1-2 --size 16M -b 64K -d 2 -W 0 --model hdd --virtual \
	--workloads randread --dir "$T"; }
sw >"$T/s1.txt" 2>"$T/s1.err" || fail "virtual sweep: $(cat "$T/s1.err")"
sw >"$T/s2.txt" 2>/dev/null || fail "virtual sweep (again)"
grep -Eq '^ +2 \| randread +\| +[0-9.]+ \|' "$T/s1.txt" || fail "no sweep row: $(cat "$T/s1.txt")"
cmp -s "$T/s1.txt" "$T/s2.txt" || fail "two virtual sweeps differ: $(diff "$T/s1.txt" "$T/s2.txt")"

# refused: no model, several threads, a sweep without emulated disks
bad() { # PATTERN -- command...
	local pat=$1
	shift 2
	if "$@" >"$T/bad.out" 2>"$T/bad.err"; then
		fail "accepted: $*"
	fi
	grep -q -- "$pat" "$T/bad.err" || fail "message '$(cat "$T/bad.err")' lacks '$pat'"
}
bad "--virtual: needs --members (or --compare), and --model" -- \
	"$BENCH" --replay "$T/w.log" --members "$members" --virtual -q
bad "--virtual: needs --members (or --compare), and --model" -- "$BENCH" --virtual -d1 -q "$T/m0"
bad "--virtual: -t 2: one thread drives" -- "$BENCH" --members "$members" --model hdd --virtual -t2 -d1 -q
bad "--virtual: needs emulated disks" -- "$BENCH" sweep -q --members 1-2 --size 16M -d1 --virtual --dir "$T"
echo "ok"
