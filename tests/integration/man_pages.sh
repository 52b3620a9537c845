#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The man pages `make` builds from man/*.scd render with man(1), without a
# warning, and say what the programs do: every option a program's --help
# prints has an entry in its page's OPTIONS, and every entry there is in
# --help (so neither can drift from the other); kmond.yaml(5) has every
# top-level key, collector and exporter type the config takes.
source "$(dirname "$0")/../lib/kmond.sh"

export MANWIDTH=80
PAGES="kmond.8 kmond.yaml.5 kmon-topo.1 kmon-trace.1 kmon-view.1"

for page in $PAGES; do
	f=$BUILD/man/$page
	[ -s "$f" ] || fail "$f was not built (make)"
	man -l -P cat "$f" >"$WORK/$page.txt" 2>"$WORK/$page.err" ||
		fail "man -l $page exited with $?: $(head -3 "$WORK/$page.err")"
	[ ! -s "$WORK/$page.err" ] || fail "man -l $page: $(head -3 "$WORK/$page.err")"
	[ "$(grep -c . "$WORK/$page.txt")" -gt 20 ] || fail "$page renders almost empty"
	grep -q "^NAME" "$WORK/$page.txt" || fail "$page has no NAME section"
done
echo "ok: the $(echo $PAGES | wc -w) pages render without a warning"

# options TEXT-FILE help|page: the options (-x, --long) named by lines that begin
# with an option, in --help's layout, or in a page's OPTIONS section.
options() {
	python3 - "$1" "$2" <<'PY'
import re, sys
path, kind = sys.argv[1], sys.argv[2]
lines = open(path, encoding="utf-8").read().splitlines()
if kind == "page":  # the entries of OPTIONS, up to the next section
    start = lines.index("OPTIONS") + 1
    end = next((i for i in range(start, len(lines))
                if re.match(r"[A-Z]", lines[i])), len(lines))
    lines = [l for l in lines[start:end] if re.match(r" {7}-", l)]
else:  # --help: a line that begins with an option, up to its description
    lines = [re.split(r"(?<=\S) {2,}", l.strip())[0]
             for l in lines if re.match(r"\s+-", l)]
opts = set()
for l in lines:
    opts.update(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", l))
print("\n".join(sorted(opts)))
PY
}

for prog in kmond kmon-topo kmon-trace kmon-view; do
	page=$(cd "$BUILD/man" && ls "$prog".[18])
	"$BUILD/$prog" --help >"$WORK/$prog.help" || fail "$prog --help exited with $?"
	options "$WORK/$prog.help" help >"$WORK/$prog.help.opts" || fail "options of $prog --help"
	options "$WORK/$page.txt" page >"$WORK/$prog.page.opts" || fail "options of $page"
	[ "$(wc -l <"$WORK/$prog.help.opts")" -ge 5 ] ||
		fail "$prog --help: no options found: $(cat "$WORK/$prog.help.opts")"
	# -h/--help is in every page, and --help does not print itself
	missing=$(comm -23 "$WORK/$prog.help.opts" "$WORK/$prog.page.opts")
	extra=$(comm -13 "$WORK/$prog.help.opts" "$WORK/$prog.page.opts" |
		grep -vx -e -h -e --help)
	[ -z "$missing" ] || fail "$page lacks what $prog --help prints:" $missing
	[ -z "$extra" ] || fail "$page documents what $prog --help does not print:" $extra
	echo "ok: $page and $prog --help name the same $(wc -l <"$WORK/$prog.help.opts") options"
done

# kmond --help and kmond(8): signals, the environment, exit codes.
for word in SIGHUP SIGINT SIGTERM KMOND_PROBE_DENY KMOND_PROBE_FAIL_LOAD 'exit codes'; do
	grep -q "$word" "$WORK/kmond.help" || fail "kmond --help does not name $word"
done
for section in SIGNALS ENVIRONMENT 'EXIT STATUS' FILES; do
	grep -qx "$section" "$WORK/kmond.8.txt" || fail "kmond(8) has no $section section"
done
grep -q '/etc/kmond/kmond.yaml' "$WORK/kmond.8.txt" || fail "kmond(8) does not name its config file"
echo "ok: kmond --help and kmond(8) name the signals, the environment and the exit codes"

for key in node interval services collectors exporters \
	syscall drop offcpu bio tcp counters 'type: file' 'type: kafka' 'type: prometheus'; do
	grep -q "^ \{7\}$key" "$WORK/kmond.yaml.5.txt" || fail "kmond.yaml(5) has no entry for $key"
done
echo "ok: kmond.yaml(5) has every top-level key, collector and exporter type"
