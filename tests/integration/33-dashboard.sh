#!/usr/bin/env bash
# fsvol mount --http: /metrics, /stats.json, /status.json and /layout.json
# agree with the mount's files and the layout; the dashboard page, loaded twice
# by headless Chromium against a raid5 volume of 5 members under fio load,
# lists every member and shows numbers that move; a failed member shows up.
# The screenshot is kept in ${FSVOL_ARTIFACTS:-/var/tmp}/fsvol-dashboard.png.
. "$(dirname "$0")/../lib.sh"
requires jq
requires curl
requires fio
command -v chromium >/dev/null 2>&1 || { echo "SKIP: chromium not installed (scripts/deps.sh installs it)"; exit 77; }
/usr/bin/python3 -c 'import prometheus_client.parser' 2>/dev/null ||
	{ echo "SKIP: python3-prometheus-client not installed (scripts/deps.sh installs it)"; exit 77; }

# chrome URL: headless Chromium (--no-sandbox: tests run as root), its own
# profile under $T; prints the DOM (--dump-dom) or writes a screenshot. Virtual
# time lets the page poll without waiting (it stands still while a fetch is
# under way): 8 virtual seconds, about 9 polls, and the page's rate spans
# them all (no poll is 0.9 s older by the daemon's clock), so I/O under way
# shows even when a loaded machine serves the polls within a few ms.
chrome() {
	local url=$1
	shift
	timeout -k 5 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$T/chrome.XXXXXX")" --virtual-time-budget=8000 "$@" "$url" 2>>"$T/chrome.err"
}
# Chromium itself must work (a page of its own, no fsvol in it); else skip.
chrome 'data:text/html,<p id=x>ok</p>' --dump-dom | grep -q '<p id="x">ok</p>' ||
	{ echo "SKIP: headless chromium does not run here: $(tail -n 3 "$T/chrome.err")"; exit 77; }

# --- bad addresses refused with the culprit named (usage errors: exit 2)
"$FSVOL" create -l raid5 -c 64K -s 32M --spares 1 "$T"/m{0,1,2,3,4,5} >/dev/null
mkdir -p "$T/mnt"
expect_fail_msg "--http 0: port 0" "$FSVOL" mount --http 0 "$T/mnt" "$T"/m{0,1,2,3,4,5}
expect_fail_msg "address '10.0.0' is not a numeric" "$FSVOL" mount --http 10.0.0:8080 "$T/mnt" "$T"/m{0,1,2,3,4,5}
expect_fail_msg "port 'x' is not a number" "$FSVOL" mount --http 127.0.0.1:x "$T/mnt" "$T"/m{0,1,2,3,4,5}
expect_fail_msg "--nbd nowhere:x: expected unix:PATH" "$FSVOL" mount --http 8080 --nbd nowhere:x "$T/mnt" "$T"/m{0,1,2,3,4,5}
rc=0; "$FSVOL" mount --http 99999 "$T/mnt" "$T"/m0 2>/dev/null || rc=$?
[[ $rc == 2 ]] || fail "a bad --http exits $rc, not 2 (usage)"

# --- mount on a free loopback port (a taken one is refused, named: try another)
for try in 1 2 3 4 5; do
	port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	if "$FSVOL" mount --log "$DAEMON_LOG" --http "$port" "$T/mnt" "$T"/m{0,1,2,3,4,5} 2>"$T/mount.err"; then
		break
	fi
	grep -q "Address already in use" "$T/mount.err" || fail "mount --http $port: $(cat "$T/mount.err")"
	[[ $try == 5 ]] && fail "no free port in 5 tries"
done
pid=$(daemon_pid "$T/mnt")
_push_cleanup fsvol "$T/mnt" "$pid"
url=http://127.0.0.1:$port
# loopback only: the one listening socket on the port is 127.0.0.1's (state 0A: LISTEN)
listen=$(awk -v p=":$(printf %04X "$port")" '$4 == "0A" && substr($2, length($2) - 4) == p { print $2 }' /proc/net/tcp /proc/net/tcp6)
[[ $listen == "0100007F:$(printf %04X "$port")" ]] || fail "the daemon listens on '$listen', not 127.0.0.1:$port only"
mkdir -p "$T/other"
"$FSVOL" create -l raid1 -s 16M "$T"/b{0,1} >/dev/null
expect_fail_msg "--http $port: cannot listen: Address already in use" \
	"$FSVOL" mount --http "$port" "$T/other" "$T"/b{0,1}
_is_mounted "$T/other" && fail "a refused --http left $T/other mounted"

# --- load: random read/write until the test stops it (the runtime is a bound
# only: a loaded machine may take minutes over the pages)
fio --name=dash --filename="$T/mnt/volume" --direct=1 --rw=randrw --bs=4k --ioengine=libaio --iodepth=8 \
	--time_based --runtime=600 --size=64M >"$T/fio.out" 2>&1 &
