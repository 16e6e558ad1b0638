#!/usr/bin/env bash
# 16-ctl-dir: fsvol serve --ctl-dir DIR behaves like a mount (issue 30 point
# 8). Every command that takes a mount takes DIR: status, detail, stat, fail
# (a refusal exits 1 with the daemon's reason, read back from DIR/ctl.log),
# add, scrub, monitor (DIR/events), umount; trace says why it cannot. The
# figures a command shows are current: right after nbdcopy, fsvol stat and
# fsvol status see every byte written (they ask the server to rewrite DIR
# first), where the files alone are up to a second old. fsvol stop DIR (and
# umount DIR) ends the server: it exits, the members are clean, DIR/status
# says so, and a command to DIR then says no server runs there.
. "$(dirname "$0")/../lib.sh"
requires nbdcopy
requires jq
cd "$T"

MiB=$((1024 * 1024))
# serve NAME: a raid5 of NAME/m0..m2 served on NAME.sock with ctl dir NAME/ctl
serve() {
	mkdir -p "$1"
	"$FSVOL" create -l raid5 -c 64K -z 16M "$1"/m{0,1,2} >/dev/null || fail "create $1"
	"$FSVOL" serve --nbd "unix:$T/$1.sock" --pidfile "$T/$1.pid" --log "$DAEMON_LOG" --ctl-dir "$T/$1/ctl" \
		"$T/$1"/m{0,1,2} || fail "serve $1"
	track_pid "$(cat "$T/$1.pid")"
}
# rc WANT CMD...: CMD exits WANT (output in $T/out, $T/err)
rc() {
	local want=$1 got=0
	shift
	"$@" >"$T/out" 2>"$T/err" || got=$?
	[[ $got -eq $want ]] || fail "exit $got, expected $want: $*"$'\n'"stdout: $(cat "$T/out")"$'\n'"stderr: $(cat "$T/err")"
	! grep -Eq "$SAN_PATTERN" "$T/err" || fail "sanitizer report from: $*"
}
says() { grep -qF -- "$1" "$T/$2" || fail "$2 lacks '$1': $(cat "$T/$2")"; }
clean() { "$FSVOL" examine "$1" | grep -q "State : clean"; }

serve v
D=$T/v/ctl
pid=$(cat "$T/v.pid")

# --- status, detail: as on a mount --------------------------------------------------
rc 0 "$FSVOL" status "$D"
says "pid: $pid" out
says "[3/3] [UUU]" out
rc 0 "$FSVOL" detail "$D"
says "Raid Devices : 3" out

# --- current figures: right after the last write, not a second later --------------------
head -c $((8 * MiB)) /dev/urandom >img
nbdcopy img "nbd+unix:///?socket=$T/v.sock" || fail "nbdcopy"
rc 0 "$FSVOL" stat -c 1 --json "$D"
[[ $(jq -r .volume.write_bytes "$D/stats.json") == $((8 * MiB)) ]] ||
	fail "after fsvol stat, DIR/stats.json has $(jq -r .volume.write_bytes "$D/stats.json") bytes written, not 8 MiB"
head -c $((4 * MiB)) /dev/urandom >img2
nbdcopy img2 "nbd+unix:///?socket=$T/v.sock" || fail "nbdcopy 2"
rc 0 "$FSVOL" status "$D"
[[ $(jq -r .volume.write_bytes "$D/stats.json") == $((12 * MiB)) ]] ||
	fail "after fsvol status, DIR/stats.json has $(jq -r .volume.write_bytes "$D/stats.json") bytes written, not 12 MiB"

# --- commands through the FIFO: the daemon's answer, its exit status -------------------
"$FSVOL" monitor "$D" >mon.out 2>mon.err &
mon=$!
track_pid "$mon"
rc 1 "$FSVOL" fail "$D" m9
says "fail m9: expected a member in a raid role" err
rc 2 "$FSVOL" ctl "$D" frobnicate
rc 0 "$FSVOL" fail "$D" m1
says "set m1 faulty" out
rc 0 "$FSVOL" detail "$D"
says "faulty" out
wait_for 30 "fsvol monitor DIR saw no Fail" grep -q " Fail $D m1 " mon.out
rc 0 "$FSVOL" remove "$D" m1
rc 0 "$FSVOL" add "$D" "$T/v/new" # made the size of a member, as on a mount
[[ $(stat -c %s "$T/v/new") -eq $(stat -c %s "$T/v/m0") ]] || fail "add DIR NEW: $(ls -l "$T/v")"
wait_for 120 "no recovery onto the new member" grep -q "recovery done" "$D/status"
rc 0 "$FSVOL" scrub "$D"
says "check done" out
rc 1 "$FSVOL" trace "$D"
says "the ctl dir of fsvol serve has no trace" err

# --- stop: the server ends, the volume is clean, DIR says so ----------------------------
rc 0 "$FSVOL" stop "$D"
says "stopped $D (pid $pid)" out
! _alive "$pid" || fail "server $pid still running after fsvol stop returned"
for m in m0 new m2; do clean "$T/v/$m" || fail "$m not clean after fsvol stop: $("$FSVOL" examine "$T/v/$m")"; done
head -n 1 "$D/status" | grep -q "^server: stopped (pid $pid); the volume was closed clean" ||
	fail "DIR/status after stop: $(head -n 2 "$D/status")"
wait_for 30 "fsvol monitor DIR did not see the server go" grep -q "DeviceDisappeared $D - its server stopped" mon.out
rc 1 "$FSVOL" fail "$D" m0
says "no fsvol serve runs on this ctl dir; its status says: server: stopped (pid $pid)" err
rc 1 "$FSVOL" stop "$D"
rc 0 "$FSVOL" status "$D" # the last status stays readable
says "server: stopped" out

# --- umount DIR stops it too ----------------------------------------------------------
serve w
pid=$(cat "$T/w.pid")
rc 0 "$FSVOL" umount "$T/w/ctl"
! _alive "$pid" || fail "server $pid still running after fsvol umount DIR"
clean "$T/w/m0" || fail "w/m0 not clean after fsvol umount DIR"
note "ctl dir: status, detail, stat, fail, add, scrub, monitor, stop and umount as on a mount; figures current"
