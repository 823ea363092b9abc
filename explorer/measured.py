"""How a saved run was measured, folded away under its numbers.

The Curves and Reproduce pages show plain words first; the command, the commit and the
machine behind a number go into a closed "How this was measured" part (issue 33), and
no path of the machine that measured it (``/work/shared/data``, ``../shared/data``)
reaches a page: :func:`strip_paths` replaces each by ``DIR`` or by its file name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import streamlit as st

from explorer.glossary import explain

#: A filesystem path: "/…", "~/…", "./…" or "../…" at the start of a word, with at least
#: one character after the slash ("1/2", "a / b", "https://…" and "3/5" are not paths).
_PATH = re.compile(r"(?<![\w:/.~\-])(?:~|\.{1,2})?/[^\s'\"`,;:)\]]+")
#: What a command's folder becomes: the pages say what DIR stands for.
DIR = "DIR"
DIR_WORDS = (
    "DIR stands for the folder that holds the MNIST / CIFAR-10 files on the machine "
    "that measured it."
)
#: Jargon of the saved runs' names and tests -> the glossary entry that explains it.
_JARGON = {
    "Danskin": "Danskin",
    "OvO": "OvO",
    "one-vs-one": "OvO",
    "virtual SVs": "virtual SVs",
    "virtual support vectors": "virtual SVs",
    "deskew": "deskewed",
    "moment-normalised": "moment-normalised",
    "test-time shifts": "test-time shifts",
}


def strip_paths(text: object, keep_name: bool = False) -> str:
    """``text`` with every filesystem path replaced by ``DIR`` (a command's folder), or
    with ``keep_name`` by its last part (a message naming a file).

    >>> strip_paths("csvm curve --data-dir ../shared/data --out assets/runs/c.json")
    'csvm curve --data-dir DIR --out assets/runs/c.json'
    >>> strip_paths("/work/main/assets/runs/table4.1.json: damaged", keep_name=True)
    'table4.1.json: damaged'
    """

    def replace(match: re.Match) -> str:
        return match.group().rstrip("/").rsplit("/", 1)[-1] if keep_name else DIR

    return _PATH.sub(replace, str(text))


#: " from /srv/data/cifar10/cifar-10-batches-py" in csvm.data's source lines.
_FROM_FOLDER = re.compile(" from " + _PATH.pattern)


def source_words(source: object) -> str:
    """A dataset's source line without the folder it was read from, for the pages that
    teach (the saved runs keep the whole line).

    >>> source_words("CIFAR-10 from /srv/data/cifar-10-batches-py: train data_batch_1")
    'CIFAR-10: train data_batch_1'
    >>> source_words("5,000 real MNIST digits bundled with the package; works offline")
    '5,000 real MNIST digits bundled with the package; works offline'
    """
    return _FROM_FOLDER.sub("", str(source), count=1)


def jargon_note(texts: Iterable[object]) -> str:
    """Plain words for the jargon that ``texts`` use (one-vs-one, deskewed, …), one
    sentence each, or "" when they use none."""
    joined = " ".join(str(t) for t in texts)
    found = dict.fromkeys(key for word, key in _JARGON.items() if word in joined)
    return explain(*found, sep=" ") if found else ""


def how_measured(command: str | None, facts: Iterable[str] = ()) -> None:
    """The closed "How this was measured" part: the command (its paths as DIR) and the
    facts (when, on what machine, at which commit), none of them with a path."""
    with st.expander("How this was measured", expanded=False):
        if command:
            st.code(strip_paths(command), language="bash")
            if DIR in strip_paths(command).split():
                st.caption(DIR_WORDS)
        for fact in facts:
            if fact:
                st.caption(strip_paths(fact))
