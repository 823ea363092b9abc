"""The Lesson page's content: six steps that lead a class through the app, in plain words.

Nothing here imports Streamlit: the steps are data (a title, what to notice, one question
and its short answer, the page each step opens and the settings it opens it with) and
:func:`parse_step` reads the step from a link.  :mod:`explorer.lesson_view` draws them.

The answers state no number: every figure a class compares is measured on the page it
opens, so an answer says where to look ("compare the two accuracies"), not what to see.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from explorer.playground import Settings

__all__ = [
    "DIGITS_PRESET",
    "FORMER_NAMES",
    "PARAM",
    "SHAPES_PRESET",
    "STEP_KEY",
    "STEPS",
    "Link",
    "Step",
    "find_preset",
    "parse_step",
    "preset_names",
]

#: The URL parameter that holds the step (``?lesson=3``; ``step`` is the Train page's
#: step rule, every page parses it as one).
PARAM = "lesson"
#: The session's step: every page writes it into its URL (explorer.app.url_extra), so a
#: reload on the page a step opened finds the step again.
STEP_KEY = "lesson_step"
#: The presets the lesson opens on the Train page, by their names in the presets file.
SHAPES_PRESET = "Shapes: filters find the bars"
DIGITS_PRESET = "Digits: 3 vs 5, fast"
#: Earlier names of those presets, still found (a server whose presets file is older).
FORMER_NAMES: dict[str, tuple[str, ...]] = {
    SHAPES_PRESET: (
        "Classroom: a filter finds a shape (teaching set)",
        "Shapes: a filter finds a bar",
    ),
    DIGITS_PRESET: ("Classroom (fast)",),
}


@dataclass(frozen=True)
class Link:
    """A page a step opens: its script, its title in the menu, and what it is for."""

    page: str
    title: str
    why: str = ""


@dataclass(frozen=True)
class Step:
    """One step of the lesson.

    ``preset`` names a Train page preset and ``playground`` holds SVM playground settings;
    a step has at most one of them (neither: the page opens as it is).  ``more`` lists
    further pages, for the last step.
    """

    short: str
    title: str
    notice: tuple[str, ...]
    question: str
    answer: str
    link: Link
    preset: str | None = None
    playground: Settings | None = None
    more: tuple[Link, ...] = field(default=())


PLAYGROUND = "pages/playground.py"
TRAIN = "pages/train.py"

STEPS: tuple[Step, ...] = (
    Step(
        short="The margin",
        title="The margin: the widest street between two groups",
        notice=(
            "A support vector machine draws the straight line that leaves the widest empty "
            "street, the margin, between two groups of points.",
            "Only the ringed points on the edges of the street, the support vectors, hold "
            "the line in place: move any other point and nothing changes.",
            "C is the price of a point inside the street.",
        ),
        question="If we raise C from 1 to 100, will the street get wider or narrower, and "
        "will there be more or fewer ringed points?",
        answer="Narrower, with fewer ringed points: a high price for points inside the "
        "street squeezes the line between the closest points. Read the margin width and "
        "the number of support vectors beside the picture, before and after.",
        link=Link(PLAYGROUND, "SVM playground"),
        playground=Settings(data="blobs", overlap=0.1, kernel="linear", C=1.0),
    ),
    Step(
        short="The kernel trick",
        title="The kernel trick: lift the points, and a flat cut becomes a curve",
        notice=(
            "No straight line separates a ring of points from the points inside it.",
            "Give every point three new coordinates made from its old ones (x₁², √2·x₁x₂, "
            "x₂²) and a flat plane separates the two groups in 3-D.",
            "A kernel computes with these new coordinates without ever writing them down; "
            "open the playground below and drag its cube to turn it.",
        ),
        question="Why does a flat plane in the lifted space become a curved boundary on "
        "the flat page?",
        answer="The new coordinates are squares and a product of the old ones, so the "
        "plane's equation has x₁² and x₂² in it: on the page that is an ellipse or a "
        "circle. Switch the view to Solution to see the same boundary drawn in 2-D.",
        link=Link(PLAYGROUND, "SVM playground"),
        playground=Settings(
            data="circles", kernel="poly", degree=2, gamma=1.0, coef0=0.0, view="lift"
        ),
    ),
    Step(
        short="A filter finds a shape",
        title="A filter learns a shape it can see",
        notice=(
            "Each picture hides a short bar, lying or standing, at a random place among "
            "noise and blobs that both classes share.",
            "Each of four filters, a small grid of weights, slides over every picture and "
            "keeps its strongest answer; press Start and watch them turn from random noise "
            "into bars.",
            "Nobody tells the model what a bar is, and a plain support vector machine on "
            "the raw pixels trains beside it on the same pictures.",
        ),
        question="Which shape should a filter end up looking like, and why does that "
        "tell the two classes apart wherever the bar is?",
        answer="A bar of one of the two orientations: slid over a picture, it answers "
        "strongly only where such a bar is, wherever that is. Compare the finished filters "
        "with the bars drawn beside them, and the accuracy with the plain support vector "
        "machine's on the page.",
        link=Link(TRAIN, "Train"),
        preset=SHAPES_PRESET,
    ),
    Step(
        short="Real digits",
        title="Real handwritten digits, checked honestly",
        notice=(
            "Now the pictures are handwritten 3s and 5s, and there is no single shape "
            "that makes a 3.",
            "Press Start: the filter learns again, and a plain support vector machine "
            "without a filter trains on the same pictures beside it.",
            "After the run the page trains the same model on fixed filters, such as a "
            "blur, to check whether learning the filter was needed.",
        ),
        question="Did learning the filter beat the fixed filters, or would a blur have "
        "done as well?",
        answer="Compare the two accuracies the page shows, learned filter against the "
        "best fixed one, and read whether the difference is called significant: with "
        "few test pictures a few images either way are noise.",
        link=Link(TRAIN, "Train"),
        preset=DIGITS_PRESET,
    ),
    Step(
        short="When learning pays",
        title="When does learning the filter pay?",
        notice=(
            "In the first chart, the 3s and 5s of step 4, each line is one way of "
            "classifying, tested with more and more training pictures.",
            "Where the lines are close, learning the filter buys nothing; where they "
            "part, it does.",
            "Each method's gain over the plain support vector machine is listed below "
            "the chart, with how sure it is.",
        ),
        question="With few training pictures or with many, where does the learned filter "
        "gain the most?",
        answer="Read the gap between the learned filter's line and the plain support "
        "vector machine's at the smallest and at the largest training sets, and the p "
        "beside each gain in the table: the smaller p is, the less likely the gap is luck.",
        link=Link("pages/curve.py", "Learning curves"),
    ),
    Step(
        short="Where next",
        title="Where to go next",
        notice=(
            "Every page keeps the settings you leave it with, and the link in the "
            "address bar reopens them for anyone.",
            "Draw your own filter, train a grid of settings, or set runs side by side.",
            "Every symbol is explained in plain words on the About page.",
        ),
        question="Which setting would you change first, and what do you expect it to do?",
        answer="Any answer is good if it comes with a guess that a run can check: write "
        "the guess down, run it, and compare the result with the guess.",
        link=Link("pages/filter_lab.py", "Filter lab", "draw a filter by hand"),
        more=(
            Link("pages/sweep.py", "Sweep", "a grid of two settings"),
            Link("pages/compare.py", "Compare runs", "runs side by side"),
            Link("pages/about.py", "About", "every term in plain words"),
        ),
    ),
)


def parse_step(raw: object) -> tuple[int, str | None]:
    """The step (1-based) a link asks for, and a gentle message when it cannot be used.

    >>> parse_step("3")
    (3, None)
    >>> parse_step(None)
    (1, None)
    >>> parse_step("9")[0], parse_step("two")[0]
    (1, 1)
    """
    if raw is None or raw == "":
        return 1, None
    text = str(raw[-1] if isinstance(raw, list) and raw else raw).strip()
    if text.isdigit() and 1 <= int(text) <= len(STEPS):
        return int(text), None
    shown = text if len(text) <= 20 else text[:20] + "…"
    return 1, (
        f"The link asks for step “{shown}”, but this lesson has steps 1 to {len(STEPS)}: "
        "starting at step 1."
    )


def preset_names() -> tuple[str, ...]:
    """Every preset the lesson opens, in the order of the steps."""
    return tuple(s.preset for s in STEPS if s.preset)


def find_preset(presets: Iterable[dict], name: str) -> dict | None:
    """The preset called ``name`` (or one of its :data:`FORMER_NAMES`) among ``presets``
    (dicts with a "name"), or None."""
    by_name = {p.get("name"): p for p in presets}
    return next((by_name[n] for n in (name, *FORMER_NAMES.get(name, ())) if n in by_name), None)
