"""HTTP/1.1 without I/O: headers, request bytes out, response events in.

Nothing here touches a socket or the loop. The HTTP client writes the bytes that
`HTTP1ClientProtocol.send_request` returns, feeds what it reads to `receive_data`, and acts
on the events `next_event` hands back, so every framing rule is testable by feeding bytes.
The protocol is a state machine of small readers, one per thing the next bytes must be;
the grammar they check against (as strictly as h11, which this replaced) is _http1parser's.

Invariant: bad input from the peer ends the response with `HTTPInputError`, and once end of
file has been fed `next_event` never answers `NEED_DATA`, so a broken server cannot leave a
caller waiting for bytes that will not come.

Tornado 5.1's helpers live here too, for code written against ``tornado.httputil``:
`url_concat`, `qs_to_qsl`, `format_timestamp`, `parse_cookie`, `encode_username_password`,
the start-line parsers `parse_request_start_line` and `parse_response_start_line`, the form
parsers `parse_body_arguments` and `parse_multipart_form_data`, and the server side's data
object `HTTPServerRequest` with the interfaces a server's parts implement
(`HTTPMessageDelegate`, `HTTPConnection`, `HTTPServerConnectionDelegate`). tinytornado has
no server: they are here so that code and tests written against them run.
"""
from __future__ import absolute_import, division, print_function

import calendar
import collections
import datetime
import email.utils
import numbers
import re
import ssl
import time
import unicodedata
import warnings
import weakref
import zlib

from six import ensure_str
from six.moves import http_client, http_cookies
from six.moves.urllib.parse import (
    parse_qsl, unquote_to_bytes, urlencode, urlsplit, urlunsplit,
)

from tinytornado._compat import collections_abc, latin1_bytes, native_str, text_type
from tinytornado._http1parser import (
    LAST_CHUNK, ReceiveBuffer, asks_to_close, check_framing, chunk_size, content_length,
    format_chunk, format_request, normalize_name, parse_fields, split_fields, split_head,
)
from tinytornado.log import gen_log

__all__ = [
    'HTTPHeaders', 'HTTPInputError', 'NoResponseError', 'HTTP1ClientProtocol',
    'InformationalResponse', 'ResponseHead', 'BodyData', 'EndOfMessage', 'ConnectionClosed',
    'NEED_DATA', 'PAUSED', 'ContentDecoder', 'url_concat', 'qs_to_qsl', 'format_timestamp',
    'parse_cookie', 'RequestStartLine', 'parse_request_start_line', 'ResponseStartLine',
    'parse_response_start_line', 'responses', 'DEFAULT_MAX_HEADER_SIZE',
    'DEFAULT_MAX_HEADER_LINES', 'HTTPFile', 'parse_body_arguments', 'parse_multipart_form_data',
    'split_host_and_port', 'HTTPServerRequest', 'HTTPOutputError', 'HTTPServerConnectionDelegate',
    'HTTPMessageDelegate', 'HTTPConnection', 'encode_username_password',
]

DEFAULT_MAX_HEADER_SIZE = 65536  # Tornado's default
DEFAULT_MAX_HEADER_LINES = 100  # Apache's LimitRequestFields

responses = http_client.responses  # status code -> reason phrase, as Tornado exports it


class HTTPInputError(Exception):
    """Bytes or text that are not valid HTTP (a response from the peer, a start line given
    to a parser); the message says what was wrong."""


class NoResponseError(HTTPInputError):
    """The peer closed the connection before sending any byte of the response.

    On a reused keep-alive connection this usually means the server had already timed the
    connection out, so an idempotent request may safely be sent again on a new one.
    """


# --- Headers ---------------------------------------------------------------------------

class HTTPHeaders(collections_abc.MutableMapping):
    """Case-insensitive, multi-valued, insertion-ordered headers, as in Tornado 5.1.

    As a mapping, ``headers[name]`` is every value of `name` joined with ',' and assigning
    replaces them all; `add`, `get_list` and `get_all` see the values one by one. Names and
    values are native strings (bytes on 2.7, latin-1 text on 3.x).
    """

    def __init__(self, *args, **kwargs):
        # normalized name -> list of values, and the names in insertion order: a plain dict
        # and a list, because 2.7's OrderedDict is written in Python and a crawl makes
        # several of these per request.
        self._values = {}
        self._names = []
        self._last_name = None  # the header a continuation line extends
        if len(args) == 1 and not kwargs and isinstance(args[0], HTTPHeaders):
            other = args[0]  # keep every value, not the joined ones
            self._values = dict((name, list(values)) for name, values in other._values.items())
            self._names = list(other._names)
        elif args or kwargs:  # the mixin's update is slow even with nothing to add
            self.update(*args, **kwargs)

    @classmethod
    def _adopt(cls, names, values):
        """Headers made of `names` (normalized, in order) and `values` (name -> list), as the
        parser builds them: taken over, not copied."""
        headers = cls.__new__(cls)
        headers._names = names
        headers._values = values
        headers._last_name = names[-1] if names else None
        return headers

    def add(self, name, value):
        """Add a value for `name`, keeping the values it already has."""
        normalized = normalize_name(name)
        values = self._values.get(normalized)
        if values is None:
            self._values[normalized] = [value]
            self._names.append(normalized)
        else:
            values.append(value)
        self._last_name = normalized

    def get_list(self, name):
        """Every value of `name`, in arrival order; [] when absent."""
        return list(self._values.get(normalize_name(name), ()))

    def get_all(self):
        """Yield each (name, value) pair; a name's values come together, at its first position."""
        for name in self._names:
            for value in self._values[name]:
                yield name, value

    def parse_line(self, line):
        """Add one header line; a line starting with whitespace continues the previous one."""
        if line[:1].isspace():
            if self._last_name is None:
                raise HTTPInputError('first header line cannot start with whitespace')
            values = self._values[self._last_name]
            values[-1] = values[-1] + ' ' + line.strip()
            return
        name, colon, value = line.partition(':')
        if not colon:
            raise HTTPInputError('no colon in header line %r' % (line,))
        self.add(name, value.strip())

    @classmethod
    def parse(cls, text):
        """Headers from a header block (CRLF or LF line ends), as native text."""
        headers = cls()
        for line in text.split('\n'):
            line = line.rstrip('\r')
            if line:
                headers.parse_line(line)
        return headers

    def copy(self):
        return HTTPHeaders(self)

    __copy__ = copy

    def __getitem__(self, name):
        return ','.join(self._values[normalize_name(name)])

    def get(self, name, default=None):
        # Not the mixin's, which raises and catches a KeyError for each header absent: a
        # fetch asks for several that usually are (Content-Encoding, Location...).
        values = self._values.get(normalize_name(name))
        return default if values is None else ','.join(values)

    def __setitem__(self, name, value):
        normalized = normalize_name(name)
        if normalized not in self._values:
            self._names.append(normalized)
        self._values[normalized] = [value]
        self._last_name = normalized

    def __delitem__(self, name):
        normalized = normalize_name(name)
        del self._values[normalized]
        self._names.remove(normalized)

    def __contains__(self, name):
        return normalize_name(name) in self._values

    def __iter__(self):
        return iter(self._names)

    def __len__(self):
        return len(self._values)

    def __str__(self):
        return ''.join('%s: %s\n' % pair for pair in self.get_all())

    def __repr__(self):
        return '%s(%r)' % (type(self).__name__, list(self.get_all()))


