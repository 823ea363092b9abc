"""The beginner's layer: every symbol the pages show, said in plain words.

The pages put these next to the symbol (a widget's or metric's ``help``, a caption under
a figure) and the About page lists them all before the thesis's maths.  One table, so a
symbol is explained the same way wherever it appears.
"""

from __future__ import annotations

from csvm.runs.config import MODEL_LABELS

#: Symbol -> one or two plain sentences (no other symbol needed to read them).
GLOSSARY: dict[str, str] = {
    "filter f": "A small grid of numbers slid over the image; at each place it multiplies "
    "the pixels under it and adds them up. It can blur, sharpen or pick out edges.",
    "feature map": "What is left of an image after the filter has been slid over it: the "
    "SVM sees these maps, not the raw pixels.",
    "SVM": "A support vector machine draws the widest possible street between the two "
    "classes; new images are classified by the side of the street they land on.",
    "α (alpha)": "How much one training image holds up the street's edge. Most images "
    "have α = 0; the few with α > 0 are the support vectors.",
    "support vectors": "The training images on or inside the edge of the street (α > 0): "
    "the only ones the SVM's answer depends on.",
    "C": "How much the SVM may be pushed by hard images: a small C lets some images sit "
    "on the wrong side for a wider street; no C (hard margin) allows none.",
    "γ (gamma)": "How far the kernel looks: with a small γ quite different images still "
    "count as alike; with a large γ only near-copies do.",
    "kernel": "The SVM's way of saying how alike two feature maps are (a number per "
    "pair of images).",
    "T(f)": "The score the filter is trained to lower: the SVM's own measure of how hard "
    "its job is with this filter (the optimal value of its dual), plus the penalty r(f).",
    "Σα": "The sum of all α: grows when many images are needed to hold up the street.",
    "½aᵀKa": "The kernel-weighted size of the SVM's solution (a = α·y); T subtracts it.",
    "r(f)": "A penalty on the filter that keeps it from simply growing; λ sets its weight.",
    "λ (lambda)": "How strongly the penalty r(f) holds the filter back: 0 switches it "
    "off, larger values hold it more firmly (under DFO only once its size passes 1).",
    "DFO₂": "Distance From One: the penalty max(0, ‖f‖ − 1)², nothing while the filter's "
    "size is 1 or less and growing as it passes 1; DFO₁ measures the size by the sum of "
    "the weights' sizes instead.",
    "dT/df": "For each weight of the filter, how much T would change if that weight grew "
    "a little: the filter moves the other way, downhill.",
    "η (eta)": "The step size: how far the filter moves downhill at each step (with "
    "relative steps, a fraction of the filter's own size).",
    "filter norm ‖f‖": "The filter's overall size (the square root of the sum of its "
    "squared weights).",
    "objective": "The number training lowers at each step (T(f) for the K-CSVM, E for "
    "the L-CSVM); when it stops falling, training has settled.",
    "p": "The chance of seeing a difference at least this large between two models on "
    "these test images if they were in fact equally good (McNemar's test). Below 0.05 "
    "we call the difference significant.",
    "95 % interval": "The range in which the true accuracy lies with 95 % confidence, "
    "given how few test images there are.",
    "Danskin": "Danskin's theorem: to see how T changes with the filter, hold the SVM's "
    "answer (its α) fixed at its best and differentiate only the kernel; no need to "
    "follow how the SVM itself would change.",
    "OvO": "One-vs-one: for several classes, one two-class model for every pair of "
    "classes (45 for the ten digits); an image gets the class that wins most pairs.",
    "virtual SVs": "Virtual support vectors: the support vectors copied again shifted by "
    "a pixel (or two) in each direction, and the SVM trained once more on them, so it "
    "learns that a slightly moved digit is the same digit.",
    "deskewed": "Deskewed images: each digit first straightened (its slant undone), so "
    "the SVM need not learn every slant of a hand.",
    "moment-normalised": "Moment-normalised images: each digit straightened, centred and "
    "scaled so its ink fills a box of the same size, so a small 0 and a large 0 look "
    "alike to the SVM.",
    "test-time shifts": "Test-time shifts: each test image is also shown to the model moved "
    "by a pixel in each direction, and the answers are added up before the class is "
    "chosen.",
}

#: How the pages name a setting's coded values (the names a link and the command line
#: use, e.g. "kcsvm" or "dfo2"), so no code word reaches a reader.
VALUE_NAMES: dict[str, str] = {
    **MODEL_LABELS,
    "rbf": "RBF",
    "poly": "polynomial",
    "linear": "linear",
    "none": "none",
    "l1": "L1",
    "l2": "L2",
    "l1sq": "L1²",
    "l2sq": "L2²",
    "dfo1": "DFO₁",
    "dfo2": "DFO₂",
    "ovo": "one-vs-one",
    "ovr": "one-vs-rest",
}


def value_words(value: object) -> str:
    """A coded setting value as the pages name it ("dfo2" -> "DFO₂"); others unchanged."""
    return VALUE_NAMES.get(value, str(value)) if isinstance(value, str) else str(value)


def explain(*symbols: str, sep: str = "\n\n") -> str:
    """The plain-language lines of ``symbols``: one per paragraph for a ``help=`` tooltip,
    or run together (``sep=" "``) for a caption."""
    return sep.join(f"**{s}**: {GLOSSARY[s]}" for s in symbols)
