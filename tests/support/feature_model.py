"""The rules of a spine joined with a left and an as-of (nearest) feature source, in plain Python on day offsets:
what `feature_join` and a feature job's target must hold (tests/join/test_features.py,
tests/pipeline/controller/test_chain_of_two_jobs.py)."""

from __future__ import annotations

from collections import Counter
from itertools import product

WAITING, PROVISIONAL = 5, 7
Rows = list[tuple[int, int, int]]  # (key, row id, day offset)


def left_rows(a: tuple[int, int, int], b: Rows, lb: int, mw: int, e: int) -> list[tuple[int | None, int, int]]:
    """A left source's components of spine row `a` as of e: (B id, output day, JoinType) per match, else one."""
    k, _, ta = a
    found = [(ib, max(ta, tb), 1 if tb == ta else 2 if tb < ta else 3) for kb, ib, tb in b
             if kb == k and tb <= e and ta - lb <= tb <= ta + mw]  # fmt: skip
    if found:
        return found
    wait = min(mw, max(0, e - ta))
    return [(None, ta + wait, 4 if wait == mw else WAITING)]


def nearest_row(a: tuple[int, int, int], b: Rows, lb: int, mw: int, e: int) -> list[tuple[int | None, int, int]]:
    """An as-of (nearest) source's one component: the nearest B row arrived by e (ties: the later day, then the
    smaller id), final once no nearer row can arrive (a.t + min(mw, distance)), provisional before."""
    k, _, ta = a
    candidates = [(abs(tb - ta), -tb, ib, tb) for kb, ib, tb in b if kb == k and tb <= e and ta - lb <= tb <= ta + mw]
    if not candidates:
        wait = min(mw, max(0, e - ta))
        return [(None, ta + wait, 4 if wait == mw else WAITING)]
    distance, _, ib, tb = min(candidates)
    final = ta + min(mw, distance)
    if final > e:
        return [(ib, e, PROVISIONAL)]
    return [(ib, final, 1 if tb == ta else 2 if tb < ta else 3)]


def model(spine: Rows, left: Rows, asof: Rows, lbs: tuple[int, int], mws: tuple[int, int], s: int, e: int) -> Counter:
    """The combined rows with RecDate in [s, e]: (id, RecDate, L id, L JoinType, S id, S JoinType, WaitingTime,
    JoinType) as days from DAY0."""
    out: Counter[tuple] = Counter()
    for a in (row for row in spine if row[2] <= e):
        ta = a[2]
        for (lid, lt, lc), (sid, st_, sc) in product(
            left_rows(a, left, lbs[0], mws[0], e), nearest_row(a, asof, lbs[1], mws[1], e)
        ):
            rec = max(lt, st_)
            code = WAITING if WAITING in (lc, sc) else PROVISIONAL if PROVISIONAL in (lc, sc) else max(lc, sc)
            if s <= rec:
                out[(a[1], rec, lid, lc, sid, sc, rec - ta, code)] += 1
    return out