# --- Response events ---------------------------------------------------------------------

_HEAD_FIELDS = ['version', 'code', 'reason', 'headers']

# A 1xx response (100 Continue, 103 Early Hints): another head follows on the same request.
InformationalResponse = collections.namedtuple('InformationalResponse', _HEAD_FIELDS)
# The final response's status line and headers: version 'HTTP/1.1', code int, reason str.
ResponseHead = collections.namedtuple('ResponseHead', _HEAD_FIELDS)
# A piece of the body (bytes), already stripped of chunked framing.
BodyData = collections.namedtuple('BodyData', ['data'])
# The response ended; trailers is an HTTPHeaders, empty unless the body was chunked.
EndOfMessage = collections.namedtuple('EndOfMessage', ['trailers'])
# The peer closed the connection while no response was in progress.
ConnectionClosed = collections.namedtuple('ConnectionClosed', [])


class _Sentinel(object):
    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return self._name


NEED_DATA = _Sentinel('NEED_DATA')  # feed more bytes (or b'' at end of file), then ask again
PAUSED = _Sentinel('PAUSED')  # the response ended: start_next_cycle() or close the stream


# --- The client connection's state machine ------------------------------------------------

# Where the connection is in the cycle of one request and its response; while reading, the
# state names what the next bytes must be.
AWAITING_REQUEST = 'AWAITING_REQUEST'  # nothing sent since the connection opened or was reset
AWAITING_RESPONSE = 'AWAITING_RESPONSE'  # request sent, no head parsed yet
AWAITING_FINAL_HEAD = 'AWAITING_FINAL_HEAD'  # 1xx heads parsed; the final head comes next
READING_BODY = 'READING_BODY'  # the rest of a body of known length (maybe none)
READING_CHUNK_SIZE = 'READING_CHUNK_SIZE'  # a chunk-size line
READING_CHUNK = 'READING_CHUNK'  # the rest of a chunk's data
READING_CHUNK_END = 'READING_CHUNK_END'  # the CRLF after a chunk's data
READING_TRAILERS = 'READING_TRAILERS'  # the trailer block after the last chunk
READING_UNTIL_CLOSE = 'READING_UNTIL_CLOSE'  # a body that ends where the connection does
RESPONSE_DONE = 'RESPONSE_DONE'  # EndOfMessage returned; next_event answers PAUSED
CLOSED = 'CLOSED'  # end of file while no response was in progress

_BODYLESS_CODES = frozenset([204, 304])

# What is left to send of a body started by send_request_head: its length left, or
# CHUNKED; None once the request has been sent whole.
CHUNKED = 'CHUNKED'


