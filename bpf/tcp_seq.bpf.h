/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* TCP sequence numbers of the bytes a read or a write just moved, read
 * from the socket right after it (sock_send_length, sock_recv_length, or
 * a syscall's exit). Read only at a message's first bytes.
 *
 * Sender: tcp_sendmsg advances write_seq by every byte it queues, so the
 * first byte of a write of len bytes was write_seq - len. snd_nxt would
 * not do: it counts what left, and queued bytes may wait for the window.
 * Receiver: tcp_recvmsg advances copied_seq by every byte it copies out
 * (not on MSG_PEEK, which the hooks skip), so the first byte of a read of
 * len bytes was copied_seq - len. rcv_nxt would not do: it counts what
 * arrived, which may be more than was read.
 * Both ends of a connection number one stream alike, and NAT rewrites
 * addresses and ports, never sequence numbers: the client's request
 * starts at the same number on both ends. */
#ifndef KMON_TCP_SEQ_BPF_H
#define KMON_TCP_SEQ_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>

static __always_inline __u32 sent_seq(const struct sock *sk, int len)
{
	const struct tcp_sock *tp = (const void *)sk;

	return BPF_CORE_READ(tp, write_seq) - (__u32)len;
}

#define KMON_RCV_SHUTDOWN 1

static __always_inline __u32 received_seq(const struct sock *sk, int len)
{
	const struct tcp_sock *tp = (const void *)sk;
	__u32 copied = BPF_CORE_READ(tp, copied_seq);

	/* A read that reaches the peer's FIN consumes it, and the FIN takes
	 * a sequence number: copied_seq is one past the data. It did when
	 * the FIN is in (RCV_SHUTDOWN) and nothing is left to read, the FIN
	 * included; a read that returned data cannot follow the one that
	 * consumed the FIN. */
	if ((BPF_CORE_READ(sk, sk_shutdown) & KMON_RCV_SHUTDOWN) &&
	    copied == BPF_CORE_READ(tp, rcv_nxt))
		copied--;
	return copied - (__u32)len;
}

#endif
