"""A store over its bounds forgets the biggest owner's runs first: one student flooding
the store forgets their own runs, not the class's (on SQLite and PostgreSQL), and the
choice itself (:func:`csvm.store.eviction.choose_victims`) on many random stores."""

from __future__ import annotations

import random

import numpy as np
import pytest

from csvm.store import StoreLimits
from csvm.store.eviction import choose_victims
from tests.store.test_run_store import CONFIG, results


def _ids(store, owner):
    return [r.id for r in store.list_runs(owner=owner, include_hidden=True)]


def test_one_owner_flooding_the_store_forgets_its_own_runs_not_the_others(stores):
    store = stores(limits=StoreLimits(max_runs=4, keep_seconds=3600))
    for k in (1, 2):
        assert store.save(f"alice{k}", CONFIG, results(), owner="alice", class_code="7b") == []
    forgotten = [
        store.save(f"mallory{k}", CONFIG, results(), owner="mallory", class_code="7b")
        for k in range(1, 5)
    ]
    assert forgotten == [[], [], ["mallory1"], ["mallory2"]]
    assert _ids(store, "alice") == ["alice2", "alice1"]
    assert _ids(store, "mallory") == ["mallory4", "mallory3"]
    assert {r.id for r in store.list_runs("7b")} == {"alice1", "alice2", "mallory3", "mallory4"}


def test_the_owner_with_the_most_runs_loses_its_abandoned_one_first(stores):
    store = stores(limits=StoreLimits(max_runs=4, keep_seconds=3600))
    store.save("bob1", CONFIG, results(), owner="bob")
    for k in (1, 2, 3):
        store.save(f"mallory{k}", CONFIG, results(), owner="mallory")
    assert store.hide("mallory3")
    assert store.hide("bob1")  # hidden too, but Bob holds one run to Mallory's three
    assert store.save("bob2", CONFIG, results(), owner="bob") == ["mallory3"]
    assert _ids(store, "bob") == ["bob2", "bob1"]


def test_a_running_run_counts_towards_its_owners_share_but_stays(stores):
    store = stores(limits=StoreLimits(max_runs=3, keep_seconds=3600))
    store.save("alice1", CONFIG, results(), owner="alice")
    store.checkpoint("mallory-live", CONFIG, step=1, owner="mallory")
    store.save("mallory1", CONFIG, results(), owner="mallory")
    assert store.save("mallory2", CONFIG, results(), owner="mallory") == ["mallory1"]
    assert _ids(store, "alice") == ["alice1"]


def test_over_the_byte_bound_the_owner_with_the_most_bytes_loses_first(stores):
    small, big = results(filters=np.zeros((1, 5, 5))), results(filters=np.zeros((40, 5, 5)))
    probe = stores(limits=StoreLimits(max_bytes=10**9))
    probe.save("alice0", CONFIG, small, owner="alice")  # ids and owners of the same length
    probe.save("mallory0", CONFIG, big, owner="mallory")
    small_size, big_size = (probe.get(i).nbytes for i in ("alice0", "mallory0"))
    assert probe.delete("alice0") and probe.delete("mallory0")
    store = stores(limits=StoreLimits(max_bytes=2 * big_size + 3 * small_size))
    for k in (1, 2, 3):
        store.save(f"alice{k}", CONFIG, small, owner="alice")  # more runs, fewer bytes
    store.save("mallory1", CONFIG, big, owner="mallory")
    store.save("mallory2", CONFIG, big, owner="mallory")
    assert store.save("mallory3", CONFIG, big, owner="mallory") == ["mallory1"]
    assert _ids(store, "alice") == ["alice3", "alice2", "alice1"]


def _random_store(rng):
    owners = [f"o{k}" for k in range(rng.randint(1, 6))] + [None]
    rows = [
        (f"r{i}", rng.choice(owners), rng.randint(1, 50), int(rng.random() < 0.1))
        for i in range(rng.randint(0, 60))
    ]
    return rows, rng.randint(1, 40), rng.randint(1, 1500)


@pytest.mark.parametrize("seed", range(200))
def test_no_owner_loses_a_run_while_another_forgettable_owner_holds_more(seed):
    rows, max_runs, max_bytes = _random_store(random.Random(seed))
    victims = choose_victims(rows, max_runs, max_bytes)
    assert len(set(victims)) == len(victims)
    by_id = {row[0]: row for row in rows}
    assert not any(by_id[v][3] for v in victims)  # never a running run
    kept = dict(by_id)
    for victim in victims:
        count = len(kept)
        total = sum(row[2] for row in kept.values())
        assert count > max_runs or total > max_bytes  # never one more than needed
        owner = by_id[victim][1]
        mine = [row for row in kept.values() if row[1] == owner]
        # The owner's most disposable forgettable run: the first in the rows' order.
        assert victim == next(row[0] for row in rows if row in mine and not row[3])
        for other in {row[1] for row in kept.values() if not row[3]} - {owner}:
            theirs = [row for row in kept.values() if row[1] == other]
            if count > max_runs:
                assert len(theirs) <= len(mine)
            else:
                assert sum(row[2] for row in theirs) <= sum(row[2] for row in mine)
        del kept[victim]
    left = [row for row in kept.values()]
    within = len(left) <= max_runs and sum(row[2] for row in left) <= max_bytes
    assert within or all(row[3] for row in left)


def test_owners_with_equal_shares_lose_their_most_disposable_runs_in_turn():
    rows = [("a1", "a", 1, 0), ("b1", "b", 1, 0), ("a2", "a", 1, 0), ("b2", "b", 1, 0)]
    assert choose_victims(rows, max_runs=2, max_bytes=100) == ["a1", "b1"]
    assert choose_victims(rows, max_runs=4, max_bytes=100) == []
