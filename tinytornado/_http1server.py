"""The server side of HTTP/1.1 without I/O: request events in, response bytes out.

`HTTP1ServerProtocol` is the client protocol's mirror on the same grammar (_http1parser):
the server feeds it what it reads and acts on the events `next_event` returns (a
`RequestHead`, `BodyData`, `EndOfMessage`), and writes the bytes that `send_response_head`,
`send_body_data` and `end_body` return, which frame the response (chunked when it has no
Content-Length). It decides whether the connection carries another request.

Invariant: a request the server cannot read safely ends the connection with `RequestError`,
whose `code` is the status to answer with (None when the client is gone mid-request); a
request with both framings, conflicting lengths or a malformed chunk size is refused rather
than guessed at, so a proxy in front cannot frame it one way and this server another.

Where it differs from h11, it follows Tornado 5.1: a request head's lines may end in a bare
LF, an HTTP/1.1 request needs no Host header, and "Expect: 100-continue" is answered with
`send_continue` when the application starts reading the body.
"""
from __future__ import absolute_import, division, print_function

import collections
import re

from tinytornado._compat import PY2, latin1_bytes, native_str
from tinytornado._http1parser import (
    LAST_CHUNK, ChunkedBodyReader, FedBytes, ReceiveBuffer, asks_to_close, check_framing,
    content_length, format_chunk, parse_fields, split_fields,
)
from tinytornado.httputil import (
    DEFAULT_MAX_HEADER_LINES, DEFAULT_MAX_HEADER_SIZE, NEED_DATA, PAUSED, BodyData,
    ConnectionClosed, EndOfMessage, HTTPInputError, HTTPOutputError, headers_from_fields,
    responses,
)

__all__ = ['HTTP1ServerProtocol', 'RequestHead', 'RequestError', 'CONTINUE']

# The request line and headers: method, target and version native str ('HTTP/1.1').
RequestHead = collections.namedtuple('RequestHead', ['method', 'target', 'version', 'headers'])

CONTINUE = b'HTTP/1.1 100 Continue\r\n\r\n'

_REQUEST_LINE = re.compile(r"([-!#$%&'*+.^_`|~0-9A-Za-z]+) ([!-~]+) HTTP/1\.([0-9])\Z")
_LINE_END = re.compile(r'\r?\n')
_DIGITS = re.compile(r'[0-9]+\Z')
# The end of a head: a blank line, its line ends CRLF or bare LF (as Tornado 5.1 reads them).
_HEAD_END = re.compile(b'\n\r?\n')
_BODYLESS_CODES = frozenset([204, 304])

# What the next bytes of the request must be.
AWAITING_HEAD = 'AWAITING_HEAD'
READING_BODY = 'READING_BODY'
READING_CHUNK_SIZE = 'READING_CHUNK_SIZE'
READING_CHUNK = 'READING_CHUNK'
READING_CHUNK_END = 'READING_CHUNK_END'
READING_TRAILERS = 'READING_TRAILERS'
REQUEST_DONE = 'REQUEST_DONE'  # EndOfMessage returned: PAUSED until start_next_cycle
CLOSED = 'CLOSED'  # end of file between requests


class RequestError(HTTPInputError):
    """A request the server cannot serve: `code` is the status to answer with before
    closing (400, or 431 for a head over max_header_size), or None when the client closed
    the connection in the middle of its request and no answer is due."""

    def __init__(self, message, code=400):
        HTTPInputError.__init__(self, message)
        self.code = code


