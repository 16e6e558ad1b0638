/* md1_sb: a member's md version-1 superblock seen as fsvol's struct sb (so
 * assembly and the running volume work on md's members), and the running
 * volume's state written back into md's fields (events, utime, clean/dirty
 * through resync_offset, dev_roles). Pure, no I/O. */
#ifndef FSVOL_MD1_SB_H
#define FSVOL_MD1_SB_H

#include <stddef.h>
#include <stdint.h>

#include "fsvol/meta/md1.h"
#include "fsvol/meta/sb.h"

/* The struct sb of member m (whose device has dev bytes). What fsvol cannot
 * serve yet is refused naming it (-EOPNOTSUPP): md-cluster and the other
 * md1_usable refusals, a reshape, a recovery or replacement in progress,
 * spares, linear, PPL and the journal. Members' UUIDs in the slot table are
 * derived from the array UUID and the device number (md keeps each device's
 * UUID only in its own superblock). 0, or -errno with the reason in err. */
int md1_to_sb(const struct md1_sb *m, uint64_t dev, struct sb *s, char *err, size_t errlen);
/* Update m (the member's own superblock as read) from the volume's state s
 * for the member in slot index: events, utime, resync_offset (clean:
 * MaxSector; dirty: 0, as md writes it) and dev_roles from the slots. */
void md1_update(struct md1_sb *m, const struct sb *s, unsigned index);

#endif
