"""What web's `StaticFileHandler` needs of files, apart from HTTP handling: byte ranges
(the Range header and Content-Range), reading a file in pieces, its content type, whether
it changed since If-Modified-Since, and the cache of its content hashes (the ``?v=`` of
``static_url`` and the ETag)."""
from __future__ import absolute_import, division, print_function

import datetime
import email.utils
import hashlib
import mimetypes
import threading

from tinytornado.log import gen_log

__all__ = ['parse_request_range', 'content_range', 'read_file', 'content_type',
           'unmodified_since', 'VersionCache', 'content_version']

_READ_SIZE = 64 * 1024


def parse_request_range(header):
    """A Range header as ``(start, end)`` as slice bounds (either may be None; a negative
    start counts from the end), or None when it is not one byte range we can serve
    (another unit, several ranges, a malformed or backward one: the whole file is sent)."""
    unit, _, value = header.partition('=')
    if unit.strip() != 'bytes':
        return None
    first, _, last = value.strip().partition('-')
    try:
        start = int(first) if first.strip() else None
        end = int(last) if last.strip() else None
    except ValueError:
        return None
    if end is None:
        return (start, None) if start is not None else None
    if start is None:  # a suffix: the last `end` bytes
        return (-end, None) if end != 0 else (None, 0)
    if end < start:
        return None
    return start, end + 1


def content_range(start, end, total):
    """The Content-Range value of the slice ``[start:end]`` of `total` bytes."""
    start = start or 0
    end = (end or total) - 1
    return 'bytes %s-%s/%s' % (start, end, total)


def read_file(path, start=None, end=None):
    """The bytes ``[start:end]`` of the file at `path`, in pieces of 64 KB."""
    with open(path, 'rb') as f:
        if start is not None:
            f.seek(start)
        remaining = None if end is None else end - (start or 0)
        while remaining is None or remaining > 0:
            size = _READ_SIZE if remaining is None else min(remaining, _READ_SIZE)
            chunk = f.read(size)
            if not chunk:
                return  # the file is shorter than it was (it changed while read)
            if remaining is not None:
                remaining -= len(chunk)
            yield chunk
            if len(chunk) < size:
                # read() returns less than asked only at the end (it reads on until it
                # has `size` bytes): asking again would be one more read for nothing.
                return


def content_type(path):
    """The Content-Type of the file at `path`, by its name (octet-stream when unknown)."""
    mime_type, encoding = mimetypes.guess_type(path)
    if encoding == 'gzip':
        return 'application/gzip'
    if encoding is not None or mime_type is None:
        return 'application/octet-stream'
    return mime_type


def unmodified_since(header, modified):
    """Whether the If-Modified-Since `header` is at or after `modified` (a naive UTC
    datetime); False for a date that cannot be read."""
    date_tuple = email.utils.parsedate(header)
    return date_tuple is not None and datetime.datetime(*date_tuple[:6]) >= modified


class VersionCache(object):
    """The MD5 of files' contents, computed once per path (until `reset`)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._hashes = {}

    def reset(self):
        with self._lock:
            self._hashes = {}

    def get(self, path, compute):
        """The hash of `path`, made with `compute(path)` the first time; None (logged)
        when the file cannot be read."""
        with self._lock:
            if path not in self._hashes:
                try:
                    self._hashes[path] = compute(path)
                except (IOError, OSError):
                    gen_log.error('Could not open static file %r', path)
                    self._hashes[path] = None
            return self._hashes[path]


def content_version(chunks):
    """The MD5 hex digest of the bytes `chunks` (bytes, or an iterable of them)."""
    hasher = hashlib.md5()
    for chunk in [chunks] if isinstance(chunks, bytes) else chunks:
        hasher.update(chunk)
    return hasher.hexdigest()
