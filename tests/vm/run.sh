#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Boots one kernel made by kernel.sh under qemu (TCG: there is no usable
# KVM here) with the host's / shared read-only, runs COMMAND in the
# guest from the current directory, and powers the guest off.
#   tests/vm/run.sh KERNEL_DIR SHARE_DIR COMMAND...
# SHARE_DIR is writable from the guest as /run/vmtest; the console goes to
# stdout. Exits with COMMAND's exit code (124 if the guest timed out).
set -euo pipefail
kdir=$(cd "$1" && pwd)
share=$(mkdir -p "$2" && cd "$2" && pwd)
shift 2
version=$(cat "$kdir/version")

rm -f "$share/rc"
# The guest's /tmp: a fresh, sparse ext4 image.
rm -f "$share/disk.img"
truncate -s "${VMTEST_DISK:-4G}" "$share/disk.img"
mkfs.ext4 -q -F "$share/disk.img"
cat >"$share/job.env" <<ENV
VMTEST_BOOT='$kdir/root/boot'
VMTEST_MODULES='$kdir/root/lib/modules'
VMTEST_CWD='$PWD'
VMTEST_NOFILE='$(ulimit -n)'
VMTEST_ROOTFS='$(cat "$kdir/rootfs" 2>/dev/null || true)'
ENV
{
	echo 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb'
	printf '%q ' "$@"
	echo
} >"$share/job.sh"

# mitigations=off: no speculation barriers, which cost a lot under TCG.
# loglevel=5: warnings reach the console, with the stack of a soft lockup.
# debug-threads: the host names the vCPU threads ("CPU 1/TCG").
# thread=single: the vCPUs take turns on one host thread. With a thread
# each (MTTCG), a vCPU could run the int3 that the kernel puts first
# while it patches a static key (a tracepoint switched on or off: every
# attach and detach) after the patch was done: "Oops: int3" in do_exit
# and a panic, seen once in the 6.12 guest's full run (tandem-caller
# exiting while kmond detached).
# An arm64 kernel (kernel.sh wrote its arch) boots on qemu's virt machine,
# whose console is the PL011 UART.
# no_timer_check (x86): the kernel checks at boot that the IO-APIC
# passes the timer's interrupts within a few ticks, and panics if not
# ("IO-APIC + timer doesn't work"). A guest whose host thread waits
# behind other work (guests run at nice 10 beside CI's suites, tried on
# 2026-11-30) failed it once in 3 boots: under TCG the ticks are the
# host's time.
qemu=(qemu-system-x86_64)
console=ttyS0
arch_args=no_timer_check
if [ "$(cat "$kdir/arch" 2>/dev/null)" = arm64 ]; then
	qemu=(qemu-system-aarch64 -M virt)
	console=ttyAMA0
	arch_args=
fi
timeout --kill-after=10 "${VMTEST_TIMEOUT:-3600}" \
	"${qemu[@]}" -accel "tcg,thread=${VMTEST_TCG_THREAD:-single}" -cpu max \
	-smp "${VMTEST_CPUS:-2}" -m "${VMTEST_MEM:-2G}" \
	-nodefaults -display none -serial stdio -no-reboot \
	-name vmtest,debug-threads=on \
	-kernel "$kdir/vmlinux" -initrd "$kdir/initrd.gz" \
	-append "console=$console rdinit=/init panic=-1 loglevel=5 mitigations=off $arch_args" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$share,mount_tag=vmshare,security_model=none" \
	-drive "file=$share/disk.img,if=virtio,format=raw,cache=unsafe" </dev/null || true
rm -f "$share/disk.img"
[ -s "$share/rc" ] || {
	echo "vmtest: the $version guest did not finish its command" >&2
	exit 124
}
exit "$(cat "$share/rc")"