class HTTP1ServerProtocol(FedBytes, ChunkedBodyReader):
    """The sans-IO state of one HTTP/1.1 server connection, request after request.

    Args:
        max_header_size: largest request head (with its blank line), trailer block or
            chunk-size line accepted, in bytes.
        max_body_size: largest request body accepted, in bytes (None for no limit). The
            attribute may be changed for one request between its head and its body
            (Tornado's set_max_body_size); the next request starts from the argument.
        no_keep_alive: close the connection after every response.
        max_header_lines: most header lines accepted in a head or trailer block.
    """

    def __init__(self, max_header_size=DEFAULT_MAX_HEADER_SIZE, max_body_size=None,
                 no_keep_alive=False, max_header_lines=DEFAULT_MAX_HEADER_LINES):
        self.max_header_size = max_header_size
        self._default_max_body_size = max_body_size
        self.no_keep_alive = no_keep_alive
        self.max_header_lines = max_header_lines
        self._received = ReceiveBuffer()
        self._eof = False
        self._reset()

    def _reset(self):
        self._state = AWAITING_HEAD
        self.max_body_size = self._default_max_body_size
        self._head = None  # the RequestHead being served
        self._keep_alive = not self.no_keep_alive
        self._remaining = 0  # of the body (known length) or of the chunk being read
        self._length_checked = True
        self._body_size = 0  # received so far, against max_body_size
        self._expects_continue = False
        self._response_started = False
        self._response_done = False
        self._to_send = None  # the body's bytes left to send, CHUNKED, or None: unframed

    # -- the request -------------------------------------------------------------------------

    def next_event(self):
        """The next request event: RequestHead, BodyData, EndOfMessage (its trailers),
        ConnectionClosed (end of file between requests), NEED_DATA, or PAUSED once the
        request has been read whole (until `start_next_cycle`).

        Raises:
            RequestError: the request is malformed, over a limit, or cut short.
        """
        return _READERS[self._state](self)

    def _read_head(self):
        if not self._received and not self._eof:
            return NEED_DATA  # the server asks first, before it reads: nothing to parse
        if self._received.peek(1) in (b'\r', b'\n'):
            self._skip_blank_lines()  # RFC 9112 2.2: blank lines before a request are ignored
        end = self._block_end(self._received.search(_HEAD_END, 3), 'request head', 431)
        if end < 0:
            if self._eof:
                if not self._received:
                    self._state = CLOSED
                    return ConnectionClosed()
                raise RequestError('connection closed in the middle of the request head',
                                   code=None)
            return NEED_DATA
        text = _without_blank_line(native_str(self._received.take(end)))
        head, values = _parse_head(text, self.max_header_lines)
        self._start_body(head, values)
        self._head = head
        return head

    def _skip_blank_lines(self):
        while self._received.peek(2) == b'\r\n' or self._received.peek(1) == b'\n':
            self._received.take(1 if self._received.peek(1) == b'\n' else 2)

    def _start_body(self, head, values):
        # check_framing has left one value of each framing field.
        length = values.get('Content-Length', [None])[0]
        chunked = 'Transfer-Encoding' in values
        if chunked and length is not None:
            # RFC 9112 6.1: a sign of request smuggling, which a server may refuse.
            raise RequestError('request has both Transfer-Encoding and Content-Length')
        self._keep_alive = self._keep_alive and _client_keeps_alive(head, values)
        expect = values.get('Expect')
        self._expects_continue = (head.version == 'HTTP/1.1' and expect is not None and
                                  expect[-1].lower() == '100-continue')
        if chunked:
            self._state = READING_CHUNK_SIZE
            return
        self._remaining = int(length or 0)
        self._length_checked = False  # against max_body_size, once the body is asked for
        self._state = READING_BODY

    def _check_body_size(self, size, message):
        if self.max_body_size is not None and size > self.max_body_size:
            raise RequestError('%s: more than max_body_size (%d bytes)'
                               % (message, self.max_body_size))

    def _read_body(self):
        if not self._length_checked:
            self._length_checked = True
            self._check_body_size(self._remaining, 'Content-Length too long')
        if not self._remaining:
            return self._end_request()
        data = self._received.take(self._remaining)
        if data:
            self._remaining -= len(data)
            return BodyData(data)
        return self._need_body_data()

    def _need_body_data(self):
        if self._eof:
            raise RequestError('connection closed in the middle of the request body',
                               code=None)
        return NEED_DATA

    # _read_chunk_size, _read_chunk and _read_chunk_end are ChunkedBodyReader's; these are
    # the moves they make, and the limits and errors they meet.

    def _chunk_started(self, size):
        self._body_size += size
        self._check_body_size(self._body_size, 'chunked body too large')
        self._state = READING_CHUNK
        self._remaining = size
        return self._read_chunk()

    def _last_chunk_started(self):
        self._state = READING_TRAILERS
        return self._read_trailers()

    def _chunk_data_read(self):
        self._state = READING_CHUNK_END

    def _chunk_ended(self):
        self._state = READING_CHUNK_SIZE
        return self._read_chunk_size()

    def _wait_for_block(self, block_name):
        self._block_end(-1, block_name)
        return self._need_body_data()

    def _malformed_chunked_body(self, detail):
        return RequestError('malformed chunked request body: %s' % (detail,))

    def _read_trailers(self):
        if self._received.peek(2) == b'\r\n':  # no trailers: the usual end
            self._received.take(2)
            return self._end_request()
        try:
            end = self._received.find(b'\r\n\r\n')
        except ValueError as exc:  # a bare LF where the last CRLF should be
            raise RequestError('malformed trailers: %s' % (exc,))
        if self._block_end(end, 'trailers') < 0:
            return self._need_body_data()
        try:
            lines = split_fields(native_str(self._received.take(end)[:-4]))
            trailers, values = _headers(lines, self.max_header_lines)
            check_framing(values)
        except ValueError as exc:
            raise RequestError('malformed trailers: %s' % (exc,))
        return self._end_request(trailers)

    def _block_end(self, end, block_name, code=400):
        """`end` (where a head, chunk-size line or trailer block ends, -1 while it has not
        come); RequestError with `code` if the block is, or already would be, larger than
        max_header_size, however its bytes were split."""
        limit = self.max_header_size
        if end > limit or (end < 0 and len(self._received) > limit):
            raise self._block_too_large(end, block_name, code)
        return end

    def _block_too_large(self, end, block_name, code=400):
        # `end` goes unused: the server's message names only the limit.
        return RequestError('%s larger than max_header_size (%d bytes)'
                            % (block_name, self.max_header_size), code=code)

    def _end_request(self, trailers=None):
        self._state = REQUEST_DONE
        return EndOfMessage(headers_from_fields([], {}) if trailers is None else trailers)

    def _read_done(self):
        return PAUSED

    def _read_closed(self):
        return ConnectionClosed()

    # -- the response ------------------------------------------------------------------------

    def send_continue(self):
        """The bytes of a 100 Continue, if the request asked for one and no response has
        begun (else b''); once per request."""
        if not self._expects_continue or self._response_started:
            return b''
        self._expects_continue = False
        return CONTINUE

    def send_response_head(self, code, reason, headers):
        """The bytes of the response's status line and `headers` (an HTTPHeaders, not
        changed): chunked framing is added when the response to an HTTP/1.1 request has a
        body and no Content-Length, and a Connection header when the connection closes
        after it (or a 1.0 client asked to keep it).

        Raises:
            ValueError: a header name or value holds a CR or LF, or is not latin-1.
            RuntimeError: no request is being served, or its response has begun.
        """
        head = self._head
        if head is None or self._response_started:
            raise RuntimeError('a response head can be sent once per request, after its head')
        self._response_started = True
        lines = ['HTTP/1.1 %d %s' % (code, reason or responses.get(code, 'Unknown'))]
        # The headers' own dict, read by the normalized names (what each name below is):
        # the mapping's methods would normalize each name again, on every response.
        values = headers._values
        lines.extend(_field_lines(headers._names, values))
        if head.method == 'HEAD' or code in _BODYLESS_CODES:
            self._to_send = 0
        elif 'Transfer-Encoding' in values:  # the application frames the body itself
            self._to_send = None
        elif 'Content-Length' in values:
            self._to_send = _response_length(values['Content-Length'])
        elif head.version == 'HTTP/1.1':
            self._to_send = _CHUNKED
            lines.append('Transfer-Encoding: chunked')
        else:  # a 1.0 client: the body ends where the connection does
            self._to_send = None
            self._keep_alive = False
        connection = values.get('Connection')
        if connection is not None and asks_to_close(connection):
            self._keep_alive = False  # the application closes it
        if not self._keep_alive:
            if head.version == 'HTTP/1.1' and connection is None:
                lines.append('Connection: close')
        elif head.version != 'HTTP/1.1' and connection is None:
            lines.append('Connection: Keep-Alive')
        text = '\r\n'.join(lines)
        if text.count('\r') != len(lines) - 1 or text.count('\n') != len(lines) - 1:
            raise ValueError('newline in response header: %r' % (lines,))
        try:
            return latin1_bytes(text) + b'\r\n\r\n'
        except UnicodeError:
            raise ValueError('the response head is not latin-1 text: %r' % (lines,))

    def send_body_data(self, data):
        """The bytes that send `data`, the next piece of the response body.

        Raises:
            HTTPOutputError: more than the Content-Length (or any body where none may be).
            RuntimeError: the response has ended.
        """
        if self._response_done:
            raise RuntimeError('the response has ended: nothing more can be sent')
        to_send = self._to_send
        if to_send is _CHUNKED:
            return format_chunk(data) if data else b''  # an empty chunk would end the body
        if to_send is not None:
            if len(data) > to_send:
                raise HTTPOutputError('Tried to write more data than Content-Length')
            self._to_send = to_send - len(data)
        return data

    def end_body(self):
        """The bytes that end the response (the last chunk, or none); the response is done.

        Raises:
            HTTPOutputError: fewer bytes were sent than the Content-Length.
            RuntimeError: the response has ended already.
        """
        if self._response_done:
            raise RuntimeError('the response has ended already')
        to_send = self._to_send
        self._response_done = True
        if self.request_body_unread:
            self._keep_alive = False  # the rest of the request body will not be read
        if to_send is _CHUNKED:
            return LAST_CHUNK
        if to_send:
            self._keep_alive = False
            raise HTTPOutputError('Tried to write %d bytes less than Content-Length' % to_send)
        return b''

    @property
    def request_body_unread(self):
        """True while some of the request's body has yet to be read (a bodyless request
        has none): a response ended now leaves the connection unable to serve another."""
        return not (self._state is REQUEST_DONE or
                    (self._state is READING_BODY and not self._remaining))

    @property
    def response_started(self):
        return self._response_started

    @property
    def reusable(self):
        """True once the request was read whole and its response sent whole, and both
        sides allow another request on the connection."""
        return (self._state is REQUEST_DONE and self._response_done and self._keep_alive and
                not self._eof)

    def start_next_cycle(self):
        """Reset for the next request; bytes already received (pipelined) stay for it."""
        if not self.reusable:
            raise RuntimeError('this connection cannot carry another request')
        self._reset()


