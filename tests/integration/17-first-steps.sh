#!/usr/bin/env bash
# 17-first-steps: what a newcomer meets first (issue 30 point 9). make demo
# builds the man pages the README opens next; fsvol add (and grow --add)
# makes a missing member file the size of a member, as create does, and a
# file too small is refused in sizes a person reads; a sweep written to a
# file shows its header at once and each row as its run ends, while it runs.
. "$(dirname "$0")/../lib.sh"
requires_root
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BENCH=$FSVOL_BUILD/bin/fsvol-bench
[[ -x $BENCH ]] || fail "$BENCH not built"
cd "$T"

# --- make demo builds the man pages and completions too (its plan, not a build) ------
make -s -C "$ROOT" -n demo BUILD="$T/nobuild" >plan 2>&1 || fail "make -n demo: $(tail -5 plan)"
for d in man/fsvol.8 man/fsvol-bench.1 completion/fsvol; do
	grep -qF "$T/nobuild/$d" plan || fail "make demo does not build $d: $(grep -c . plan) lines of plan"
done

# --- add: a missing member file is made the size of a member -------------------------
"$FSVOL" create -l raid5 -c 64K -s 8M m0 m1 m2 >/dev/null || fail "create"
fsvol_mount mnt m0 m1 m2
out=$("$FSVOL" add mnt sp 2>&1) || fail "fsvol add mnt sp (missing): $out"
[[ $out == *"created sp (9M, the size of a member of mnt)"* && $out == *"added sp to mnt"* ]] ||
	fail "add of a missing file printed: $out"
[[ $(stat -c %s sp) -eq $(stat -c %s m0) ]] || fail "sp is $(stat -c %s sp) bytes, a member $(stat -c %s m0)"
[[ $(stat -c %a sp) == 600 ]] || fail "sp made with mode $(stat -c %a sp), as create's 600 expected"
grep -q "m3: $T/sp spare" mnt/status || fail "sp not a spare: $(cat mnt/status)"
touch empty
out=$("$FSVOL" add mnt empty 2>&1) || fail "fsvol add mnt empty: $out"
[[ $(stat -c %s empty) -eq $(stat -c %s m0) ]] || fail "an empty file was not sized: $(stat -c %s empty)"
truncate -s 1M small
expect_fail_msg "small: too small: 1M (1048576 bytes), and a member of mnt needs 9M" "$FSVOL" add mnt small
[[ $(stat -c %s small) -eq $((1024 * 1024)) ]] || fail "a refused add changed the user's file"
expect_fail_msg "nodir/x: No such file or directory" "$FSVOL" add mnt nodir/x
expect_fail_msg "raid1" "$FSVOL" add --write-mostly wm mnt # refused by the daemon (raid5)
[[ ! -e wm ]] || fail "an add the daemon refused left the file it made"
out=$("$FSVOL" grow mnt --add g1 2>&1) || fail "fsvol grow --add g1 (missing): $out"
[[ -s g1 && $out == *"created g1"* ]] || fail "grow --add did not make g1: $out"
fsvol_umount mnt

# --- a sweep to a file: the header at once, each row as its run ends -----------------
"$BENCH" sweep -q --level raid0 --members 1-2 --chunk 64K --size 16M -b 64K -d 1 -W 0 \
	--workloads seqread,randread --dir "$T" --out "$T/out" >sweep.txt 2>sweep.err &
sw=$!
track_pid "$sw"
running() { _alive "$sw"; }
header() { grep -q "^fsvol-bench sweep: raid0, 1-2 members" sweep.txt; }
first_row() { grep -Eq "^ +1 \| seqread +\|" sweep.txt && grep -q "^raid0,1,.*,seqread,total," out/sweep.csv; }
# the summary (scaling) is printed after the last run: seen with the header
# or the first row, they came all at once at the end
ended() { grep -q "^scaling" sweep.txt; }
wait_for 60 "no header in the sweep's file: $(cat sweep.err)" header
! ended && running || fail "the header came only with the whole report, at the end"
wait_for 120 "no first row in the sweep's file: $(cat sweep.err)" first_row
! ended && running || fail "the first row came only with the whole report, at the end"
wait "$sw" || fail "sweep failed: $(cat sweep.err)"
grep -Eq "^ +2 \| randread +\|" sweep.txt && grep -q "^scaling factor 1 -> N" sweep.txt ||
	fail "the finished sweep's file lacks its rows or summary: $(cat sweep.txt)"
[[ $(grep -c ",total," out/sweep.csv) -eq 4 ]] || fail "sweep.csv lacks runs: $(cat out/sweep.csv)"
note "make demo builds the docs; add makes its file; a sweep's file fills as it runs"
