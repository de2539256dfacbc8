"""Identical core Trainers in `hull`'s repair DP (hull_repair): many rows, one DP step.

Many Trainers often have the very same surviving levels and values (every new Trainer of one
model, see milp.groups_of). The LP then puts many of them on the two ends of one hull
segment with a gap (e.g. levels 1 and 8 of ShuffleNet), both with (almost) no reduced-cost
loss, and a DP step per Trainer makes the window of deviations grow by the gap each time.

A group of m identical rows is split exactly: q of them stay ordinary DP items (any of their
levels), the other M = m - q choose between the group's two levels of smallest loss, z0 < z1.
q = floor(G / third smallest loss) bounds how many rows of the group can take any other level
within the loss budget G, so every multiset of levels within G of the bound is covered (its
"other" picks go to the q ordinary rows, the rest is s rows at z1 and M - s at z0). The M
rows are one DP step: choosing s of them at z1 adds s*(z1 - z0) nodes and s*(v1 - v0) value,
so F'(D) = M*v0 + max_s F(D - C - w*s) + s*dv, a sliding-window maximum along each residue
class of D mod w, O(window * log M) instead of O(window * M).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Pair:
    """M identical rows choosing between levels z0 < z1 (values v0, v1)."""

    rows: np.ndarray   # the rows (Trainer positions)
    incs: np.ndarray   # their incumbent levels
    z0: int
    z1: int
    v0: float
    v1: float
    R: float           # each row's R_j

    @property
    def M(self) -> int:
        return len(self.rows)

    @property
    def dmin(self) -> int:
        return self.M * self.z0 - int(self.incs.sum())

    @property
    def dmax(self) -> int:
        return self.M * self.z1 - int(self.incs.sum())


def group(core: list, R: np.ndarray, lam: float, G: float, max_levels: int = 64) -> list:
    """The core's items: ordinary rows (j, inc, pa, pb, pva, pbe: hull_repair.classify)
    first, then one Pair per large group of identical rows (same pieces in absolute levels, at
    most max_levels levels)."""
    groups: dict = {}
    for item in core:
        j, inc, pa, pb, pva, pbe = item
        if int((pb - pa + 1).sum()) > max_levels:
            groups[id(item)] = [item]
            continue
        key = ((pa + inc).tobytes(), (pb + inc).tobytes(), pva.tobytes(), pbe.tobytes())
        groups.setdefault(key, []).append(item)
    rows_out, pairs = [], []
    for members in groups.values():
        m = len(members)
        if m < 2:
            rows_out.extend(members)
            continue
        j0, inc0, pa, pb, pva, pbe = members[0]
        lens = pb - pa + 1
        t = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
        levels = np.repeat(pa + inc0, lens) + t
        vals = np.repeat(pva, lens) + np.repeat(pbe, lens) * t
        loss = R[j0] - (vals - lam * levels)
        order = np.lexsort((levels, loss))
        third = float(loss[order[2]]) if len(order) > 2 else np.inf
        q = m if third <= 0 else (0 if third == np.inf else min(m, int(G // third)))
        if m - q < 2:
            rows_out.extend(members)
            continue
        rows_out.extend(members[:q])
        a, b = sorted(order[:2].tolist(), key=lambda i: levels[i])
        rest = members[q:]
        pairs.append(Pair(np.asarray([it[0] for it in rest]), np.asarray([it[1] for it in rest]),
                          int(levels[a]), int(levels[b]), float(vals[a]), float(vals[b]), float(R[j0])))
    return rows_out + pairs


def step(F: np.ndarray, lo: int, p: Pair) -> tuple[int, np.ndarray]:
    """(new lo, new F) after the Pair: F'(D) = M*v0 + max_{s=0..M} F(D - C - w*s) + s*dv."""
    return lo + p.dmin, progression(F, p.z1 - p.z0, p.M, p.M * p.v0, p.v1 - p.v0)


def progression(F: np.ndarray, w: int, M: int, v_base: float, dv: float) -> np.ndarray:
    """G(i) = v_base + max_{s=0..M} F(i - w*s) + s*dv for i = 0 .. len(F) + w*M - 1 (about):
    a sliding-window maximum along each residue class mod w, O(len * log M). Also one row's
    affine run of levels (w = 1, M = its width)."""
    T = -(-len(F) // w)
    Y = np.full(T * w, -np.inf)
    Y[:len(F)] = F
    Y = Y.reshape(T, w) - (np.arange(T) * dv)[:, None]
    P = np.concatenate((np.full((M, w), -np.inf), Y, np.full((M, w), -np.inf)))
    out = sliding_max(P, M + 1)  # out[u] = max Y[t] over t in [u - M, u]
    out += (np.arange(T + M) * dv)[:, None] + v_base
    return out.reshape(-1)


def sliding_max(P: np.ndarray, L: int) -> np.ndarray:
    """Maximum of every L consecutive rows of P (doubling: O(rows * log L))."""
    A, k = P, 1
    while 2 * k <= L:
        A = np.maximum(A[:-k], A[k:])
        k *= 2
    n = len(P) - L + 1
    return np.maximum(A[:n], A[L - k:L - k + n])


def back(F: np.ndarray, lo: int, p: Pair, D: int) -> tuple[int, int]:
    """(s, D before the Pair) for the total D after it: the smallest best s."""
    w, dv = p.z1 - p.z0, p.v1 - p.v0
    s = np.arange(p.M + 1)
    idx = D - p.dmin - w * s - lo
    ok = (idx >= 0) & (idx < len(F))
    cand = np.where(ok, F[np.clip(idx, 0, len(F) - 1)] + s * dv, -np.inf)
    best = int(np.argmax(cand))
    return best, D - p.dmin - w * best


def assign(p: Pair, s: int, x: np.ndarray) -> None:
    """Put s of the Pair's rows on z1 (those already there first, then in row order), the rest on z0."""
    order = np.lexsort((p.rows, p.incs != p.z1))
    lv = np.full(p.M, p.z0)
    lv[order[:s]] = p.z1
    x[p.rows] = lv