_CHUNKED = 'CHUNKED'

_READERS = {
    AWAITING_HEAD: HTTP1ServerProtocol._read_head,
    READING_BODY: HTTP1ServerProtocol._read_body,
    READING_CHUNK_SIZE: HTTP1ServerProtocol._read_chunk_size,
    READING_CHUNK: HTTP1ServerProtocol._read_chunk,
    READING_CHUNK_END: HTTP1ServerProtocol._read_chunk_end,
    READING_TRAILERS: HTTP1ServerProtocol._read_trailers,
    REQUEST_DONE: HTTP1ServerProtocol._read_done,
    CLOSED: HTTP1ServerProtocol._read_closed,
}


def _parse_head(text, max_header_lines):
    """(RequestHead, its headers' dict of name -> values, framing checked) from a head's
    text (its blank line cut off), line ends CRLF or bare LF."""
    if text.count('\n') != text.count('\r\n'):  # bare LFs: cheaper to check than to sub
        text = _LINE_END.sub('\r\n', text)
    request_line, _, fields = text.partition('\r\n')
    match = _REQUEST_LINE.match(request_line)
    if match is None:
        raise RequestError('Malformed HTTP request line: %r' % (request_line,))
    method, target, minor = match.groups()
    try:
        headers, values = _headers(split_fields(fields), max_header_lines)
    except ValueError as exc:
        no_colon = [line for line in fields.split('\r\n')
                    if ':' not in line and line[:1] not in (' ', '\t')]
        if no_colon:  # in 5.1's words, which its tests look for
            raise RequestError('no colon in header line %r' % (no_colon[0],))
        raise RequestError('malformed HTTP headers: %s' % (exc,))
    try:
        check_framing(values)
    except ValueError as exc:
        raise RequestError(_framing_error(values, exc))
    return RequestHead(method, target, 'HTTP/1.' + minor, headers), values


