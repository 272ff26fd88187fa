# shellcheck shell=sh
# Sourced by the runtime tests: a command that must be refused.  Needs T set.
# refused WHAT MESSAGE COMMAND...: the command fails, saying MESSAGE (a grep pattern) in
# one line (a progress line before it aside)
refused() {
	what=$1 msg=$2
	shift 2
	if "$@" >"$T/out" 2>&1; then
		echo "$what: accepted"; cat "$T/out"; exit 1
	fi
	grep -q "$msg" "$T/out" || { echo "$what: not '$msg'"; cat "$T/out"; exit 1; }
	[ "$(grep -c . "$T/out")" -le 2 ] || { echo "$what: more than a line"; cat "$T/out"; exit 1; }
	echo "$what: $(tail -1 "$T/out")"
}