class HTTP1ClientProtocol(object):
    """The sans-IO state of one HTTP/1.1 client connection: requests out, response events in.

    Drive it from a coroutine that owns the stream::

        protocol = HTTP1ClientProtocol()
        yield stream.write(protocol.send_request('GET', '/', {'Host': 'example.com'}))
        while True:
            event = protocol.next_event()
            if event is NEED_DATA:
                protocol.receive_data(data_read_from_stream_or_empty_bytes_at_eof)
            elif isinstance(event, ResponseHead): ...
            elif isinstance(event, BodyData): ...
            elif isinstance(event, EndOfMessage): break
        if protocol.reusable:
            protocol.start_next_cycle()  # back to the pool

    Args:
        max_header_size: largest response head (status line, header lines and the blank
            line after them), trailer block or chunk-size line accepted, in bytes as
            received, however they are split into reads.
        max_header_lines: most header lines accepted in a head or trailer block.
    """

    def __init__(self, max_header_size=DEFAULT_MAX_HEADER_SIZE,
                 max_header_lines=DEFAULT_MAX_HEADER_LINES):
        self.max_header_size = max_header_size
        self.max_header_lines = max_header_lines
        self._state = AWAITING_REQUEST
        self._received = ReceiveBuffer()
        self._eof = False  # b'' was fed
        # (weak reference, class, args) of the HTTPInputError raised: see next_event.
        self._error = None
        self._method = None  # of the request in progress (a HEAD response has no body)
        self._keep_alive = True  # nobody said that this response ends the connection
        self._remaining = 0  # bytes left of the body (known length) or chunk being read
        self._body_length = 0  # the Content-Length, for the message when the body is cut short
        self._body_to_send = None  # see CHUNKED

    def send_request(self, method, target, headers, body=None):
        """The bytes of one HTTP/1.1 request, to be written to the stream.

        Args:
            method: 'GET', 'HEAD', 'POST', ... (native str).
            target: the path and query, '/index.html?q=1' (native str).
            headers: an HTTPHeaders or any mapping; must contain Host. A
                Content-Length is added when `body` is given without one.
            body: bytes or None, sent whole with Content-Length (`send_request_head`
                starts a request whose body is sent in pieces).

        Raises:
            ValueError: the request is not valid HTTP (a missing Host, a control character
                in a header, a body that does not match its Content-Length, a second
                request before start_next_cycle) or asks for a protocol switch or gives a
                Transfer-Encoding. The fault is the caller's, not the peer's.
        """
        if self._state is not AWAITING_REQUEST or self._eof or self._error is not None:
            raise ValueError('a request can be sent only on an open connection, once the '
                             'last response has ended and start_next_cycle was called')
        if not isinstance(headers, HTTPHeaders):
            headers = HTTPHeaders(headers)
        if body is not None and 'Content-Length' not in headers:
            headers = headers.copy()
            headers['Content-Length'] = str(len(body))
        data = format_request(method, target, headers.get_all(), body)
        self._method = native_str(method)
        self._keep_alive = not asks_to_close(headers._values.get('Connection'))
        self._state = AWAITING_RESPONSE
        return data

    def send_request_head(self, method, target, headers):
        """The head of a request whose body follows in pieces, in the bytes that
        `send_body_data` and then `end_body` return; arguments as `send_request`'s.

        The body is sent as is when `headers` give its Content-Length (the pieces must add
        up to it), else chunked ("Transfer-Encoding: chunked" is added). A response that
        begins before the body has been sent whole (the server did not wait for it) ends
        the connection's use.

        Raises ValueError as `send_request` does.
        """
        headers = HTTPHeaders(headers)  # a copy, the framing taken out of it
        lengths = headers._values.get('Content-Length')
        if lengths is None:
            framing, to_send = 'Transfer-Encoding: chunked', CHUNKED
        else:
            length = content_length(lengths)
            framing, to_send = 'Content-Length: ' + length, int(length)
            del headers['Content-Length']
        # send_request checks and sends the rest; the head then ends with the framing.
        head = self.send_request(method, target, headers)
        self._body_to_send = to_send
        return head[:-2] + latin1_bytes(framing) + b'\r\n\r\n'

    def send_body_data(self, data):
        """The bytes that send `data` (bytes), the next piece of the body.

        Raises:
            HTTPOutputError: the pieces add up to more than the Content-Length.
            RuntimeError: no body is being sent.
        """
        remaining = self._body_to_send
        if remaining is CHUNKED:
            return format_chunk(data) if data else b''  # an empty chunk would end the body
        if remaining is None:
            raise RuntimeError('no request body is being sent')
        if len(data) > remaining:
            raise HTTPOutputError('Tried to write more data than Content-Length')
        self._body_to_send = remaining - len(data)
        return data

    def end_body(self):
        """The bytes that end the body (the last chunk, or none); the request is sent.

        Raises:
            HTTPOutputError: the pieces added up to less than the Content-Length.
            RuntimeError: no body is being sent.
        """
        remaining, self._body_to_send = self._body_to_send, None
        if remaining is CHUNKED:
            return LAST_CHUNK
        if remaining is None:
            raise RuntimeError('no request body is being sent')
        if remaining:
            raise HTTPOutputError('Tried to write %d bytes less than Content-Length'
                                  % remaining)
        return b''

    def receive_data(self, data):
        """Feed bytes read from the stream; b'' means the peer closed it (end of file)."""
        if not data:
            self._eof = True
        elif self._eof:
            raise RuntimeError('data fed after end of file')
        else:
            self._received.append(data)

    def next_event(self):
        """The next response event, NEED_DATA, or PAUSED once the response has ended.

        Returns one of: InformationalResponse, ResponseHead, BodyData, EndOfMessage,
        ConnectionClosed (the peer closed with no response in progress; returned again on
        every later call), NEED_DATA, PAUSED.

        Raises:
            HTTPInputError: the response is malformed, over a limit, or cut short; the
                same error is raised again by every later call (once nobody holds it any
                more, one of its class and message). NoResponseError (a subclass) when the
                connection closed before the response began.
        """
        if self._error is not None:
            raise self._error_again()
        try:
            return _READERS[self._state](self)
        except HTTPInputError as exc:
            # Held weakly: its traceback holds this parser's frames and its caller's (a
            # fetch: its exchange, its request and callbacks), which a strong reference
            # would keep in a cycle until the garbage collector runs.
            self._error = weakref.ref(exc), exc.__class__, exc.args
            raise

    def _error_again(self):
        reference, error_class, args = self._error
        error = reference()
        return error if error is not None else error_class(*args)

    @property
    def reusable(self):
        """True once the response has ended and both sides allow another request here.

        HTTP/1.1 keeps the connection unless either side sent "Connection: close"; an
        HTTP/1.0 response always closes it (we send no "Connection: keep-alive", so a 1.0
        server will close it anyway); a body delimited by close cannot be followed.
        """
        return self._state is RESPONSE_DONE and self._keep_alive and not self._eof

    @property
    def has_extra_data(self):
        """True if bytes beyond what has been parsed were received. Once the response has
        ended, a client that does not pipeline expects none: they would be read as the
        next response, so the connection must not be reused."""
        return len(self._received) > 0

    def start_next_cycle(self):
        """Reset for the next request; bytes already received stay for its response."""
        if not self.reusable:
            raise RuntimeError('this connection cannot carry another request')
        self._state = AWAITING_REQUEST

    # -- one reader per state: each returns the next event or NEED_DATA ---------------------

    def _read_between_responses(self):
        if self._received:
            raise HTTPInputError('the server sent data while no request was outstanding')
        if self._eof:
            self._state = CLOSED
            return ConnectionClosed()
        return NEED_DATA

    def _read_head(self):
        try:
            end = self._received.find(b'\r\n\r\n')
            if end < 0:
                return self._wait_for_block('response head')
            minor, code, reason, lines = split_head(self._take_block(end, 'response head'))
            headers = self._headers(lines, 'response head')
            length = check_framing(headers._values)
        except ValueError as exc:
            raise HTTPInputError('malformed response head: %s' % (exc,))
        version = 'HTTP/1.' + minor
        if code > 599:  # RFC 9110 15: the valid codes are 100 to 599 (h11 0.16 takes 999)
            raise HTTPInputError('malformed response head: status code %d' % code)
        if code < 200:
            _check_informational(code)
            self._state = AWAITING_FINAL_HEAD
            return InformationalResponse(version, code, reason, headers)
        self._start_body(minor, code, headers._values, length)
        return ResponseHead(version, code, reason, headers)

    def _start_body(self, minor, code, values, length):
        if 'Transfer-Encoding' in values and length is not None:
            # RFC 9112 6.3: a sign of response splitting, to be handled as an error (and
            # Tornado 5.1 refuses it too), not resolved in favour of chunked as h11 does.
            raise HTTPInputError('response has both Transfer-Encoding and Content-Length')
        if (minor == '0' or asks_to_close(values.get('Connection')) or
                self._body_to_send is not None):
            self._keep_alive = False
        if code in _BODYLESS_CODES or self._method == 'HEAD':
            self._expect_body(0)
        elif 'Transfer-Encoding' in values:
            self._state = READING_CHUNK_SIZE
        elif length is not None:
            self._expect_body(int(length))
        else:
            self._state = READING_UNTIL_CLOSE
            self._keep_alive = False

    def _expect_body(self, length):
        self._state = READING_BODY
        self._remaining = self._body_length = length

    def _read_body(self):
        remaining = self._remaining
        if not remaining:
            return self._end_message(HTTPHeaders._adopt([], {}))
        data = self._received.take(remaining)
        if data:
            self._remaining = remaining - len(data)
            return BodyData(data)
        if self._eof:
            raise HTTPInputError('connection closed in the middle of the response body '
                                 '(received %d bytes, expected %d)'
                                 % (self._body_length - remaining, self._body_length))
        return NEED_DATA

    def _read_chunk_size(self):
        end = self._received.find(b'\r\n')
        if end < 0:
            return self._wait_for_block('chunk size line')
        self._check_block_size(end, 'chunk size line')
        try:
            size = chunk_size(self._received.take(end))
        except ValueError as exc:
            raise HTTPInputError('malformed response body: %s' % (exc,))
        if size:
            self._state = READING_CHUNK
            self._remaining = size
            return self._read_chunk()
        self._state = READING_TRAILERS
        return self._read_trailers()

    def _read_chunk(self):
        data = self._received.take(self._remaining)
        if not data:
            return self._wait_for_chunked_body()
        self._remaining -= len(data)
        if not self._remaining:
            self._state = READING_CHUNK_END
        return BodyData(data)

    def _read_chunk_end(self):
        received = self._received.peek(2)
        if received != b'\r\n'[:len(received)]:
            raise HTTPInputError('malformed response body: chunk data is followed by %r, '
                                 'not CRLF' % (received,))
        if len(received) < 2:
            return self._wait_for_chunked_body()
        self._received.take(2)
        self._state = READING_CHUNK_SIZE
        return self._read_chunk_size()

    def _read_trailers(self):
        if self._received.peek(2) == b'\r\n':  # no trailers: the usual end of a chunked body
            self._received.take(2)
            return self._end_message(HTTPHeaders._adopt([], {}))
        try:
            if self._received.peek(1) == b'\n':
                raise ValueError('the last chunk is followed by a bare LF, not CRLF')
            end = self._received.find(b'\r\n\r\n')
            if end < 0:
                return self._wait_for_block('trailers')
            trailers = self._headers(split_fields(self._take_block(end, 'trailers')),
                                     'trailers')
            check_framing(trailers._values)  # h11 checks them in trailers too
        except ValueError as exc:
            raise HTTPInputError('malformed trailers: %s' % (exc,))
        return self._end_message(trailers)

    def _read_until_close(self):
        data = self._received.take(len(self._received))
        if data:
            return BodyData(data)
        if self._eof:
            return self._end_message(HTTPHeaders._adopt([], {}))
        return NEED_DATA

    def _end_message(self, trailers):
        self._state = RESPONSE_DONE
        return EndOfMessage(trailers)

    def _read_done(self):
        return PAUSED

    def _read_closed(self):
        return ConnectionClosed()

    # -- helpers of the readers ---------------------------------------------------------------

    def _wait_for_block(self, block_name):
        """NEED_DATA while a head, trailer block or chunk-size line can still come whole."""
        size = len(self._received)
        if size > self.max_header_size:
            raise HTTPInputError('%s of more than %d bytes is larger than max_header_size '
                                 '(%d bytes)' % (block_name, size - 1, self.max_header_size))
        if self._state is READING_CHUNK_SIZE or self._state is READING_TRAILERS:
            return self._wait_for_chunked_body()
        if self._eof:
            if size == 0 and self._state is AWAITING_RESPONSE:
                raise NoResponseError('connection closed before the response began')
            raise HTTPInputError('connection closed in the middle of the response head')
        received = self._received.peek(5)
        if received != b'HTTP/'[:len(received)]:  # say so now, not at the timeout
            raise HTTPInputError('malformed response head: illegal status line: it starts '
                                 'with %r, not HTTP/' % (received,))
        return NEED_DATA

    def _wait_for_chunked_body(self):
        if self._eof:
            raise HTTPInputError('connection closed in the middle of the response body '
                                 '(incomplete chunked read)')
        return NEED_DATA

    def _take_block(self, end, block_name):
        """The head or trailer block of `end` bytes, now parsed, as native text without the
        blank line that ends it."""
        self._check_block_size(end, block_name)
        return native_str(self._received.take(end)[:-4])

    def _check_block_size(self, end, block_name):
        # What _wait_for_block refuses of a block still incomplete, refused here once it
        # is whole, so that the limit does not depend on how the bytes were split.
        if end > self.max_header_size:
            raise HTTPInputError('%s of %d bytes is larger than max_header_size (%d bytes)'
                                 % (block_name, end, self.max_header_size))

    def _headers(self, lines, block_name):
        if len(lines) > self.max_header_lines:
            raise HTTPInputError('%s has %d header lines, more than max_header_lines (%d)'
                                 % (block_name, len(lines), self.max_header_lines))
        names, values = parse_fields(lines)
        return HTTPHeaders._adopt(names, values)


