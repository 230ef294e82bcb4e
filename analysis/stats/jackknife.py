"""The jackknife over cases of the MRMC analyses: one estimate of the figures of merit' (FOM)
covariance, whatever the FOM (accuracy here; AUC in `auc_covariance`).

The case is the X-ray: leaving out one X-ray leaves out all of its questions, so questions
that share an X-ray are never treated as independent. Cov = (c - 1)/c * sum_k (FOM_(k) -
mean)(FOM_(k) - mean)' over the c X-rays (Obuchowski & Rockette 1995; MRMCaov's `jackknife`),
computed once here from the leave-one-out FOMs.
"""

from __future__ import annotations

import numpy as np


def leave_one_out_covariance(left_out: np.ndarray) -> np.ndarray:
    """The jackknife covariance of FOMs from their leave-one-case-out values (FOMs x cases)."""
    c = left_out.shape[1]
    centred = left_out - left_out.mean(axis=1, keepdims=True)
    return (c - 1) / c * (centred @ centred.T)


def jackknife_covariance(
    correct: np.ndarray, counted: np.ndarray, case_groups: np.ndarray, reader_groups: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy FOMs (t x r) and their jackknife covariance matrix ((t*r) x (t*r),
    modality-major), from `correct` and `counted`: t x r x X-rays sums of correct answers and
    of questions counted.

    Within each split-plot group g, X-ray k of the group is left out in turn and every FOM of
    the group's readers recomputed: (C - s_k) / (N - n_k); pairs of readers in different
    groups share no X-ray and get 0. One group (all zeros) is the factorial design.
    """
    t, r, _ = correct.shape
    total, n = correct.sum(axis=2), counted.sum(axis=2)
    fom = total / n
    cov = np.zeros((t * r, t * r))
    for g in np.unique(reader_groups):
        cases = np.flatnonzero(case_groups == g)
        readers = np.flatnonzero(reader_groups == g)
        c = len(cases)
        if c < 2:
            raise ValueError(f"group {g} needs at least two X-rays")
        s = correct[:, readers][:, :, cases]
        k = counted[:, readers][:, :, cases]
        with np.errstate(invalid="ignore", divide="ignore"):
            jack = (total[:, readers, None] - s) / (n[:, readers, None] - k)
        block = leave_one_out_covariance(jack.reshape(t * len(readers), c))
        index = (np.arange(t)[:, None] * r + readers[None, :]).ravel()
        cov[np.ix_(index, index)] = block
    return fom, cov
