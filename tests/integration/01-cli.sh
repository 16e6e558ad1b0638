#!/usr/bin/env bash
# 01-cli: --help/--version, the layout grid, `fsvol map --json` against
# hand-computed md placements, map from members == map from geometry,
# create + examine.
. "$(dirname "$0")/../lib.sh"
requires jq

# --- help and version ---------------------------------------------------------
"$FSVOL" --help >"$T/help" || fail "fsvol --help exited non-zero"
for c in create examine mount umount status map layout; do
	grep -qw "$c" "$T/help" || fail "fsvol --help does not list '$c'"
	"$FSVOL" "$c" --help >"$T/h.$c" 2>&1 || fail "fsvol $c --help exited non-zero"
	grep -q "usage: fsvol $c" "$T/h.$c" || fail "fsvol $c --help has no usage line: $(cat "$T/h.$c")"
done
grep -q -- '--layout' "$T/h.create" || fail "create --help does not mention --layout"
grep -q -- '--json' "$T/h.map" || fail "map --help does not mention --json"
"$FSVOL" --version >"$T/ver" || fail "fsvol --version exited non-zero"
grep -Eq '^fsvol [0-9]+\.[0-9]+' "$T/ver" || fail "unexpected --version: $(cat "$T/ver")"
expect_fail_msg "frobnicate" "$FSVOL" frobnicate

# --- layout grid --------------------------------------------------------------
# row STRIPE of a grid: the cells after the stripe number and offset columns.
row() { awk -v s="$2" '$1 == s && NF > 2 { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit }' "$1"; }
expect_row() { # FILE STRIPE "CELLS"
	local got
	got=$(row "$1" "$2")
	[[ $got == "$3" ]] || fail "$1 stripe $2: got '$got', expected '$3'"
}
"$FSVOL" layout -l raid5 -n 4 -c 64K >"$T/r5" || fail "layout raid5 failed"
grep -q left-symmetric "$T/r5" || fail "raid5 grid does not name left-symmetric"
expect_row "$T/r5" 0 "D0 D1 D2 P"
expect_row "$T/r5" 1 "D4 D5 P D3"
expect_row "$T/r5" 2 "D8 P D6 D7"
expect_row "$T/r5" 3 "P D9 D10 D11"
"$FSVOL" layout -l raid5 -n 4 -c 64K --layout left-asymmetric >"$T/r5la" || fail "layout la"
expect_row "$T/r5la" 1 "D3 D4 P D5"
# md raid6 left-symmetric: P rotates backwards from the last member, Q follows P,
# data starts after Q.
"$FSVOL" layout -l raid6 -n 5 -c 64K >"$T/r6" || fail "layout raid6 failed"
expect_row "$T/r6" 0 "Q D0 D1 D2 P"
expect_row "$T/r6" 1 "D3 D4 D5 P Q"
expect_row "$T/r6" 2 "D7 D8 P Q D6"
expect_row "$T/r6" 3 "D11 P Q D9 D10"
expect_row "$T/r6" 4 "P Q D12 D13 D14"
"$FSVOL" layout -l raid4 -n 3 -c 64K --rows 3 >"$T/r4" || fail "layout raid4"
expect_row "$T/r4" 2 "D4 D5 P"
"$FSVOL" layout -l raid0 -n 3 -c 64K --rows 2 >"$T/r0" || fail "layout raid0"
expect_row "$T/r0" 1 "D3 D4 D5"

# --- map --json ---------------------------------------------------------------
# mapj ARGS... -> the JSON on stdout, checked to be valid JSON
mapj() {
	"$FSVOL" map --json "$@" >"$T/map.json" || fail "fsvol map --json $* failed"
	jq -e . "$T/map.json" >/dev/null || fail "fsvol map --json $* is not JSON: $(cat "$T/map.json")"
	cat "$T/map.json"
}
# expect_jq JSON FILTER EXPECTED
expect_jq() {
	local got
	got=$(jq -c "$2" <<<"$1")
	[[ $got == "$3" ]] || fail "map: $2 = $got, expected $3 (json: $1)"
}
K=1024
# raid0 n=4 c=64K: chunk 16 -> member 16 mod 4 = 0, offset (16 div 4) * 64K = 256K
j=$(mapj -l raid0 -n 4 -c 64K 1M)
expect_jq "$j" '[.extents[] | [.logical, .member, .offset, .length, .copy]]' "[[1048576,0,$((256 * K)),1,0]]"
expect_jq "$j" '.parity' '[]'
# a range over four chunks: one extent per member, the last one short
j=$(mapj -l raid0 -n 4 -c 64K 1M 200K)
expect_jq "$j" '[.extents[] | [.member, .offset, .length]]' \
	"[[0,$((256 * K)),$((64 * K))],[1,$((256 * K)),$((64 * K))],[2,$((256 * K)),$((64 * K))],[3,$((256 * K)),$((8 * K))]]"