_READERS = {
    AWAITING_REQUEST: HTTP1ClientProtocol._read_between_responses,
    AWAITING_RESPONSE: HTTP1ClientProtocol._read_head,
    AWAITING_FINAL_HEAD: HTTP1ClientProtocol._read_head,
    READING_BODY: HTTP1ClientProtocol._read_body,
    READING_CHUNK_SIZE: HTTP1ClientProtocol._read_chunk_size,
    READING_CHUNK: HTTP1ClientProtocol._read_chunk,
    READING_CHUNK_END: HTTP1ClientProtocol._read_chunk_end,
    READING_TRAILERS: HTTP1ClientProtocol._read_trailers,
    READING_UNTIL_CLOSE: HTTP1ClientProtocol._read_until_close,
    RESPONSE_DONE: HTTP1ClientProtocol._read_done,
    CLOSED: HTTP1ClientProtocol._read_closed,
}


def _check_informational(code):
    if code < 100:
        raise HTTPInputError('malformed response head: status code %03d' % code)
    if code == 101:  # send_request refuses Upgrade, so no switch was asked for
        raise HTTPInputError('the server switched protocols (101 response) unasked')


# --- Content-Encoding ----------------------------------------------------------------------

class ContentDecoder(object):
    """Incremental gzip/deflate decoding of a response body, with a cap on the decoded size.

    The cap is enforced while decoding, so a small compressed body (a decompression bomb)
    fails before it can expand in memory: zlib is never asked for more than one byte past
    the cap.

    Args:
        encoding: the Content-Encoding value; one of `ContentDecoder.ENCODINGS`.
        max_size: most decoded bytes accepted, in all.

    Raises:
        ValueError: `encoding` is not supported.
    """

    ENCODINGS = frozenset(['gzip', 'x-gzip', 'deflate'])

    def __init__(self, encoding, max_size):
        self.encoding = encoding.strip().lower()
        if self.encoding not in self.ENCODINGS:
            raise ValueError('unsupported Content-Encoding %r' % (encoding,))
        self.max_size = max_size
        self._decoded_size = 0
        self._undecided = b''  # the first bytes of a deflate body, until its format is known
        self._decompressor = None
        if self.encoding != 'deflate':
            self._decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)  # gzip wrapper

    def decompress(self, data):
        """The decoded bytes for the next piece of the encoded body (possibly b'').

        Raises:
            HTTPInputError: `data` is not valid for the encoding, or the decoded body
                would be larger than max_size.
        """
        if self._decompressor is None:
            data = self._choose_deflate_format(data)
            if self._decompressor is None:
                return b''
        try:
            decoded = self._decompressor.decompress(data, self.max_size - self._decoded_size + 1)
        except zlib.error as exc:
            raise HTTPInputError('Content-Encoding %s: the body is not valid %s data (%s)'
                                 % (self.encoding, self.encoding, exc))
        self._decoded_size += len(decoded)
        if self._decoded_size > self.max_size:
            raise HTTPInputError('Content-Encoding %s: the decoded body is larger than '
                                 'max_size (%d bytes)' % (self.encoding, self.max_size))
        # Below the cap zlib consumed all of `data`; bytes after the end of the compressed
        # stream are ignored, as browsers and Tornado do.
        return decoded

    def _choose_deflate_format(self, data):
        # RFC 9110's deflate is zlib-wrapped, but some servers send raw deflate. A zlib
        # header is two bytes: method 8 in the low nibble, their 16-bit value a multiple of 31.
        data = self._undecided + data
        if len(data) < 2:
            self._undecided = data
            return b''
        first, second = bytearray(data[:2])
        is_zlib = first & 0x0f == 8 and (first << 8 | second) % 31 == 0
        self._decompressor = zlib.decompressobj(zlib.MAX_WBITS if is_zlib else -zlib.MAX_WBITS)
        self._undecided = b''
        return data


