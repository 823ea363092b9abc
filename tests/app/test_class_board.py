"""The run store in the app (AppTest): the Class board, stored runs opened from their links,
display names and the teacher key, on a SQLite file and on a throwaway PostgreSQL."""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict

import pytest
from streamlit.testing.v1 import AppTest

from csvm.store import owner_hash
from explorer import class_board as board
from explorer.class_board import SORTS, check_display_name
from explorer.run_store import reopen_store
from explorer.settings import md_escape
from tests._apptest import ROOT, open_app, wait_for_results
from tests._postgres import fresh_schema, throwaway_postgres, why_no_postgres
from tests._stored_runs import save_run

HOSTILE = ("<a href=x>CLICK</a>", "**bold**", '<span style="font-size:90px">big</span>')
KEY = "correct horse battery"


@pytest.fixture(scope="module")
def pg_server():
    reason = why_no_postgres()
    if reason is not None:
        pytest.skip(f"no PostgreSQL for the run store's app tests: {reason}")
    with throwaway_postgres() as url:
        yield url


def _use(url: str):
    """Make ``url`` the app's store for one test, then put the suite's back."""
    before = os.environ.get("CSVM_RUN_STORE")
    os.environ["CSVM_RUN_STORE"] = url
    try:
        yield reopen_store()
    finally:
        if before is None:
            os.environ.pop("CSVM_RUN_STORE", None)
        else:
            os.environ["CSVM_RUN_STORE"] = before
        reopen_store()


@pytest.fixture
def sqlite_store(tmp_path):
    yield from _use(f"sqlite:///{tmp_path}/runs.sqlite")


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    """The app's store on a new SQLite file, or in a new PostgreSQL schema."""
    if request.param == "sqlite":
        yield from _use(f"sqlite:///{tmp_path}/runs.sqlite")
        return
    with fresh_schema(request.getfixturevalue("pg_server")) as url:
        yield from _use(url)


