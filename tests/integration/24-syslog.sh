#!/usr/bin/env bash
# A daemonised mount without --log sends its messages to syslog: run in a
# private mount namespace whose /dev/log is a datagram socket this test
# reads (the machine's own syslog, if any, is never touched).
. "$(dirname "$0")/../lib.sh"
requires_root "a private mount namespace"
requires unshare

"$FSVOL" create -l raid1 -s 16M --name logged "$T"/m{0,1} >/dev/null
mkdir -p "$T/mnt" "$T/realdev"
cat >"$T/inner.sh" <<'EOF'
# inside the namespace: $1 = fsvol, $2 = test dir
set -euo pipefail
FSVOL=$1 T=$2
mount --bind /dev "$T/realdev"
mount -t tmpfs -o size=1M none /dev
for d in null zero urandom random fuse; do
	touch "/dev/$d"
	mount --bind "$T/realdev/$d" "/dev/$d"
done
/usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
open(sys.argv[1] + "/listening", "w").close()
s.settimeout(5)
with open(sys.argv[1] + "/syslog.out", "w") as out:
    while True:
        try:
            m = s.recv(8192)
        except socket.timeout:
            break
        out.write(m.decode(errors="replace") + "\n")
        out.flush()
        if b"unknown command" in m:
            break
' "$T" &
listener=$!
for _ in $(seq 50); do [[ -e $T/listening ]] && break; sleep 0.1; done
trap '"$FSVOL" umount "$T/mnt" 2>/dev/null || umount -l "$T/mnt" 2>/dev/null; kill $listener 2>/dev/null || true' EXIT
"$FSVOL" mount "$T/mnt" "$T/m0" "$T/m1"
sed -n 's/^pid: *//p' "$T/mnt/status" >"$T/daemon.pid"
"$FSVOL" ctl "$T/mnt" rebuild 2>"$T/ctl.err" && exit 3
# fsvol ctl refuses an unknown word itself (a usage error); written to MNT/ctl
# it reaches the daemon, which logs the refusal
(echo rebuild >"$T/mnt/ctl") 2>/dev/null && exit 3
wait "$listener" || true
EOF
rc=0
timeout 60 unshare -m --propagation private bash "$T/inner.sh" "$FSVOL" "$T" || rc=$?
[[ -s $T/daemon.pid ]] && track_pid "$(cat "$T/daemon.pid")"
[[ $rc == 0 ]] || fail "the namespace script failed (exit $rc)"
grep -q "unknown command 'rebuild'" "$T/ctl.err" || fail "fsvol ctl did not print the reason: $(cat "$T/ctl.err")"
grep -Eq "^<[0-9]+>.* fsvol\[$(cat "$T/daemon.pid")\]: ctl: unknown command 'rebuild'" "$T/syslog.out" ||
	fail "syslog did not get the refusal from the daemon: $(cat "$T/syslog.out" 2>/dev/null)"
