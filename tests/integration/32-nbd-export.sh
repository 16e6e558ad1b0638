#!/usr/bin/env bash
# The NBD export (fsvol serve, fsvol mount --nbd): what nbdinfo sees, an
# nbdcopy round trip, fio's nbd engine with verify at QD32, multi-conn flush,
# malformed and hostile requests, counters and control in --ctl-dir and in
# MNT/stats.json, export names, read-only, rotational flag, clean shutdown.
# Servers listen on unix sockets in $T only.
. "$(dirname "$0")/../lib.sh"
requires nbdkit
requires nbdinfo
requires nbdcopy
requires fio
requires jq
PROBE=$(cd "$(dirname "$0")/../tools" && pwd)/nbd_probe.py
cd "$T" # fio may leave state files in the working directory

uri() { echo "nbd+unix:///${2:-}?socket=$1"; }
# serve SOCKET [options] MEMBER...: fsvol serve in the background, tracked
serve() {
	local sock=$1
	shift
	"$FSVOL" serve --nbd "unix:$sock" --pidfile "$sock.pid" --log "$DAEMON_LOG" "$@" ||
		fail "fsvol serve $* failed"
	[[ -S $sock ]] || fail "fsvol serve returned but $sock is not a socket"
	track_pid "$(cat "$sock.pid")"
}
# stop SOCKET: SIGTERM, the server must exit (and close the volume clean)
stop() {
	local pid i
	pid=$(cat "$1.pid")
	kill -TERM "$pid"
	for ((i = 0; i < 100; i++)); do _alive "$pid" || return 0; sleep 0.1; done
	fail "server $pid on $1 still running 10 s after SIGTERM"
}
info() { nbdinfo --json "$(uri "$1" "${3:-}")" | jq -r ".exports[0][\"$2\"]"; }
expect_info() { # SOCKET FIELD VALUE
	local got
	got=$(info "$1" "$2")
	[[ $got == "$3" ]] || fail "nbdinfo $2 = $got, expected $3"
}
# wait_for CMD...: until CMD succeeds, at most 10 s
wait_for() {
	local i
	for ((i = 0; i < 100; i++)); do "$@" && return 0; sleep 0.1; done
	fail "timed out waiting for: $*"
}
# hold SOCKET: a client that stays connected and idle (tracked); waits until it is in
hold() {
	/usr/bin/python3 "$PROBE" "$1" hold 120 >"$T/hold.out" 2>&1 &
	track_pid $!
	wait_for grep -q connected "$T/hold.out"
}
logged() { grep -qxF "$2" "$1/ctl.log" 2>/dev/null; }
json_is() { [[ $(jq -r "$2" "$1") == "$3" ]]; } # FILE FILTER VALUE

# --- bad input: named culprits, no server left behind
expect_fail_msg "--nbd" "$FSVOL" serve "$T/none"
expect_fail_msg "--nbd nowhere:x" "$FSVOL" serve --nbd nowhere:x "$T/none"
expect_fail_msg "--nbd 70000" "$FSVOL" serve --nbd 70000 "$T/none"
expect_fail_msg "$T/none" "$FSVOL" serve --nbd "unix:$T/bad.sock" "$T/none"
[[ ! -S $T/bad.sock ]] || ! nbdinfo --size "$(uri "$T/bad.sock")" 2>/dev/null ||
	fail "a server runs although its member was missing"
expect_fail_msg "need --nbd" "$FSVOL" mount --name x "$T/mnt-none" "$T/none"

# --- raid5 of 3, chunk 64K
"$FSVOL" create -l raid5 -c 64K -s 24M "$T"/m{0,1,2} >/dev/null
cap=$((2 * 24 * MiB))
S=$T/r5.sock
serve "$S" --ctl-dir "$T/ctl" "$T"/m{0,1,2}

# what a client sees
expect_info "$S" export-size "$cap"
expect_info "$S" block_size_minimum 512
expect_info "$S" block_size_preferred 65536
expect_info "$S" block_size_maximum $((32 * MiB))
for f in can_multi_conn can_flush can_fua can_trim can_zero; do expect_info "$S" "$f" true; done
expect_info "$S" is_read_only false
expect_info "$S" is_rotational false
note "nbdinfo: size, block sizes and flags as advertised"

