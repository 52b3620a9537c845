/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What verifying a collector's programs took: the instructions the
 * kernel's verifier walked for each (bpf_prog_info's verified_insns,
 * kernel 5.16 on). They are nearly all of a start's CPU, and a program
 * near the kernel's limit (1,000,000) is a change away from refused. */
#ifndef KMON_VERIFIED_H
#define KMON_VERIFIED_H

struct bpf_object;

/* With -v: one debug line per loaded program of obj,
 * "COLLECTOR: PROGRAM verified in N instructions". */
void verified__log(const char *collector, struct bpf_object *obj);

#endif
