"""HTTP/1.1 without I/O: headers, request bytes out, response events in.

Nothing here touches a socket or the loop. The HTTP client writes the bytes that
`HTTP1ClientProtocol.send_request` returns, feeds what it reads to `receive_data`, and acts
on the events `next_event` hands back, so every framing rule is testable by feeding bytes.
The protocol is a state machine of small readers, one per thing the next bytes must be:
its states and every move between them are _http1state's table, and the grammar the
readers check against (as strictly as h11, which this replaced) is _http1parser's.

Invariant: bad input from the peer ends the response with `HTTPInputError`, and once end of
file has been fed `next_event` never answers `NEED_DATA`, so a broken server cannot leave a
caller waiting for bytes that will not come.

Tornado 5.1's helpers that the client does not use (URLs, cookies, start lines, form
bodies, the server side's data object and interfaces) live in _httputil_legacy, and are
re-exported at the end of this module for code written against ``tornado.httputil``.
"""
from __future__ import absolute_import, division, print_function

import calendar
import collections
import datetime
import email.utils
import numbers
import time
import unicodedata
import weakref
import zlib

from six.moves import http_client

from tinytornado._compat import collections_abc, latin1_bytes, native_str, text_type
from tinytornado._http1parser import (
    LAST_CHUNK, BodyData, ChunkedBodyReader, FedBytes, ReceiveBuffer, asks_to_close,
    check_framing, content_length, format_chunk, format_request, normalize_name, parse_fields,
    split_fields, split_head,
)
from tinytornado._http1state import (
    AWAITING_FINAL_HEAD, AWAITING_REQUEST, AWAITING_RESPONSE, CHUNK_DATA_READ, CHUNK_ENDED,
    CHUNK_STARTED, CHUNKED_HEAD, CLOSE_DELIMITED_HEAD, CLOSED, INFORMATIONAL_HEAD,
    LAST_CHUNK_STARTED, MESSAGE_ENDED, NEXT_CYCLE, PEER_CLOSED, READING_BODY, READING_CHUNK,
    READING_CHUNK_END, READING_CHUNK_SIZE, READING_TRAILERS, READING_UNTIL_CLOSE,
    RESPONSE_DONE, SEND_REQUEST, SIZED_HEAD, TRANSITIONS,
)

