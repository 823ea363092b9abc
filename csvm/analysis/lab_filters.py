"""Filters for the filter lab: classic starting points, and filters read from a file.

:func:`classic_filter` / :func:`starting_filters` give identity, box blur, Gaussian, Sobel,
Laplacian and random filters of odd size 3 to 9, all at unit L1 norm (the scale of a
``KernelCSVM``'s random start).  :func:`load_filters` reads filters a person uploads (a
``.npy`` file, a run's JSON, or the Train page's run export) without ever unpickling.
Re-exported by :mod:`csvm.analysis.lab`.
"""

from __future__ import annotations

import io
import json
import zipfile
from math import comb
from typing import Any

import numpy as np

from csvm.data.images import UploadError
from csvm.data.own_images import MEMBER_ERRORS, member_problem

__all__ = [
    "FILTER_NAMES",
    "MAX_ABS_WEIGHT",
    "MAX_SIZE",
    "MAX_WEIGHTS",
    "MIN_SIZE",
    "classic_filter",
    "filters_from_npy",
    "load_filters",
    "starting_filters",
]

#: The classic starting points, with what each one does to an image.
FILTER_NAMES: dict[str, str] = {
    "identity": "delta at the centre: the map is the image itself (cropped)",
    "box": "box blur: the mean of the window",
    "gaussian": "Gaussian blur: a weighted mean, heaviest at the centre",
    "sobel_x": "Sobel x: responds to brightness rising from left to right",
    "sobel_y": "Sobel y: responds to brightness rising from top to bottom",
    "laplacian": "Laplacian: centre against surround (edges and spots)",
    "random": "random: the start a KernelCSVM with this seed would use",
}
MIN_SIZE, MAX_SIZE = 3, 9
#: Most weights an uploaded filter file may hold (64 filters of 3 x 31 x 31 is far less).
MAX_WEIGHTS = 200_000
#: Largest absolute weight accepted: a kernel on maps of weights near 1e308 overflows.
MAX_ABS_WEIGHT = 1e6


# -- classic filters ----------------------------------------------------------------------
def _check_size(size: Any) -> int:
    ok = isinstance(size, (int, np.integer)) and MIN_SIZE <= size <= MAX_SIZE and size % 2
    if not ok:
        raise ValueError(
            f"Filter size must be an odd whole number from {MIN_SIZE} to {MAX_SIZE}, "
            f"got {size!r}: choose 3, 5, 7 or 9."
        )
    return int(size)


def _binomial(n: int) -> np.ndarray:
    """Row ``n`` of Pascal's triangle: the discrete Gaussian of length n + 1."""
    return np.array([comb(n, i) for i in range(n + 1)], dtype=np.float64)


