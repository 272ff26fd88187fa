# Shared by the CLI tests: check DESCRIPTION EXPECTED_RC NEEDLE -- command...
# passes when the command exits EXPECTED_RC and (if NEEDLE is set) prints NEEDLE;
# with ONE_LINE_ERRORS=1, a failing command must print exactly one line.
fails=0

# need_model FILE: true if there; else the one skip line (and false).
need_model() {
	[ -s "$1" ] && return 0
	echo "skipped: $1 not present (scripts/models.sh makes or fetches it)"
	return 1
}

check() {
	desc=$1 want=$2 needle=$3
	shift 4
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" != "$want" ]; then
		echo "FAIL $desc: exit $rc, wanted $want: $(printf '%s' "$out" | tail -5)"
		fails=$((fails + 1))
		return
	fi
	if [ -n "$needle" ] && ! printf '%s' "$out" | grep -qF -- "$needle"; then
		echo "FAIL $desc: output lacks '$needle': $(printf '%s' "$out" | tail -5)"
		fails=$((fails + 1))
		return
	fi
	if [ "${ONE_LINE_ERRORS:-0}" = 1 ] && [ "$want" != 0 ] && [ "$(printf '%s\n' "$out" | wc -l)" != 1 ]; then
		echo "FAIL $desc: error is not one line: $out"
		fails=$((fails + 1))
		return
	fi
	echo "ok   $desc"
}
