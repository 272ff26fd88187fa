#!/bin/sh
# heteroopt serve and feed, a frame pipeline as a user builds one: frames in
# memfds and in the pool's buffers, sent as descriptors and read in place
# (the hand-off copies nothing), every answer checked by a consumer process
# against a plain run's, in turns of two inputs; the same with --copy; the
# server's descriptors all given back; and bad frames, sockets and options
# refused with one line naming the problem, the server serving on.
# usage: test_serve.sh HETEROOPT MODELS_DIR
set -u
EXE=$1
M=$2
PY=/usr/bin/python3
tmp=$(mktemp -d)
SQ=$M/squeezenet1_1.onnx
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"

$PY - "$tmp" <<'PYEOF'
import sys
import numpy as np
r = np.random.default_rng(1)
for k in "ab":
    np.save(sys.argv[1] + "/%s.npy" % k, r.standard_normal((1, 3, 224, 224), dtype=np.float32))
np.save(sys.argv[1] + "/small.npy", r.standard_normal((1, 3, 100, 100), dtype=np.float32))
PYEOF
for k in a b; do
	$EXE run "$SQ" --input "input=$tmp/$k.npy" -o "$tmp/r$k" --repeat 1 >/dev/null
done

# serve_bg LABEL OPTION...: a server for one client, its output in $tmp/LABEL.txt; waits
# until it listens
serve_bg() {
	label=$1
	shift
	rm -f "$tmp/s.sock"
	$EXE serve "$SQ" --socket "$tmp/s.sock" --shape input=1x3x224x224 "$@" >"$tmp/$label.txt" 2>&1 &
	i=0
	while [ $i -lt 100 ] && ! grep -q listening "$tmp/$label.txt" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
}
feed() {
	$EXE feed --socket "$tmp/s.sock" --input "input=$tmp/a.npy" --input "input=$tmp/b.npy" \
		--expect "logits=$tmp/ra/logits.npy" --expect "logits=$tmp/rb/logits.npy" "$@"
}

for from in memfd pool; do
	serve_bg "serve-$from"
	check "feed 100 frames from $from, two inputs in turn: every answer equal, nothing copied" 0 \
		"100 answers checked, the largest difference 0.00e+00" -- sh -c "
		out=\$($EXE feed --socket '$tmp/s.sock' --input 'input=$tmp/a.npy' --input 'input=$tmp/b.npy' \
			--expect 'logits=$tmp/ra/logits.npy' --expect 'logits=$tmp/rb/logits.npy' --frames 100 \
			--from $from) || exit 1
		echo \"\$out\"; echo \"\$out\" | grep -q 'the hand-off copied 0 bytes in all'"
	wait
	check "the server after $from: 100 frames, no copy, every descriptor given back" 0 "" -- \
		$PY - "$tmp/serve-$from.txt" <<'PYEOF'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"serve: (\d+) frames;.*copied (\d+) bytes a frame; open fds (\d+) before the first frame, (\d+) once", t)
assert m, t
assert m.group(1) == "100" and m.group(2) == "0" and m.group(3) == m.group(4), t
PYEOF
done

# A ring larger than the frames a plan keeps mapped: buffers evicted, answers still right.
serve_bg ring
check "a ring of 12 buffers (8 kept mapped): answers equal" 0 "60 answers checked" -- \
	feed --frames 60 --ring 12
wait
check "after the ring of 12: every descriptor given back" 0 "" -- sh -c \
	"grep -Eq 'open fds ([0-9]+) before the first frame, \\1 once' '$tmp/ring.txt'"

serve_bg copy --copy
check "--copy: the same answers, each frame copied in" 0 "the hand-off copied 60211200 bytes in all" -- \
	feed --frames 100
wait

# A frame the server cannot take: answered with its error; the next is served.
serve_bg bad --frames 3
check "bad frames answered with their error, good ones served" 0 "" -- $PY - "$tmp/s.sock" "$tmp/a.npy" <<'PYEOF'
import os, socket, struct, sys
import numpy as np
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
hello, fds, _, _ = socket.recv_fds(s, 1 << 16, 8)
assert struct.unpack_from("<4I", hello)[:4] == (0x52464f48, 1, 1, 1) and len(fds) == 1
def frame(fd, off=0, n=1):
    msg = struct.pack("<IIQ8Q", 0x52464f48, n, 7, off, 0, 0, 0, 0, 0, 0, 0)
    socket.send_fds(s, [msg], [fd] * n if fd is not None else [])
    done = s.recv(1 << 12)
    magic, status, ident = struct.unpack_from("<IiQ", done)
    err = done[40:].split(b"\0")[0].decode()
    return status, err
small = os.memfd_create("small")
os.ftruncate(small, 4096)
st, err = frame(small)
assert st == -22 and "fd" in err and "holds 4096 bytes" in err, (st, err)
print("too small:", err)
st, err = frame(None, n=0)
assert st != 0 and "0 descriptors for 1 inputs" in err, (st, err)
print("no descriptor:", err)
good = os.memfd_create("good")
x = np.load(sys.argv[2])
os.ftruncate(good, (x.nbytes + 4095) // 4096 * 4096)
os.pwrite(good, x.tobytes(), 0)
st, err = frame(good)
assert st == 0, err
print("then a good frame: served")
PYEOF
wait

ONE_LINE_ERRORS=1
check "serve without a socket" 2 "no --socket given" -- $EXE serve "$SQ"
! need_model "$M/ch_PP-OCRv4_det_infer.onnx" ||
	check "serve a model whose input dimension is unbound" 1 "" -- \
		$EXE serve "$M/ch_PP-OCRv4_det_infer.onnx" --socket "$tmp/u.sock"
check "feed with no server there" 1 "cannot connect to $tmp/none.sock" -- \
	$EXE feed --socket "$tmp/none.sock" --input "input=$tmp/a.npy"
check "feed from an unknown source" 2 "--from: memfd, pool, udmabuf or heap" -- \
	$EXE feed --socket "$tmp/s.sock" --input "input=$tmp/a.npy" --from camera
serve_bg small --frames 1
check "a frame of another shape, refused before it is sent" 1 "a frame of 120000 bytes for input 'input'" -- \
	$EXE feed --socket "$tmp/s.sock" --input "input=$tmp/small.npy"
wait
[ $fails = 0 ]