# raid5 n=4 left-symmetric: chunk 16 = stripe 5, data index 1; P on 3 - 5 mod 4 = 2;
# data member (2 + 1 + 1) mod 4 = 0; member offset 5 * 64K = 320K
j=$(mapj -l raid5 -n 4 -c 64K 1M 8K)
expect_jq "$j" '[.extents[] | [.logical, .member, .offset, .length, .copy]]' "[[1048576,0,$((320 * K)),$((8 * K)),0]]"
expect_jq "$j" '[.parity[] | [.kind, .member, .offset, .length]]' "[[\"P\",2,$((320 * K)),$((8 * K))]]"
# raid6 n=5: stripe 5 (3 data), P on 4 - 0 = 4, Q on 0, data index 1 on (4 + 2 + 1) mod 5 = 2
j=$(mapj -l raid6 -n 5 -c 64K 1M 8K)
expect_jq "$j" '[.extents[] | [.member, .offset, .length]]' "[[2,$((320 * K)),$((8 * K))]]"
expect_jq "$j" '[.parity[] | [.kind, .member, .offset]] | sort' "[[\"P\",4,$((320 * K))],[\"Q\",0,$((320 * K))]]"
# raid1 n=3: one extent per copy, same offset on every member, no parity
j=$(mapj -l raid1 -n 3 -c 64K 1M 8K)
expect_jq "$j" '[.extents[] | [.member, .offset, .length, .copy]] | sort' \
	"[[0,1048576,8192,0],[1,1048576,8192,1],[2,1048576,8192,2]]"
expect_jq "$j" '.parity' '[]'
# raid10 n2 on 3 members: chunk 16's copies are chunk slots 32 and 33:
# slot 32 -> member 2, row 10 (640K); slot 33 -> member 0, row 11 (704K)
j=$(mapj -l raid10 -n 3 -c 64K 1M 8K)
expect_jq "$j" '[.extents[] | [.member, .offset, .length, .copy]]' \
	"[[2,$((640 * K)),8192,0],[0,$((704 * K)),8192,1]]"
# raid10 f2 on 4 members of 64M: copy 0 raid0-style, copy 1 one member on, in the far half
j=$(mapj -l raid10 -n 4 -c 64K -s 64M --layout f2 1M 8K)
expect_jq "$j" '[.extents[] | [.member, .offset, .copy]]' \
	"[[0,$((256 * K)),0],[1,$((32 * MiB + 256 * K)),1]]"
# linear: members concatenated, second member starts at 16M
j=$(mapj -l linear -n 2 -s 16M $((16 * MiB + 4096)) 100)
expect_jq "$j" '[.extents[] | [.member, .offset, .length]]' "[[1,4096,100]]"

# --- create, examine, map from members ----------------------------------------
M="$T/m0 $T/m1 $T/m2 $T/m3"
# shellcheck disable=SC2086
"$FSVOL" create -l raid5 -c 64K -s 8M $M >"$T/create.out" 2>&1 || fail "create: $(cat "$T/create.out")"
for f in $M; do
	[[ $(size_of "$f") -eq $((9 * MiB)) ]] || fail "$f is $(size_of "$f") bytes, expected 1M superblock area + 8M"
done
"$FSVOL" examine "$T/m2" >"$T/ex" || fail "examine failed"
grep -Eq 'Raid Level *: *raid5' "$T/ex" || fail "examine lacks 'Raid Level : raid5': $(cat "$T/ex")"
grep -Eq 'Chunk Size *: *64K' "$T/ex" || fail "examine lacks chunk 64K"
grep -Eq 'Raid Devices *: *4' "$T/ex" || fail "examine lacks 4 raid devices"
grep -Eq 'Device Index *: *2' "$T/ex" || fail "examine of m2 lacks index 2"
grep -Eq 'Checksum *: *0x[0-9a-f]{8} \(correct\)' "$T/ex" || fail "examine lacks a correct checksum"
grep -Eq 'Layout *: *left-symmetric' "$T/ex" || fail "examine lacks the layout"
# shellcheck disable=SC2086
"$FSVOL" examine $M >"$T/ex4" || fail "examine of four members failed"
[[ $(grep -c '(correct)' "$T/ex4") -eq 4 ]] || fail "examine of four members: not four correct checksums"
[[ $(grep -Ec 'Volume UUID' "$T/ex4") -eq 4 ]] || fail "examine of four members: not four superblocks"
[[ $(grep -E 'Volume UUID' "$T/ex4" | sort -u | wc -l) -eq 1 ]] || fail "members carry different volume UUIDs"

for range in "0 1" "1M 8K" "3M 300K" "$((24 * MiB - 4096)) 4096"; do
	# shellcheck disable=SC2086
	a=$("$FSVOL" map --json $M $range) || fail "map from members $range failed"
	# shellcheck disable=SC2086
	b=$("$FSVOL" map --json -l raid5 -n 4 -c 64K -s 8M $range) || fail "map -l $range failed"
	[[ "$(jq -cS . <<<"$a")" == "$(jq -cS . <<<"$b")" ]] || fail "map $range: members give $a, geometry gives $b"
done
# shellcheck disable=SC2086
expect_fail_msg "" "$FSVOL" map --json $M $((24 * MiB)) 1

# examine of a file that is not a member names it
head -c $MiB /dev/zero >"$T/zero"
expect_fail_msg "$T/zero" "$FSVOL" examine "$T/zero"
# the man page's FILES name every file of the mount (issue 21: metrics and
# status.json were left out), each as the mount lists it
mkdir -p "$T/fm"
"$FSVOL" create -l raid1 -s 8M "$T/f0" "$T/f1" >/dev/null || fail "create for the FILES check"
fsvol_mount "$T/fm" "$T/f0" "$T/f1"
"$FSVOL" --man | sed -n '/^\.SH FILES/,/^\.SH [A-Z ]*$/p' | sed -n '2,$p' >"$T/files"
for f in $(ls "$T/fm"); do
	grep -q "MNT/$f\b" "$T/files" || fail "fsvol(8) FILES lacks MNT/$f"
done
fsvol_umount "$T/fm"
note "cli ok"
