#!/usr/bin/env bash
# 63-monitor: mdadm --monitor's events for fsvol (issue 21). MNT/events is an
# append-only log that grows (tail -f follows it); fsvol monitor follows it
# and reports each event on stdout and to --program as mdadm does (PROGRAM
# EVENT DEVICE [COMPONENT]): a member failure with a spare at hand gives Fail,
# DegradedArray, RebuildStarted, Rebuild20/40/60/80, RebuildFinished and
# SpareActive, in that order, and a replace its pass's events, then the
# replacement's SpareActive; a daemon killed gives DeviceDisappeared and the
# monitor ends; --oneshot reports a volume degraded now and exits; --syslog
# logs it as a warning; --scan sees mounts come (NewArray) and go.
# fsvol-test: alone (monitor --scan follows every fsvol mount of the machine (others' stopped daemons would block it))
. "$(dirname "$0")/../lib.sh"
requires_root

mkdir -p "$T/v" "$T/mnt"
"$FSVOL" create -l raid5 -c 64K -s 16M --spares 1 "$T"/v/d{0,1,2,3} >/dev/null || fail "create"
fsvol_mount "$T/mnt" "$T"/v/d{0,1,2,3}
dd if=/dev/urandom of="$T/mnt/volume" bs=1M count=32 oflag=direct status=none
[[ -f $T/mnt/events && ! -s $T/mnt/events ]] || fail "MNT/events of a healthy new mount: $(cat "$T/mnt/events")"

# the alert program: one line per call, its arguments
cat >"$T/alert" <<EOF
#!/bin/sh
echo "\$*" >>"$T/alerts"
EOF
chmod +x "$T/alert"
"$FSVOL" monitor --test --program "$T/alert" "$T/mnt" >"$T/mon.out" 2>"$T/mon.err" &
mon=$!
track_pid "$mon"
tail -s 0.1 -n +1 -f "$T/mnt/events" >"$T/tail.out" 2>/dev/null &
track_pid $!
# the monitor is watching once its TestMessage is out
for ((i = 0; i < 200; i++)); do grep -q "TestMessage $T/mnt" "$T/mon.out" && break; sleep 0.05; done
grep -q "TestMessage $T/mnt - fsvol-" "$T/mon.out" || fail "no TestMessage: $(cat "$T/mon.out" "$T/mon.err")"

