#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run: alone: makes and removes /etc/kmond
# make install (PREFIX, DESTDIR) puts kmond, the consumers, the default
# config, the systemd unit and the man pages in place, the unit runs the
# installed binary on the installed config, and so does kmond with no
# arguments.
source "$(dirname "$0")/../lib/kmond.sh"

root=$WORK/root
make -s --no-print-directory install OUT="$BUILD" DESTDIR="$root" PREFIX=/opt/kmon >/dev/null ||
	fail "make install failed"
for f in opt/kmon/sbin/kmond opt/kmon/bin/kmon-topo opt/kmon/bin/kmon-view; do
	[ -x "$root/$f" ] || fail "$f is not installed"
done
[ -f "$root/etc/kmond/kmond.yaml" ] || fail "the default config is not installed"
for f in man8/kmond.8 man5/kmond.yaml.5 man1/kmon-topo.1 man1/kmon-trace.1 man1/kmon-view.1; do
	[ -s "$root/opt/kmon/share/man/$f" ] || fail "the man page $f is not installed"
done
MANPATH=$root/opt/kmon/share/man man -P cat 5 kmond.yaml 2>/dev/null | grep -q '^NAME' ||
	fail "man 5 kmond.yaml does not find the installed page"
echo "ok: the man pages are installed under PREFIX/share/man"
unit=$root/lib/systemd/system/kmond.service
expect_eq "ExecStart" "$(grep '^ExecStart=' "$unit")" \
	"ExecStart=/opt/kmon/sbin/kmond -c /etc/kmond/kmond.yaml"
grep -q '@' "$unit" && fail "placeholders left in the unit: $(grep '@' "$unit")"
"$root/opt/kmon/sbin/kmond" -c "$root/etc/kmond/kmond.yaml" --check ||
	fail "the installed kmond refuses the installed config"
echo "ok: installed kmond checks the installed config"

# With no -c, the installed kmond runs on the installed config: seen in a
# mount namespace of its own where the installed /etc/kmond stands at
# /etc/kmond (the host's is left alone).
made_etc=
[ -d /etc/kmond ] || { mkdir /etc/kmond && made_etc=1; }
unshare -m --propagation private sh -c '
	mount --bind "$1/etc/kmond" /etc/kmond &&
	exec "$1/opt/kmon/sbin/kmond" --duration 1' sh "$root" \
	>"$WORK/noargs.out" 2>"$WORK/noargs.err"
rc=$?
[ -n "$made_etc" ] && rmdir /etc/kmond
expect_eq "exit code of kmond with no arguments" $rc 0
grep -q "running on /etc/kmond/kmond.yaml" "$WORK/noargs.err" ||
	fail "kmond with no arguments did not run on /etc/kmond/kmond.yaml: $(cat "$WORK/noargs.err")"
grep -q '"kind":"stats"' "$WORK/noargs.out" ||
	fail "kmond with no arguments wrote no records on stdout"
echo "ok: the installed kmond with no arguments runs on /etc/kmond/kmond.yaml"