def _board(owner: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if owner is not None:
        at.session_state["owner"] = owner  # as the owner cookie's hash would be
    at.run()
    return at.switch_page("pages/class_board.py").run()


def _names_on(at: AppTest) -> list[str]:
    """The board's names, top to bottom, as markdown received them."""
    return [
        m.value
        for m in at.markdown
        if any(m.value.startswith(md_escape(n)) for n in HOSTILE + ("Ada",))
    ]


def test_the_board_shows_hostile_names_as_typed_and_sorts_by_accuracy(store):
    for name, acc in zip(HOSTILE, (0.90, 0.97, 0.80), strict=True):
        save_run(store, name, accuracy=acc)
    save_run(store, "Ada", status="interrupted")
    at = _board()
    assert not at.exception
    # Escaped for markdown: each shows as the characters typed, never as a link, bold
    # text or a 90 px span (tests/browser/test_browser_class_board.py reads the page).
    assert _names_on(at) == [md_escape("Ada"), *(md_escape(n) for n in reversed(HOSTILE))]
    assert not [m for m in at.markdown if m.value in HOSTILE]
    texts = [m.value for m in at.markdown]
    assert "interrupted at step 1" in texts
    assert any(t.startswith("97.00 % (95 % interval") for t in texts)
    at.radio(key="board_sort").set_value(SORTS[1]).run()
    assert _names_on(at) == [md_escape(n) for n in (HOSTILE[1], HOSTILE[0], HOSTILE[2], "Ada")]
    # Project the best four: projector mode on, the three runs with an accuracy, best first
    # whatever the sort, and the page says so: the caption (not "newest first") and no sort.
    at.radio(key="board_sort").set_value(SORTS[0]).run()
    at.button(key="board_project").click().run()
    assert at.session_state["projector"] is True
    best = [m.value for m in at.markdown if m.value.startswith("## ")]
    assert best == ["## " + md_escape(HOSTILE[i]) for i in (1, 0, 2)]
    (said,) = [c.value for c in at.caption if "Updated" in c.value]
    assert "the four with the highest test accuracy" in said and SORTS[0] not in said
    assert not at.radio
    # The way back finds the board as it was left: the sort chosen, projector mode on.
    at.button(key="board_unproject").click().run()
    assert at.radio(key="board_sort").value == SORTS[0]
    assert not [m for m in at.markdown if m.value.startswith("## ")]
    at.radio(key="board_sort").set_value(SORTS[1]).run()
    at.button(key="board_project").click().run()
    at.button(key="board_unproject").click().run()
    assert at.radio(key="board_sort").value == SORTS[1]
    assert _names_on(at)[0] == md_escape(HOSTILE[1])
    assert at.session_state["projector"] is True


def test_a_stored_run_opens_from_its_link_shared_for_others_and_the_owners_own(store):
    done = save_run(store, "Ada", owner="owner-ada", accuracy=None)
    cut = save_run(store, "Bob", owner="owner-bob", status="interrupted")
    viewer = wait_for_results(open_app({"run": done, "jobs": "store", "pace": "live"}))
    assert not viewer.exception
    heading = [m.value for m in viewer.markdown if m.value.startswith("## ")]
    assert heading and heading[0].startswith("## K-CSVM: 96.00\u00a0% test, 2 steps")
    assert any(i.value.startswith("Shared view") for i in viewer.info)
    assert viewer.session_state["runs"][done].stored
    owner = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    owner.session_state["owner"] = "owner-ada"
    for key, value in {"run": done, "jobs": "store", "pace": "live"}.items():
        owner.query_params[key] = value
    owner = wait_for_results(owner.run())
    assert not owner.exception
    assert not [i for i in owner.info if i.value.startswith("Shared view")]
    assert owner.button(key="stop").label.endswith("Stop")
    # Cut off while it trained: its last step, said in words.
    at = open_app({"run": cut, "jobs": "store", "pace": "live"})
    for _ in range(30):
        if any(m.value.startswith("## K-CSVM interrupted at step 1") for m in at.markdown):
            break
        time.sleep(0.2)
        at.run()
    assert not at.exception
    assert any("interrupted at step 1" in w.value for w in at.warning)
    heading = [m.value for m in at.markdown if m.value.startswith("## ")]
    assert heading == [
        "## K-CSVM interrupted at step 1: the server stopped while it trained, its "
        "last saved step is shown"
    ]
    # A link to a run that no store has still says so.
    gone = open_app({"run": "deadbeef", "jobs": "store"})
    assert any("no longer on the server" in w.value for w in gone.warning)


def test_teacher_actions_need_the_key(sqlite_store, monkeypatch):
    ada = save_run(sqlite_store, "Ada")
    save_run(sqlite_store, "**bold**")
    monkeypatch.delenv("CSVM_TEACHER_KEY", raising=False)
    at = _board()
    assert any(
        "Teacher actions are off" in i.value and "CSVM_TEACHER_KEY" in i.value for i in at.info
    )
    assert not [b for b in at.button if b.key and b.key.startswith("board_hide_")]
    monkeypatch.setenv("CSVM_TEACHER_KEY", KEY)
    at = _board()
    at.text_input(key="teacher_key").input("not the key").run()
    assert any(e.value == "That is not the teacher key\\." for e in at.error)
    assert not [b for b in at.button if b.key and b.key.startswith("board_hide_")]
    at.text_input(key="teacher_key").input(KEY).run()
    at.button(key=f"board_hide_{ada}").click().run()
    assert md_escape("Ada") not in _names_on(at)
    assert sqlite_store.get(ada).hidden  # off the board; its link still opens it
    at.text_input(key="teacher_code").input("maths-7b").run()
    at.button(key="teacher_set_code").click().run()
    assert any(c.value.startswith("Runs of class maths\\-7b") for c in at.caption)
    assert _names_on(at) == []  # runs before the code belong to no class
    save_run(sqlite_store, "Ada", class_code="maths-7b")
    at.run()
    assert _names_on(at) == [md_escape("Ada")]
    at.checkbox(key="teacher_sure").check().run()
    at.button(key="teacher_clear").click().run()
    assert _names_on(at) == []
    # A student's session (no key) has no action on anyone's run.
    student = _board()
    assert not [
        b for b in student.button if b.key and b.key.startswith(("board_hide_", "teacher_"))
    ]


def test_a_train_run_is_stored_with_its_display_name_and_opens_in_compare(sqlite_store):
    at = open_app({"n_iter": "2", "n_train": "200", "baselines": "svm", "pace": "live"})
    at.sidebar.text_input(key="display_name_box").input("evil\u202etxt").run()
    assert any("U\\+202E" in e.value for e in at.sidebar.error)
    at.sidebar.text_input(key="display_name_box").input(HOSTILE[1]).run()
    assert not at.sidebar.error
    at.button(key="start").click().run()
    at = wait_for_results(at)
    run_id = at.session_state["current_run"]
    deadline = time.time() + 30
    while time.time() < deadline:
        stored = sqlite_store.get(run_id)
        if stored is not None and stored.status == "done":
            break
        time.sleep(0.3)
    assert stored is not None and stored.status == "done"
    assert stored.name == HOSTILE[1]
    assert stored.owned_by(at.session_state["owner"])
    assert stored.owner == owner_hash(at.session_state["owner"]) != at.session_state["owner"]
    assert stored.step == 2 and len(stored.history) == 2 and stored.filters.shape == (2, 5, 5)
    # Another browser opens it (with an older run) in Compare, read-only.
    other = save_run(sqlite_store, "Ada")
    viewer = _board()
    viewer.multiselect(key="board_compare").select(run_id).select(other).run()
    viewer.button(key="board_compare_go").click().run()
    assert not viewer.exception
    assert set(viewer.session_state["runs"]) == {run_id, other}
    assert not any(
        r.owned_by(viewer.session_state["owner"]) for r in viewer.session_state["runs"].values()
    )
    assert [t.value for t in viewer.title] == ["Compare runs"]


@pytest.mark.parametrize(
    "text, problem",
    [
        ("Ada\nLovelace", "U+000A"),
        ("Ada\tL", "U+0009"),
        ("evil\u202etxt", "U+202E"),
        ("zero\u200bwidth", "U+200B"),
        ("x" * 41, "at most 40 characters"),
    ],
)
def test_display_names_that_are_refused_say_why(text, problem):
    name, said = check_display_name(text)
    assert name == "" and problem in said


def test_display_names_are_kept_as_typed_but_for_spaces():
    assert check_display_name("  Ada   <b>L</b>  ") == ("Ada <b>L</b>", None)
    assert check_display_name("x" * 40) == ("x" * 40, None)
    assert check_display_name("") == ("", None)


def test_a_store_that_cannot_be_opened_leaves_the_app_working_and_says_why():
    for _ in _use("mysql://teacher@db/runs"):  # not a store URL: refused by name
        at = _board()
        assert not at.exception
        assert any(
            "run store could not be opened" in w.value and "CSVM\\_RUN\\_STORE" in w.value
            for w in at.warning
        )
        link = open_app({"run": "deadbeef", "jobs": "store"})
        assert not link.exception
        assert any("no longer on the server" in w.value for w in link.warning)


def test_a_run_of_several_classes_is_listed_by_them_in_words():
    # The board listed "K-CSVM · mnist-5k 3,5,0" where Compare says "classes 3, 5, 0".
    from types import SimpleNamespace

    from explorer.class_board_view import model_text

    def listed(pair: str) -> str:
        return model_text(SimpleNamespace(model="kcsvm", dataset="mnist", pair=pair))

    assert listed("3,5,0") == md_escape("K-CSVM · mnist classes 3, 5, 0")
    assert listed("all") == md_escape("K-CSVM · mnist all classes")
    assert listed("3 vs 5") == md_escape("K-CSVM · mnist 3 vs 5")


def test_the_best_four_are_of_the_newest_runs_task():
    """Ranked together, the teaching set's 99 % always took the four places from the
    digits exercise the class was on."""
    from csvm.store import RunSummary
    from explorer.class_board import best, best_task

    def run(i, dataset, pair, accuracy):
        return RunSummary(
            id=str(i), name=f"r{i}", owner=None, class_code=None, status="done", step=1,
            model="kcsvm", dataset=dataset, pair=pair, accuracy=accuracy, interval=None,
            thumbnail=None, query="", created=float(i), updated=float(i), hidden=False,
        )  # fmt: skip

    rows = [
        run(1, "shapes", "horizontal,vertical", 0.99),
        run(2, "shapes", "horizontal,vertical", 0.98),
    ]
    rows += [run(3, "mnist-5k", "3,5", 0.90), run(4, "mnist-5k", "3,5", 0.92)]
    rows += [run(5, "mnist-5k", "3,5", None)]  # newest, but no accuracy yet
    assert best_task(rows) == ("mnist-5k", "3,5")
    assert [r.id for r in best(rows)] == ["4", "3"]
    assert best([run(1, "shapes", "x", None)]) == []


def test_compare_offers_the_browsers_earlier_runs_after_a_reload(sqlite_store):
    """A reload starts a new session, which held only the run of its link: Compare said
    "No runs yet" though the browser's runs were in the store."""
    store = sqlite_store
    mine = [save_run(store, f"mine {i}", owner="owner-compare") for i in range(3)]
    save_run(store, "someone else's", owner="owner-other")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["owner"] = "owner-compare"
    at.run()
    at.switch_page("pages/compare.py").run()
    assert not at.exception
    assert any("3 earlier runs of this browser" in i.value for i in at.info)
    at.button(key="compare_bring_back").click().run()
    assert not at.exception and not at.warning
    assert set(at.session_state["runs"]) == set(mine)  # not the other browser's
    assert not any("earlier run" in i.value for i in at.info)  # all shown: no offer
    assert at.dataframe  # the runs' table


@pytest.fixture
def lockout(monkeypatch):
    """The teacher key set, an empty server-side count, and ``at(address)`` to choose the
    network address the next tries come from (AppTest has none of its own)."""
    monkeypatch.setenv("CSVM_TEACHER_KEY", KEY)
    monkeypatch.setattr(board, "_TRIES", OrderedDict())
    where = {"address": "203.0.113.5"}
    monkeypatch.setattr(board, "client_address", lambda: where["address"])
    return lambda address: where.update(address=address)


def test_the_lockout_belongs_to_the_address_so_a_new_session_is_still_locked(lockout):
    for k in range(board.MAX_TRIES):
        assert board.teacher_ok(f"guess {k}", now=100.0) == (False, "That is not the teacher key.")
    # A reload, a new tab or cleared cookies is a new session from the same address.
    assert board.teacher_ok(KEY, now=101.0) == (
        False,
        "Too many wrong keys: try again in 59 s.",
    )
    lockout("203.0.113.6")  # another machine is not locked out
    assert board.teacher_ok(KEY, now=101.0) == (True, None)
    lockout("203.0.113.5")
    assert board.teacher_ok(KEY, now=100.0 + board.LOCK_SECONDS) == (True, None)


def test_a_reloaded_board_keeps_the_lockout(lockout, sqlite_store):
    at = _board()
    for k in range(board.MAX_TRIES):
        at.text_input(key="teacher_key").input(f"guess {k}").run()
    assert any(e.value == "That is not the teacher key\\." for e in at.error)
    reloaded = _board()
    reloaded.text_input(key="teacher_key").input(KEY).run()
    assert any(e.value.startswith("Too many wrong keys") for e in reloaded.error)
    assert not [t for t in reloaded.text_input if t.key == "teacher_code"]
    lockout("203.0.113.9")
    reloaded.run()
    assert [t for t in reloaded.text_input if t.key == "teacher_code"]


def test_tries_at_once_from_many_threads_count_each(lockout):
    said, start = [], threading.Barrier(20)

    def guess(k):
        start.wait()
        said.append(board.teacher_ok(f"guess {k}", now=100.0)[1])

    threads = [threading.Thread(target=guess, args=(k,)) for k in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert said.count("That is not the teacher key.") == board.MAX_TRIES


def test_the_server_remembers_few_addresses_and_forgets_locked_ones_last(lockout, monkeypatch):
    monkeypatch.setattr(board, "MAX_ADDRESSES", 3)
    for k in range(board.MAX_TRIES):
        board.teacher_ok(f"guess {k}", now=100.0)  # 203.0.113.5 locked out
    lockout("198.51.100.1")
    assert board.teacher_ok(KEY, now=100.0) == (True, None)  # nothing to remember
    for k in range(10):
        lockout(f"192.0.2.{k}")
        assert board.teacher_ok("guess", now=100.0)[0] is False
        assert len(board._TRIES) <= 3
    lockout("203.0.113.5")
    assert board.teacher_ok(KEY, now=101.0)[1].startswith("Too many wrong keys")
    assert list(board._TRIES) == ["192.0.2.8", "192.0.2.9", "203.0.113.5"]
