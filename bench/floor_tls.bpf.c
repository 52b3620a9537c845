// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The floor of TLS read in plaintext: an empty program on each uprobe
 * kmond attaches to a process's OpenSSL (bpf/tcp/tls.bpf.h): the entry
 * and the return of SSL_read, SSL_read_ex, SSL_write, SSL_write_ex and
 * SSL_do_handshake. A uprobe traps into the kernel: that is most of its
 * price. bench/floor_load.c attaches them in one process
 * (bench/tls-cost.sh). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define FLOOR(name, sec)    \
	SEC(sec)            \
	int name(void *ctx) \
	{                   \
		return 0;   \
	}

FLOOR(tls_write_floor, "uprobe/SSL_write")
FLOOR(tls_write_ret_floor, "uretprobe/SSL_write")
FLOOR(tls_write_ex_floor, "uprobe/SSL_write_ex")
FLOOR(tls_write_ex_ret_floor, "uretprobe/SSL_write_ex")
FLOOR(tls_read_floor, "uprobe/SSL_read")
FLOOR(tls_read_ret_floor, "uretprobe/SSL_read")
FLOOR(tls_read_ex_floor, "uprobe/SSL_read_ex")
FLOOR(tls_read_ex_ret_floor, "uretprobe/SSL_read_ex")
FLOOR(tls_handshake_floor, "uprobe/SSL_do_handshake")
FLOOR(tls_handshake_ret_floor, "uretprobe/SSL_do_handshake")
