#!/bin/sh
# Judge a guest's serial log: every expected result present and passing,
# no kernel report in dmesg, no kmemleak entry. Prints a summary; exit 0/1.
set -u
RAW=$1
TESTS=$2
DMA_TESTS=${3:-}
UNLOAD_TEST=${4:-}
DMA_RESULTS=""
if [ -n "$DMA_TESTS" ]; then
	DMA_RESULTS="dma_load $(for t in $DMA_TESTS; do printf '%s@dma ' "$t"; done)dma_unload"
fi
status=0
# The serial console ends lines with CR LF.
LOG=$RAW.txt
tr -d '\r' <"$RAW" >"$LOG"
last_lines() { # the last lines of a serial log, where a guest stopped
	tr -d '\r' <"$1" | tail -8 | cut -c1-160 | sed 's/^/    /'
}
grep -q '^==END==' "$LOG" || { echo "judge: the guest never finished (see $LOG)"; status=1; }
for r in insmod devnode $TESTS cli_status cli_write_box rmmod_busy accounting_zero rmmod proc_gone reload $UNLOAD_TEST $DMA_RESULTS; do
	rc=$(sed -n "s/^UMPRESULT $r \([0-9]*\).*/\1/p" "$LOG" | tail -1)
	secs=$(sed -n "s/^UMPRESULT $r [0-9]* \([0-9]*s\)$/\1/p" "$LOG" | tail -1)
	case $rc in
	0) printf '  pass  %-24s %s\n' "$r" "$secs" ;;
	77) echo "  skip  $r: $(sed -n "/^== test $r\$/,/^UMPRESULT $r /p" "$LOG" | grep '^SKIP' | tail -1)" ;;
	"") echo "  FAIL  $r: no result"; status=1 ;;
	*) echo "  FAIL  $r (exit $rc)"; sed -n "/^== test $r\$/,/^UMPRESULT $r /p" "$LOG" | tail -8 | sed 's/^/        /'; status=1 ;;
	esac
done
# Reports the kernel's checkers print, anywhere in the log.
if grep -nF -f "$(dirname "$0")/kernel-reports.txt" "$LOG" >"$LOG.reports"; then
	echo "judge: kernel reports in the guest's log:"
	head -40 "$LOG.reports"
	status=1
fi
# Where a guest stopped is the first thing to know about a hang; the
# caller shows only the end of this output, so it comes last.
HUNG=$(dirname "$RAW")/serial.hung-boot.log
if [ -f "$HUNG" ]; then
	echo "judge: a first boot never reached /init and was retried; its last lines:"
	last_lines "$HUNG"
fi
EARLY=$(dirname "$RAW")/serial.early-report.log
if [ -f "$EARLY" ]; then
	echo "judge: a first boot printed a kernel report before /init (ump.ko not yet loaded) and was retried; the report:"
	tr -d '\r' <"$EARLY" | grep -F -f "$(dirname "$0")/kernel-reports.txt" | head -4 | cut -c1-160 | sed 's/^/    /'
fi
if ! grep -q '^==END==' "$LOG"; then
	echo "judge: the guest's last lines:"
	last_lines "$LOG"
fi
exit $status
