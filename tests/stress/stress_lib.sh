# shellcheck shell=bash
# tests/stress/stress_lib.sh: what the stress scripts share, on top of
# tests/lib.sh (sourced by a scenario's own process: its temp dir, its cleanup
# trap). A scenario ends with `result PASS|FAIL NAME: NUMBERS`; `fail` in it
# is a FAIL line too (the driver prints the reason).
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

ACKW=$FSVOL_BUILD/bin/fsvol-ackwrite
[[ -x $ACKW ]] || fail "$ACKW not built (make $ACKW)"

# result PASS|FAIL TEXT: the scenario's verdict line; FAIL exits 1
result() {
	echo "$1 $2"
	[[ $1 == PASS ]] || exit 1
	exit 0
}

# json MNT FILTER: a jq filter over MNT/status.json (raw output)
json() { jq -r "$2" "$1/status.json"; }

# sync_pct MNT: the background pass's position in percent (0 when none runs)
sync_pct() { json "$1" 'if .sync and .sync.total > 0 then (.sync.position * 100 / .sync.total | floor) else 0 end'; }

# wait_healthy MNT: until no member rebuilds and no pass runs, the volume healthy
_healthy() {
	json "$1" '[.state == "healthy", (.sync == null or .sync.state != "running"),
		all(.members[]; .state != "rebuilding")] | all' | grep -qx true
}
wait_healthy() { wait_for "${2:-600}" "$1 did not become healthy: $(cat "$1/status")" _healthy "$1"; }

# scrub_mismatches MNT: runs a check, prints its mismatch count ("?" when it
# could not check everything)
scrub_mismatches() {
	local out
	out=$("$FSVOL" scrub "$1" 2>&1) || true
	[[ $out =~ ([0-9]+)\ mismatches ]] && echo "${BASH_REMATCH[1]}" || echo "? ($out)"
}

# rss_kib PID: resident set size
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# spare_file PATH MIB: an empty file big enough for a member of MIB data
spare_file() { truncate -s $(($2 + 2))M "$1"; }

# start_writer MNT LOG [ackwrite args]: fsvol-ackwrite in the background
# (WRITER_PID), bounded by -t 900, stopped by stop_writer
start_writer() {
	local mnt=$1 log=$2
	shift 2
	"$ACKW" write -t 900 "$@" "$mnt/volume" "$log" >"$log.out" 2>&1 &
	WRITER_PID=$!
	track_pid "$WRITER_PID"
}
# stop_writer LOG: SIGTERM, then it must say it was stopped so (not by an error)
stop_writer() {
	_alive "$WRITER_PID" || fail "the writer stopped by itself: $(cat "$1.out")"
	kill -TERM "$WRITER_PID"
	wait "$WRITER_PID" || fail "the writer failed: $(cat "$1.out")"
	_drop_cleanup pid "$WRITER_PID"
	grep -q "stopped by a signal" "$1.out" || fail "the writer met an error: $(cat "$1.out")"
}
# acked_blocks LOG: distinct blocks with an acknowledged write
acked_blocks() { awk '$1 == "A" { a[$2] = 1 } END { print length(a) }' "$1" 2>/dev/null || echo 0; }
_filled() { _alive "$3" || fail "the writer ended: $(cat "$1.out")"; (($(acked_blocks "$1") >= $2)); }
# wait_filled LOG NBLOCKS: until every block has an acknowledged write (-F)
wait_filled() { wait_for 600 "the writer did not fill $2 blocks" _filled "$1" "$2" "$WRITER_PID"; }
# verify_acked MNT LOG: prints the mismatch count of fsvol-ackwrite verify
verify_acked() {
	local out
	out=$("$ACKW" verify "$1/volume" "$2" 2>"$2.verify.err") || true
	[[ $out =~ mismatches\ ([0-9]+) ]] && echo "${BASH_REMATCH[1]}" || echo "? ($out $(head -c 300 "$2.verify.err"))"
}

# kill_daemon MNT [WRITER]: kill -9 of the mount's daemon (or a power cut:
# HOW=powercut), the writer's end awaited (it fails on the dead mount and
# holds it open until then), the dead mount removed
kill_daemon() {
	local pid
	pid=$(daemon_pid "$1")
	if [[ ${HOW:-kill} == powercut ]]; then
		"$FSVOL" ctl "$1" powercut >/dev/null 2>&1 || true # the daemon dies under its own ctl write
	else
		kill -KILL "$pid"
	fi
	wait_for 60 "daemon $pid survived the ${HOW:-kill}" eval "! _alive $pid"
	if [[ -n ${2:-} ]]; then
		wait "$2" 2>/dev/null || true
		_drop_cleanup pid "$2"
	fi
	"$FSVOL" umount "$1" >"$T/umount.err" 2>&1 || fail "umount of the dead mount $1 failed: $(cat "$T/umount.err")"
	_drop_cleanup fsvol "$1" "$pid"
}
