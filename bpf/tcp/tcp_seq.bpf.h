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

/* trusted: sk is a BTF pointer (a tp_btf argument); its tcp_sock is then
 * read with plain loads instead of a probe read per field. */
static __always_inline const struct tcp_sock *tcp_of(const struct sock *sk,
						     bool trusted)
{
	if (trusted)
		return bpf_skc_to_tcp_sock((void *)sk);
	return (const void *)sk;
}

#define KMON_TCP_READ(tp, trusted, field) \
	((trusted) ? (tp)->field : BPF_CORE_READ((tp), field))

static __always_inline __u32 sent_seq(const struct sock *sk, int len,
				      bool trusted)
{
	const struct tcp_sock *tp = tcp_of(sk, trusted);

	if (!tp)
		return 0;
	return KMON_TCP_READ(tp, trusted, write_seq) - (__u32)len;
}

#define KMON_RCV_SHUTDOWN 1

static __always_inline __u32 received_seq(const struct sock *sk, int len,
					  bool trusted)
{
	const struct tcp_sock *tp = tcp_of(sk, trusted);
	__u32 copied;
	__u8 shutdown;

	if (!tp)
		return 0;
	copied = KMON_TCP_READ(tp, trusted, copied_seq);
	shutdown = trusted ? sk->sk_shutdown : BPF_CORE_READ(sk, sk_shutdown);
	/* A read that reaches the peer's FIN consumes it, and the FIN takes
	 * a sequence number: copied_seq is one past the data. It did when
	 * the FIN is in (RCV_SHUTDOWN) and nothing is left to read, the FIN
	 * included; a read that returned data cannot follow the one that
	 * consumed the FIN. */
	if ((shutdown & KMON_RCV_SHUTDOWN) &&
	    copied == KMON_TCP_READ(tp, trusted, rcv_nxt))
		copied--;
	return copied - (__u32)len;
}

#endif