def _framing_error(values, exc):
    """What is wrong with a request's framing fields, in Tornado 5.1's words where it
    has them."""
    lengths = values.get('Content-Length', [])
    pieces = set(piece.strip(' \t') for value in lengths for piece in value.split(','))
    if any(not _DIGITS.match(piece) for piece in pieces):
        return 'Only integer Content-Length is allowed: %s' % (', '.join(lengths),)
    if len(pieces) > 1:
        return 'Multiple unequal Content-Lengths: %r' % (lengths,)
    return 'malformed HTTP headers: %s' % (exc,)


def _without_blank_line(text):
    """A head's text without the line end of its last line and the blank line after it
    ('\\n\\r?\\n', a CR before the first LF too): nothing else, so that a stray CR
    before them is left for the grammar to refuse."""
    text = text[:-1]
    if text.endswith('\r'):
        text = text[:-1]
    text = text[:-1]
    return text[:-1] if text.endswith('\r') else text


def _headers(lines, max_header_lines):
    """(HTTPHeaders, dict of name -> values) of checked field lines."""
    if len(lines) > max_header_lines:
        raise RequestError('%d header lines, more than max_header_lines (%d)'
                           % (len(lines), max_header_lines))
    names, values = parse_fields(lines)
    # One dict for both: the protocol reads `values` (framing, Expect, Connection) before
    # the application is handed the headers, and never after.
    return headers_from_fields(names, values), values


