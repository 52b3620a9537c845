// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Drop reason names come from BTF: from a synthetic enum (prefix
 * stripping, aliases, unknown values) and from the running kernel's own
 * /sys/kernel/btf/vmlinux. */
#include <errno.h>
#include <stdio.h>

#include <bpf/btf.h>

#include "collectors/drop_reason.h"
#include "unit.h"

static struct btf *synthetic(bool with_enum)
{
	struct btf *btf = btf__new_empty();

	btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	if (!with_enum)
		return btf;
	btf__add_enum(btf, "skb_drop_reason", 4);
	btf__add_enum_value(btf, "SKB_NOT_DROPPED_YET", 0);
	btf__add_enum_value(btf, "SKB_CONSUMED", 1);
	btf__add_enum_value(btf, "SKB_DROP_REASON_NOT_SPECIFIED", 2);
	btf__add_enum_value(btf, "SKB_DROP_REASON_NO_SOCKET", 7);
	btf__add_enum_value(btf, "SKB_DROP_REASON_ALIAS", 7);
	btf__add_enum_value(btf, "SKB_DROP_REASON_", 9);
	btf__add_enum_value(btf, "SKB_DROP_REASON_SUBSYS_MASK", 0xffff0000);
	return btf;
}

static void test_synthetic(void)
{
	struct btf *btf = synthetic(true);
	struct drop_reasons *r = drop_reasons__new(btf);

	CHECK(r != NULL);
	CHECK(drop_reasons__count(r) == 7);
	CHECK_STR(drop_reasons__name(r, 7), "NO_SOCKET"); /* first alias */
	CHECK_STR(drop_reasons__name(r, 2), "NOT_SPECIFIED");
	CHECK_STR(drop_reasons__name(r, 1), "SKB_CONSUMED"); /* no prefix */
	CHECK_STR(drop_reasons__name(r, 9),
		  "SKB_DROP_REASON_"); /* kept whole */
	CHECK_STR(drop_reasons__name(r, 0xffff0000), "SUBSYS_MASK");
	CHECK(drop_reasons__name(r, 3) == NULL);
	CHECK(drop_reasons__name(r, 0xffff0001) == NULL);
	CHECK(drop_reasons__value(r, "NO_SOCKET") == 7);
	CHECK(drop_reasons__value(r, "SKB_DROP_REASON_NO_SOCKET") == 7);
	CHECK(drop_reasons__value(r, "ALIAS") == 7);
	CHECK(drop_reasons__value(r, "SKB_CONSUMED") == 1);
	CHECK(drop_reasons__value(r, "NOPE") == -1);
	drop_reasons__free(r);
	btf__free(btf);

	btf = synthetic(false);
	errno = 0;
	CHECK(drop_reasons__new(btf) == NULL);
	CHECK(errno == ENOENT);
	btf__free(btf);
	drop_reasons__free(NULL);
	CHECK(drop_reasons__name(NULL, 1) == NULL);
}

/* The running kernel: names resolve both ways, whatever their values. */
static void test_kernel(void)
{
	struct drop_reasons *r = drop_reasons__new(NULL);
	int64_t no_socket, not_specified;

	CHECK(r != NULL);
	if (!r) {
		perror("drop_reasons__new(vmlinux)");
		return;
	}
	CHECK(drop_reasons__count(r) > 10);
	no_socket = drop_reasons__value(r, "NO_SOCKET");
	not_specified = drop_reasons__value(r, "NOT_SPECIFIED");
	CHECK(no_socket > 0);
	CHECK(not_specified >= 0);
	/* Every real reason is above the ordinary frees. */
	CHECK(no_socket > not_specified);
	CHECK_STR(drop_reasons__name(r, (uint32_t)no_socket), "NO_SOCKET");
	CHECK_STR(drop_reasons__name(r, (uint32_t)not_specified),
		  "NOT_SPECIFIED");
	CHECK(drop_reasons__value(r, "TCP_CSUM") > not_specified);
	drop_reasons__free(r);
}

int main(void)
{
	test_synthetic();
	test_kernel();
	return unit_done("drop_reason");
}
