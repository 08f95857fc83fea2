"""HTTP/1.1 without I/O: headers, request bytes out, response events in.

Nothing here touches a socket or the loop. The HTTP client writes the bytes that
`HTTP1ClientProtocol.send_request` returns, feeds what it reads to `receive_data`, and acts
on the events `next_event` hands back, so every framing rule is testable by feeding bytes.
The wire protocol itself comes from h11, a well-kept sans-IO library (0.11.x on Python 2.7);
its types and exceptions never leave this module.

Invariant: bad input from the peer ends the response with `HTTPInputError`, and once end of
file has been fed `next_event` never answers `NEED_DATA`, so a broken server cannot leave a
caller waiting for bytes that will not come.
"""
from __future__ import absolute_import, division, print_function

import collections
import zlib

import h11
from six.moves.urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from tinytornado._compat import collections_abc

__all__ = [
    'HTTPHeaders', 'HTTPInputError', 'NoResponseError', 'HTTP1ClientProtocol',
    'InformationalResponse', 'ResponseHead', 'BodyData', 'EndOfMessage', 'ConnectionClosed',
    'NEED_DATA', 'PAUSED', 'ContentDecoder', 'url_concat',
    'DEFAULT_MAX_HEADER_SIZE', 'DEFAULT_MAX_HEADER_LINES',
]

DEFAULT_MAX_HEADER_SIZE = 65536  # Tornado's default
DEFAULT_MAX_HEADER_LINES = 100  # Apache's LimitRequestFields


class HTTPInputError(Exception):
    """The peer sent bytes that are not a valid HTTP response; the message says what was wrong."""


class NoResponseError(HTTPInputError):
    """The peer closed the connection before sending any byte of the response.

    On a reused keep-alive connection this usually means the server had already timed the
    connection out, so an idempotent request may safely be sent again on a new one.
    """


# --- Headers ---------------------------------------------------------------------------

_normalized_names = {}
_MAX_NORMALIZED_NAMES = 1000  # a hostile server must not grow the cache without bound


def _normalize_name(name):
    """'content-TYPE' -> 'Content-Type', the spelling Tornado gives header names."""
    try:
        return _normalized_names[name]
    except KeyError:
        normalized = '-'.join(word.capitalize() for word in name.split('-'))
        if len(_normalized_names) < _MAX_NORMALIZED_NAMES:
            _normalized_names[name] = normalized
        return normalized


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
        else:
            self.update(*args, **kwargs)

    def add(self, name, value):
        """Add a value for `name`, keeping the values it already has."""
        normalized = _normalize_name(name)
        values = self._values.get(normalized)
        if values is None:
            self._values[normalized] = [value]
            self._names.append(normalized)
        else:
            values.append(value)
        self._last_name = normalized

    def get_list(self, name):
        """Every value of `name`, in arrival order; [] when absent."""
        return list(self._values.get(_normalize_name(name), ()))

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
        return ','.join(self._values[_normalize_name(name)])

    def __setitem__(self, name, value):
        normalized = _normalize_name(name)
        if normalized not in self._values:
            self._names.append(normalized)
        self._values[normalized] = [value]
        self._last_name = normalized

    def __delitem__(self, name):
        normalized = _normalize_name(name)
        del self._values[normalized]
        self._names.remove(normalized)

    def __contains__(self, name):
        return _normalize_name(name) in self._values

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

# The cycle of one request and its response, from this side.
AWAITING_REQUEST = 'AWAITING_REQUEST'  # nothing sent since the connection opened or was reset
AWAITING_RESPONSE = 'AWAITING_RESPONSE'  # request sent, no response head parsed yet
READING_RESPONSE = 'READING_RESPONSE'  # a head arrived; more heads (after 1xx) or body follow
RESPONSE_DONE = 'RESPONSE_DONE'  # EndOfMessage returned; next_event answers PAUSED

_PHASE_NAMES = {h11.SEND_RESPONSE: 'response head', h11.SEND_BODY: 'response body'}


def _native(data):
    """Bytes from the wire as the native str: bytes on 2.7, latin-1 text on 3.x."""
    data = bytes(data)  # h11 hands out bytearrays in places
    return data if isinstance(data, str) else data.decode('latin-1')