# --- URLs ------------------------------------------------------------------------------------

def url_concat(url, args):
    """`url` with `args` (a dict, a list or tuple of pairs, or None) added to its query.

    >>> url_concat('http://example.com/foo?a=b', dict(c='d'))
    'http://example.com/foo?a=b&c=d'
    """
    if args is None:
        return url
    if isinstance(args, dict):
        args = args.items()
    elif not isinstance(args, (list, tuple)):
        raise TypeError("'args' should be a dict, list or tuple, not %s" % (type(args),))
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    query.extend(args)
    return urlunsplit(parts._replace(query=urlencode(query)))


def qs_to_qsl(qs):
    """Yield the (name, value) pairs of a ``parse_qs`` result, a name's values in order."""
    for name, values in qs.items():
        for value in values:
            yield name, value


# --- Dates -------------------------------------------------------------------------------------

def format_timestamp(timestamp):
    """An HTTP date ('Sun, 27 Jan 2013 18:43:20 GMT'), always in GMT.

    Args:
        timestamp: a POSIX timestamp (int or float), a UTC time tuple or struct_time (as
            time.gmtime gives), or a datetime: naive ones are taken as UTC, aware ones
            converted to it.
    """
    if isinstance(timestamp, datetime.datetime):
        timestamp = calendar.timegm(timestamp.utctimetuple())
    elif isinstance(timestamp, (tuple, time.struct_time)):
        timestamp = calendar.timegm(timestamp)
    elif not isinstance(timestamp, numbers.Real):
        raise TypeError('unknown timestamp type: %r' % (timestamp,))
    return email.utils.formatdate(timestamp, usegmt=True)


# --- Cookies -----------------------------------------------------------------------------------

