"""Which finished jobs a server keeps: a byte budget that spares the owners still watching.

A class of thirty runs hundreds of jobs a day, and a finished job's events and result
stay on the server so a page can reattach to it.  :class:`Retention` bounds them:

* the total pickled size (``budget_bytes``) and, as a second bound, their number
  (``max_count``);
* while over a bound, the job that finished longest ago is forgotten first **if its
  owner is gone** (no owner, or no sign of life within the lease);
* a live owner's jobs are forgotten only when that owner **alone** is over a bound --
  its oldest first, never its newest (a page always finds the run it just made).

So a run is never forgotten while the tab that made it is open, unless that one tab
holds more than the whole budget.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable

__all__ = ["Retention"]


class Retention:
    """Finished jobs in the order they finished, with their owners and sizes.

    Parameters
    ----------
    budget_bytes : int
        Total size kept.
    max_count : int
        Jobs kept.
    """

    def __init__(self, budget_bytes: int, max_count: int):
        self.budget_bytes = int(budget_bytes)
        self.max_count = int(max_count)
        self._jobs: OrderedDict[str, tuple[Hashable, int]] = OrderedDict()
        self.total_bytes = 0

    def __len__(self) -> int:
        return len(self._jobs)

    def __contains__(self, job_id: object) -> bool:
        return job_id in self._jobs

    def add(self, job_id: str, owner: Hashable, nbytes: int) -> None:
        """Record a job that has just finished (the newest one)."""
        if job_id in self._jobs:
            return
        self._jobs[job_id] = (owner, int(nbytes))
        self.total_bytes += int(nbytes)

    def over(self) -> bool:
        """Whether a bound is exceeded."""
        return self.total_bytes > self.budget_bytes or len(self._jobs) > self.max_count

    def victims(self, alive: Callable[[Hashable], bool]) -> list[str]:
        """Choose and forget jobs until within bounds, or none may go; returns their ids.

        ``alive(owner)`` tells whether an owner has shown a sign of life within its lease
        (called for ``None`` too: unowned jobs, normally not alive).
        """
        chosen: list[str] = []
        while self.over():
            victim = next((j for j, (o, _) in self._jobs.items() if not alive(o)), None)
            if victim is None:
                victim = self._over_owner_victim()
            if victim is None:
                break
            owner, nbytes = self._jobs.pop(victim)
            self.total_bytes -= nbytes
            chosen.append(victim)
        return chosen

    def _over_owner_victim(self) -> str | None:
        """The oldest job of an owner who alone is over a bound, never its newest."""
        size: Counter[Hashable] = Counter()
        number: Counter[Hashable] = Counter()
        newest: dict[Hashable, str] = {}
        for job_id, (owner, nbytes) in self._jobs.items():  # oldest first
            size[owner] += nbytes
            number[owner] += 1
            newest[owner] = job_id
        for job_id, (owner, _) in self._jobs.items():
            alone_over = size[owner] > self.budget_bytes or number[owner] > self.max_count
            if alone_over and newest[owner] != job_id:
                return job_id
        return None

    def owner_bytes(self) -> dict[Hashable, int]:
        """Bytes kept per owner."""
        size: Counter[Hashable] = Counter()
        for owner, nbytes in self._jobs.values():
            size[owner] += nbytes
        return dict(size)
