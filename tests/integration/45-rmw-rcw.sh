#!/usr/bin/env bash
# md's raid4/5/6 write choice (issue 31 item 5; drivers/md/raid5.c,
# handle_stripe_dirtying; docs/engine.md, "raid4/5/6 writes"): for every
# 4 KiB row of a stripe, read-modify-write reads the old data it overwrites
# and the parity, reconstruct-write the data it does not overwrite; the fewer
# blocks wins, a tie goes as rmw_level says (0: always reconstruct, 1: ties
# reconstruct, md's default, 2: ties read-modify-write).
# For single cold requests on raid4 x4, raid5 x3..x6 and raid6 x4..x7 at every
# rmw_level, each member's read and write counts (MNT/stats.json, the data
# path alone: --bitmap none, safe mode off) equal what md's rule gives, as an
# independent model here computes it from the layout grid (`fsvol layout`):
# requests run together on a member when md's would (contiguous pages of one
# kind). Measured with Linux md 6.1: raid5 x4 4 KiB -> the two other data
# chunks read; raid5 x5 -> old data + parity. Then the parity checks out.
. "$(dirname "$0")/../lib.sh"
requires jq

CH=64 # KiB
# check LEVEL N GRID DIR: each DIR/LVL-OFF-LEN.json (MNT/stats.json after one
# request of LEN bytes at OFF, rmw_level LVL) against md's rule, computed from
# the layout grid GRID (`fsvol layout`); prints the count checked, or the
# first difference and fails
check() {
	/usr/bin/python3 - "$@" "$CH" <<'PY'
import glob, json, os, sys
level, n, grid_file, d, chunk = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]) * 1024
page, np_ = 4096, 2 if level == "raid6" else 1
dd = n - np_
grid = {}
for line in open(grid_file):
    w = line.split()
    if len(w) == n + 2 and w[0].isdigit():
        grid[int(w[0])] = w[2:]

def md_counts(rmw_level, off, length):
    """per member [reads, writes]: md's choice per 4 KiB row of a stripe, and
    its I/O run together where pages of one kind are contiguous on a member"""
    rows = {}
    for p in range(off // page, (off + length) // page):
        k = p * page // chunk
        rows.setdefault((k // dd, (p * page % chunk) // page), set()).add(k % dd)
    io = {}
    def add(m, op, kind, pg):
        io.setdefault((m, op, kind), []).append(pg)
    for (s, row), W in rows.items():
        rmw, rcw = len(W) + np_, dd - len(W)  # blocks each reads
        if rmw_level == 0 or rcw < rmw or (rcw == rmw and rmw_level != 2):
            mode = "rcw" if rcw else "full"
        else:
            mode = "rmw"
        pg = s * chunk // page + row
        for j in range(dd):
            m = grid[s].index("D%d" % (s * dd + j))
            if j in W:
                add(m, "w", "data", pg)
                if mode == "rmw":
                    add(m, "r", "old", pg)
            elif mode == "rcw":
                add(m, "r", "data", pg)
        for x in ["P", "Q"][:np_]:
            add(grid[s].index(x), "w", "par", pg)
            if mode == "rmw":
                add(grid[s].index(x), "r", "par", pg)
    out = [[0, 0] for _ in range(n)]
    for (m, op, kind), pgs in io.items():
        pgs.sort()
        out[m][op == "w"] += sum(1 for i, x in enumerate(pgs) if i == 0 or pgs[i - 1] != x - 1)
    return out

checked = 0
for f in sorted(glob.glob(os.path.join(d, "*-*-*.json"))):
    lvl, off, length = (int(x) for x in os.path.basename(f)[:-5].split("-"))
    st = json.load(open(f))
    got = [[m["reads"], m["writes"]] for m in sorted(st["members"], key=lambda m: m["index"])]
    want = md_counts(lvl, off, length)
    if st["volume"]["writes"] != 1 or got != want:
        print("%s x%d rmw_level %d, %d bytes at %d: members [reads, writes] %s, md's rule %s (volume writes %d)"
              % (level, n, lvl, length, off, got, want, st["volume"]["writes"]))
        sys.exit(1)
    checked += 1
print(checked)
PY
}

# got MNT: "reads writes" per member from MNT/stats.json
got() { jq -r '.members | sort_by(.index) | .[] | "\(.reads) \(.writes)"' "$1/stats.json"; }

# requests: OFF:LEN in KiB (whole 4 KiB pages), cold: each on a stripe pair of its own
REQS=("0:4" "72:4" "132:16" "$((4 * CH - 4)):8" "$((2 * CH)):$CH" "stripe" "halfstripe")
checked=0
run_geom() { # LEVEL N
	local level=$1 n=$2 d=$T/$1-$2 i lvl req o l s=0 sbytes mem=() out
	local dd=$((n - 1))
	[[ $level == raid6 ]] && dd=$((n - 2))
	sbytes=$((dd * CH))
	mkdir -p "$d/runs"
	for ((i = 0; i < n; i++)); do mem+=("$d/m$i"); done
	"$FSVOL" create -l "$level" -c ${CH}K -s 16M --bitmap none "${mem[@]}" >/dev/null
	"$FSVOL" layout -l "$level" -n "$n" -c ${CH}K --rows 128 >"$d/grid"
	fsvol_mount "$d/mnt" "${mem[@]}"
	safe_mode_off "$d/mnt"
	for lvl in 0 1 2; do
		echo "rmw_level $lvl" >"$d/mnt/ctl"
		[[ $(jq .rmw_level "$d/mnt/status.json") == "$lvl" ]] || fail "$level x$n: rmw_level $lvl not taken"
		for req in "${REQS[@]}"; do
			s=$((s + 2)) # a stripe pair of its own: cold, and a request may end in the next stripe
			case $req in
			stripe) o=0 l=$sbytes ;;                                        # a full stripe
			halfstripe) o=$(((dd / 2) * CH - 4)) l=$(((dd / 2) * CH + 8)) ;; # partial, across chunks
			*) o=${req%%:*} l=${req##*:} ;;
			esac
			o=$(((s * sbytes + o) * 1024)) l=$((l * 1024))
			head -c "$l" /dev/urandom >"$T/blk"
			echo reset >"$d/mnt/ctl"
			dd if="$T/blk" of="$d/mnt/volume" bs="$l" count=1 seek="$o" oflag=direct,seek_bytes conv=notrunc status=none
			cp "$d/mnt/stats.json" "$d/runs/$lvl-$o-$l.json"
		done
	done
	fsvol_umount "$d/mnt"
	out=$(check "$level" "$n" "$d/grid" "$d/runs") || fail "$out"
	checked=$((checked + out))
	"$FSVOL_VERIFY" "${mem[@]}" >/dev/null || fail "$level x$n: parity does not match the data"
}

