"""The README's seven transactions as the tests of `explain` use them: each TrxId's A RecDate, B RecDate and the
outcome the README's table gives with look back 2 and wait 11 (transaction 6 times out with wait 10)."""

from __future__ import annotations

from deltainc.join.options import JoinType

SEVEN = {
    1: ("2025-03-06", "2025-03-05", JoinType.A_LATE),
    2: ("2025-03-06", "2025-03-04", JoinType.A_LATE),
    3: ("2025-03-06", "2025-03-06", JoinType.SAME_TIME),
    4: ("2025-03-07", "2025-03-07", JoinType.SAME_TIME),
    5: ("2025-03-07", "2025-03-12", JoinType.B_LATE),
    6: ("2025-03-07", "2025-03-18", JoinType.B_LATE),
    7: ("2025-03-08", "2025-03-06", JoinType.A_LATE),
}