# nbdcopy round trip of random data
random_file "$T/data" $((8 * MiB))
nbdcopy "$T/data" "$(uri "$S")" || fail "nbdcopy to the export failed"
nbdcopy "$(uri "$S")" "$T/back" || fail "nbdcopy from the export failed"
[[ $(size_of "$T/back") -eq $cap ]] || fail "nbdcopy read $(size_of "$T/back") bytes, expected $cap"
cmp -n $((8 * MiB)) "$T/data" "$T/back" || fail "nbdcopy round trip differs"
note "nbdcopy round trip equal"

# counters and control in --ctl-dir: a reset through the FIFO, then exact counts
printf reset >"$T/ctl/ctl" # a bare word, no newline (fsvol scrub writes its verb so)
wait_for logged "$T/ctl" "reset: ok"
[[ $(jq -r .volume.writes "$T/ctl/stats.json") == 0 ]] || fail "ctl-dir: reset did not zero the writes"
nbdcopy "$T/data" "$(uri "$S")" || fail "nbdcopy to the export failed"
wait_for json_is "$T/ctl/stats.json" .volume.write_bytes $((8 * MiB))
echo "bogus words" >"$T/ctl/ctl"
wait_for grep -q "^bogus words: ctl: " "$T/ctl/ctl.log"
grep -q "^pid: $(cat "$S.pid")" "$T/ctl/status" || fail "ctl-dir status lacks the server's pid"
"$FSVOL" stat -c 1 "$T/ctl" | grep -q "^  m2 " || fail "fsvol stat cannot read the ctl-dir"
"$FSVOL" stat -i 0.3 -c 3 "$T/ctl" >/dev/null || fail "fsvol stat -i 0.3 on the ctl-dir failed"
note "ctl-dir: reset, exact write bytes, refused command logged, fsvol stat reads it"

# fio's nbd engine, random writes with crc32c verify at QD32
fio --name=nbdverify --ioengine=nbd --uri="$(uri "$S")" --rw=randwrite --bs=4k,64k \
	--bsrange=4k-64k --iodepth=32 --size=$((16 * MiB)) --verify=crc32c --verify_fatal=1 \
	--do_verify=1 --verify_state_save=0 --randrepeat=0 --output="$T/fio.out" >/dev/null 2>&1 ||
	{ cat "$T/fio.out" >&2; fail "fio --ioengine=nbd --verify=crc32c failed"; }
grep -q "verify" "$T/fio.out" && grep -qi "err= *0" "$T/fio.out" || { cat "$T/fio.out" >&2; fail "fio reported errors"; }
note "fio nbd engine, QD32, crc32c verify clean"

# multi-conn: a write on one connection, a flush on another covers it
/usr/bin/python3 "$PROBE" "$S" multiconn || fail "multi-conn flush"

# malformed and hostile requests: error replies or disconnects, never a crash or hang
timeout 120 /usr/bin/python3 "$PROBE" "$S" hostile || fail "hostile requests (see above)"
_alive "$(cat "$S.pid")" || fail "the server died under hostile requests"
nbdcopy "$(uri "$S")" "$T/back2" || fail "nbdcopy after hostile requests failed"
jq -e '.members | all(.state == "active" and .errors == 0)' "$T/ctl/stats.json" >/dev/null ||
	fail "a member failed or counted errors after hostile requests"
note "hostile requests: the server still serves, no member error"

# SIGTERM: the server exits, even with a client connected and idle; the volume
# is closed clean, the last counters stay
hold "$S"
stop "$S"
"$FSVOL" examine "$T/m0" | grep -q "State : clean" || fail "volume not clean after the server stopped"
[[ $(jq -r .volume.writes "$T/ctl/stats.json") -gt 0 ]] || fail "ctl-dir lost its last counters"
wait_for grep -q "^server: stopped (pid $(cat "$S.pid")); the volume was closed clean" "$T/ctl/status"
note "SIGTERM with an idle client: clean volume, last counters kept"

# --- the log and the ctl dir are never reached through a planted symbolic
# link; a new log is created 0600 (as fsvol mount --log)
ln -s "$T/target.log" "$T/link.log"
expect_fail_msg "symbolic link" "$FSVOL" serve --nbd "unix:$T/l.sock" --log "$T/link.log" "$T"/m{0,1,2}
[[ ! -e $T/target.log ]] || fail "serve --log followed a symbolic link"
mkdir "$T/ctl3"
ln -s "$T/target.log" "$T/ctl3/ctl.log"
expect_fail_msg "symbolic link" "$FSVOL" serve --nbd "unix:$T/l.sock" --ctl-dir "$T/ctl3" "$T"/m{0,1,2}
[[ ! -e $T/target.log ]] || fail "serve --ctl-dir wrote through a planted ctl.log link"
note "serve --log LINK and a planted DIR/ctl.log link: refused, nothing created"