__all__ = [
    'HTTPHeaders', 'HTTPInputError', 'NoResponseError', 'HeaderTooLargeError',
    'HTTP1ClientProtocol',
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


class HeaderTooLargeError(HTTPInputError):
    """A response head, trailer block or chunk-size line larger than max_header_size."""


class HTTPOutputError(Exception):
    """A response (or request) that cannot be written as HTTP: the writer's fault."""


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
        elif len(args) == 1 and not kwargs and args[0].__class__ is dict:
            # A server's every response starts from a dict of defaults: the mixin's update
            # would first ask abc whether it is a Mapping (slow on 2.7).
            for name, value in args[0].items():
                self[name] = value
        elif args or kwargs:  # the mixin's update is slow even with nothing to add
            self.update(*args, **kwargs)

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


def headers_from_fields(names, values):
    """HTTPHeaders made of `names` (normalized, in order) and `values` (name -> list), as
    the parser builds them: taken over, not copied. For the HTTP/1 protocols (this module's
    client side and _http1server) and web's default response headers, not in `__all__`:
    see docs/design.md."""
    headers = HTTPHeaders.__new__(HTTPHeaders)
    headers._names = names
    headers._values = values
    headers._last_name = names[-1] if names else None
    return headers


# --- Response events ---------------------------------------------------------------------

_HEAD_FIELDS = ['version', 'code', 'reason', 'headers']

# A 1xx response (100 Continue, 103 Early Hints): another head follows on the same request.
InformationalResponse = collections.namedtuple('InformationalResponse', _HEAD_FIELDS)
# The final response's status line and headers: version 'HTTP/1.1', code int, reason str.
ResponseHead = collections.namedtuple('ResponseHead', _HEAD_FIELDS)
# BodyData(data): a piece of the body (bytes), already stripped of chunked framing; made
# by _http1parser's chunk readers too, so defined there.
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


# --- The client connection ------------------------------------------------------------------

_BODYLESS_CODES = frozenset([204, 304])

# What is left to send of a body started by send_request_head: its length left, or
# CHUNKED; None once the request has been sent whole.
CHUNKED = 'CHUNKED'


class HTTP1ClientProtocol(FedBytes, ChunkedBodyReader):
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
        self._state = TRANSITIONS[self._state][SEND_REQUEST]
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

    def expect_response(self, method='GET'):
        """Read the response to a request that was sent without this protocol (bytes
        written to the stream by hand), as the response to a `method` request.

        Raises:
            ValueError: a request is already outstanding, or the connection is closed.
        """
        if self._state is not AWAITING_REQUEST or self._eof or self._error is not None:
            raise ValueError('a response can be expected only on an open connection with no '
                             'request outstanding')
        self._method = native_str(method)
        self._keep_alive = True
        self._state = TRANSITIONS[self._state][SEND_REQUEST]

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
        self._state = TRANSITIONS[self._state][NEXT_CYCLE]

    # -- one reader per state: each returns the next event or NEED_DATA ---------------------

    def _read_between_responses(self):
        if self._received:
            raise HTTPInputError('the server sent data while no request was outstanding')
        if self._eof:
            self._state = TRANSITIONS[self._state][PEER_CLOSED]
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
            self._state = TRANSITIONS[self._state][INFORMATIONAL_HEAD]
            return InformationalResponse(version, code, reason, headers)
        self._start_body(minor, code, headers._values, length)
        return ResponseHead(version, code, reason, headers)

    def _start_body(self, minor, code, values, length):
        if 'Transfer-Encoding' in values and length is not None:
            # RFC 9112 6.3: a sign of response splitting, to be handled as an error (and
            # Tornado 5.1 refuses it too), not resolved in favour of chunked as h11 does.
            raise HTTPInputError('Response with both Transfer-Encoding and Content-Length')
        if (minor == '0' or asks_to_close(values.get('Connection')) or
                self._body_to_send is not None):
            self._keep_alive = False
        if code in _BODYLESS_CODES or self._method == 'HEAD':
            self._expect_body(0)
        elif 'Transfer-Encoding' in values:
            self._state = TRANSITIONS[self._state][CHUNKED_HEAD]
        elif length is not None:
            self._expect_body(int(length))
        else:
            self._state = TRANSITIONS[self._state][CLOSE_DELIMITED_HEAD]
            self._keep_alive = False

    def _expect_body(self, length):
        self._state = TRANSITIONS[self._state][SIZED_HEAD]
        self._remaining = self._body_length = length

    def _read_body(self):
        remaining = self._remaining
        if not remaining:
            return self._end_message(headers_from_fields([], {}))
        data = self._received.take(remaining)
        if data:
            self._remaining = remaining - len(data)
            return BodyData(data)
        if self._eof:
            raise HTTPInputError('connection closed in the middle of the response body '
                                 '(received %d bytes, expected %d)'
                                 % (self._body_length - remaining, self._body_length))
        return NEED_DATA

    # _read_chunk_size, _read_chunk and _read_chunk_end are ChunkedBodyReader's; these are
    # the moves they make through the table.

    def _chunk_started(self, size):
        self._state = TRANSITIONS[self._state][CHUNK_STARTED]
        self._remaining = size
        return self._read_chunk()

    def _last_chunk_started(self):
        self._state = TRANSITIONS[self._state][LAST_CHUNK_STARTED]
        return self._read_trailers()

    def _chunk_data_read(self):
        self._state = TRANSITIONS[self._state][CHUNK_DATA_READ]

    def _chunk_ended(self):
        self._state = TRANSITIONS[self._state][CHUNK_ENDED]
        return self._read_chunk_size()

    def _read_trailers(self):
        if self._received.peek(2) == b'\r\n':  # no trailers: the usual end of a chunked body
            self._received.take(2)
            return self._end_message(headers_from_fields([], {}))
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
            return self._end_message(headers_from_fields([], {}))
        return NEED_DATA

    def _end_message(self, trailers):
        self._state = TRANSITIONS[self._state][MESSAGE_ENDED]
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
            raise HeaderTooLargeError(
                '%s of more than %d bytes is larger than max_header_size (%d bytes)'
                % (block_name, size - 1, self.max_header_size))
        if self._state is READING_CHUNK_SIZE or self._state is READING_TRAILERS:
            return self._need_body_data()
        if self._eof:
            if size == 0 and self._state is AWAITING_RESPONSE:
                raise NoResponseError('connection closed before the response began')
            raise HTTPInputError('connection closed in the middle of the response head')
        received = self._received.peek(5)
        if received != b'HTTP/'[:len(received)]:  # say so now, not at the timeout
            raise HTTPInputError('malformed response head: illegal status line: it starts '
                                 'with %r, not HTTP/' % (received,))
        return NEED_DATA

    def _need_body_data(self):
        if self._eof:
            raise HTTPInputError('connection closed in the middle of the response body '
                                 '(incomplete chunked read)')
        return NEED_DATA

    def _malformed_chunked_body(self, detail):
        return HTTPInputError('malformed response body: %s' % (detail,))

    def _take_block(self, end, block_name):
        """The head or trailer block of `end` bytes, now parsed, as native text without the
        blank line that ends it."""
        if end > self.max_header_size:
            raise self._block_too_large(end, block_name)
        return native_str(self._received.take(end)[:-4])

    def _block_too_large(self, end, block_name):
        # What _wait_for_block refuses of a block still incomplete, refused once it is
        # whole, so that the limit does not depend on how the bytes were split.
        return HeaderTooLargeError('%s of %d bytes is larger than max_header_size (%d bytes)'
                                   % (block_name, end, self.max_header_size))

    def _headers(self, lines, block_name):
        if len(lines) > self.max_header_lines:
            raise HTTPInputError('%s has %d header lines, more than max_header_lines (%d)'
                                 % (block_name, len(lines), self.max_header_lines))
        names, values = parse_fields(lines)
        return headers_from_fields(names, values)


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

    @classmethod
    def for_body(cls, headers, max_size):
        """A decoder for the body of the message of `headers` (HTTPHeaders) if its
        Content-Encoding is one of ENCODINGS, else None. The Content-Encoding then moves
        to X-Consumed-Content-Encoding, as Tornado 5.1's server and client connections
        moved it: the body handed on is decoded."""
        encoding = headers.get('Content-Encoding')
        if encoding is None or encoding.strip().lower() not in cls.ENCODINGS:
            return None
        headers.add('X-Consumed-Content-Encoding', encoding)
        del headers['Content-Encoding']
        return cls(encoding, max_size)

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


# --- Dates -------------------------------------------------------------------------------------

def format_timestamp(timestamp):
    """An HTTP date ('Sun, 27 Jan 2013 18:43:20 GMT'), always in GMT.

    Args:
        timestamp: a POSIX timestamp (int or float), a UTC time tuple or struct_time (as
            time.gmtime gives), or a datetime: naive ones are taken as UTC, aware ones
            converted to it.
    """
    if timestamp.__class__ is float:  # time.time(), a server's Date on each response
        return _format_second(int(timestamp))
    if isinstance(timestamp, datetime.datetime):  # a static file's Last-Modified
        return _format_second(calendar.timegm(timestamp.utctimetuple()))
    if isinstance(timestamp, (tuple, time.struct_time)):
        timestamp = calendar.timegm(timestamp)
    elif not isinstance(timestamp, numbers.Real):
        raise TypeError('unknown timestamp type: %r' % (timestamp,))
    return email.utils.formatdate(timestamp, usegmt=True)


# second -> its text: a server formats the current second for each response's Date, and
# its static files' modification times for their Last-Modified.
_formatted_seconds = {}
_MAX_FORMATTED_SECONDS = 256


def _format_second(second):
    text = _formatted_seconds.get(second)
    if text is None:
        if len(_formatted_seconds) >= _MAX_FORMATTED_SECONDS:
            _formatted_seconds.clear()  # a dict's own operations: safe between threads
        text = _formatted_seconds[second] = email.utils.formatdate(second, usegmt=True)
    return text


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


# -- Tornado 5.1's helpers, re-exported (tests/test_layering.py: only here, last) ----------
from tinytornado._httputil_legacy import (  # noqa: E402
    HTTPConnection, HTTPFile, HTTPMessageDelegate, HTTPServerConnectionDelegate,
    HTTPServerRequest, RequestStartLine, ResponseStartLine, parse_body_arguments, parse_cookie,
    parse_multipart_form_data, parse_request_start_line, parse_response_start_line, qs_to_qsl,
    split_host_and_port, url_concat,
)
