#!/usr/bin/env bash
# The dashboard's history, one page kept open in headless Chromium (DevTools
# over a pipe, tests/tools/cdp.py) while the load changes: the line charts
# (volume read/write IOPS and MB/s, each member's IOPS and %util) have y axes,
# read 0 while idle, rise under load (what they drew changes: series hash and
# canvas pixels), fall back when it stops and keep the peak in their history.
# The per-chunk heat map (?heat=chunk, from the trace) lights exactly the chunks
# the load touches. During a replace the page shows which member is replaced by
# which, with the ETA. The page fills the window. A screenshot under load is
# kept in ${FSVOL_ARTIFACTS:-/var/tmp}/fsvol-dashboard-history.png.
. "$(dirname "$0")/../lib.sh"
requires jq
requires fio
command -v chromium >/dev/null 2>&1 || { echo "SKIP: chromium not installed (scripts/deps.sh installs it)"; exit 77; }
CDP=$(cd "$(dirname "$0")/../tools" && pwd)/cdp.py
export T

"$FSVOL" create -l raid5 -c 64K -s 32M --name dash "$T"/m{0,1,2,3} >/dev/null
truncate -s 33M "$T/new"
fsvol_mount_http "$T/mnt" "$T"/m{0,1,2,3}
M=$T/mnt

# the DevTools driver as a coprocess: one command a line, one answer a line
coproc CHROME { exec /usr/bin/python3 "$CDP" 2>>"$T/cdp.err"; }
cpid=$CHROME_PID # bash unsets CHROME_PID when the coprocess ends
track_pid "$cpid"
cdp() { # CMD...: its answer in $ANS; an "error:" answer fails the test
	echo "$*" >&"${CHROME[1]}"
	IFS= read -r -t 120 ANS <&"${CHROME[0]}" || fail "cdp: no answer to '$*': $(tail -n 3 "$T/cdp.err")"
	[[ $ANS != error:* ]] || fail "cdp: $* -> $ANS"
}
ds='Object.fromEntries(["vol-iops","vol-mbs","mem-iops","mem-util"].map(k => [k, Object.assign({}, document.getElementById("ch-" + k).dataset)]))'
polls='+document.getElementById("polls").textContent'
last0='+document.getElementById("ch-vol-iops").dataset.last.split(",")'

cdp open "http://127.0.0.1:$HTTP_PORT/?heat=chunk" 1600 1000
cdp wait 30 "$polls >= 3"
cdp eval "$ds"
idle=$ANS
cdp eval "$polls"
p_idle=$ANS

# --- load on the first MiB of the volume only: 16 data chunks, stripe rows 0-5
fio --name=hot --filename="$M/volume" --direct=1 --rw=randrw --bs=4k --ioengine=libaio --iodepth=8 \
	--size=1M --time_based --runtime=120 >"$T/fio.out" 2>&1 &
fio_pid=$!
track_pid "$fio_pid"
cdp wait 60 "$polls >= $p_idle + 6 && ${last0}[0] > 0 && ${last0}[1] > 0"
cdp eval "$ds"
busy=$ANS
cdp eval '[...document.querySelectorAll("#heatmap td.cell")].map(c => [+c.dataset.row, +c.dataset.member, +c.dataset.total, c.textContent])'
cells=$ANS
cdp eval '[+document.getElementById("chunkmap").dataset.hotCells, document.getElementById("heatmap").dataset.mode]'
strip=$ANS
cdp eval '[innerWidth, innerHeight, document.documentElement.scrollHeight, document.getElementById("main").getBoundingClientRect().bottom, document.getElementById("charts").getBoundingClientRect().width]'
geom=$ANS
cdp shot "$T/dashboard.png"

kill "$fio_pid"
wait "$fio_pid" 2>/dev/null || true
_drop_cleanup pid "$fio_pid"
cdp wait 60 "${last0}[0] == 0 && ${last0}[1] == 0"
cdp eval "$ds"
after=$ANS

/usr/bin/python3 - "$idle" "$busy" "$after" "$cells" "$strip" "$geom" >"$T/check.out" 2>&1 <<'PY' || fail "dashboard history:"$'\n'"$(cat "$T/check.out")"
import json, sys
idle, busy, after, cells, strip, geom = (json.loads(a) for a in sys.argv[1:7])
bad = []
last = lambda d: [float(x) for x in d["last"].split(",")]
for k in ("vol-iops", "vol-mbs"):
    if any(last(idle[k])) or float(idle[k]["max"]) <= 0:
        bad.append(f"{k} idle: {idle[k]}")
    if not all(x > 0 for x in last(busy[k])):
        bad.append(f"{k} under load, read and write not both > 0: {busy[k]}")
    if any(last(after[k])):
        bad.append(f"{k} after the load: {after[k]}")
    if float(after[k]["max"]) < max(last(busy[k])):
        bad.append(f"{k}: the axis after the load ({after[k]['max']}) is below the peak the history held")