# In a quoted cookie value, a backslash escapes an octal byte (\012) or any one character.
_COOKIE_ESCAPE = re.compile(r'\\(?:([0-3][0-7][0-7])|(.))')


def parse_cookie(cookie):
    """A Cookie header's value as a dict of name -> value, parsed as browsers do.

    Every ';' ends a pair, even inside quotes; a pair without '=' is a value with the
    empty name; a name given twice keeps its last value. A value in double quotes loses
    them, and its backslash escapes are undone.
    """
    cookies = {}
    for pair in cookie.split(';'):
        name, equals, value = pair.partition('=')
        if not equals:
            name, value = '', name
        name, value = name.strip(), value.strip()
        if name or value:
            cookies[name] = _unquote_cookie(value)
    return cookies


def _unquote_cookie(value):
    if len(value) < 2 or value[0] != '"' or value[-1] != '"':
        return value
    return _COOKIE_ESCAPE.sub(_unescape, value[1:-1])


def _unescape(match):
    octal, character = match.groups()
    return character if octal is None else chr(int(octal, 8))


# --- Credentials -------------------------------------------------------------------------------

def encode_username_password(username, password):
    """``username:password`` as bytes, as HTTP basic auth sends it.

    Text is NFC-normalized, then UTF-8 encoded (RFC 7617 2.1), so that a name typed with a
    combining accent matches the same name typed precomposed. Bytes are taken as they are.
    """
    return _nfc_utf8(username) + b':' + _nfc_utf8(password)


def _nfc_utf8(value):
    if isinstance(value, text_type):
        return unicodedata.normalize('NFC', value).encode('utf-8')
    return value


# --- Start lines -------------------------------------------------------------------------------

# A request line: "GET /index.html HTTP/1.1" (Tornado 5.1's fields).
RequestStartLine = collections.namedtuple('RequestStartLine', ['method', 'path', 'version'])
# A status line: "HTTP/1.1 200 OK", the code an int.
ResponseStartLine = collections.namedtuple('ResponseStartLine', ['version', 'code', 'reason'])

_HTTP1_VERSION = re.compile(r'HTTP/1\.[0-9]\Z')


def parse_request_start_line(line):
    """A request line ('GET /foo HTTP/1.1', native str) as a RequestStartLine.

    Raises:
        HTTPInputError: not three fields separated by single spaces, or a version other
            than HTTP/1.x.
    """
    fields = line.split(' ')
    if len(fields) != 3 or not all(fields):
        raise HTTPInputError('malformed HTTP request line: %r' % (line,))
    method, path, version = fields
    if not _HTTP1_VERSION.match(version):
        raise HTTPInputError('malformed HTTP version in request line: %r' % (line,))
    return RequestStartLine(method, path, version)


def parse_response_start_line(line):
    """A status line ('HTTP/1.1 200 OK', native str or bytes) as a ResponseStartLine.

    The line is checked as the client checks the responses it reads; a CRLF after it is
    allowed.

    Raises:
        HTTPInputError: the line is not an HTTP/1.x status line with a three-digit code.
    """
    text = native_str(line)
    if text.endswith('\r\n'):
        text = text[:-2]
    try:
        minor, code, reason, more_lines = split_head(text)
    except ValueError as exc:
        raise HTTPInputError('malformed HTTP response start line: %s' % (exc,))
    if more_lines:
        raise HTTPInputError('malformed HTTP response start line: more than one line in %r'
                             % (line,))
    return ResponseStartLine('HTTP/1.' + minor, code, reason)


# --- Form bodies -------------------------------------------------------------------------------