if PY2:
    def _field_lines(names, values):
        """'Name: value' lines of native strs: on 2.7 a name or value may be unicode (a web
        handler's), which mixed with bytes beyond ASCII would fail, and would make the
        head unicode. Formatted as they are first: most are native strs already."""
        try:
            lines = ['%s: %s' % (name, value) for name in names for value in values[name]]
        except UnicodeError:
            lines = None
        if lines is None or ''.join(lines).__class__ is not str:
            lines = ['%s: %s' % (native_str(name), native_str(value))
                     for name in names for value in values[name]]
        return lines
else:
    def _field_lines(names, values):
        """'Name: value' lines, a name's values in the order they were added."""
        return ['%s: %s' % (name, value) for name in names for value in values[name]]


def _response_length(values):
    try:
        return int(content_length(values))
    except ValueError as exc:
        raise HTTPOutputError('response Content-Length: %s' % (exc,))


def _client_keeps_alive(head, values):
    """Whether the client lets the connection carry another request (Tornado 5.1's rule:
    HTTP/1.1 unless "Connection: close"; 1.0 only with "Connection: keep-alive")."""
    if head.version == 'HTTP/1.1':
        return not asks_to_close(values.get('Connection'))
    connection = values.get('Connection')
    return connection is not None and connection[-1].strip().lower() == 'keep-alive'
