# SPDX-License-Identifier: MIT
"""compare.py REF.npy OUT.npy LABEL [BOUND]: the runtime's answer against a reference.

Passes when the shapes agree and the largest absolute difference is at most
BOUND (default 1e-4, the runtime issue's bound; 0 for pure data movement)
times the reference's largest magnitude."""
import sys

import numpy as np

ref, out, label = np.load(sys.argv[1]), np.load(sys.argv[2]), sys.argv[3]
bound = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-4
if ref.shape != out.shape:
    sys.exit(f"{label}: shape {out.shape}, reference {ref.shape}")
if ref.dtype.kind in "iub" and out.dtype != ref.dtype:
    sys.exit(f"{label}: {out.dtype}, reference {ref.dtype}")
if not np.all(np.isfinite(out)):
    sys.exit(f"{label}: output has NaN or Inf")
diff = float(np.abs(out.astype(np.float64) - ref).max()) if ref.size else 0.0
mag = float(np.abs(ref).max()) if ref.size else 0.0
ratio = diff / mag if mag > 0 else diff
print(f"{label}: shape {out.shape}, max |diff| {diff:.3g}, reference max {mag:.3g}, ratio {ratio:.2e}")
if ratio > bound:
    sys.exit(f"{label}: ratio {ratio:.2e} is over {bound:g}")