class HTTPFile(dict):
    """A file uploaded in a multipart/form-data body: ``filename``, ``body`` (bytes) and
    ``content_type``, read as attributes or as keys (Tornado 5.1's ObjectDict)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name)

    def __setattr__(self, name, value):
        self[name] = value


def parse_body_arguments(content_type, body, arguments, files, headers=None):
    """Add the fields of a form body to `arguments` and its uploaded files to `files`.

    Args:
        content_type: the Content-Type (native str). Bodies of
            application/x-www-form-urlencoded and multipart/form-data are parsed; any
            other is left alone.
        body: bytes.
        arguments: a dict of name -> list of values (bytes), extended in place.
        files: a dict of name -> list of `HTTPFile`, extended in place.
        headers: the request's headers, if there are any: a body with a Content-Encoding
            is not parsed.

    Names are native strings. A body that cannot be parsed is a warning on gen_log, as in
    Tornado 5.1: the fields it holds are simply absent.
    """
    if headers and 'Content-Encoding' in headers:
        gen_log.warning('Unsupported Content-Encoding: %s', headers['Content-Encoding'])
        return
    if content_type.startswith('application/x-www-form-urlencoded'):
        for name, values in _parse_qs_bytes(native_str(body)).items():
            arguments.setdefault(name, []).extend(values)
    elif content_type.startswith('multipart/form-data'):
        try:
            boundary = _parse_header(content_type)[1].get('boundary')
            if not boundary:
                raise ValueError('multipart boundary not found')
            parse_multipart_form_data(latin1_bytes(boundary), body, arguments, files)
        except ValueError as e:
            gen_log.warning('Invalid multipart/form-data: %s', e)


def parse_multipart_form_data(boundary, data, arguments, files):
    """Add the fields of a multipart/form-data body to `arguments` and its files to `files`.

    Args:
        boundary: the Content-Type's boundary parameter (bytes), in quotes or not.
        data: the body (bytes).
        arguments, files: dicts extended in place, as `parse_body_arguments` takes them.

    Field names, file names and content types are native strings, read as UTF-8 (what
    browsers send); an RFC 5987 ``filename*=UTF-8''...`` is text (on 2.7 too) and wins over
    ``filename``. Values and file bodies are bytes. A body without its final boundary, or a
    malformed part, is a warning on gen_log and is skipped, as in Tornado 5.1.

    Raises:
        ValueError: the boundary is empty.
    """
    if len(boundary) >= 2 and boundary.startswith(b'"') and boundary.endswith(b'"'):
        boundary = boundary[1:-1]
    if not boundary:
        raise ValueError('empty multipart boundary')
    delimiter = b'--' + boundary
    end = data.rfind(delimiter + b'--')
    if end == -1:
        gen_log.warning('Invalid multipart/form-data: no final boundary')
        return
    # What comes before the first delimiter is a preamble, which RFC 2046 says to ignore.
    for part in data[:end].split(delimiter + b'\r\n')[1:]:
        if part:
            _parse_part(part, arguments, files)


def _parse_part(part, arguments, files):
    """Add one part of a multipart body (the bytes between two delimiters) to `arguments` or
    `files`, or say on gen_log why it cannot be."""
    head_end = part.find(b'\r\n\r\n')
    if head_end == -1:
        gen_log.warning('multipart/form-data missing headers')
        return
    try:
        headers = HTTPHeaders.parse(ensure_str(part[:head_end].decode('utf-8')))
        disposition, params = _parse_header(headers.get('Content-Disposition', ''))
    except (ValueError, HTTPInputError) as e:  # not UTF-8, a malformed line or parameter
        gen_log.warning('Invalid multipart/form-data: %s', e)
        return
    if disposition.lower() != 'form-data':
        gen_log.warning("Invalid multipart/form-data: a part's Content-Disposition is %r, not "
                        "form-data", disposition)
    elif not part.endswith(b'\r\n'):
        gen_log.warning('Invalid multipart/form-data: no CRLF before a boundary')
    elif not params.get('name'):
        gen_log.warning('multipart/form-data value missing name')
    elif params.get('filename'):
        files.setdefault(params['name'], []).append(HTTPFile(
            filename=params['filename'], body=part[head_end + 4:-2],
            content_type=headers.get('Content-Type', 'application/unknown')))
    else:
        arguments.setdefault(params['name'], []).append(part[head_end + 4:-2])


# One ';'-separated piece of a header value: a ';' in a quoted string does not end it. Each
# character has one way to match, so a quote left open costs one pass, not a backtrack.
_HEADER_PIECE = re.compile(r'(?:[^";]+|"(?:[^"\\]|\\.)*"|")*', re.DOTALL)
_QUOTED_PAIR = re.compile(r'\\([\\"])')


def _parse_header(line):
    """('form-data', {'name': 'a'}) for 'form-data; name="a"': a value of the Content-Type
    kind, as its first piece and a dict of its parameters (Tornado 5.1's private helper).

    Parameter names are lower-cased; a quoted value loses its quotes and the backslash of
    each \\\\ and \\" in it (other backslashes stay: browsers send Windows paths as they
    are). An RFC 5987 value (``name*=UTF-8''%C3%A1``) is decoded to text and replaces the
    plain value of its name. Pieces without '=' are ignored.

    Raises:
        ValueError: an RFC 5987 value that is malformed, not in its charset, or in a
            charset Python does not know.
    """
    pieces, start = [], 0
    while start <= len(line):
        piece = _HEADER_PIECE.match(line, start).group()
        pieces.append(piece)
        start += len(piece) + 1  # past the ';'
    params, extended = {}, {}
    for piece in pieces[1:]:
        name, equals, value = piece.partition('=')
        if not equals:
            continue
        name, value = name.strip().lower(), _unquote(value.strip())
        if name.endswith('*'):
            extended[name[:-1]] = _decode_extended(value)
        else:
            params[name] = value
    params.update(extended)
    return pieces[0].strip(), params


def _unquote(value):
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        return _QUOTED_PAIR.sub(r'\1', value[1:-1])
    return value


def _decode_extended(value):
    """The text of an RFC 5987 value: "UTF-8''%C3%A1b.txt" -> u'\\xe1b.txt'."""
    charset, quote, rest = value.partition("'")
    _language, second_quote, encoded = rest.partition("'")
    if not (quote and second_quote):
        raise ValueError('malformed RFC 5987 parameter value %r' % (value,))
    try:
        return unquote_to_bytes(encoded).decode(charset)
    except LookupError:
        raise ValueError('unknown charset %r in RFC 5987 parameter value' % (charset,))


def _parse_qs_bytes(query):
    """name -> list of values of a query string or form body (native str, latin-1): names
    are native strings, values bytes, blank values kept.

    Not urllib's parse_qs: on 3.x it would need encoding='latin-1' (to give back the bytes
    sent), which 2.7's lacks, and whether ';' separates too depends on the patch release;
    here only '&' does, everywhere.
    """
    arguments = {}
    for field in query.split('&'):
        if field:
            name, _, value = field.partition('=')
            arguments.setdefault(native_str(_form_unquote(name)), []).append(_form_unquote(value))
    return arguments


def _form_unquote(text):
    return unquote_to_bytes(latin1_bytes(text.replace('+', ' ')))


# --- The server side: a request's data and the interfaces of a server's parts ---------------

_HOST_AND_PORT = re.compile(r'(.+):([0-9]+)\Z', re.DOTALL)


def split_host_and_port(netloc):
    """('example.com', 8080) for 'example.com:8080'; the port is None when there is none."""
    match = _HOST_AND_PORT.match(netloc)
    if match is None:
        return netloc, None
    return match.group(1), int(match.group(2))


class HTTPServerRequest(object):
    """One HTTP request as a server received it: Tornado 5.1's data object.

    A server makes it (tinytornado has none: tests and legacy code make their own). `uri`
    is required; the rest is optional. `start_line`, a RequestStartLine, gives method, uri
    and version at once.

    Attributes (native strings unless said otherwise):
        method, uri, version ('HTTP/1.0' by default), path, query: the request line's.
        headers: an HTTPHeaders (or the mapping given).
        body: bytes.
        remote_ip, protocol: from ``connection.context`` when it has them, else None and
            'http'.
        host: the `host` given, else the Host header, else '127.0.0.1'; host_name is it
            lower-cased without its port.
        arguments: name -> list of values (bytes): the query's, and the body's once
            `_parse_body` has run. query_arguments and body_arguments hold each alone.
        files: name -> list of `HTTPFile`.
        connection: the request's `HTTPConnection`, or None; server_connection: opaque.
    """

    def __init__(self, method=None, uri=None, version='HTTP/1.0', headers=None, body=None,
                 host=None, files=None, connection=None, start_line=None,
                 server_connection=None):
        if start_line is not None:
            method, uri, version = start_line
        if uri is None:
            raise TypeError('HTTPServerRequest needs a uri')
        self.method, self.uri, self.version = method, uri, version
        self.headers = HTTPHeaders() if headers is None else headers
        self.body = b'' if body is None else body
        context = getattr(connection, 'context', None)
        self.remote_ip = getattr(context, 'remote_ip', None)
        self.protocol = getattr(context, 'protocol', 'http')
        self.host = host or self.headers.get('Host') or '127.0.0.1'
        self.host_name = split_host_and_port(self.host.lower())[0]
        self.files = {} if files is None else files
        self.connection, self.server_connection = connection, server_connection
        self._start_time = time.time()  # wall-clock, as 5.1's request_time() reports
        self._finish_time = None
        self._cookies = None
        self.path, _, self.query = uri.partition('?')
        self.arguments = _parse_qs_bytes(self.query)
        self.query_arguments = dict((name, list(values))
                                    for name, values in self.arguments.items())
        self.body_arguments = {}

    @property
    def cookies(self):
        """The Cookie header as a ``SimpleCookie`` (name -> Morsel), made on first use."""
        if self._cookies is None:
            self._cookies = http_cookies.SimpleCookie()
            if 'Cookie' in self.headers:
                for name, value in parse_cookie(self.headers['Cookie']).items():
                    self._add_cookie(name, value)
        return self._cookies

    def _add_cookie(self, name, value):
        try:
            self._cookies[name] = value
        except http_cookies.CookieError as e:
            # SimpleCookie refuses names that browsers send (parse_cookie does not): as in
            # 5.1, such a cookie is left out rather than failing the request.
            gen_log.debug('Cookie %r left out: %s', name, e)

    def full_url(self):
        """The URL the request was for: protocol, host and uri."""
        return self.protocol + '://' + self.host + self.uri

    def request_time(self):
        """Seconds since the request was made, or until `finish` if it was called."""
        end = time.time() if self._finish_time is None else self._finish_time
        return end - self._start_time

    def supports_http_1_1(self):
        """Deprecated, as in Tornado 5.1: ``request.version == 'HTTP/1.1'``."""
        warnings.warn('supports_http_1_1() is deprecated, use request.version instead',
                      DeprecationWarning, stacklevel=2)
        return self.version == 'HTTP/1.1'

    def write(self, chunk, callback=None):
        """Deprecated, as in Tornado 5.1: ``request.connection.write(chunk, callback)``."""
        warnings.warn('req.write deprecated, use req.connection.write and write_headers '
                      'instead', DeprecationWarning, stacklevel=2)
        return self.connection.write(chunk, callback=callback)

    def finish(self):
        """Deprecated, as in Tornado 5.1: ``request.connection.finish()``, and the time
        `request_time` stops at."""
        warnings.warn('req.finish deprecated, use req.connection.finish instead',
                      DeprecationWarning, stacklevel=2)
        self.connection.finish()
        self._finish_time = time.time()

    def get_ssl_certificate(self, binary_form=False):
        """The client's TLS certificate (``getpeercert()`` of the connection's socket), or
        None when there is none."""
        try:
            return self.connection.stream.socket.getpeercert(binary_form=binary_form)
        except ssl.SSLError:
            return None

    def _parse_body(self):
        """Parse the body's form fields into body_arguments, arguments and files."""
        parse_body_arguments(self.headers.get('Content-Type', ''), self.body,
                             self.body_arguments, self.files, self.headers)
        for name, values in self.body_arguments.items():
            self.arguments.setdefault(name, []).extend(values)

    def __repr__(self):
        # Not the headers: they may hold credentials, and reprs end up in logs.
        return '%s(%s)' % (type(self).__name__, ', '.join(
            '%s=%r' % (name, getattr(self, name)) for name in self._REPR_FIELDS))

    _REPR_FIELDS = ('protocol', 'host', 'method', 'uri', 'version', 'remote_ip')


