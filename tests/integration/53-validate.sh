#!/usr/bin/env bash
# fsvol model validate: DiskSim's measured validation drives (tests/data/disksim)
# replayed in virtual time give rms within 1.2x DiskSim's own (issue 32) and a
# per-class breakdown; --out has
# one line per request; a second run gives the same numbers; bad parameter
# files and traces are refused naming file:line, with nothing replayed.
. "$(dirname "$0")/../lib.sh"
FSVOL=$FSVOL_BUILD/bin/fsvol
DATA=$(cd "$(dirname "$0")/../data/disksim" && pwd)
mkdir -p "$T/d"
cp "$DATA"/*.parv "$DATA"/*.diskspecs "$DATA"/*.model "$DATA"/*.seek "$T/d/"

# drive | DiskSim's rms (DiskSim 2.01 on the same files) | bound: 1.2x DiskSim's
for row in "hp_c2247a 0.089 0.1068" "cheetah9LP 0.107 0.1284" "atlas10k 0.268 0.3216" \
	"ibm18es 0.136 0.1632" "dec_rz26 0.341 0.4092" "hp_c2490a 0.254 0.3048"; do
	read -r d ref bound <<<"$row"
	gzip -dc "$DATA/$d.trace.gz" >"$T/d/$d.trace"
	"$FSVOL" model validate --model "disksim:$T/d/$d.parv" "$T/d/$d.trace" --out "$T/$d.out" \
		>"$T/$d.txt" 2>"$T/$d.err" || fail "$d: validate failed: $(cat "$T/$d.err")"
	rms=$(sed -n 's/^rms = //p' "$T/$d.txt")
	[[ -n $rms ]] || fail "$d: no 'rms = X' line: $(cat "$T/$d.txt")"
	note "$d: rms $rms ms (DiskSim $ref, bound $bound)"
	awk -v r="$rms" -v b="$bound" 'BEGIN { exit !(r <= b) }' ||
		fail "$d: rms $rms ms exceeds $bound ms:"$'\n'"$(cat "$T/$d.txt")"
	grep -q "^  measured " "$T/$d.txt" && grep -q "^  emulated " "$T/$d.txt" ||
		fail "$d: no mean/p50/p90 rows: $(cat "$T/$d.txt")"
	for k in "write" "short seek" "long seek"; do
		grep -q "^  $k  *[0-9]" "$T/$d.txt" || fail "$d: no '$k' row in the per-class table: $(cat "$T/$d.txt")"
	done
	[[ $(wc -l <"$T/$d.out") -eq $(wc -l <"$T/d/$d.trace") ]] ||
		fail "$d: --out has $(wc -l <"$T/$d.out") lines for $(wc -l <"$T/d/$d.trace") requests"
	# --out, first request: the measured time is the trace's own
	m=$(awk 'NR == 1 { print $5 }' "$T/d/$d.trace")
	awk -v m="$m" 'NR == 1 { exit !($1 == m + 0 && $2 > 0) }' "$T/$d.out" ||
		fail "$d: first --out line '$(head -n 1 "$T/$d.out")', measured $m"
	grep -q "ignored: " "$T/$d.err" || fail "$d: the ignored parameters are not listed"
	[[ $(grep -c "ignored: defects " "$T/$d.err") -le 1 ]] || fail "$d: an ignored parameter listed twice"
done
# the same inputs give the same numbers (virtual time: nothing depends on the machine)
"$FSVOL" model validate --model "disksim:$T/d/atlas10k.parv" "$T/d/atlas10k.trace" >"$T/again.txt" 2>/dev/null
cmp -s "$T/atlas10k.txt" "$T/again.txt" || fail "a second run differs: $(diff "$T/atlas10k.txt" "$T/again.txt")"

# DiskSim counts the blocks from the zones, not the file's Block count: a
# request past the Block count but inside the zones is served, with a note
sed 's/Block count = 2054864,/Block count = 2000000,/' "$T/d/hp_c2247a_validate.model" >"$T/d/small.model"
sed 's/hp_c2247a_validate.model/small.model/' "$T/d/hp_c2247a.diskspecs" >"$T/d/small.diskspecs"
sed 's/source hp_c2247a.diskspecs/source small.diskspecs/' "$T/d/hp_c2247a.parv" >"$T/d/small.parv"
printf 'R Miss 2040000 8 10000.0 5.0\nR Miss 10 8 10000.0 5.0\n' >"$T/past.trace"
"$FSVOL" model validate --model "disksim:$T/d/small.parv" "$T/past.trace" >"$T/past.txt" 2>"$T/past.err" ||
	fail "a request past the Block count, inside the zones: refused: $(cat "$T/past.err")"
grep -q "capacity: 2054864 blocks from the zones.*Block count says 2000000); 1 requests" "$T/past.txt" ||
	fail "no capacity note: $(cat "$T/past.txt")"

# --- bad input: named file:line, exit 1 or 2, no rms printed
head -n 5 "$T/d/hp_c2247a.trace" >"$T/short.trace"
expect_bad() { # WHAT PATTERN -- command...
	local what=$1 pat=$2
	shift 3
	if "$@" >"$T/bad.out" 2>"$T/bad.err"; then
		fail "$what: accepted"
	fi
	grep -q -- "$pat" "$T/bad.err" || fail "$what: message '$(cat "$T/bad.err")' lacks '$pat'"
	! grep -q "^rms" "$T/bad.out" || fail "$what: printed an rms"
}
expect_bad "missing parameter file" "nope.parv: No such file" -- \
	"$FSVOL" model validate --model "disksim:$T/d/nope.parv" "$T/short.trace"
sed 's/^disksim_ctlr CTLR0 {/disksim_ctlr CTLR0 = {/' "$T/d/hp_c2247a.parv" >"$T/d/bad1.parv"
line=$(grep -n 'disksim_ctlr CTLR0 = {' "$T/d/bad1.parv" | cut -d: -f1)
expect_bad "unknown syntax" "bad1.parv:$line: expected a block" -- \
	"$FSVOL" model validate --model "disksim:$T/d/bad1.parv" "$T/short.trace"
sed 's/Blocks per track = 92,/Blocks per track = 92 93,/' "$T/d/hp_c2247a_validate.model" >"$T/d/bad2.model"
sed 's/hp_c2247a_validate.model/bad2.model/' "$T/d/hp_c2247a.diskspecs" >"$T/d/bad2.diskspecs"
sed 's/source hp_c2247a.diskspecs/source bad2.diskspecs/' "$T/d/hp_c2247a.parv" >"$T/d/bad2.parv"
line=$(grep -n 'Blocks per track = 92 93' "$T/d/bad2.model" | cut -d: -f1)
expect_bad "a value with junk" "bad2.model:$line: expected ',' or '}'" -- \
	"$FSVOL" model validate --model "disksim:$T/d/bad2.parv" "$T/short.trace"
sed 's/source hp_c2247a.diskspecs/source gone.diskspecs/' "$T/d/hp_c2247a.parv" >"$T/d/bad3.parv"
line=$(grep -n 'source gone.diskspecs' "$T/d/bad3.parv" | cut -d: -f1)
expect_bad "a missing include" "bad3.parv:$line: source gone.diskspecs" -- \
	"$FSVOL" model validate --model "disksim:$T/d/bad3.parv" "$T/short.trace"
printf 'R Hit 10 2 100.0 5.0\nR Hot 12 2 100.0 5.0\n' >"$T/bad.trace"
expect_bad "a bad trace line" "bad.trace:2: the second field is Hit, Miss, Doub or Trip" -- \
	"$FSVOL" model validate --model "disksim:$T/d/hp_c2247a.parv" "$T/bad.trace"
printf 'R Hit 10 2 100.0\n' >"$T/bad.trace"
expect_bad "a truncated trace line" "bad.trace:1: too few fields" -- \
	"$FSVOL" model validate --model "disksim:$T/d/hp_c2247a.parv" "$T/bad.trace"
printf 'R Miss 99999999 8 100.0 5.0\n' >"$T/bad.trace"
expect_bad "a request beyond the drive" "beyond the drive" -- \
	"$FSVOL" model validate --model "disksim:$T/d/hp_c2247a.parv" "$T/bad.trace"
expect_bad "no --model" "--model SPEC is required" -- "$FSVOL" model validate "$T/short.trace"
echo "ok"
