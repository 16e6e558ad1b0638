#!/usr/bin/env bash
# 103-md-assemble-all (make check-long): 102-md-assemble over every level and
# layout md and fsvol share: raid0, raid1 (2 and 3 copies), raid4, raid5 in
# its six algorithms, raid6 in the four md names with 4 and 5 members, raid10
# near/far/offset with 3 and 4 members; metadata 1.2, 1.1 and 1.0; volumes
# fsvol wrote degraded; arrays md wrote with a bitmap and with a member failed
# mid-write; md's linear refused by name. Both ways, in as few guest boots as
# the disks allow (tests/tools/mdguest.sh puts eight virtio disks on a PCI slot).
# tests/mdasm_lib.sh says what each case does.
# fsvol-test: timeout 2400 (qemu TCG boots for 85 arrays: about 10 minutes idle)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../mdasm_lib.sh"
mda_setup
{
	for dir in fwd rev; do
		echo "$dir 1.2 raid0 - 4 -"
		echo "$dir 1.2 raid1 - 2 -"
		echo "$dir 1.2 raid1 - 3 -"
		echo "$dir 1.2 raid4 - 4 -"
		for l in left-asymmetric right-asymmetric left-symmetric right-symmetric parity-first parity-last; do
			echo "$dir 1.2 raid5 $l 4 -"
		done
		for n in 4 5; do
			for l in left-asymmetric right-asymmetric left-symmetric right-symmetric; do
				echo "$dir 1.2 raid6 $l $n -"
			done
		done
		for n in 3 4; do
			for l in n2 f2 o2; do echo "$dir 1.2 raid10 $l $n -"; done
		done
		for m in 1.0 1.1; do
			echo "$dir $m raid1 - 2 -"
			echo "$dir $m raid5 left-symmetric 4 -"
			echo "$dir $m raid6 right-asymmetric 5 -"
			echo "$dir $m raid10 f2 4 -"
		done
	done
	echo "fwd 1.2 raid1 - 2 degr"
	echo "fwd 1.0 raid6 left-asymmetric 5 degr"
	echo "fwd 1.2 raid10 o2 4 degr"
	echo "fwd 1.2 raid1 - 3 ops"
	echo "fwd 1.0 raid6 right-symmetric 5 ops"
	echo "fwd 1.2 raid10 f2 4 ops"
	echo "fwd 1.2 raid1 - 2 conv"
	echo "fwd 1.2 raid5 right-asymmetric 4 conv"
	echo "fwd 1.2 raid10 o2 3 conv"
	echo "fwd 1.2 raid0 - 3 conv"
	echo "fwd 1.2 raid1 - 2 midrec"
	echo "fwd 1.1 raid5 left-asymmetric 4 midrec"
	echo "fwd 1.2 raid10 n2 4 midrec"
	echo "rev 1.2 raid1 - 2 bitmap"
	echo "rev 1.0 raid5 right-symmetric 4 bitmap"
	echo "rev 1.2 raid6 left-symmetric 5 bitmap"
	echo "rev 1.2 raid10 n2 4 bitmap"
	echo "rev 1.2 raid1 - 3 fail"
	echo "rev 1.2 raid5 left-asymmetric 4 fail"
	echo "rev 1.1 raid10 f2 4 fail"
	echo "rev 1.2 linear - 3 refused"
} >"$T/cases"
mda_run_cases "$T/cases"
note "Linux md $(cat "$FSVOL_MDGUEST_DIR/kver") and fsvol open each other's arrays ($(wc -l <"$T/cases") cases)"