def _kcsvm_random_start(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    """The first filters of a two-class ``KernelCSVM(random_state=seed)`` fit.

    ``BaseCSVM.fit`` draws a 32-bit seed from ``RandomState(seed)``, spawns one generator
    per binary problem from it, and ``_fit_binary`` draws uniform weights rescaled to unit
    L1 norm.  Drawing the same way here makes "random" in the lab the very filter a
    training run with that seed starts from (tests/test_lab.py pins this).
    """
    seed32 = np.random.RandomState(seed).randint(np.iinfo(np.int32).max)
    rng = np.random.default_rng(np.random.SeedSequence(seed32).spawn(1)[0])
    f = rng.random(shape)
    return f / np.abs(f).sum()


def classic_filter(name: str, size: int, seed: int = 0) -> np.ndarray:
    """A classic image filter of odd size, scaled to unit L1 norm.

    Parameters
    ----------
    name : str
        One of :data:`FILTER_NAMES`: "identity", "box", "gaussian", "sobel_x", "sobel_y",
        "laplacian", "random".
    size : int
        Odd, 3 to 9.
    seed : int, default=0
        Seed of the "random" filter (ignored by the others).

    Returns
    -------
    filter : float64 array (size, size)
        Row 0 is the top of the window; it is applied by correlation (not flipped), as
        every filter of the library is.  Every filter has unit L1 norm, the scale of a
        ``KernelCSVM``'s random start, so the DFO regularisers are zero at it and
        filters differ in shape, not in size:

        * identity: 1 at the centre; box: ``1/size^2`` everywhere (sums to 1);
        * gaussian: sampled ``exp(-r^2 / 2 sigma^2)`` with OpenCV's default width
          ``sigma = 0.3 ((size - 1)/2 - 1) + 0.8``, summing to 1;
        * sobel_x: binomial smoothing down the rows times a binomial derivative along
          the columns (the 3x3 Sobel ``[[-1,0,1],[-2,0,2],[-1,0,1]]`` / 8 for size 3),
          summing to 0 and antisymmetric left-right; sobel_y is its transpose;
        * laplacian: the 4-neighbour stencil ``[[0,1,0],[1,-4,1],[0,1,0]]`` / 8 for size
          3; for larger sizes the sampled Laplacian of that Gaussian minus its mean.  It
          sums to 0, is symmetric, and is most negative at the centre;
        * random: uniform weights with unit L1 norm, exactly the first filter of a
          two-class, one-filter ``KernelCSVM(random_state=seed)``.

    Raises
    ------
    ValueError
        For an unknown name or a size that is not odd in 3..9.
    """
    size = _check_size(size)
    key = str(name).lower().replace("-", "_").replace(" ", "_")
    if key not in FILTER_NAMES:
        raise ValueError(f"Unknown filter {name!r}: choose one of {', '.join(FILTER_NAMES)}.")
    r = np.arange(size, dtype=np.float64) - size // 2
    sigma = 0.3 * ((size - 1) / 2 - 1) + 0.8
    r2 = r[:, None] ** 2 + r[None, :] ** 2
    if key == "identity":
        f = np.zeros((size, size))
        f[size // 2, size // 2] = 1.0
    elif key == "box":
        f = np.ones((size, size))
    elif key == "gaussian":
        f = np.exp(-r2 / (2 * sigma**2))
    elif key in ("sobel_x", "sobel_y"):
        derivative = np.convolve(_binomial(size - 2), [-1.0, 1.0])
        f = np.outer(_binomial(size - 1), derivative)
        if key == "sobel_y":
            f = f.T
    elif key == "laplacian":
        if size == 3:
            f = np.array([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]])
        else:
            f = (r2 - 2 * sigma**2) / sigma**4 * np.exp(-r2 / (2 * sigma**2))
            f -= f.mean()
    else:
        return _kcsvm_random_start(int(seed), (size, size))
    return f / np.abs(f).sum()


def starting_filters(name: str, size: int, n_filters: int = 1, seed: int = 0) -> np.ndarray:
    """``n_filters`` copies of a classic filter (or a random start), as one stack.

    The stack has unit L1 norm over all its filters together, which is how the
    regularisers measure several filters and how ``KernelCSVM`` scales its random start;
    for "random" it is exactly that start, shape ``(n_filters, size, size)``.

    Returns
    -------
    filters : float64 array (n_filters, size, size)
    """
    if not isinstance(n_filters, (int, np.integer)) or n_filters < 1:
        raise ValueError(f"n_filters must be a whole number >= 1, got {n_filters!r}.")
    size = _check_size(size)
    if str(name).lower() == "random":
        return _kcsvm_random_start(int(seed), (int(n_filters), size, size))
    one = classic_filter(name, size, seed)
    return np.repeat(one[None], n_filters, axis=0) / n_filters


# -- filters from a file ------------------------------------------------------------------
def _check_npy_header(data: bytes) -> None:
    """Refuse a .npy whose header asks for more than the file holds, or for objects,
    before NumPy allocates what the header declares (a 30-byte file can declare 8 TB)."""
    buffer = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(buffer)
        read = (
            np.lib.format.read_array_header_1_0
            if version == (1, 0)
            else np.lib.format.read_array_header_2_0
        )
        shape, _, dtype = read(buffer)
    except (ValueError, OSError, EOFError) as exc:
        raise UploadError(f"The .npy file's header is damaged ({exc}).") from None
    if dtype.hasobject:
        return  # np.load refuses it below, with its own message
    count = int(np.prod(shape, dtype=np.float64))
    if count > MAX_WEIGHTS or count * dtype.itemsize > len(data):
        raise UploadError(
            f"The .npy file declares shape {tuple(shape)} ({count:,} values) but holds "
            f"{len(data):,} bytes; filters have at most {MAX_WEIGHTS:,} weights."
        )


def filters_from_npy(data: bytes) -> np.ndarray:
    """The array of a ``.npy`` file's bytes, read without unpickling (an object array, a
    damaged or truncated file raise :class:`~csvm.exceptions.UploadError`); its shape and
    values are the caller's to check."""
    _check_npy_header(data)
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except ValueError as exc:
        if "allow_pickle" in str(exc):  # an object array: loading it would unpickle
            raise UploadError(
                "The .npy file holds Python objects, which cannot be read without "
                "unpickling: save the filters as a plain number array "
                "(np.save(..., allow_pickle=False))."
            ) from None
        raise UploadError(f"The .npy file is damaged ({exc}).") from None
    except (OSError, EOFError) as exc:
        raise UploadError(f"The .npy file is damaged or truncated ({exc}).") from None


def _parse_json(data: bytes) -> Any:
    """The JSON document, or an UploadError in plain words for each way it fails."""
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        why = "it is not text"
    except json.JSONDecodeError as exc:
        why = f"it breaks off or goes wrong at line {exc.lineno}, column {exc.colno}"
    except RecursionError:
        why = "it is nested too deeply to be a filter file (filters are lists of 4 levels at most)"
    except ValueError:  # not a JSONDecodeError: an integer of more than 4,300 digits
        why = "it holds a whole number thousands of digits long, which no filter weight is"
    raise UploadError(
        f"The JSON file is not valid JSON for filters: {why}. Upload filters.npy, or the "
        "run's JSON or run export as the Train page saved it."
    )


def _filters_from_json(data: bytes) -> Any:
    doc = _parse_json(data)
    if isinstance(doc, dict):
        for key in ("filters", "filter"):
            if key in doc:
                return doc[key]
        if isinstance(doc.get("result"), dict) and "filters" in doc["result"]:
            return doc["result"]["filters"]
        raise UploadError(
            'The JSON file has no "filters" entry: export a run that learned filters, or '
            "upload its filters.npy."
        )
    return doc


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, max_bytes: int) -> bytes:
    """A member's bytes, at most ``max_bytes + 1`` of them whatever its header says (a
    member that declares 100 bytes can inflate to gigabytes)."""
    try:
        with zf.open(info) as member:
            return member.read(max_bytes + 1)
    except zipfile.BadZipFile:
        # zipfile stops at the declared size and finds the CRC wrong.
        raise UploadError(
            f"{info.filename} in the zip does not match its header (it unpacks "
            "to more than it declares, or is damaged): upload the filters on "
            "their own."
        ) from None
    except MEMBER_ERRORS as exc:  # encrypted, Deflate64, a corrupt stream
        raise UploadError(
            f"{member_problem(info.filename, exc)}: export the run again, or upload its "
            "filters.npy on its own."
        ) from None