# the two measured on Linux md 6.1, spelt out
"$FSVOL" create -l raid5 -c ${CH}K -s 16M --bitmap none "$T"/a{0,1,2,3} >/dev/null
fsvol_mount "$T/a" "$T"/a{0,1,2,3}
safe_mode_off "$T/a"
echo reset >"$T/a/ctl"
dd if=/dev/urandom of="$T/a/volume" bs=4K count=1 seek=64 oflag=direct conv=notrunc status=none
jq_true '([.members[] | select(.reads == 1 and .writes == 0)] | length) == 2 and
	([.members[] | select(.reads == 0 and .writes == 1)] | length) == 2' "$T/a/stats.json" ||
	fail "raid5 x4 4K write: $(got "$T/a" | tr '\n' ' ') (md: the two other data chunks read, data + parity written)"
fsvol_umount "$T/a"
"$FSVOL" create -l raid5 -c ${CH}K -s 16M --bitmap none "$T"/b{0,1,2,3,4} >/dev/null
fsvol_mount "$T/b" "$T"/b{0,1,2,3,4}
safe_mode_off "$T/b"
echo reset >"$T/b/ctl"
dd if=/dev/urandom of="$T/b/volume" bs=4K count=1 seek=64 oflag=direct conv=notrunc status=none
[[ $(jq '[.members[].reads] | add' "$T/b/stats.json") == 2 ]] || fail "raid5 x5 4K write: $(got "$T/b" | tr '\n' ' ') (md: old data + parity)"
[[ $(jq '[.members[] | select(.reads == 1 and .writes == 1)] | length' "$T/b/stats.json") == 2 ]] ||
	fail "raid5 x5 4K write: $(got "$T/b" | tr '\n' ' ') (md: old data + parity read, both written)"
fsvol_umount "$T/b"

for g in "raid4 4" "raid5 3" "raid5 4" "raid5 5" "raid5 6" "raid6 4" "raid6 5" "raid6 6" "raid6 7"; do
	run_geom $g
done
note "$checked single requests on 9 geometries x 3 rmw_levels: every member's reads and writes as md's rule gives"
echo "PASS"
