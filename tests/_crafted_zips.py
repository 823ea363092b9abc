"""Zips crafted the way the audit made them: a member flagged as encrypted, one compressed
with Deflate64 (method 9, which Python's zipfile does not read), one whose compressed
data are damaged.  Each is an ordinary zip with a few header bytes changed."""

from __future__ import annotations

import io
import zipfile

#: The ways a member is made unreadable, for parametrised tests.
CRAFTS = ("encrypted", "deflate64", "corrupt")
#: What the refusal says for each.
SAYS = {
    "encrypted": "it is encrypted",
    "deflate64": "it is compressed with a method this server does not read",
    "corrupt": "it is damaged",
}


def crafted_zip(files: dict[str, bytes], target: str, craft: str) -> bytes:
    """A deflated zip of ``files`` with the member ``target`` made unreadable by ``craft``
    (one of :data:`CRAFTS`); the other members stay readable."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    data = bytearray(buffer.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        info = zf.getinfo(target)
    local = info.header_offset
    central = data.index(b"PK\x01\x02")  # the central directory's entries, in turn
    while data[central + 46 : central + 46 + len(target)] != target.encode():
        central = data.index(b"PK\x01\x02", central + 4)
    if craft == "encrypted":  # general-purpose flag bit 0, in both headers
        data[local + 6] |= 1
        data[central + 8] |= 1
    elif craft == "deflate64":  # compression method 9, in both headers
        data[local + 8 : local + 10] = (9).to_bytes(2, "little")
        data[central + 10 : central + 12] = (9).to_bytes(2, "little")
    else:  # 0xff bytes open a deflate block of the reserved type 3: "invalid block type"
        start = local + 30 + len(target) + int.from_bytes(data[local + 28 : local + 30], "little")
        data[start : start + 8] = b"\xff" * 8
    return bytes(data)
