#!/usr/bin/env bash
# fsvol-bench --replay --virtual: one small trace replayed in-process on a
# raid5 of emulated hdd-legacy disks, live and in virtual time: every member
# serves the same reads and writes, their mean latency agrees within 5% (in
# one of up to three live runs: live emulation is late now and then), a second
# virtual run gives exactly the same figures; so do a pattern run and a
# sweep in virtual time. --virtual without an in-process model is refused.
# fsvol-test: alone (live emulated latency within 5% of virtual time: host load makes live releases late)
. "$(dirname "$0")/../lib.sh"
requires jq
BENCH=$FSVOL_BUILD/bin/fsvol-bench
[[ -x $BENCH ]] || fail "$BENCH not built"

# the members on a tmpfs when we may mount one: a member file's own I/O
# (page cache writeback on a busy disk) only ever adds to live latency
mkdir -p "$T/mem"
if [[ $(id -u) -eq 0 ]] && mount -t tmpfs -o size=256m tmpfs "$T/mem" 2>/dev/null; then
	_push_cleanup loopmnt "$T/mem"
fi
"$FSVOL" create -l raid5 -c 64K -s 32M --bitmap none "$T"/mem/m{0,1,2,3} >/dev/null
members=$(echo "$T"/mem/m{0,1,2,3} | tr ' ' ,)
# 400 requests ~12 ms apart (a fixed LCG, its high bits: the same trace every
# run), 4K-32K, 20% writes (read-modify-write on raid5), anywhere in the 96M
# volume: fio iolog v3, times in microseconds
awk 'function r(m) { x = (x * 1103515245 + 12345) % 2147483648; return int(x / 65536) % m }
BEGIN {
	x = 12345; t = 0
	print "fio version 3 iolog"; print "0 /v add"; print "0 /v open"
	for (i = 0; i < 400; i++) {
		t += 1 + r(23); op = r(100) < 20 ? "write" : "read"; off = r(24000) * 4096; len = 4096 * 2 ^ r(4)
		print t * 1000, "/v", op, off, len
	}
	print t * 1000, "/v close"
}' >"$T/w.log"

run() { # OUT [ARGS...]
	local out=$1
	shift
	# md's safe mode off: its marks follow idle spells that a loaded host stretches in a live run
	"$BENCH" --replay "$T/w.log" --members "$members" --model hdd-legacy --ctl 'safe_mode_delay 0' -q --json "$@" \
		>"$out" 2>"$out.err" ||
		fail "replay $*: $(cat "$out.err")"
}
dev='.results.targets[0].below.devices[]'
counts() { jq -r "$dev | \"\\(.name) \\(.reads) \\(.writes)\"" "$1"; }
vlat() { jq -r "$dev | select(.name == \"volume\") | .avg_lat_ms" "$1"; }
# the members' mean latency (the model's own figure: issue to emulated completion)
lat() { jq -r "[$dev | select(.name != \"volume\") | {o: (.reads + .writes), l: .avg_lat_ms}] |
	(map(.o * .l) | add) / (map(.o) | add)" "$1"; }
run "$T/virt.json" --virtual
run "$T/virt2.json" --virtual
virt=$(lat "$T/virt.json")
[[ $(counts "$T/virt.json" | wc -l) -eq 5 ]] || fail "no member figures: $(counts "$T/virt.json")"
# Every live run must serve the same member ops, and the members' mean
# latency must agree within 5% in one of up to three live runs: live
# emulation on a loaded machine issues late now and then, which shifts its
# arrivals (the volume's mean, noted beside, also carries each release's
# lateness, the host's and not the model's).
agree=0
for i in 1 2 3; do
	run "$T/live$i.json"
	diff <(counts "$T/live$i.json") <(counts "$T/virt.json") >"$T/diff" ||
		fail "live and virtual member op counts differ:"$'\n'"$(cat "$T/diff")"
	live=$(lat "$T/live$i.json")
	note "members' mean latency: live $live ms, virtual $virt ms (the volume's: live $(vlat "$T/live$i.json"), virtual $(vlat "$T/virt.json"))"
	if awk -v a="$live" -v b="$virt" 'BEGIN { d = (a - b) / a; exit !(a > 0 && d < 0.05 && d > -0.05) }'; then
		agree=1
		break
	fi
done
[[ $agree -eq 1 ]] || fail "members' mean latency: virtual $virt ms, and no live run within 5% of it"
# the same inputs, the same numbers (the model's clock does not depend on the machine)
cmp -s <(jq -c "$dev" "$T/virt.json") <(jq -c "$dev" "$T/virt2.json") ||
	fail "two virtual runs differ: $(diff <(jq -c "$dev" "$T/virt.json") <(jq -c "$dev" "$T/virt2.json"))"

# with the write-intent bitmap (a write waits for it on the bitmap's thread;
# the virtual clock waits with it): the same data ops, and the bitmap's own
# block writes, as many on every member (each update writes every member's
# copy); the same figures twice
"$FSVOL" create -l raid5 -c 64K -s 32M "$T"/mem/b{0,1,2,3} >/dev/null
members_b=$(echo "$T"/mem/b{0,1,2,3} | tr ' ' ,)
for i in 1 2; do
	"$BENCH" --replay "$T/w.log" --members "$members_b" --model hdd-legacy --ctl 'safe_mode_delay 0' -q --json \
		--virtual >"$T/bm$i.json" 2>"$T/bm.err" || fail "virtual replay with a bitmap: $(cat "$T/bm.err")"
done
extra=$(paste -d' ' <(counts "$T/bm1.json" | sed 1d) <(counts "$T/virt.json" | sed 1d) |
	awk '$2 != $5 { print "reads"; exit } { print $3 - $6 }' | sort -u)
[[ $extra =~ ^[1-9][0-9]*$ ]] ||
	fail "with a bitmap the members served other ops than the data's plus as many bitmap writes each: $extra"$'\n'"$(counts "$T/bm1.json")"$'\n'"$(counts "$T/virt.json")"
note "with a bitmap: $extra bitmap block writes on each member, the data's ops otherwise"
cmp -s <(jq -c "$dev" "$T/bm1.json") <(jq -c "$dev" "$T/bm2.json") || fail "two virtual runs with a bitmap differ"

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