for k in idle:
    if int(busy[k]["points"]) <= int(idle[k]["points"]) or int(after[k]["points"]) < int(busy[k]["points"]):
        bad.append(f"{k}: the history does not grow: {idle[k]['points']}, {busy[k]['points']}, {after[k]['points']}")
    for a, b, what in ((idle, busy, "load"), (busy, after, "the end of the load")):
        if a[k]["hash"] == b[k]["hash"] or a[k]["pixels"] == b[k]["pixels"]:
            bad.append(f"{k}: the chart did not move with {what}: {a[k]} -> {b[k]}")
m = last(busy["mem-iops"])
if len(m) != 8 or not all(x > 0 for x in m[0::2]):  # per member: r (solid), w (dashed)
    bad.append(f"member IOPS under load: {busy['mem-iops']}")
u = last(busy["mem-util"])
if len(u) != 4 or not all(0 < x <= 100 for x in u) or busy["mem-util"]["max"] != "100":
    bad.append(f"member %util under load: {busy['mem-util']}")
# the 1 MiB loaded is data chunks 0-15: stripe rows 0-5 (3 data chunks a row);
# rows 6 and 7 shown must be cold, every data chunk 0-15 hot (parity too)
hot_rows = {r for r, mm, t, txt in cells if t > 0}
cold = [(r, mm, txt) for r, mm, t, txt in cells if t == 0 and txt.startswith("D") and int(txt[1:].rstrip("'")) < 16]
if hot_rows != set(range(6)) or cold:
    bad.append(f"chunk heat: hot rows {sorted(hot_rows)} (want 0-5), cold loaded chunks {cold}")
if strip[1] != "chunk" or not 0 < strip[0] <= 24:
    bad.append(f"chunk strip: {strip} (want 1-24 hot cells of the 6 rows x 4 members)")
w, h, sh, bottom, cw = geom
if sh > h + 2 or bottom < h - 24 or cw < 0.5 * w:
    bad.append(f"the page does not fill its {w}x{h} window: scroll height {sh}, main ends at {bottom}, charts {cw} wide")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
note "idle $(jq -c '."vol-iops".last' <<<"$idle"), busy $(jq -c '."vol-iops".last' <<<"$busy"), after $(jq -c '."vol-iops" | [.last, .max, .points]' <<<"$after")"

# --- a replace: which member by which, and the ETA
echo "sync_speed_min 100" >"$M/ctl"
echo "sync_speed_max 400" >"$M/ctl"
"$FSVOL" replace --with "$T/new" "$M" 0 >/dev/null
cdp wait 60 'document.getElementById("sync-eta") && +document.getElementById("sync-eta").dataset.eta > 0'
cdp eval '[document.getElementById("sync-text").textContent, [...document.querySelectorAll(".m-rep")].map(e => e.closest(".member").dataset.slot + ":" + e.textContent)]'
rep=$ANS
ws=$(jq '.replace.with_slot' "$M/status.json")
jq -e --arg ws "$ws" '(.[0] | test("^replace running, replacing m0 \\(.*m0\\) by m" + $ws + " \\(.*new\\): [0-9.]+% .*, ETA [0-9]+[ms]")) and
	.[1] == ["0:→ replaced by m" + $ws, $ws + ":replacing m0"]' <<<"$rep" >/dev/null ||
	fail "the page does not say m0 is replaced by m$ws with an ETA: $rep"
echo "sync_speed_max 200000" >"$M/ctl"
cdp wait 60 'document.getElementById("sync-text") && /replace done/.test(document.getElementById("sync-text").textContent)'

art=${FSVOL_ARTIFACTS:-/var/tmp}
mkdir -p "$art" && cp "$T/dashboard.png" "$art/fsvol-dashboard-history.png"
/usr/bin/python3 - "$T/dashboard.png" <<'PY' || fail "the screenshot is not a 1600x1000 PNG"
import struct, sys
b = open(sys.argv[1], "rb").read(24)
sys.exit(0 if b[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", b[16:24]) == (1600, 1000) else 1)
PY
note "screenshot: $art/fsvol-dashboard-history.png"
exec {CHROME[1]}>&-
wait "$cpid" 2>/dev/null || true
_drop_cleanup pid "$cpid"
fsvol_umount "$M"
echo "PASS: 67-dashboard-history"