def _wire(text):
    """A native str (or 2.7 unicode) as bytes for the wire; non-latin-1 raises ValueError."""
    return text if isinstance(text, bytes) else text.encode('latin-1')


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
        max_header_size: largest response head (status line and header lines, as
            "name: value" CRLF each) or trailer block accepted, in bytes.
        max_header_lines: most header lines accepted in a head or trailer block.
    """

    def __init__(self, max_header_size=DEFAULT_MAX_HEADER_SIZE,
                 max_header_lines=DEFAULT_MAX_HEADER_LINES):
        self.max_header_size = max_header_size
        self.max_header_lines = max_header_lines
        # h11's limit stops a head that never ends; _checked_headers measures complete ones.
        self._connection = h11.Connection(h11.CLIENT,
                                          max_incomplete_event_size=max_header_size)
        self._state = AWAITING_REQUEST
        self._eof = False  # b'' was fed; h11 sees it only once no head is pending
        self._error = None  # the HTTPInputError raised, raised again on every later call

    def send_request(self, method, target, headers, body=None):
        """The bytes of one HTTP/1.1 request, to be written to the stream.

        Args:
            method: 'GET', 'HEAD', 'POST', ... (native str).
            target: the path and query, '/index.html?q=1' (native str).
            headers: an HTTPHeaders or any mapping; must contain Host. A
                Content-Length is added when `body` is given without one.
            body: bytes or None. Sent whole with Content-Length, never chunked.

        Raises:
            ValueError: the request is not valid HTTP (a missing Host, a control character
                in a header, a body that does not match its Content-Length, a second
                request before start_next_cycle). The fault is the caller's, not the peer's.
        """
        headers = HTTPHeaders(headers)
        if body is not None and 'Content-Length' not in headers:
            headers['Content-Length'] = str(len(body))
        _check_request_framing(method, headers)
        method, target = _wire(method), _wire(target)
        pairs = [(_wire(name), _wire(value)) for name, value in headers.get_all()]
        self._send_to_h11(method, target, pairs, body)
        self._state = AWAITING_RESPONSE
        # h11 validated these exact bytes, but its own output lower-cases header names in
        # 0.11 and keeps the caller's in later series: formatting here keeps the wire the same on
        # every version, with Tornado's spelling, which some servers still depend on.
        lines = [method + b' ' + target + b' HTTP/1.1']
        lines.extend(name + b': ' + value for name, value in pairs)
        return b'\r\n'.join(lines) + b'\r\n\r\n' + (body or b'')

    def _send_to_h11(self, method, target, pairs, body):
        try:
            self._connection.send(h11.Request(method=method, target=target, headers=pairs))
            if body:
                self._connection.send(h11.Data(data=body))
            self._connection.send(h11.EndOfMessage())
        except h11.LocalProtocolError as exc:
            raise ValueError('cannot send this request: %s' % (exc,))

    def receive_data(self, data):
        """Feed bytes read from the stream; b'' means the peer closed it (end of file)."""
        if not data:
            self._eof = True
        elif self._eof:
            raise RuntimeError('data fed after end of file')
        else:
            self._connection.receive_data(data)

    def next_event(self):
        """The next response event, NEED_DATA, or PAUSED once the response has ended.

        Returns one of: InformationalResponse, ResponseHead, BodyData, EndOfMessage,
        ConnectionClosed (the peer closed with no response in progress; returned again on
        every later call), NEED_DATA, PAUSED.

        Raises:
            HTTPInputError: the response is malformed, over a limit, or cut short; the
                same error is raised again by every later call. NoResponseError (a
                subclass) when the connection closed before the response began.
        """
        if self._error is not None:
            raise self._error
        try:
            return self._next_event()
        except HTTPInputError as exc:
            self._error = exc
            raise

    @property
    def reusable(self):
        """True once the response has ended and both sides allow another request here.

        HTTP/1.1 keeps the connection unless either side sent "Connection: close"; an
        HTTP/1.0 response always closes it (we send no "Connection: keep-alive", so a 1.0
        server will close it anyway); a body delimited by close cannot be followed.
        """
        return (self._state is RESPONSE_DONE and not self._eof and
                self._connection.our_state is h11.DONE and
                self._connection.their_state is h11.DONE)

    @property
    def has_extra_data(self):
        """True if bytes beyond what has been parsed were received. Once the response has
        ended, a client that does not pipeline expects none: they would be read as the
        next response, so the connection must not be reused."""
        return bool(self._connection.trailing_data[0])

    def start_next_cycle(self):
        """Reset for the next request; bytes already received stay for its response."""
        if not self.reusable:
            raise RuntimeError('this connection cannot carry another request')
        self._connection.start_next_cycle()
        self._state = AWAITING_REQUEST

    def _next_event(self):
        if self._state is RESPONSE_DONE:
            return PAUSED
        event = self._h11_event()
        if event is h11.NEED_DATA and self._eof:
            event = self._event_at_eof()
        return self._translate(event)

    def _h11_event(self):
        phase = _PHASE_NAMES.get(self._connection.their_state, 'data between responses')
        try:
            return self._connection.next_event()
        except h11.RemoteProtocolError as exc:
            if exc.error_status_hint == 431:  # h11's "incomplete event too long"
                raise HTTPInputError('%s is larger than max_header_size (%d bytes)'
                                     % (phase, self.max_header_size))
            raise HTTPInputError('malformed %s: %s' % (phase, exc))

    def _event_at_eof(self):
        # A close in mid-head is reported here, in our words: h11 would only say
        # "peer unexpectedly closed", and could not tell NoResponseError apart.
        if self._connection.their_state is h11.SEND_RESPONSE:
            if self._state is AWAITING_RESPONSE and not self._connection.trailing_data[0]:
                raise NoResponseError('connection closed before the response began')
            raise HTTPInputError('connection closed in the middle of the response head')
        self._connection.receive_data(b'')
        return self._h11_event()

    def _translate(self, event):
        if isinstance(event, (h11.InformationalResponse, h11.Response)):
            if self._state is AWAITING_REQUEST:  # h11 lets servers answer early; we do not
                raise HTTPInputError('the server sent a response while no request was '
                                     'outstanding')
            self._state = READING_RESPONSE
            return self._head(event)
        if isinstance(event, h11.Data):
            return BodyData(bytes(event.data))  # recent h11 hands out bytearrays
        if isinstance(event, h11.EndOfMessage):
            trailers = self._checked_headers(event.headers, 0, 'trailers')
            self._state = RESPONSE_DONE
            return EndOfMessage(trailers)
        if isinstance(event, h11.ConnectionClosed):
            return ConnectionClosed()
        return NEED_DATA if event is h11.NEED_DATA else PAUSED

    def _head(self, event):
        reason = _native(event.reason)
        # 'HTTP/1.1 200 ' + reason + CRLF, as the block size counts it.
        headers = self._checked_headers(event.headers, 15 + len(reason), 'response head')
        version = 'HTTP/' + _native(event.http_version)
        if isinstance(event, h11.InformationalResponse):
            return InformationalResponse(version, event.status_code, reason, headers)
        if 'Transfer-Encoding' in headers and 'Content-Length' in headers:
            # RFC 9112 6.3: a sign of response splitting, to be handled as an error (and
            # Tornado 5.1 refuses it too), not resolved in favour of chunked as h11 does.
            raise HTTPInputError('response has both Transfer-Encoding and Content-Length')
        return ResponseHead(version, event.status_code, reason, headers)

    def _checked_headers(self, pairs, start_line_size, block_name):
        pairs = list(pairs)
        if len(pairs) > self.max_header_lines:
            raise HTTPInputError('%s has %d header lines, more than max_header_lines (%d)'
                                 % (block_name, len(pairs), self.max_header_lines))
        # Measured as if formatted canonically ("name: value" CRLF), so the limit does not
        # depend on how the bytes were cut into reads.
        size = start_line_size + sum(len(name) + len(value) + 4 for name, value in pairs) + 2
        if size > self.max_header_size:
            raise HTTPInputError('%s of %d bytes is larger than max_header_size (%d bytes)'
                                 % (block_name, size, self.max_header_size))
        headers = HTTPHeaders()
        for name, value in pairs:
            headers.add(_native(name), _native(value))
        return headers


def _check_request_framing(method, headers):
    """Refuse what this class cannot frame or follow: chunked uploads, protocol switches."""
    if 'Transfer-Encoding' in headers:
        raise ValueError('request bodies are sent with Content-Length, not Transfer-Encoding')
    # After CONNECT or Upgrade the connection stops being HTTP; no event here could say so.
    if method.upper() == 'CONNECT' or 'Upgrade' in headers:
        raise ValueError('protocol switches (CONNECT, Upgrade) are not supported')


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
