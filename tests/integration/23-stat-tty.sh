#!/usr/bin/env bash
# fsvol stat on a terminal (tmux): fits 80 columns, refreshes in place with
# colours, lays itself out again when the terminal grows to 120 columns;
# piped: plain lines. iostat's INTERVAL [COUNT] operands; members that are
# not counted say so.
. "$(dirname "$0")/../lib.sh"
requires tmux
requires jq

"$FSVOL" create -l raid0 -c 64K -s 16M --name tty0 "$T"/m{0,1,2,3} >/dev/null
fsvol_mount "$T/mnt" "$T"/m{0,1,2,3}
dd if=/dev/urandom of="$T/mnt/volume" bs=64K count=32 oflag=direct conv=notrunc status=none

# a private tmux server, killed at exit
TM=(tmux -S "$T/tmux.sock" -f /dev/null)
"${TM[@]}" new-session -d -s stat -x 80 -y 24 "TERM=xterm-256color $FSVOL stat -t $T/mnt 0.3; sleep 30"
track_pid "$("${TM[@]}" display -p -t stat '#{pid}')"
screen() { "${TM[@]}" capture-pane -p -t stat "$@"; }
wait_screen() { # PATTERN: until the pane shows it (10 s at most)
	local i
	for ((i = 0; i < 100; i++)); do
		screen | grep -Eq -- "$1" && return 0
		sleep 0.1
	done
	fail "the terminal never showed '$1':"$'\n'"$(screen)"
}
wait_screen '^device +state'
s1=$(screen)
[[ $(sed -n 1p <<<"$s1") =~ ^tty0\ \ [0-9]{4}-[0-9]{2}-[0-9]{2}\ [0-9:]{8}\ \ over ]] ||
	fail "first line is not the title with the wall-clock time:"$'\n'"$s1"
awk 'length($0) > 80 { exit 1 }' <<<"$s1" || fail "wider than 80 columns:"$'\n'"$s1"
for col in r/s w/s rMB/s wMB/s r_await w_await aqu-sz %util p99; do
	grep -q -- " $col" <<<"$(sed -n 2p <<<"$s1")" || fail "80 columns: no $col in the header:"$'\n'"$s1"
done
grep -Eq '^ +IO/s +IO/s +MB/s +MB/s +ms +ms +reqs +% +ms *$' <<<"$s1" || fail "no units row:"$'\n'"$s1"
grep -Eq '^volume ' <<<"$s1" && grep -Eq '^  m3 +active ' <<<"$s1" || fail "no volume row or member rows:"$'\n'"$s1"
grep -q 'p50' <<<"$s1" && fail "80 columns show p50 (an extra column):"$'\n'"$s1"
# colours: the header in reverse video, %util coloured
screen -e | grep -Eq $'\033\\[(0;)?7m' || fail "no reverse-video header on a terminal"
screen -e | grep -Eq $'\033\\[3[123]m' || fail "no colour on %util on a terminal"
# in place: the screen refreshes (a new time in the title), nothing scrolls
t1=$(sed -n 1p <<<"$s1")
for _ in $(seq 50); do [[ $(screen | sed -n 1p) != "$t1" ]] && break; sleep 0.1; done
[[ $(screen | sed -n 1p) != "$t1" ]] || fail "the title's time did not change: not refreshed"
[[ $(screen | grep -c '^device ') == 1 ]] || fail "more than one header on screen (scrolling, not refreshing):"$'\n'"$(screen)"
[[ $("${TM[@]}" display -p -t stat '#{history_size}') == 0 ]] || fail "the report scrolled into tmux's history"
"${TM[@]}" kill-session -t stat
# resize to 120 columns: laid out again at once (SIGWINCH; the next report is
# 30 s away) with the extra columns, within 120
"${TM[@]}" new-session -d -s stat -x 80 -y 24 "TERM=xterm-256color $FSVOL stat $T/mnt 30; sleep 30"
wait_screen '^device +state'
"${TM[@]}" resize-window -t stat -x 120 -y 30
for _ in $(seq 30); do screen | grep -q ' p50 ' && break; sleep 0.1; done
screen | grep -q ' p50 ' || fail "3 s after a resize to 120 columns, no p50 column:"$'\n'"$(screen)"
s2=$(screen)
awk 'length($0) > 120 { exit 1 }' <<<"$s2" || fail "wider than 120 columns:"$'\n'"$s2"
grep -q 'areq-sz' <<<"$s2" || fail "120 columns without areq-sz:"$'\n'"$s2"
[[ $(grep -c '^device ' <<<"$s2") == 1 ]] || fail "after the resize, not one header:"$'\n'"$s2"
"${TM[@]}" kill-session -t stat
# narrower than 80: lines are cut, never wrapped (a wrap would scroll the report)
"${TM[@]}" new-session -d -s stat -x 60 -y 24 "$FSVOL stat $T/mnt 0.2; sleep 30"
wait_screen '^device +state'
sleep 0.5
[[ $(screen | grep -c '^device ') == 1 && $("${TM[@]}" display -p -t stat '#{history_size}') == 0 ]] ||
	fail "60 columns: the report wrapped or scrolled:"$'\n'"$(screen)"
