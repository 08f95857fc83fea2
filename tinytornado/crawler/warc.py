"""The crawl's archive: every request and response as it went over the wire, in a WARC file.

`WarcArchive` writes an ISO 28500 WARC/1.1 file with warcio, each record its own gzip
member (a .warc.gz that warcio, pywb and wget's readers take): a ``warcinfo`` record
first, then for each exchange with a server a ``request`` record (the request's bytes as
sent) and a ``response`` record (the status line, headers and body as received: chunked
framing and Content-Encoding left as they came). The two share a capture: each names the
other in ``WARC-Concurrent-To``, and they carry the same ``WARC-Date`` (when the request
was sent), ``WARC-Target-URI`` and ``WARC-IP-Address``.

A fetch records through `FetchRecorder`, the HTTP client's `wire_recorder` of its request,
so that every hop is archived: robots.txt (as Heritrix and wget archive it), redirects
the client follows (robots.txt's) and those the crawler follows. An exchange is written
as soon as its response has ended. A response cut short (a body over the crawl's size
cap, one the crawl chose not to download, a timeout, a closed connection) is written with
what came, marked ``WARC-Truncated`` (length, time, disconnect or unspecified), if its
head was read whole; otherwise only its request is written. Exchanges still in flight
when the archive closes are not archived.

Digests are warcio's: ``WARC-Block-Digest`` over the record's bytes, and
``WARC-Payload-Digest`` over the bytes after the HTTP head as they came (chunked framing
and Content-Encoding included), which is what ``warcio check`` verifies.
"""
from __future__ import absolute_import, division, print_function

import collections
import io
import os
import time
import uuid

from warcio.warcwriter import WARCWriter

import tinytornado
from tinytornado.httpclient import HTTPStreamClosedError, HTTPTimeoutError
from tinytornado.httputil import HTTPInputError

__all__ = ['WarcArchive', 'FetchRecorder', 'open_archive', 'truncation']

WARC_1_1 = 'http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/'


def open_archive(path, user_agent, obey_robots=True, append=False):
    """The crawl's WarcArchive at `path` (None if `path` is None), its warcinfo record
    written; `append` (a resumed crawl) adds to the file instead of replacing it.

    Raises:
        ValueError: the file cannot be written.
    """
    if path is None:
        return None
    info = [('http-header-user-agent', user_agent),
            ('robots', 'obey' if obey_robots else 'ignore')]
    try:
        return WarcArchive(path, 'tinycrawl (tinytornado %s)' % tinytornado.version, info,
                           append)
    except EnvironmentError as e:
        raise ValueError('cannot write the WARC file %s: %s' % (path, e.strerror or e))


class WarcArchive(object):
    """A WARC file being written; `recorder()` makes the wire_recorder of each fetch.

    Args:
        path: the file, written anew (appended to, with `append`, for a resumed crawl).
        software: the warcinfo record's ``software`` field.
        info: more warcinfo fields (name -> text), in the order given.
    """

    def __init__(self, path, software, info=(), append=False):
        self.path = path
        self._file = io.open(path, 'ab' if append else 'wb')
        self._writer = WARCWriter(self._file, gzip=True, warc_version='1.1')
        fields = [('software', software), ('format', 'WARC File Format 1.1'),
                  ('conformsTo', WARC_1_1)] + list(info)
        self._writer.write_record(self._writer.create_warcinfo_record(
            os.path.basename(path), collections.OrderedDict(fields)))
        self._file.flush()

    @property
    def closed(self):
        return self._file.closed

    def recorder(self):
        """A new FetchRecorder writing to this archive, for one fetch."""
        return FetchRecorder(self)

    def write_exchange(self, exchange, response=None, truncated=None):
        """Write `exchange`'s request record, and its response record if `response` (the
        bytes received) is given, marked truncated for the reason `truncated`."""
        request_id, response_id = _record_id(), _record_id()
        common = [('WARC-Date', exchange.date)]
        if exchange.ip is not None:
            common.append(('WARC-IP-Address', exchange.ip))
        request_headers = [('WARC-Record-ID', request_id)] + common
        if response is not None:
            request_headers.append(('WARC-Concurrent-To', response_id))
        self._write(exchange.url, 'request', exchange.data, request_headers)
        if response is not None:
            response_headers = [('WARC-Record-ID', response_id)] + common + [
                ('WARC-Concurrent-To', request_id)]
            if truncated is not None:
                response_headers.append(('WARC-Truncated', truncated))
            self._write(exchange.url, 'response', response, response_headers)
        self._file.flush()  # whole records survive a killed crawl

    def _write(self, url, record_type, data, headers):
        writer = self._writer
        record = writer.create_warc_record(url, record_type, payload=io.BytesIO(data),
                                           length=len(data),
                                           warc_headers_dict=collections.OrderedDict(headers))
        # warcio has read the HTTP head from `data` and digested the payload after it; it
        # would write that head again from what it parsed (normalised): the block is to
        # be the bytes exactly as they passed, so it is given whole, as a head-less block.
        record.http_headers = None
        record.raw_stream = io.BytesIO(data)
        record.length = len(data)
        writer.write_record(record)

    def close(self):
        self._file.close()


class _Exchange(object):
    """A request sent, as the archive needs it: when, to where, its bytes."""
    __slots__ = ('url', 'ip', 'date', 'data')

    def __init__(self, url, address, data):
        self.url = url
        self.ip = address[0] if address else None
        self.date = _warc_date(time.time())
        self.data = data


class FetchRecorder(object):
    """The HTTP client's wire_recorder for one fetch: collects each hop's bytes and
    writes its records to `archive` once its response has ended, or at `finish`."""

    def __init__(self, archive):
        self.archive = archive
        self.exchange = None  # the hop under way
        self.chunks = []

    def request_sent(self, url, address, data):
        # A request sent again (a retry on a new connection) had no response.
        self._write_pending(None)
        self.exchange = _Exchange(url, address, data)

    def response_data(self, data):
        self.chunks.append(data)

    def response_ended(self):
        exchange, response = self.exchange, b''.join(self.chunks)
        self.exchange, self.chunks = None, []
        if not self.archive.closed:
            self.archive.write_exchange(exchange, response)

    def finish(self, truncated=None):
        """The fetch is over: write the hop that did not end, if any; its response too,
        with what came of it, if `truncated` (a WARC-Truncated reason) is given."""
        self._write_pending(truncated)

    def _write_pending(self, truncated):
        exchange, chunks = self.exchange, self.chunks
        self.exchange, self.chunks = None, []
        if exchange is None or self.archive.closed:
            return
        response = b''.join(chunks) if truncated is not None and chunks else None
        self.archive.write_exchange(exchange, response, truncated)


def truncation(error, too_large=False):
    """The WARC-Truncated reason of a response cut short by `error` (the fetch's), or by
    the crawl's size cap (`too_large`)."""
    if too_large:
        return 'length'
    if isinstance(error, HTTPTimeoutError):
        return 'time'
    if isinstance(error, HTTPInputError):  # before HTTPStreamClosedError: the client's are both
        # The parser's word for a server that hung up before the response was whole.
        return 'disconnect' if str(error).startswith('connection closed') else 'unspecified'
    if isinstance(error, (HTTPStreamClosedError, EnvironmentError)):
        return 'disconnect'
    return 'unspecified'


def _record_id():
    return '<urn:uuid:%s>' % uuid.uuid4()


def _warc_date(when):
    """WARC/1.1's date: UTC, to the microsecond."""
    return '%s.%06dZ' % (time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(when)),
                         int(when % 1 * 1000000))