fio_pid=$!
track_pid $fio_pid
vol_ios() { jq '.volume.reads + .volume.writes' "$T/mnt/stats.json"; }
load_counted() { # the mount's counters show reads and writes, fio running
	_alive "$fio_pid" || fail "fio ended: $(tail -n 5 "$T/fio.out")"
	jq -e '.volume.reads > 0 and .volume.writes > 0' "$T/mnt/stats.json" >/dev/null
}
wait_for 120 "fio's reads and writes not counted" load_counted

# --- the endpoints
curl -sf -D "$T/metrics.h" -o "$T/metrics" "$url/metrics" || fail "GET /metrics failed"
grep -qi '^content-type: text/plain; version=0.0.4' "$T/metrics.h" || fail "/metrics content type: $(cat "$T/metrics.h")"
curl -sf -o "$T/stats.json" "$url/stats.json" || fail "GET /stats.json failed"
curl -sf -o "$T/status.json" "$url/status.json" || fail "GET /status.json failed"
curl -sf -o "$T/layout.json" "$url/layout.json" || fail "GET /layout.json failed"
name=$(awk 'NR == 1 { print $1 }' "$T/mnt/status")
/usr/bin/python3 - "$T" "$name" >"$T/check.out" 2>&1 <<'EOF' || fail "endpoints:"$'\n'"$(cat "$T/check.out")"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
t, name = sys.argv[1], sys.argv[2]
fams = {f.name: f for f in text_string_to_metric_families(open(t + "/metrics").read())}
stats, status, layout = (json.load(open(f"{t}/{n}.json")) for n in ("stats", "status", "layout"))
bad = []
reads = [s for s in fams["fsvol_disk_reads_completed"].samples if s.labels.get("layer") == "volume"]
if not reads or reads[0].labels["volume"] != name or reads[0].value <= 0:
    bad.append(f"/metrics volume reads: {reads}")
if stats["volume"]["name"] != name or len(stats["members"]) != 6:
    bad.append(f"/stats.json: volume {stats['volume']['name']}, {len(stats['members'])} members")
if stats["volume"]["reads"] + stats["volume"]["writes"] == 0:
    bad.append("/stats.json: no I/O counted under load")
if status["name"] != name or status["level"] != "raid5" or status["state"] != "healthy" or status["raid_members"] != 5:
    bad.append(f"/status.json: {status}")
if [s["state"] for s in status["members"]] != ["active"] * 5 + ["spare"]:
    bad.append(f"/status.json member states: {status['members']}")
if [s["path"] for s in status["members"]] != [m["path"] for m in stats["members"]]:
    bad.append("/status.json and /stats.json name different member paths")
if status["sync"] is not None or any(m["rebuild_pos"] is not None for m in status["members"]):
    bad.append(f"/status.json: a sync or rebuild on a clean volume: {status}")
if (layout["members"], layout["chunk"], layout["data_members"], layout["parity"]) != (5, 65536, 4, 1):
    bad.append(f"/layout.json geometry: {layout}")
open(t + "/layout.cells", "w").write("".join(
    " ".join("D%d" % c if r == "D" else r for r, c, _ in row) + "\n" for row in layout["rows"][:5]))
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
# the grid is the one `fsvol layout` draws (both come from layout_unmap)
"$FSVOL" layout -l raid5 -n 5 -c 64K --rows 5 | awk '$1 ~ /^[0-9]+$/ { $1 = $2 = ""; print substr($0, 3) }' >"$T/layout.want"
diff "$T/layout.want" "$T/layout.cells" >/dev/null || fail "/layout.json differs from fsvol layout:"$'\n'"$(diff "$T/layout.want" "$T/layout.cells")"
[[ $(curl -s -o /dev/null -w '%{http_code}' "$url/nope") == 404 ]] || fail "/nope is not a 404"
[[ $(curl -s -o /dev/null -w '%{http_code}' -X POST "$url/stats.json") == 405 ]] || fail "POST is not refused with 405"
# DNS rebinding: a page whose own name now points here sends its own Host
[[ $(curl -s -o /dev/null -w '%{http_code}' -H "Host: rebind.example:${url##*:}" "$url/metrics") == 421 ]] ||
	fail "a Host that is not this server's is not refused with 421"
[[ $(curl -s -o /dev/null -w '%{http_code}' -H "Host: localhost:${url##*:}" "$url/metrics") == 200 ]] ||
	fail "Host: localhost is refused"

