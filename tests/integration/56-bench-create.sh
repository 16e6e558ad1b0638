#!/usr/bin/env bash
# fsvol-bench --create LEVEL,CHUNK --members mem:NAME:SIZE,...: a fresh volume
# in process memory, driven in-process; the report (text and JSON) gives the
# process's CPU per I/O; byte conservation holds below the mapping layer;
# memory members without --create, or file members with it, are refused by
# name. No timing is asserted (the machine is shared): only that the figures
# exist and reconcile.
. "$(dirname "$0")/../lib.sh"
requires jq
BENCH=$FSVOL_BUILD/bin/fsvol-bench
[[ -x $BENCH ]] || fail "$BENCH not built"
mem="mem:a:16M,mem:b:16M,mem:c:16M,mem:d:16M"

# raid5 4K random writes: data + parity, read-modify-write, CPU per I/O. The
# members also take md's metadata writes, counted too: the dirty mark (a 4 KiB
# superblock write on each member) and the bitmap's bits set (its 4 KiB block
# on each member: 16M members are one bitmap block); safe mode is off, so no
# clean mark falls in the run however the machine stalls.
"$BENCH" -q -b4K -r -w100 -o8 -d0.5 -W0.2 --ctl 'safe_mode_delay 0' --json --create raid5,64K --members "$mem" >"$T/r5.json" 2>"$T/r5.err" ||
	fail "--create raid5 failed: $(cat "$T/r5.err")"
jq -e '.results.targets[0].below.level == "raid5"' "$T/r5.json" >/dev/null || fail "not a raid5: $(jq -c .results.targets[0].below.level "$T/r5.json")"
ios=$(jq '.results.total.write.ios' "$T/r5.json")
[[ $ios -gt 0 ]] || fail "no writes completed"
jq -e '.results.targets[0].below.conservation[] | select(.what == "writes") |
	.member_bytes == 2 * .volume_bytes + 4 * (4096 + 4096)' "$T/r5.json" >/dev/null ||
	fail "raid5 x4 writes: member bytes not 2 x the volume's plus a dirty mark and a bitmap block on each member: $(jq -c .results.targets[0].below.conservation "$T/r5.json")"
jq -e '.results.process_cpu | (.user_s + .system_s > 0) and (.per_io_us > 0)' "$T/r5.json" >/dev/null ||
	fail "no process CPU per I/O: $(jq -c .results.process_cpu "$T/r5.json")"
# per I/O = (user + system) / I/Os in the window
jq -e '.results.process_cpu as $c | (($c.user_s + $c.system_s) * 1e6 / .results.total.total.ios - $c.per_io_us) | fabs < 0.01 * ($c.per_io_us + 0.001)' \
	"$T/r5.json" >/dev/null || fail "per_io_us does not equal CPU seconds / I/Os: $(jq -c .results.process_cpu "$T/r5.json")"

# raid0 4K random reads, text report: the CPU line and the conservation line
"$BENCH" -q -b4K -r -o32 -d0.5 -W0 --create raid0,16K --members "$mem" >"$T/r0.txt" 2>"$T/r0.err" ||
	fail "--create raid0 failed: $(cat "$T/r0.err")"
grep -qE '^process CPU: user [0-9.]+s, system [0-9.]+s; per I/O [0-9.]+ us' "$T/r0.txt" || fail "text report lacks the process CPU line"
grep -q 'conservation: member read bytes / volume read bytes = .* = 1.00 (raid0' "$T/r0.txt" || fail "raid0 reads not conserved"

# refusals, each naming the culprit
expect_fail_msg "mem:x" "$BENCH" -q -d0.2 -W0 --members mem:x:16M,mem:y:16M
expect_fail_msg "member $T/f is not in memory" "$BENCH" -q -d0.2 -W0 --create raid0 --members "mem:a:16M,$T/f"
expect_fail_msg "--create raid9" "$BENCH" -q -d0.2 -W0 --create raid9 --members mem:a:16M
note "raid5 x4: $(jq '.results.process_cpu.per_io_us' "$T/r5.json") us CPU per 4K write (not asserted)"
