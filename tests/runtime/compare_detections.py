# SPDX-License-Identifier: MIT
"""compare_detections.py REF.npy OUTDIR LABEL [BOUND]: a detector's answer against a reference.

REF.npy holds the reference detections, one row each: x1, y1, x2, y2, score, label.
OUTDIR holds the runtime's boxes.npy [K, 4], scores.npy [K] and labels.npy [K].
Both are sorted by score; each reference detection must then be matched, one to
one, by a detection of the same label whose score and box corners lie within
BOUND (default 1e-4) times the reference's largest magnitude (boxes and scores
each).  A detection may be matched anywhere among those whose scores lie within
that bound of its own: near-equal scores may come out in either order.  The
counts must agree; at the count's cut (a model keeps its best N) a detection
whose score is within the bound of the last kept may be another one."""
import sys

import numpy as np


def match(ref, got, bound=1e-4):
    """Match got's detections to ref's (rows x1, y1, x2, y2, score, label) as above: None
    where every one matches (or lies at the cut), else the first unmatched reference row's
    account; and (matched, at the cut, worst box error, worst score error)."""
    if len(got) != len(ref):
        return f"{len(got)} detections, reference {len(ref)}", None
    ref = ref[np.argsort(-ref[:, 4], kind="stable")]
    got = got[np.argsort(-got[:, 4], kind="stable")]
    box_tol = bound * max(float(np.abs(ref[:, :4]).max()) if len(ref) else 0.0, 1.0)
    score_tol = bound * max(float(np.abs(ref[:, 4]).max()) if len(ref) else 0.0, 1e-6)
    cut = min(ref[-1, 4], got[-1, 4]) + score_tol if len(ref) else 0.0
    used = np.zeros(len(got), bool)
    worst_box = worst_score = 0.0
    at_cut = 0
    for i, r in enumerate(ref):
        # candidates: unused detections of the same label whose score is near r's
        near = np.nonzero(~used & (np.abs(got[:, 4] - r[4]) <= score_tol) & (got[:, 5] == r[5]))[0]
        err = np.abs(got[near, :4] - r[:4]).max(1) if len(near) else np.zeros(0)
        if not len(near) or err.min() > box_tol:
            if r[4] <= cut:  # only at the count's cut may a near-tie be another box
                at_cut += 1
                continue
            return (f"reference detection {i} (label {int(r[5])}, score {r[4]:.6f}, box "
                    f"{np.round(r[:4], 3).tolist()}) has no match within {bound:g}"), None
        j = near[int(err.argmin())]
        used[j] = True
        worst_box = max(worst_box, float(err.min()))
        worst_score = max(worst_score, abs(got[j, 4] - r[4]))
    return None, (len(ref) - at_cut, at_cut, worst_box, worst_score)


def main():
    ref, out, label = np.load(sys.argv[1]).astype(np.float64), sys.argv[2], sys.argv[3]
    bound = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-4
    boxes, scores, labels = (np.load(f"{out}/{n}.npy") for n in ("boxes", "scores", "labels"))
    if labels.dtype != np.int64:
        sys.exit(f"{label}: labels are {labels.dtype}, not int64")
    if boxes.shape != (len(scores), 4) or labels.shape != scores.shape:
        sys.exit(f"{label}: boxes {boxes.shape}, scores {scores.shape}, labels {labels.shape} disagree")
    got = np.concatenate([boxes, scores[:, None], labels[:, None]], 1).astype(np.float64)
    if not np.all(np.isfinite(got)):
        sys.exit(f"{label}: output has NaN or Inf")
    why, found = match(ref, got, bound)
    if why:
        sys.exit(f"{label}: {why}")
    matched, at_cut, worst_box, worst_score = found
    print(f"{label}: {matched} of {len(ref)} detections matched ({at_cut} others at the cut, tied "
          f"with the last kept); max |box diff| {worst_box:.3g}, max |score diff| {worst_score:.3g}")


if __name__ == "__main__":
    main()
