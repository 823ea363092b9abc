"""Teaching surfaces in plain words (issue 33): Curves, Reproduce and About show no path
of any machine, no command line and no model code outside their folded "How this was
measured" parts, and the jargon of the saved runs is explained where it appears."""

from __future__ import annotations

import re

import pytest

from explorer.glossary import GLOSSARY
from explorer.measured import DIR, jargon_note, strip_paths
from tests._apptest import open_app

#: A path of some machine, as the saved runs' commands and sources held them.
MACHINE_PATH = re.compile(r"(/work/|/root/|/home/|\.\./shared|/tmp/)")
CODES = re.compile(r"\b(kcsvm|lcsvm|dfo1|dfo2)\b")
TEXT_TYPES = {"markdown", "caption", "code", "title", "header", "subheader", "alert"}


def _texts(node, folded: bool = False):
    """(text, inside an expander) for every text, table and dataframe under ``node``."""
    folded = folded or getattr(node, "type", None) == "expander"
    for child in getattr(node, "children", {}).values():
        yield from _texts(child, folded)
    kind = getattr(node, "type", None)
    if kind in TEXT_TYPES or kind in {"error", "info", "warning", "success"}:
        yield str(node.value), folded
    elif kind in {"dataframe", "table"}:
        frame = node.value
        yield " ".join(map(str, frame.columns)) + " " + frame.to_string(), folded


@pytest.mark.parametrize("page", ["pages/curve.py", "pages/reproduce.py", "pages/about.py"])
def test_no_machine_path_command_or_model_code_outside_how_it_was_measured(page):
    at = open_app()
    at.switch_page(page).run()
    assert not at.exception
    texts = list(_texts(at._tree))
    assert texts
    for text, folded in texts:
        assert not MACHINE_PATH.search(text), text[:300]  # folded away or not
        if not folded:
            assert "python -m csvm" not in text, text[:300]
            assert not CODES.search(text), text[:300]
    if page != "pages/about.py":  # the saved runs' commands, folded away
        assert any(e.label == "How this was measured" for e in at.expander)
        assert any(folded and "python -m csvm" in text for text, folded in texts)


def test_reproduce_explains_one_vs_one_deskewed_and_virtual_support_vectors():
    at = open_app()
    at.switch_page("pages/reproduce.py").run()
    shown = " ".join(c.value for c in at.caption)
    for term in ("OvO", "deskewed", "virtual SVs"):
        assert GLOSSARY[term] in shown, term


def test_strip_paths_replaces_every_machine_path():
    command = (
        "python -m csvm curve --data-dir ../shared/data --out assets/runs/c.json; "
        "ls /work/shared/data /root/x ~/y ./z /tmp/a.json"
    )
    stripped = strip_paths(command)
    assert not MACHINE_PATH.search(stripped)
    assert stripped == (
        f"python -m csvm curve --data-dir {DIR} --out assets/runs/c.json; "
        f"ls {DIR} {DIR} {DIR} {DIR} {DIR}"
    )
    # Not paths: a ratio, a spaced slash, a URL, subscripts.
    for text in ("3/5 of the images", "train / test", "https://example.org/a/b", "λ_w/λ_f"):
        assert strip_paths(text) == text
    message = "/work/main/assets/runs/table4.1.json: not a readable JSON file"
    assert strip_paths(message, keep_name=True) == "table4.1.json: not a readable JSON file"


def test_jargon_note_explains_only_the_words_used():
    note = jargon_note(["K-CSVM, 45 OvO filters, deskewed images"])
    assert GLOSSARY["OvO"] in note and GLOSSARY["deskewed"] in note
    assert GLOSSARY["virtual SVs"] not in note and GLOSSARY["Danskin"] not in note
    assert jargon_note(["plain SVM, 98.32 %"]) == ""
    name = "stacks, moment-normalised images (22 px) + virtual SVs and test-time shifts (8)"
    note = jargon_note([name])
    assert GLOSSARY["moment-normalised"] in note and GLOSSARY["test-time shifts"] in note
    assert GLOSSARY["deskewed"] not in note