class HTTPOutputError(Exception):
    """A response (or request) that cannot be written as HTTP: the writer's fault."""


class HTTPServerConnectionDelegate(object):
    """What an HTTP server hands each connection's requests to (Tornado 5.1's interface)."""

    def start_request(self, server_conn, request_conn):
        """A request begins on `request_conn` (an HTTPConnection) of the long-lived
        `server_conn`: return the HTTPMessageDelegate that will receive it."""
        raise NotImplementedError()

    def on_close(self, server_conn):
        """`server_conn`, seen earlier by start_request, has closed."""


class HTTPMessageDelegate(object):
    """Receives one HTTP request or response as it is read (Tornado 5.1's interface).

    Every method does nothing unless overridden. After headers_received, either `finish`
    or `on_connection_close` is called, never both.
    """

    def headers_received(self, start_line, headers):
        """The head was read: a RequestStartLine or ResponseStartLine, and the HTTPHeaders.
        May return a Future: the body is not read before it is done."""

    def data_received(self, chunk):
        """A piece of the body (bytes). May return a Future, for flow control."""

    def finish(self):
        """The whole message has been received."""

    def on_connection_close(self):
        """The connection closed before the message was whole."""


class HTTPConnection(object):
    """What a server gives an application to write its response with (Tornado 5.1's
    interface); every method must be implemented."""

    def write_headers(self, start_line, headers, chunk=None, callback=None):
        """Write the head (the start line's version is ignored) and, optionally, the first
        `chunk` of the body. Returns a Future unless `callback` (deprecated) is given."""
        raise NotImplementedError()

    def write(self, chunk, callback=None):
        """Write a piece of the body. Returns a Future unless `callback` (deprecated) is
        given."""
        raise NotImplementedError()

    def finish(self):
        """The body has been written whole."""
        raise NotImplementedError()
