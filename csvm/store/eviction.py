"""Which runs a store over its bounds forgets: the biggest owner's first, oldest first.

One server-wide bound shared by a whole class would let one student's flood of runs push
everyone else's off the store and the Class board, if the oldest runs went first
whoever made them.  So the store takes from the owner who holds the most: over the run
count bound, the owner with the most runs (ties: the most bytes); over the byte bound,
the owner with the most bytes (ties: the most runs).  From that owner it takes the run
that is most disposable: an *abandoned* one first (hidden, or neither written nor opened
for ``keep_seconds``), then the least recently used.  Owners that tie go in that order
too, so a store whose owners all hold the same share forgets as it did before.

Consequences: an owner flooding the store forgets its own runs before anyone else's, and
an owner's newest run is never forgotten while another owner holds more runs (over the
count bound).  Runs without an owner (the command line, scripts) count as one owner.  A
running run is never forgotten; it still counts towards its owner's share.
"""

from __future__ import annotations

import heapq
from collections import defaultdict, deque
from collections.abc import Iterable
from typing import NamedTuple

__all__ = ["EVICTION_ROWS", "Row", "choose_victims"]

#: The query :func:`choose_victims` reads: every run, the most disposable first (an
#: owner's runs are taken in this order).  ``:keep`` is ``keep_seconds``.
EVICTION_ROWS = (
    "SELECT id, owner, nbytes, CASE WHEN status = 'running' THEN 1 ELSE 0 END "
    "FROM csvm_runs ORDER BY "
    "CASE WHEN hidden <> 0 OR touched < :now - :keep THEN 0 ELSE 1 END, "
    "touched, created, id"
)


class Row(NamedTuple):
    """One run as :data:`EVICTION_ROWS` reads it.

    Parameters
    ----------
    id : str
    owner : str or None
        The owner's hash (None: no owner).
    nbytes : int
        Its stored size.
    running : int
        1 while it trains (never forgotten), else 0.
    """

    id: str
    owner: str | None
    nbytes: int
    running: int


def choose_victims(rows: Iterable[Row | tuple], max_runs: int, max_bytes: int) -> list[str]:
    """The ids to forget, in order, to bring the runs within both bounds.

    Parameters
    ----------
    rows : iterable of Row
        Every run in the store, the most disposable first (as :data:`EVICTION_ROWS`).
    max_runs, max_bytes : int
        The bounds (:class:`csvm.store.StoreLimits`).

    Returns
    -------
    list of str
        Fewer than needed only when the rest are running.

    Examples
    --------
    Alice made two runs, then Mallory four, in a store that keeps four: Mallory's
    oldest two go, and Alice keeps hers.

    >>> rows = [("a1", "alice", 1, 0), ("a2", "alice", 1, 0)]
    >>> rows += [(f"m{k}", "mallory", 1, 0) for k in range(1, 5)]
    >>> choose_victims(rows, max_runs=4, max_bytes=100)
    ['m1', 'm2']
    """
    runs: dict[str | None, int] = defaultdict(int)
    size: dict[str | None, int] = defaultdict(int)
    # Per owner, its forgettable runs in order: (rank in rows, id, bytes).
    queue: dict[str | None, deque[tuple[int, str, int]]] = defaultdict(deque)
    for rank, (run_id, owner, nbytes, running) in enumerate(rows):
        runs[owner] += 1
        size[owner] += int(nbytes)
        if not running:
            queue[owner].append((rank, run_id, int(nbytes)))
    count, total = sum(runs.values()), sum(size.values())

    def key(owner: str | None, by_count: bool) -> tuple[int, int, int, str]:
        share = (runs[owner], size[owner]) if by_count else (size[owner], runs[owner])
        # The rank is unique, so owners never compare by the (possibly None) owner.
        return (-share[0], -share[1], queue[owner][0][0], owner or "")

    victims: list[str] = []
    heap: list[tuple[int, int, int, str]] = []
    owners: dict[str, str | None] = {}
    by_count: bool | None = None
    while count > max_runs or total > max_bytes:
        if (count > max_runs) != by_count:
            # The bound that is exceeded decides what a share is: rebuild the order.
            by_count = count > max_runs
            owners = {owner or "": owner for owner, left in queue.items() if left}
            heap = [key(owner, by_count) for owner in owners.values()]
            heapq.heapify(heap)
        if not heap:
            break
        owner = owners[heapq.heappop(heap)[3]]
        _, run_id, nbytes = queue[owner].popleft()
        victims.append(run_id)
        runs[owner], size[owner] = runs[owner] - 1, size[owner] - nbytes
        count, total = count - 1, total - nbytes
        if queue[owner]:
            heapq.heappush(heap, key(owner, by_count))
    return victims