# a failure, a spare takes over; the rebuild is slowed so its steps are seen
"$FSVOL" ctl "$T/mnt" sync_speed_min 1
"$FSVOL" ctl "$T/mnt" sync_speed_max 4000
"$FSVOL" fail "$T/mnt" 1 >/dev/null || fail "fail 1"
for ((i = 0; i < 600; i++)); do grep -q "SpareActive" "$T/mon.out" && break; sleep 0.05; done
want=(Fail DegradedArray RebuildStarted Rebuild20 Rebuild40 Rebuild60 Rebuild80 RebuildFinished SpareActive)
got=$(awk '$2 != "TestMessage" { print $2 }' "$T/mon.out" | tr '\n' ' ')
[[ $got == "${want[*]} " ]] || fail "monitor events: '$got', want '${want[*]}'"$'\n'"$(cat "$T/mon.out")"
grep -Eq "^[0-9T:.-]+Z Fail $T/mnt m[0-9]+ $T/v/d1$" "$T/mon.out" || fail "Fail line: $(cat "$T/mon.out")"
grep -Eq "^[0-9T:.-]+Z SpareActive $T/mnt m3 $T/v/d3$" "$T/mon.out" || fail "SpareActive line: $(cat "$T/mon.out")"
grep -q "RebuildFinished $T/mnt m3 recovery done, 0 mismatches" "$T/mon.out" || fail "RebuildFinished: $(cat "$T/mon.out")"
# the program got mdadm's arguments: EVENT DEVICE [COMPONENT]
grep -qx "Fail $T/mnt $T/v/d1" "$T/alerts" || fail "alerts: $(cat "$T/alerts")"
grep -qx "DegradedArray $T/mnt" "$T/alerts" || fail "alerts: $(cat "$T/alerts")"
grep -qx "SpareActive $T/mnt $T/v/d3" "$T/alerts" || fail "alerts: $(cat "$T/alerts")"
[[ $(wc -l <"$T/alerts") -eq $((${#want[@]} + 1)) ]] || fail "alerts: $(cat "$T/alerts")"
# MNT/events holds the same, with the volume's name; its size is its length; tail -f followed it
[[ $(awk '{ print $2 }' "$T/mnt/events" | tr '\n' ' ') == "${want[*]} " ]] || fail "MNT/events: $(cat "$T/mnt/events")"
# (the kernel may hold the size it last saw for a moment after a late event: it settles)
size_is_length() { [[ $(stat -c %s "$T/mnt/events") -eq $(wc -c <"$T/mnt/events") ]]; }
wait_for 10 "MNT/events' size is not its length" size_is_length
for ((i = 0; i < 100; i++)); do grep -q SpareActive "$T/tail.out" && break; sleep 0.05; done
cmp -s "$T/tail.out" "$T/mnt/events" || fail "tail -f of MNT/events: $(cat "$T/tail.out")"

# a replace (md's want_replacement) of role 0: the pass's steps, the replaced
# member marked faulty (md: out of sync, mdadm's Fail), the pass's end, then
# the replacement's SpareActive; the replaced member is removed
truncate -s "$(stat -c %s "$T/v/d0")" "$T/v/d4"
n0=$(wc -l <"$T/mon.out")
"$FSVOL" replace --with "$T/v/d4" "$T/mnt" 0 >/dev/null || fail "replace 0"
for ((i = 0; i < 600; i++)); do grep -q "SpareActive $T/mnt m[0-9]* $T/v/d4" "$T/mon.out" && break; sleep 0.05; done
want_r=(RebuildStarted Rebuild20 Rebuild40 Rebuild60 Rebuild80 Fail RebuildFinished SpareActive)
got=$(tail -n +$((n0 + 1)) "$T/mon.out" | awk '{ print $2 }' | tr '\n' ' ')
[[ $got == "${want_r[*]} " ]] || fail "replace events: '$got', want '${want_r[*]}'"$'\n'"$(cat "$T/mon.out")"
grep -q "RebuildFinished $T/mnt - replace done, 0 mismatches" "$T/mon.out" || fail "replace's end: $(cat "$T/mon.out")"
grep -qx "SpareActive $T/mnt $T/v/d4" "$T/alerts" || fail "alerts: $(cat "$T/alerts")"
grep -Eq "^[0-9T:.-]+Z Fail $T/mnt m0 $T/v/d0$" "$T/mon.out" || fail "the replaced member's Fail: $(cat "$T/mon.out")"
"$FSVOL" remove "$T/mnt" "$T/v/d0" >/dev/null || fail "remove the replaced member"

# --oneshot: what is degraded now, then exit (the failed member removed, no spare left)
"$FSVOL" remove "$T/mnt" "$T/v/d1" >/dev/null || fail "remove"
"$FSVOL" fail "$T/mnt" 2 >/dev/null || fail "fail 2"
out=$(timeout 10 "$FSVOL" monitor --oneshot "$T/mnt") || fail "monitor --oneshot: exit $?"
[[ $out == *" DegradedArray $T/mnt - 1 of 3 members failed or missing" ]] || fail "monitor --oneshot: $out"

# --syslog: the same event to syslog, as a warning from fsvol-monitor (read in a
# private mount namespace whose /dev/log is a socket this test listens on)
if command -v unshare >/dev/null; then
	cat >"$T/sys.sh" <<'EOF'
set -euo pipefail
FSVOL=$1 T=$2
mount -t tmpfs -o size=1M none /dev
/usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
open(sys.argv[1] + "/listening", "w").close()
s.settimeout(10)
with open(sys.argv[1] + "/syslog.out", "w") as out:
    while True:
        try:
            m = s.recv(8192)
        except socket.timeout:
            break
        out.write(m.decode(errors="replace") + "\n")
        if b"DegradedArray" in m:
            break
' "$T" &
listener=$!
for _ in $(seq 100); do [[ -e $T/listening ]] && break; sleep 0.05; done
"$FSVOL" monitor --oneshot --syslog "$T/mnt" >/dev/null
wait $listener
EOF
	unshare -m bash "$T/sys.sh" "$FSVOL" "$T" || fail "monitor --syslog in a private namespace"
	# <28>: facility daemon (3 * 8) + warning (4)
	grep -q "^<28>.*fsvol-monitor\[[0-9]*\]: DegradedArray event detected on $T/mnt: 1 of 3" "$T/syslog.out" ||
		fail "syslog got: $(cat "$T/syslog.out")"
fi

# the daemon dies: DeviceDisappeared, and the monitor ends (no mount left to watch)
kill -9 "$(daemon_pid "$T/mnt")"
for ((i = 0; i < 200; i++)); do _alive "$mon" || break; sleep 0.05; done
! _alive "$mon" || fail "the monitor still runs after its only mount went: $(cat "$T/mon.out")"
wait "$mon" || fail "monitor exit status $?"
grep -q "DeviceDisappeared $T/mnt - its daemon died" "$T/mon.out" || fail "no DeviceDisappeared: $(cat "$T/mon.out")"
grep -qx "DeviceDisappeared $T/mnt" "$T/alerts" || fail "alerts: $(cat "$T/alerts")"
"$FSVOL" umount "$T/mnt" 2>/dev/null || fail "umount of the dead mount"

# --scan: a mount made later is NewArray, its unmount DeviceDisappeared (other
# fsvol mounts on the machine may show up too: only ours are looked at). The
# scan has looked once its TestMessage for a mount made before it is out.
mkdir -p "$T/mnt2" "$T/mnt3"
"$FSVOL" create -l raid1 -s 8M "$T/r0" "$T/r1" >/dev/null || fail "create raid1"
"$FSVOL" create -l raid1 -s 8M "$T/q0" "$T/q1" >/dev/null || fail "create raid1"
fsvol_mount "$T/mnt2" "$T/r0" "$T/r1"
"$FSVOL" monitor --scan --test >"$T/scan.out" 2>&1 &
track_pid $!
for ((i = 0; i < 200; i++)); do grep -q "TestMessage $T/mnt2" "$T/scan.out" && break; sleep 0.05; done
grep -q "TestMessage $T/mnt2" "$T/scan.out" || fail "monitor --scan --test: $(cat "$T/scan.out")"
fsvol_mount "$T/mnt3" "$T/q0" "$T/q1"
for ((i = 0; i < 200; i++)); do grep -q "NewArray $T/mnt3" "$T/scan.out" && break; sleep 0.05; done
grep -q "NewArray $T/mnt3 - -" "$T/scan.out" || fail "monitor --scan: no NewArray: $(cat "$T/scan.out")"
fsvol_umount "$T/mnt3"
for ((i = 0; i < 200; i++)); do grep -q "DeviceDisappeared $T/mnt3" "$T/scan.out" && break; sleep 0.05; done
grep -q "DeviceDisappeared $T/mnt3 - unmounted" "$T/scan.out" || fail "monitor --scan: $(cat "$T/scan.out")"
! grep -q "DeviceDisappeared $T/mnt2" "$T/scan.out" || fail "mnt2 reported gone: $(cat "$T/scan.out")"
fsvol_umount "$T/mnt2"
note "monitor and MNT/events ok"
