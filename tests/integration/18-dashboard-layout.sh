#!/usr/bin/env bash
# The dashboard's layout at 2, 4, 8 and 16 members (raid1, raid5 during a
# replace, raid6 with the per-chunk heat map, raid10), under load, in headless
# Chromium at 1280x800 (a projector's) and 1600x1000: the page reports
# its own boxes (tests/tools/dashboard_layout.js) and must fit its window with
# no panel over another, nothing clipped or spilling, no chart over another or
# smaller than 300x120, every series a chart draws in a legend, every member's
# row whole. A screenshot per member count (1600x1000, scaled to 960x600) is
# kept in ${FSVOL_ARTIFACTS:-/var/tmp}/fsvol-dashboard-N.png; docs/img holds
# the same (copy them there with FSVOL_DASHBOARD_IMG=docs/img).
. "$(dirname "$0")/../lib.sh"
requires jq
requires fio
command -v chromium >/dev/null 2>&1 || { echo "SKIP: chromium not installed (scripts/deps.sh installs it)"; exit 77; }
TOOLS=$(cd "$(dirname "$0")/../tools" && pwd)
LAYOUT=$(tr '\n' ' ' <"$TOOLS/dashboard_layout.js") # cdp.py reads one command a line
export T

coproc CHROME { exec /usr/bin/python3 "$TOOLS/cdp.py" 2>>"$T/cdp.err"; }
cpid=$CHROME_PID
track_pid "$cpid"
cdp() { # CMD...: its answer in $ANS; an "error:" answer fails the test
	echo "$*" >&"${CHROME[1]}"
	IFS= read -r -t 120 ANS <&"${CHROME[0]}" || fail "cdp: no answer to '$*': $(tail -n 3 "$T/cdp.err")"
	[[ $ANS != error:* ]] || fail "cdp: ${*:0:60}... -> $ANS"
}
polls='+document.getElementById("polls").textContent'
# layout N W H: resize to WxH (the page lays itself out again at once; a page
# that does not is checked after two more polls), check
layout() {
	local n=$1 w=$2 h=$3 p
	cdp eval "$polls"
	p=$ANS
	cdp size "$w" "$h"
	cdp wait 60 "document.body.dataset.drawn == '${w}x$h' || $polls >= $p + 2"
	cdp eval "$LAYOUT"
	jq -e '.bad == []' <<<"$ANS" >/dev/null || fail "$n members at ${w}x$h:"$'\n'"$(jq -r '.bad[]' <<<"$ANS" | head -n 20)"
	[[ $(jq '.rows' <<<"$ANS") == "$rows" ]] || fail "$n members at ${w}x$h: $(jq '.rows' <<<"$ANS") member rows, not $rows"
	note "$n members at ${w}x$h ($SECONDS s): charts $(jq -c '.charts | [.[]] | unique' <<<"$ANS")"
}

art=${FSVOL_ARTIFACTS:-/var/tmp}
mkdir -p "$art"
for spec in "2 raid1" "4 raid5" "8 raid6" "16 raid10"; do
	read -r n lvl <<<"$spec"
	d=$T/v$n
	mkdir -p "$d"
	ms=()
	for ((i = 0; i < n; i++)); do ms+=("$d/m$i"); done
	"$FSVOL" create -l "$lvl" -c 64K -s 16M --name "dash$n" "${ms[@]}" >/dev/null
	fsvol_mount_http "$d/mnt" "${ms[@]}"
	size=$(($(stat -c %s "$d/mnt/volume") / MiB))
	fio --name=l --filename="$d/mnt/volume" --direct=1 --rw=randrw --bs=16k --ioengine=libaio --iodepth=8 \
		--size="${size}M" --time_based --runtime=300 >"$d/fio.out" 2>&1 &
	fio_pid=$!
	track_pid "$fio_pid"
	q= rows=$n
	if [[ $n == 4 ]]; then # a replace under way: the sync line and the replace marks on two rows
		truncate -s 17M "$d/new"
		echo "sync_speed_min 100" >"$d/mnt/ctl"
		echo "sync_speed_max 200" >"$d/mnt/ctl"
		"$FSVOL" replace --with "$d/new" "$d/mnt" 1 >/dev/null
		rows=5
	fi
	[[ $n == 8 ]] && q="?heat=chunk"
	note "$n members: mounted, load on ($SECONDS s)"
	cdp open "http://127.0.0.1:$HTTP_PORT/$q" 1280 800
	cdp wait 60 "$polls >= 4 && +document.getElementById('ch-vol-iops').dataset.points >= 3"
	if [[ $n == 4 ]]; then
		cdp wait 60 'document.querySelectorAll(".m-rep").length == 2 && !document.getElementById("sync").hidden'
	fi
	layout "$n" 1280 800
	layout "$n" 1600 1000
	cdp shot "$T/dashboard-$n.png" 0.6
	cp "$T/dashboard-$n.png" "$art/.fsvol-dashboard-$n.png.$$" && mv -f "$art/.fsvol-dashboard-$n.png.$$" "$art/fsvol-dashboard-$n.png"
	[[ -z ${FSVOL_DASHBOARD_IMG:-} ]] || cp "$T/dashboard-$n.png" "$FSVOL_DASHBOARD_IMG/dashboard-$n.png"
	kill "$fio_pid" 2>/dev/null || true
	wait "$fio_pid" 2>/dev/null || true
	_drop_cleanup pid "$fio_pid"
	fsvol_umount "$d/mnt"
done
/usr/bin/python3 - "$T"/dashboard-{2,4,8,16}.png <<'PY' || fail "the screenshots are not 960x600 PNGs"
import struct, sys
for f in sys.argv[1:]:
    b = open(f, "rb").read(24)
    if b[:8] != b"\x89PNG\r\n\x1a\n" or struct.unpack(">II", b[16:24]) != (960, 600):
        sys.exit(f"{f}: {struct.unpack('>II', b[16:24])}")
PY
note "screenshots: $art/fsvol-dashboard-{2,4,8,16}.png"
exec {CHROME[1]}>&-
wait "$cpid" 2>/dev/null || true
_drop_cleanup pid "$cpid"
echo "PASS: 18-dashboard-layout"
