"""gzip for large answers (records, tournament archives, event pages, replays) to clients that accept it.

An ``after_request`` hook rather than Flask-Compress: that package brings two compiled
dependencies (brotli, zstd) and compresses streamed answers by default, which would buffer
Server-Sent Events; what is needed here is a few lines of the standard library's ``gzip``.

An answer is compressed when the client sends ``Accept-Encoding`` with ``gzip`` (or ``*``)
at a quality above 0, its type is text or JSON, it is not streamed (Server-Sent Events,
files), it has no ``Content-Encoding`` yet and its body has at least ``GZIP_MIN_BYTES``.
Every answer of a compressible type carries ``Vary: Accept-Encoding``, compressed or not
(a cache must keep the two spellings apart, and a small answer at one URL may be large
tomorrow). The figures behind the threshold and the level are in ``docs/performance.md``
("Compression", ``python -m bench.compression``).
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterable, Iterator

from flask import Flask, Response, current_app, request

# Below this an answer fits in one TCP segment (an MSS of ~1,400 bytes) anyway: gzip would save
# no round trip, only cost CPU (KIFU_GZIP_MIN_BYTES).
GZIP_MIN_BYTES = 1400
# Level 1 compresses JSON to about a quarter (level 6: a fifth, at 2-3 times the CPU;
# ``bench/compression.py``). The API runs on gevent: a 5 MB record compressed holds its worker
# that long, so the cheapest level that keeps the ratio (KIFU_GZIP_LEVEL).
GZIP_LEVEL = 1
COMPRESSIBLE = frozenset({"application/json", "application/problem+json", "text/html", "text/plain", "text/css"})
NEVER = frozenset({204, 206, 304})  # no body, a byte range of the identity body, or not modified


def init_app(app: Flask) -> None:
    """Register the hook; call it before every other ``after_request`` (Flask runs them in reverse,
    so this one runs last, on the body every other hook has finished)."""
    app.config.setdefault("GZIP_MIN_BYTES", GZIP_MIN_BYTES)
    app.config.setdefault("GZIP_LEVEL", GZIP_LEVEL)
    app.after_request(gzip_answer)


def compressible(response: Response) -> bool:
    """Whether ``response`` is of a type worth compressing, and whole in memory (not a stream or file)."""
    return (
        response.mimetype in COMPRESSIBLE
        and not response.is_streamed  # Server-Sent Events: gzip would hold each event back in its buffer
        and not response.direct_passthrough  # a file sent as it is
    )


def accepts_gzip() -> bool:
    """Whether the request's ``Accept-Encoding`` takes gzip (``gzip`` or ``*``, at a quality above 0)."""
    return request.accept_encodings.quality("gzip") > 0


def gzip_answer(response: Response) -> Response:
    """``after_request``: compress ``response`` when it is large, compressible and gzip is accepted."""
    if not compressible(response) or response.status_code in NEVER or response.status_code < 200:
        return response
    response.vary.add("Accept-Encoding")
    if "Content-Encoding" in response.headers or not accepts_gzip():
        return response
    body = response.get_data()
    if len(body) < current_app.config["GZIP_MIN_BYTES"]:
        return response
    response.set_data(gzip.compress(body, compresslevel=current_app.config["GZIP_LEVEL"], mtime=0))
    response.headers["Content-Encoding"] = "gzip"
    etag, weak = response.get_etag()
    if etag and not weak:  # another encoding of the same content: no longer byte-for-byte the same
        response.set_etag(etag, weak=True)
    return response


def gzipped(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """One gzip stream of a streamed answer's ``chunks``, each flushed as it comes (a long export starts
    at once; ``gzip_answer`` leaves streamed answers alone)."""
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)  # wbits 31: the gzip format
    for chunk in chunks:
        yield packer.compress(chunk) + packer.flush(zlib.Z_SYNC_FLUSH)
    yield packer.flush()
