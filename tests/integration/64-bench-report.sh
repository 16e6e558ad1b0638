#!/usr/bin/env bash
# 64-bench-report: fsvol-bench's words (issue 21, smaller points): a sweep's
# --out given with a trailing slash prints and writes DIR/sweep.csv, not
# DIR//sweep.csv; a run on MNT/volume says that the gap between the volume's
# latency and the application's is the FUSE path, and an in-process run
# (--members, no FUSE) does not.
. "$(dirname "$0")/../lib.sh"
requires_root

BENCH=$FSVOL_BUILD/bin/fsvol-bench
[[ -x $BENCH ]] || fail "$BENCH not built"
mkdir -p "$T/tmp" "$T/mnt"

"$BENCH" sweep -q --level raid0 --members 1 --chunk 64K --size 8M -b 64K -d 0.3 -W0 \
	--workloads randread --dir "$T/tmp" --out "$T/out/" >"$T/sweep.txt" 2>"$T/sweep.err" ||
	fail "sweep: $(cat "$T/sweep.err")"
grep -qF "wrote $T/out/sweep.csv and $T/out/sweep.json" "$T/sweep.txt" || fail "sweep said: $(cat "$T/sweep.txt")"
! grep -q "//" "$T/sweep.txt" "$T/sweep.err" || fail "a doubled slash: $(grep "//" "$T/sweep.txt" "$T/sweep.err")"
[[ -s $T/out/sweep.csv && -s $T/out/sweep.json ]] || fail "no sweep.csv / sweep.json in $T/out"

"$FSVOL" create -l raid0 -c 64K -s 16M "$T/a" "$T/b" >/dev/null || fail "create"
fsvol_mount "$T/mnt" "$T/a" "$T/b"
"$BENCH" -b4K -r -o4 -d0.3 -W0 -L "$T/mnt/volume" >"$T/fuse.txt" 2>&1 || fail "bench on MNT/volume: $(cat "$T/fuse.txt")"
grep -q "^below the mapping layer" "$T/fuse.txt" || fail "no table below the mapping layer: $(cat "$T/fuse.txt")"
grep -q "The gap between the two is the FUSE path" "$T/fuse.txt" || fail "no word on the FUSE path: $(cat "$T/fuse.txt")"
fsvol_umount "$T/mnt"
"$BENCH" -b4K -r -o4 -d0.3 -W0 -L --members "$T/a,$T/b" vol >"$T/inproc.txt" 2>&1 ||
	fail "bench in-process: $(cat "$T/inproc.txt")"
grep -q "^below the mapping layer" "$T/inproc.txt" || fail "in-process: no table below: $(cat "$T/inproc.txt")"
! grep -q "FUSE path" "$T/inproc.txt" || fail "the FUSE note on an in-process run"
note "bench report ok"