def _filters_from_zip(data: bytes, max_bytes: int) -> Any:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            members = [i for i in zf.infolist() if i.filename.rsplit("/", 1)[-1] == "filters.npy"]
            members += [i for i in zf.infolist() if i.filename.endswith(".json")]
            for info in members:
                # The declared size is checked before inflating: a zip bomb stops here.
                if info.file_size > max_bytes:
                    raise UploadError(
                        f"{info.filename} in the zip would unpack to {info.file_size:,} bytes, "
                        f"more than {max_bytes:,}: upload the filters on their own."
                    )
                content = _read_member(zf, info, max_bytes)
                if len(content) > max_bytes:
                    raise UploadError(
                        f"{info.filename} in the zip unpacks to more than {max_bytes:,} "
                        "bytes (more than its header says): upload the filters on their own."
                    )
                if info.filename.endswith(".npy"):
                    return filters_from_npy(content)
                try:
                    return _filters_from_json(content)
                except UploadError:
                    continue
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError):
        raise UploadError(
            "The zip file is damaged (it cannot be opened as a zip): upload the run export "
            "of the Train page again, or its filters.npy."
        ) from None
    raise UploadError(
        "The zip file holds no filters.npy (nor a JSON with filters): upload the run export "
        "of the Train page, or its filters.npy."
    )


def load_filters(data: bytes, *, max_bytes: int = 1_000_000) -> np.ndarray:
    """Filters from an uploaded file, never unpickling anything.

    Accepted: a NumPy ``.npy`` file (read with ``allow_pickle=False``), a JSON document
    with a ``"filters"`` entry (or a bare nested list), or the Train page's run export
    (a zip holding ``filters.npy``; the member's declared size is checked before it is
    inflated).  The kind is told from the content, not from the file name.

    Parameters
    ----------
    data : bytes
    max_bytes : int
        Larger files (and larger zip members) are refused.

    Returns
    -------
    filters : float64 array (k, C, p, q)
        A single (p, q) filter becomes (1, 1, p, q); (k, p, q) becomes (k, 1, p, q).

    Raises
    ------
    UploadError
        Too large, not one of the accepted kinds, damaged, not numbers, not finite, or
        not shaped like filters; the message says which.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise UploadError(f"Expected the file's bytes, got {type(data).__name__}.")
    if len(data) > max_bytes:
        raise UploadError(
            f"The file is {len(data):,} bytes, more than {max_bytes:,}: filters are small, "
            "upload filters.npy or the run's JSON."
        )
    data = bytes(data)
    if data.startswith(b"\x93NUMPY"):
        raw = filters_from_npy(data)
    elif data.startswith(b"PK\x03\x04"):
        raw = _filters_from_zip(data, max_bytes)
    elif data.lstrip()[:1] in (b"{", b"["):
        raw = _filters_from_json(data)
    else:
        raise UploadError(
            "The file is not a .npy, JSON or zip file: upload filters.npy, the run's JSON or "
            "the run export of the Train page."
        )
    try:
        f = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        # OverflowError: a whole number in the JSON beyond a float's range (1e309 digits).
        raise UploadError("The filters are not an array of numbers.") from None
    if f.ndim == 2:
        f = f[None, None]
    elif f.ndim == 3:
        f = f[:, None]
    if f.ndim != 4 or min(f.shape, default=0) < 1 or f.shape[-1] != f.shape[-2]:
        raise UploadError(
            f"Expected square filters shaped (p, p), (k, p, p) or (k, C, p, p); got shape "
            f"{np.shape(raw)}."
        )
    if not np.all(np.isfinite(f)):
        raise UploadError("The filters hold NaN or infinite weights.")
    if f.size > MAX_WEIGHTS:
        raise UploadError(f"The filters have {f.size:,} weights; at most {MAX_WEIGHTS:,}.")
    largest = float(np.max(np.abs(f)))
    if largest > MAX_ABS_WEIGHT:
        raise UploadError(
            f"The filters hold a weight of size {largest:.3g}; weights up to "
            f"{MAX_ABS_WEIGHT:g} are accepted (larger ones overflow the kernel): rescale them."
        )
    return f
