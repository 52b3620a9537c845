// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "collectors/drop_reason.h"
#include "lib/xalloc.h"

struct reason {
	uint32_t value;
	uint32_t order; /* in the enum: among aliases the first wins */
	char *name; /* prefix stripped */
};

struct drop_reasons {
	struct reason *v; /* sorted by value */
	size_t n;
};

static const char *strip(const char *name)
{
	size_t len = strlen(DROP_REASON_PREFIX);

	if (strncmp(name, DROP_REASON_PREFIX, len) == 0 && name[len])
		return name + len;
	return name;
}

static int by_value(const void *a, const void *b)
{
	const struct reason *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int by_value_only(const void *a, const void *b)
{
	const struct reason *x = a, *y = b;

	return x->value < y->value ? -1 : x->value > y->value;
}

/* The enum's members as (value, name); ENUM64 appears once reasons
 * outgrow 32 bits, which they do not yet, but costs nothing to read. */
static int read_enum(struct drop_reasons *r, const struct btf *btf,
		     const struct btf_type *t)
{
	int n = btf_vlen(t);

	r->v = xcalloc(n ? n : 1, sizeof(*r->v));
	for (int i = 0; i < n; i++) {
		const char *name;
		uint32_t value;

		if (btf_is_enum(t)) {
			name = btf__name_by_offset(btf,
						   btf_enum(t)[i].name_off);
			value = btf_enum(t)[i].val;
		} else {
			name = btf__name_by_offset(btf,
						   btf_enum64(t)[i].name_off);
			value = btf_enum64(t)[i].val_lo32;
		}
		if (!name || !*name)
			continue;
		r->v[r->n].value = value;
		r->v[r->n].order = i;
		r->v[r->n].name = xstrdup(strip(name));
		r->n++;
	}
	qsort(r->v, r->n, sizeof(*r->v), by_value);
	return 0;
}

struct drop_reasons *drop_reasons__new(const struct btf *btf)
{
	struct btf *own = NULL;
	struct drop_reasons *r = NULL;
	const struct btf_type *t;
	int id, err;

	if (!btf) {
		own = btf__load_vmlinux_btf();
		err = libbpf_get_error(own);
		if (err) {
			own = NULL;
			goto cleanup;
		}
		btf = own;
	}
	id = btf__find_by_name_kind(btf, "skb_drop_reason", BTF_KIND_ENUM);
	if (id < 0)
		id = btf__find_by_name_kind(btf, "skb_drop_reason",
					    BTF_KIND_ENUM64);
	if (id < 0) {
		err = -ENOENT;
		goto cleanup;
	}
	t = btf__type_by_id(btf, id);
	r = calloc(1, sizeof(*r));
	if (!r) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = read_enum(r, btf, t);
cleanup:
	btf__free(own);
	if (err) {
		drop_reasons__free(r);
		errno = -err;
		return NULL;
	}
	return r;
}

void drop_reasons__free(struct drop_reasons *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].name);
	free(r->v);
	free(r);
}

size_t drop_reasons__count(const struct drop_reasons *r)
{
	return r ? r->n : 0;
}

const char *drop_reasons__name(const struct drop_reasons *r, uint32_t value)
{
	struct reason key = { .value = value }, *found;

	if (!r || !r->n)
		return NULL;
	found = bsearch(&key, r->v, r->n, sizeof(*r->v), by_value_only);
	if (!found)
		return NULL;
	while (found > r->v && found[-1].value == value)
		found--;
	return found->name;
}

int64_t drop_reasons__value(const struct drop_reasons *r, const char *name)
{
	if (!r || !name)
		return -1;
	name = strip(name);
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].name, name) == 0)
			return r->v[i].value;
	return -1;
}
