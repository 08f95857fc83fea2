"""Tornado 5.1's output transforms, re-exported by `tinytornado.web`: what rewrites a
response on its way out, and `GZipContentEncoding`, the one `Application` applies itself
with the ``compress_response`` setting (``gzip``, its old name).

A transform is made for one request, from its `HTTPServerRequest`, and sees the response
as the handler flushes it: the status, headers and first piece of the body once
(`transform_first_chunk`), then each later piece (`transform_chunk`); ``finishing`` says
the piece is the last.
"""
from __future__ import absolute_import, division, print_function

import zlib

from tinytornado._compat import native_str

__all__ = ['OutputTransform', 'GZipContentEncoding']


class OutputTransform(object):
    """A transform that changes nothing: subclass it (Tornado 5.1's interface)."""

    def __init__(self, request):
        pass

    def transform_first_chunk(self, status_code, headers, chunk, finishing):
        """``(status_code, headers, chunk)`` to send for the response's head and first
        piece of body; `headers` (an HTTPHeaders) may be changed in place."""
        return status_code, headers, chunk

    def transform_chunk(self, chunk, finishing):
        """The bytes to send for a later piece of the body."""
        return chunk


class GZipContentEncoding(OutputTransform):
    """Compress the response with gzip when the client accepts it (Accept-Encoding), its
    Content-Type is text or one of `CONTENT_TYPES`, it has no Content-Encoding yet, and it
    is not one piece shorter than `MIN_LENGTH` (a body sent in several pieces is always
    compressed: its length is not known at the first). Every response it sees says
    ``Vary: Accept-Encoding``, compressed or not, so that caches keep both forms apart.
    """

    CONTENT_TYPES = frozenset([
        'application/javascript', 'application/x-javascript', 'application/xml',
        'application/atom+xml', 'application/json', 'application/xhtml+xml', 'image/svg+xml',
    ])
    # gzip's own default, a better trade of CPU for size than zlib's 9.
    GZIP_LEVEL = 6
    # Shorter bodies gain less than the gzip header and Content-Encoding cost.
    MIN_LENGTH = 1024

    def __init__(self, request):
        self._gzipping = 'gzip' in request.headers.get('Accept-Encoding', '')
        self._compressor = None

    def _compressible_type(self, content_type):
        return content_type.startswith('text/') or content_type in self.CONTENT_TYPES

    def transform_first_chunk(self, status_code, headers, chunk, finishing):
        if 'Vary' in headers:
            headers['Vary'] += ', Accept-Encoding'
        else:
            headers['Vary'] = 'Accept-Encoding'
        if self._gzipping:
            content_type = native_str(headers.get('Content-Type', '')).split(';')[0].strip()
            self._gzipping = (self._compressible_type(content_type) and
                              (not finishing or len(chunk) >= self.MIN_LENGTH) and
                              'Content-Encoding' not in headers)
        if not self._gzipping:
            return status_code, headers, chunk
        headers['Content-Encoding'] = 'gzip'
        # 16 + MAX_WBITS: zlib writes the gzip header and trailer (RFC 1952) itself.
        self._compressor = zlib.compressobj(self.GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        chunk = self.transform_chunk(chunk, finishing)
        if 'Content-Length' in headers:
            # The handler's length was of the uncompressed body: the whole compressed one
            # is known only when this piece is all of it; otherwise the body goes chunked.
            if finishing:
                headers['Content-Length'] = str(len(chunk))
            else:
                del headers['Content-Length']
        return status_code, headers, chunk

    def transform_chunk(self, chunk, finishing):
        if not self._gzipping:
            return chunk
        compressed = self._compressor.compress(chunk)
        # A sync flush sends what this piece holds now (a streamed response stays live);
        # the last piece closes the stream, with its checksum.
        flush_mode = zlib.Z_FINISH if finishing else zlib.Z_SYNC_FLUSH
        return compressed + self._compressor.flush(flush_mode)