# --- a server that dies (killed, aborted) is shown dead in DIR/status, not
# healthy with a dead pid; the socket it left is taken over by the next one
# (its output through a pipe: the command must return, no process left holding it)
timeout 60 "$FSVOL" serve --nbd "unix:$S" --pidfile "$S.pid" --log "$T/new.log" --ctl-dir "$T/ctl2" \
	"$T"/m{0,1,2} 2>&1 | cat >"$T/serve.out" || fail "fsvol serve --log new.log failed: $(cat "$T/serve.out")"
track_pid "$(cat "$S.pid")"
[[ $(stat -c %a "$T/new.log") == 600 ]] || fail "serve --log created the log $(stat -c %a "$T/new.log"), expected 600"
wait_for grep -q "^pid: $(cat "$S.pid")" "$T/ctl2/status"
kill -KILL "$(cat "$S.pid")"
wait_for grep -q "^server: died (pid $(cat "$S.pid") killed by signal 9" "$T/ctl2/status"
serve "$S" --force "$T"/m{0,1,2}
stop "$S"
note "serve --log: a new log 0600; killed server: DIR/status says it died; its socket is reused"

# --- export name and read-only
serve "$S" --name vol5 -r "$T"/m{0,1,2}
nbdinfo --list --json "$(uri "$S")" | jq -e '.exports[0]["export-name"] == "vol5"' >/dev/null ||
	fail "nbdinfo --list does not show the export vol5"
expect_info "$S" is_read_only true vol5
! nbdinfo --size "$(uri "$S" other)" 2>/dev/null || fail "an unknown export name was served"
! nbdcopy "$T/data" "$(uri "$S" vol5)" 2>/dev/null || fail "a read-only export took a write"
nbdcopy "$(uri "$S" vol5)" "$T/back3" || fail "reading the read-only export failed"
cmp "$T/back2" "$T/back3" || fail "read-only export: data differs from what the last server held"
stop "$S"
note "export name listed, others refused; read-only refuses writes"

# --- emulated hard disks make the export rotational
serve "$S" --model hdd "$T"/m{0,1,2}
expect_info "$S" is_rotational true
stop "$S"
note "--model hdd: rotational"

# --- fsvol mount --nbd: one daemon, FUSE and NBD on the same counters
fsvol_mount --nbd="unix:$S" "$T/mnt" "$T"/m{0,1,2}
pid=$(daemon_pid "$T/mnt")
[[ $(cat "/proc/$pid/comm") == fsvol ]] || fail "mount --nbd: MNT/status pid $pid is not the daemon"
echo reset >"$T/mnt/ctl"
nbdcopy "$T/data" "$(uri "$S")" || fail "nbdcopy to the mount's export failed"
[[ $(jq -r .volume.write_bytes "$T/mnt/stats.json") == $((8 * MiB)) ]] ||
	fail "MNT/stats.json: NBD writes not counted ($(jq -r .volume.write_bytes "$T/mnt/stats.json") bytes)"
cmp -n $((8 * MiB)) "$T/data" "$T/mnt/volume" || fail "MNT/volume differs from what NBD wrote"
r0=$(jq -r .volume.read_bytes "$T/mnt/stats.json")
nbdcopy "$(uri "$S")" "$T/back4" || fail "nbdcopy from the mount's export failed"
r1=$(jq -r .volume.read_bytes "$T/mnt/stats.json")
[[ $((r1 - r0)) -ge $cap ]] || fail "MNT/stats.json: NBD reads not counted ($((r1 - r0)) bytes)"
note "mount --nbd: NBD traffic in MNT/stats.json"
hold "$S"
fsvol_umount "$T/mnt"
[[ ! -S $S ]] || ! nbdinfo --size "$(uri "$S")" 2>/dev/null || fail "the export outlived fsvol umount"
"$FSVOL" examine "$T/m0" | grep -q "State : clean" || fail "volume not clean after fsvol umount"
note "fsvol umount ends the export too, an idle client connected; volume clean"