# --- the page, twice, a couple of seconds apart
# dom_facts FILE: the numbers the test reads: polls, I/Os, IOPS, then "slot state path"
# per member (the whole path is the title of the shortened one shown)
dom_facts() {
	/usr/bin/python3 - "$1" <<'EOF'
import re, sys
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(self):
        super().__init__(); self.ids = {}; self.members = []; self.cur = None; self.text = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"): self.cur = a["id"]; self.text = ""
        if "member" in (a.get("class") or "").split() and "data-slot" in a:
            self.members.append([a["data-slot"], a.get("data-state"), ""])
        if "m-path" in (a.get("class") or "").split(): self.members[-1][2] = a.get("title", "")
    def handle_data(self, d):
        if self.cur is not None: self.text += d
    def handle_endtag(self, tag):
        if self.cur is not None: self.ids[self.cur] = self.text
        self.cur = None
p = P(); p.feed(open(sys.argv[1]).read())
num = lambda k: re.sub(r"[^0-9.]", "", p.ids.get(k, "")) or "-"
print(num("polls"), num("vol-ios"), num("vol-iops"))
for m in p.members: print(*m)
EOF
}
chrome "$url/" --dump-dom >"$T/dom1.html" || fail "chromium could not load $url/: $(tail -n 5 "$T/chrome.err")"
dom_facts "$T/dom1.html" >"$T/facts1"
read -r polls1 ios1 iops1 <"$T/facts1"
[[ $ios1 =~ ^[0-9]+$ ]] || fail "the page shows no I/O count: $(cat "$T/facts1")"
io_beyond() { _alive "$fio_pid" || fail "fio ended: $(tail -n 5 "$T/fio.out")"; (($(vol_ios) > $1)); }
wait_for 120 "the volume's I/O count did not pass the page's $ios1" io_beyond "$ios1"
chrome "$url/" --dump-dom >"$T/dom2.html" || fail "chromium could not load $url/ again"
dom_facts "$T/dom2.html" >"$T/facts2"
read -r polls2 ios2 iops2 <"$T/facts2"
note "page: polls $polls1/$polls2, I/Os $ios1 -> $ios2, IOPS $iops1 / $iops2"
[[ $polls1 -ge 2 && $polls2 -ge 2 ]] || fail "the page polled fewer than twice: $(cat "$T/facts1")"
[[ $ios1 != - && $ios2 != - && $ios2 -gt $ios1 ]] || fail "the page's I/O count did not move under load: $ios1 -> $ios2"
awk -v a="$iops1" -v b="$iops2" 'BEGIN { exit !(a > 0 && b > 0) }' || fail "the page shows no IOPS under load: $iops1, $iops2"
for i in 0 1 2 3 4; do
	grep -qx "$i active $T/m$i" "$T/facts2" || fail "member $i not listed active with its path:"$'\n'"$(cat "$T/facts2")"
done
grep -qx "5 spare $T/m5" "$T/facts2" || fail "the spare is not listed:"$'\n'"$(cat "$T/facts2")"
for id in hist-above hist-below heatmap; do
	grep -q "id=\"$id\"" "$T/dom2.html" || fail "the page has no #$id"
done
[[ $(grep -o 'class="cell"' "$T/dom2.html" | wc -l) -ge 40 ]] || fail "the heat map has fewer than 8 rows of 5 cells"

# --- a failed member: its state reaches the page (the spare takes over)
echo "fail 2" >"$T/mnt/ctl"
chrome "$url/" --dump-dom >"$T/dom3.html" || fail "chromium could not load $url/ after a fail"
dom_facts "$T/dom3.html" >"$T/facts3"
# md's way: the spare takes the failed member's role; each keeps its Number (m2 failed, m5 in role 2)
grep -qx "2 failed $T/m2" "$T/facts3" || fail "failed m2 not shown failed:"$'\n'"$(cat "$T/facts3")"
grep -Eqx "5 (rebuilding|active) $T/m5" "$T/facts3" || fail "the spare is not rebuilding nor active:"$'\n'"$(cat "$T/facts3")"
if grep -qx "5 rebuilding $T/m5" "$T/facts3"; then
	grep -Eq 'recovery running, rebuilding m5: [0-9.]+%' "$T/dom3.html" ||
		fail "a rebuild without its progress on the page: $(grep -o '<div id="sync".\{0,200\}' "$T/dom3.html")"
fi

# --- the screenshot, kept as an artifact
chrome "$url/" --window-size=1280,800 --screenshot="$T/dashboard.png" >/dev/null ||
	fail "chromium could not take a screenshot"
/usr/bin/python3 - "$T/dashboard.png" <<'EOF' || fail "the screenshot is not a 1280x800 PNG"
import struct, sys
b = open(sys.argv[1], "rb").read(24)
sys.exit(0 if b[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", b[16:24]) == (1280, 800) else 1)
EOF
art=${FSVOL_ARTIFACTS:-/var/tmp}
# renamed into place: a run beside this one replaces it whole, never half
mkdir -p "$art" && cp "$T/dashboard.png" "$art/.fsvol-dashboard.png.$$" &&
	mv -f "$art/.fsvol-dashboard.png.$$" "$art/fsvol-dashboard.png"
note "screenshot: $art/fsvol-dashboard.png"

kill "$fio_pid" 2>/dev/null
wait "$fio_pid" 2>/dev/null || true
_drop_cleanup pid "$fio_pid"
fsvol_umount "$T/mnt"
# (the port is free now: a run beside this one may take it, so only an answer
# naming this volume counts)
if curl -s -m 5 -o "$T/after.json" "$url/status.json" && jq -e --arg n "$name" '.name == $n' "$T/after.json" >/dev/null 2>&1; then
	fail "the daemon still answers HTTP after umount"
fi
echo "PASS: 33-dashboard"
