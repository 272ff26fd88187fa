# shellcheck shell=sh
# Sourced by the runtime tests: a model run four ways, and each way's memory plan
# against the simulator's peak.  Needs HO, ROOT, T and ONCE set.
# as_scheduled RUN_LOG WHAT PHRASE: the report's "N PHRASE ..., schedule predicts N"
as_scheduled() {
	if grep -q "$3" "$1" && ! grep -Eq "([0-9]+) $3 .*schedule predicts \1$" "$1"; then
		echo "$2: $3: the run's count differs from the schedule's"
		grep "$3" "$1"
		exit 1
	fi
	sed -n "s|^ *\([0-9]* $3\).*\(schedule predicts [0-9]*\)|$2: \1, \2|p" "$1"
}

# Each model four ways: on one CPU device; the fastest schedule over this
# machine as two CPU devices; the fastest over a CPU and an emulated
# accelerator; and CPU + emulator with every Conv forced onto the emulator,
# so that most edges are copies between the two regions.
ways() { # ways MODEL INPUT_NAME SHAPE FILE OUTDIR [OP]: the four ways into OUTDIR.{1,2,3,4}; OP (Conv) on emu0 in the fourth
	S="$HO schedule --quiet --population 32 --generations 30 --objectives latency --seed 1"
	"$HO" run "$1" --input "$2=$4" -o "$5.1" $ONCE >/dev/null
	$S "$1" --shape "$2=$3" --box "$ROOT/boxes/this-machine-2cpu.json" -o "$T/s2.json" >/dev/null
	"$HO" run "$1" --input "$2=$4" --schedule "$T/s2.json" --pick 0 -o "$5.2" $ONCE >"$5.2.log"
	$S "$1" --shape "$2=$3" --box "$ROOT/boxes/this-machine-cpu-emu.json" -o "$T/s3.json" >/dev/null
	"$HO" run "$1" --input "$2=$4" --schedule "$T/s3.json" --pick 0 -o "$5.3" $ONCE >"$5.3.log"
	$S "$1" --shape "$2=$3" --box "$ROOT/boxes/this-machine-cpu-emu.json" --pin "${6:-Conv}=emu0" -o "$T/s4.json" >/dev/null
	"$HO" run "$1" --input "$2=$4" --schedule "$T/s4.json" --pick 0 -o "$5.4" $ONCE >"$5.4.log"
	for i in 2 3 4; do memory_matches "$5.$i.log" "$1 way $i"; done
	# Nodes folded into a kernel, and Concats whose inputs were written into their output:
	# the runtime's, as many as the schedule charged so.
	for i in 2 3 4; do
		as_scheduled "$5.$i.log" "$1 way $i" "nodes folded"
		as_scheduled "$5.$i.log" "$1 way $i" "Concats whose inputs"
	done
	# Copies made must be the schedule's, count and bytes, and there must be some.
	grep -Eq "copies: ([1-9][0-9]*) made \(([0-9]+) bytes\), schedule predicts \1 \(\2 bytes\)" "$5.4.log" ||
		{ echo "$1: copies differ from the schedule's, or none"; cat "$5.4.log"; exit 1; }
	grep "copies:" "$5.4.log"
}
# Every device's planned memory, with what its kernels hold and their workspace, within
# the simulator's predicted peak, and the prediction no further above the plan.  The slack (3% + 0.1 MB) covers
# the printed rounding, 64-byte alignment per buffer, small Constant
# outputs the simulator does not count and the offsets' fragmentation: the classifier's and recogniser's
# hundreds of tiny tensors need up to 3%, and the classifier's region, once its
# weights are its kernels' alone (0.64 MB), packs 0.06 MB above the peak of its live bytes.  Before the plan followed the
# timeline the detector on two CPU devices planned 45% over.  The simulator
# must know what the runtime never writes: views read in place (the
# transformer's 39 Identity and 20 Reshape nodes) hold no bytes of their own,
# and a Conv's kernel takes in its batch norm and element-wise node on one
# device and writes only the result.  Without the first it predicted 9.50 MB
# on cpu0 for the transformer's 3.47 MB planned, without the second 11.60 MB
# for squeezenet's 9.22 MB.
memory_matches() { # memory_matches RUN_LOG WHAT
	awk -v what="$2" 'function check() {
		printf "%s: %s %.2f MB planned, %.2f MB predicted\n", what, dev, plan, pred
		if (plan > pred * 1.03 + 0.1) { print what ": planned memory over the predicted peak"; bad = 1 }
		if (pred > plan * 1.03 + 0.1) { print what ": predicted peak over the planned memory"; bad = 1 }
		dev = ""
	}
	/MB planned/ {
		if (dev != "") check()
		dev = $1
		for (i = 1; i <= NF; i++) {
			if ($i == "planned") plan = $(i - 2)
			if ($i == "predicted") pred = $(i - 2)
		}
	}
	/its kernels:/ { for (i = 1; i <= NF; i++) if ($i == "workspace") plan += $3 + $(i - 2) }
	END { if (dev != "") check(); exit bad }' "$1" || exit 1
}

# pinned MODEL INPUT_NAME FILE OUT WHAT PIN...: the fastest schedule over the CPU and the
# emulator with each PIN (OP=DEVICE) run into OUT (its log OUT.log), memory as predicted
pinned() {
	p_model=$1 p_in=$2 p_file=$3 p_out=$4 p_what=$5
	shift 5
	p_pins=""
	for p in "$@"; do p_pins="$p_pins --pin $p"; done
	# shellcheck disable=SC2086
	"$HO" schedule --quiet --objectives latency --seed 1 "$p_model" \
		--box "$ROOT/boxes/this-machine-cpu-emu.json" $p_pins -o "$p_out.json" >/dev/null
	"$HO" run "$p_model" --input "$p_in=$p_file" --schedule "$p_out.json" --pick 0 -o "$p_out" \
		$ONCE --report >"$p_out.log"
	memory_matches "$p_out.log" "$p_what"
}