grep -Eq '^  m3 +active ' <<<"$(screen)" || fail "60 columns: rows lost:"$'\n'"$(screen)"
[[ $(screen | sed -n 3p) =~ ^\ +IO/s ]] && screen | awk 'length($0) >= 60 { exit 1 }' ||
	fail "60 columns: a line wrapped:"$'\n'"$(screen)"
"${TM[@]}" kill-server

# piped: plain lines (no escapes), one report per interval, each with its header
"$FSVOL" stat "$T/mnt" 0.1 2 >"$T/piped.txt"
! grep -q $'\033' "$T/piped.txt" || fail "escape sequences in piped output"
[[ $(grep -c '^device ' "$T/piped.txt") == 2 && $(grep -c '^tty0  over ' "$T/piped.txt") == 2 ]] ||
	fail "piped 0.1 2: not two reports:"$'\n'"$(cat "$T/piped.txt")"
[[ $("$FSVOL" stat -x 0.1 3 --json "$T/mnt" | wc -l) == 3 ]] || fail "fsvol stat -x 0.1 3 MNT: not 3 reports"
"$FSVOL" stat -w "$T/mnt" | grep -q ' p99.9 ' || fail "fsvol stat -w: no p99.9"
"$FSVOL" stat --json "$T/mnt" | jq -e '.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T")' >/dev/null ||
	fail "fsvol stat --json: no wall-clock time"
expect_fail_msg "INTERVAL 0: expected seconds" "$FSVOL" stat "$T/mnt" 0
expect_fail_msg "too many numbers" "$FSVOL" stat "$T/mnt" 1 2 3
rc=0; "$FSVOL" stat "$T/mnt" 1 2 3 2>/dev/null || rc=$?
[[ $rc == 2 ]] || fail "a usage error exits $rc, not 2"

# members not counted (--stats volume): said, not shown as zeros
"$FSVOL" ctl "$T/mnt" stats volume
"$FSVOL" stat "$T/mnt" >"$T/volonly.txt"
[[ $(grep -c '^  m[0-3] .*not counted' "$T/volonly.txt") == 4 ]] ||
	fail "--stats volume: members not marked 'not counted':"$'\n'"$(cat "$T/volonly.txt")"
grep -Eq '^volume +active +[0-9]' "$T/volonly.txt" || fail "--stats volume: the volume row lost its figures"
[[ $("$FSVOL" stat --csv "$T/mnt" | awk -F, 'NR > 1 { print $5 }' | sort | uniq -c | tr -s ' ' | xargs) == "4 false 1 true" ]] ||
	fail "CSV 'counted' column: $("$FSVOL" stat --csv "$T/mnt")"
"$FSVOL" ctl "$T/mnt" stats all
fsvol_umount "$T/mnt"
