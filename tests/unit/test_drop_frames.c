// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The BPF program and the tracing glue on top of a drop stack are skipped;
 * the stack starts at the drop site, and nothing below it is touched. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "sym/drop_frames.h"
#include "sym/ksyms.h"
#include "unit.h"

static const char kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 T bpf_trace_run4\n"
	"ffffffff81000200 T perf_trace_kfree_skb\n"
	"ffffffff81000300 T trace_call_bpf\n"
	"ffffffff81000400 T sk_skb_reason_drop\n"
	"ffffffff81000500 T tcp_v4_rcv\n"
	"ffffffff81000600 T perf_trace_run_bpf_submit\n"
	"ffffffffc0001000 t bpf_prog_18f16d42ecc6408e_drop_kfree_btf\t[bpf]\n"
	"ffffffffc0002000 t helper_in_bpf_area\t[bpf]\n"
	"ffffffffc0003000 t mod_fn\t[mymod]\n";

int main(void)
{
	struct ksyms *ks = unit_ksyms(kallsyms);
	/* tp_btf: the program, bpf_trace_run4, then the drop */
	const uint64_t btf[] = { 0xffffffffc0001010, 0xffffffff81000110,
				 0xffffffff81000410, 0xffffffff81000510 };
	/* tracepoint: program, trace_call_bpf, perf_trace_run_bpf_submit,
	 * perf_trace_kfree_skb, then the drop */
	const uint64_t tp[] = { 0xffffffffc0002010, 0xffffffff81000310,
				0xffffffff81000610, 0xffffffff81000210,
				0xffffffff81000410, 0xffffffff81000510 };
	/* glue below the drop site stays: only the top is skipped */
	const uint64_t mid[] = { 0xffffffff81000410, 0xffffffff81000110,
				 0xffffffff81000510 };
	const uint64_t mod[] = { 0xffffffffc0003010, 0xffffffff81000410 };
	const uint64_t unknown[] = { 0x1000, 0xffffffff81000410 };

	CHECK(ks && ksyms__count(ks) == 10);
	CHECK(drop_frames_skip(ks, btf, 4) == 2);
	CHECK(drop_frames_skip(ks, tp, 6) == 4);
	CHECK(drop_frames_skip(ks, mid, 3) == 0);
	CHECK(drop_frames_skip(ks, mod, 2) == 0);
	CHECK(drop_frames_skip(ks, unknown, 2) == 0);
	CHECK(drop_frames_skip(ks, btf, 2) == 2); /* nothing but glue */
	CHECK(drop_frames_skip(ks, btf, 0) == 0);
	CHECK(drop_frames_skip(NULL, btf, 4) == 0);
	ksyms__free(ks);
	return unit_done("drop_frames");
}
