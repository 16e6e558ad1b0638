/* fault: fault injection on a served member (docs/faults.md). Every member of
 * a mounted volume carries a stack of filters (member_fault.c); with no spec
 * set, I/O passes through untouched. */
#ifndef FSVOL_FAULT_H
#define FSVOL_FAULT_H

#include <stddef.h>
#include <stdint.h>

struct member;

/* Put m's fault stack over its backend (once; later calls do nothing). */
int member_fault_wrap(struct member *m);
/* Set m's faults from a spec ("none" clears them). 0, or -EINVAL with a
 * message naming the key in err. */
int member_fault_set(struct member *m, const char *spec, char *err, size_t errlen);
/* The member's current fault spec, canonical ("none" when clear). */
void member_fault_describe(struct member *m, char *buf, size_t len);
/* A power cut: what the member's volatile cache (cache=volatile) holds is
 * lost, and no I/O completes any more (the caller then stops the process). */
void member_fault_powercut(struct member *m);

/* Arm a power cut after K more member writes land (every member of the
 * process counts, superblocks too): those K complete, later ones never reach
 * a member; once the K-th has landed, cut(arg) runs (the caller then cuts
 * every member's power, member_fault_powercut, and stops as in a crash).
 * ctl powercut-after K: a cut placed between the writes of one stripe. */
void member_fault_powercut_after(uint64_t k, void (*cut)(void *arg), void *arg);

#endif
