"""The HTTP/1.1 grammar the client and the server share: response heads, header fields,
chunk-size lines and framing fields checked and split; request heads checked and formatted;
and the readers of a chunked body's chunks, which both protocols mix in (each keeping its
own state).

The checks are h11's (the library this module replaced), tightened in a few places: lines
end in CRLF only, the version is HTTP/1.x, chunk extensions hold no control characters
(httputil adds: status codes 100 to 599, one framing per response). The common path is a
few C-level calls per head: `str.count` and `in` clear every line of forbidden characters
at once, and field names already seen to be tokens are not checked again; only when that
refuses does a line-by-line pass run, to say what was wrong.

Text here is the native str, made from the wire's bytes by latin-1 (bytes on 2.7, text on
3.x). Errors are ValueError, naming what was wrong; the caller says which message it was.
"""
from __future__ import absolute_import, division, print_function

import collections
import re

from tinytornado._compat import latin1_bytes, native_str

__all__ = [
    'ReceiveBuffer', 'BodyData', 'FedBytes', 'ChunkedBodyReader', 'normalize_name',
    'split_head', 'split_fields', 'parse_fields', 'chunk_size', 'check_framing', 'content_length',
    'asks_to_close', 'format_request', 'format_chunk', 'LAST_CHUNK',
]

# RFC 9110 5.6.2: a token, the form of field names and methods.
_TOKEN = re.compile(r"[-!#$%&'*+.^_`|~0-9A-Za-z]+\Z")
# The characters no line of a head may hold: field values and reasons take any other octet
# (obs-text and, as h11 allows because real cookies carry them, most controls).
_FORBIDDEN_CHARS = re.compile(r'[\x00\n\x0b\x0c\r]')
_BARE_LF_BLANK_LINE = re.compile(b'\n\r?\n')
_STATUS_LINE = re.compile(r'HTTP/1\.([0-9]) ([0-9]{3})(?: (.*))?\Z')
_OTHER_VERSION = re.compile(r'HTTP/[0-9]\.[0-9] ')
# h11 allows whitespace after the size (servers send it) but no control characters in
# extensions: a lone CR there is a request-smuggling vector in other parsers.
_CHUNK_SIZE_LINE = re.compile(br'([0-9A-Fa-f]{1,20})(?:;[^\x00-\x08\n-\x1f\x7f]*|[ \t]*)\Z')
_LENGTH = re.compile(r'[0-9]{1,20}\Z')  # h11's limit: a billion terabytes
_TARGET = re.compile(r'[!-~]+\Z')  # visible ASCII
# A request's field value: no forbidden character, no whitespace at either end.
_FIELD_VALUE = re.compile(r'(?:[^\x00\t\n\x0b\x0c\r ]+(?:[ \t]+[^\x00\t\n\x0b\x0c\r ]+)*)?\Z')

_normalized_names = {}
_field_names = {}  # names seen to be tokens -> normalized; only these may skip the check
_MAX_CACHED_NAMES = 1000  # a hostile server must not grow the caches without bound


def normalize_name(name):
    """'content-TYPE' -> 'Content-Type', the spelling Tornado gives header names."""
    try:
        return _normalized_names[name]
    except KeyError:
        normalized = '-'.join(word.capitalize() for word in name.split('-'))
        if len(_normalized_names) < _MAX_CACHED_NAMES:
            _normalized_names[name] = normalized
        return normalized


def _field_name(name):
    """`name` normalized, after checking that it is a token."""
    normalized = _field_names.get(name)
    if normalized is None:
        if not _TOKEN.match(name):
            raise ValueError('illegal header name %r' % (name,))
        normalized = normalize_name(name)
        if len(_field_names) < _MAX_CACHED_NAMES:
            _field_names[name] = normalized
    return normalized


# --- Received bytes -------------------------------------------------------------------------

class ReceiveBuffer(object):
    """The bytes received and not yet parsed, taken from the front as they are parsed.

    A read that arrives when everything before it is parsed is kept as it is, so that a
    response read whole is sliced, never copied; leftovers grow a bytearray in place (2.7
    has no cheap `del buffer[:n]`, so the parsed front is cut only when bytes are added).
    """
    __slots__ = ('_data', '_start', '_searched')

    def __init__(self):
        self._data = b''
        self._start = 0  # bytes before it are parsed
        self._searched = 0  # bytes after _start known not to hold the terminator sought

    def __len__(self):
        return len(self._data) - self._start

    def append(self, data):
        if self._start == len(self._data):
            self._data = data if type(data) is bytes else bytes(data)
        else:
            if type(self._data) is not bytearray:
                self._data = bytearray(self._data[self._start:])
            elif self._start:
                del self._data[:self._start]
            self._data += data
        self._start = 0

    def peek(self, size):
        """The next `size` bytes (fewer if fewer came), not taken."""
        return bytes(self._data[self._start:self._start + size])

    def take(self, size):
        """The next `size` bytes (fewer if fewer came, b'' if none), now parsed."""
        start = self._start
        data = self._data[start:start + size]
        self._start = start + len(data)
        return data if type(data) is bytes else bytes(data)

    def find(self, terminator):
        """How many bytes come up to the end of the first `terminator`, or -1 while none.

        Searches only the bytes not searched before, so a head trickling in byte by byte
        costs linear time, not quadratic.

        Raises:
            ValueError: looking for the CRLF CRLF that ends a block, a blank line ended by
                a bare LF came instead (then the CRLF CRLF might never come).
        """
        data, start = self._data, self._start
        search_from = start + max(0, self._searched - len(terminator) + 1)
        found = data.find(terminator, search_from)
        if found >= 0:
            self._searched = 0
            return found + len(terminator) - start
        if terminator == b'\r\n\r\n' and _BARE_LF_BLANK_LINE.search(data, search_from):
            raise ValueError('a line ends in a bare LF, not CRLF')
        self._searched = len(data) - start
        return -1

    def search(self, pattern, longest):
        """How many bytes come up to the end of the first match of `pattern` (a compiled
        bytes regex whose matches are at most `longest` bytes long), or -1 while none;
        like `find`, searches only the bytes not searched before."""
        data, start = self._data, self._start
        match = pattern.search(data, start + max(0, self._searched - longest + 1))
        if match is not None:
            self._searched = 0
            return match.end() - start
        self._searched = len(data) - start
        return -1


# --- Responses ------------------------------------------------------------------------------

def split_head(text):
    """A response head (its blank line cut off) as (minor version, code, reason, field lines).

    The minor version is the digit after 'HTTP/1.'; the field lines are unfolded, not yet
    checked (`parse_fields` does that).
    """
    lines = text.split('\r\n')
    _check_characters(text, lines, 'status line')
    match = _STATUS_LINE.match(lines[0])
    if match is None:
        if _OTHER_VERSION.match(lines[0]):
            raise ValueError('unsupported HTTP version in status line %r' % (lines[0],))
        raise ValueError('illegal status line: %r' % (lines[0],))
    minor, code, reason = match.groups()
    del lines[0]
    if '\r\n ' in text or '\r\n\t' in text:
        lines = _unfold(lines)
    return minor, int(code), reason or '', lines


def split_fields(text):
    """A trailer block (its blank line cut off) as unfolded field lines."""
    if not text:
        return []
    lines = text.split('\r\n')
    _check_characters(text, lines, 'header line')
    if text[:1] in ' \t' or '\r\n ' in text or '\r\n\t' in text:
        lines = _unfold(lines)
    return lines


def _check_characters(text, lines, first_line_name):
    # Every CR and LF in `text` is one of the CRLFs it was split on, and none of the
    # other forbidden characters occurs: then every line is free of them.
    breaks = len(lines) - 1
    if (text.count('\r') == breaks and text.count('\n') == breaks and '\x00' not in text and
            '\x0b' not in text and '\x0c' not in text):
        return
    for index, line in enumerate(lines):
        match = _FORBIDDEN_CHARS.search(line)
        if match is not None:
            kind = first_line_name if index == 0 else 'header line'
            if match.group() == '\n':  # RFC 9112 2.2 leaves a bare LF to the recipient
                raise ValueError('%s %r ends in a bare LF, not CRLF' % (kind, line))
            raise ValueError('illegal %s: %r' % (kind, line))


def _unfold(lines):
    # RFC 9112 5.2's obs-fold: a line starting with whitespace continues the one above.
    # Joined as h11 joins them, with one space, so field values come out the same.
    unfolded = []
    for line in lines:
        if line[:1] in (' ', '\t'):
            if not unfolded:
                raise ValueError('continuation line at start of headers: %r' % (line,))
            unfolded[-1] += ' ' + line.lstrip(' \t')
        else:
            unfolded.append(line)
    return unfolded


def parse_fields(lines):
    """Checked field lines as (names, values): the normalized names in order of arrival,
    and a dict from each to the list of its values, outer whitespace stripped."""
    names = []
    values = {}
    for line in lines:
        name, colon, value = line.partition(':')
        normalized = _field_names.get(name)
        if normalized is None or not colon:
            normalized = _checked_field_name(name, colon, line)
        value = value.strip(' \t')
        known = values.get(normalized)
        if known is None:
            values[normalized] = [value]
            names.append(normalized)
        else:
            known.append(value)
    return names, values


def _checked_field_name(name, colon, line):
    if not colon:
        raise ValueError('illegal header line (no colon): %r' % (line,))
    try:
        return _field_name(name)
    except ValueError:
        raise ValueError('illegal header line: %r' % (line,))


# --- Chunked bodies -------------------------------------------------------------------------

BodyData = collections.namedtuple('BodyData', ['data'])  # the next piece of a body (bytes)
BodyData.__module__ = 'tinytornado.httputil'  # where it is documented and exported


class FedBytes(object):
    """How both protocols take bytes in: `receive_data` appends to `_received` (a
    ReceiveBuffer) and b'' marks the end of file (`_eof`), after which nothing more may come.
    """

    def receive_data(self, data):
        """Feed bytes read from the stream; b'' means the peer closed it (end of file)."""
        if not data:
            self._eof = True
        elif self._eof:
            raise RuntimeError('data fed after end of file')
        else:
            self._received.append(data)


class ChunkedBodyReader(object):
    """The readers of a chunked body's chunks (RFC 9112 7.1), shared by the client's and
    the server's protocol: one per thing the next bytes must be (a chunk-size line, chunk
    data, the CRLF after the data), each returning the next event, as the protocols' other
    readers do.

    The grammar is read here; each protocol keeps its own states and errors, through these
    methods of its own (besides `_received`, a ReceiveBuffer, `_remaining` and
    `max_header_size`):

    - `_chunk_started(size)`: a chunk-size line gave `size` (not 0): set `_remaining` and
      move to reading its data, then read on (`_read_chunk`);
    - `_last_chunk_started()`: the last chunk-size line came: move to reading the trailers
      and read them;
    - `_chunk_data_read()`: the chunk's last byte came: move to reading the CRLF after it;
    - `_chunk_ended()`: that CRLF came: move to reading a chunk-size line, and read it;
    - `_wait_for_block(block_name)`: the answer while a chunk-size line is incomplete
      (an error if it is already larger than `max_header_size`, NEED_DATA or the error of
      end of file if not);
    - `_block_too_large(end, block_name)`: the exception to raise for a whole chunk-size
      line of `end` bytes, larger than `max_header_size`;
    - `_need_body_data()`: NEED_DATA, or the error of a body cut short by end of file;
    - `_malformed_chunked_body(detail)`: the exception to raise for a malformed chunk.

    The moves are calls back into the protocol that read on, and the size limit is checked
    here, so that reading a chunk costs the client no more calls than its own readers did
    (benchmarks/README.md).
    """
    __slots__ = ()

    def _read_chunk_size(self):
        end = self._received.find(b'\r\n')
        if end < 0:
            return self._wait_for_block('chunk size line')
        if end > self.max_header_size:
            raise self._block_too_large(end, 'chunk size line')
        try:
            size = chunk_size(self._received.take(end))
        except ValueError as exc:
            raise self._malformed_chunked_body(exc)
        if size:
            return self._chunk_started(size)
        return self._last_chunk_started()

    def _read_chunk(self):
        data = self._received.take(self._remaining)
        if not data:
            return self._need_body_data()
        self._remaining -= len(data)
        if not self._remaining:
            self._chunk_data_read()
        return BodyData(data)

    def _read_chunk_end(self):
        received = self._received.peek(2)
        if received != b'\r\n'[:len(received)]:
            raise self._malformed_chunked_body('chunk data is followed by %r, not CRLF'
                                               % (received,))
        if len(received) < 2:
            return self._need_body_data()
        self._received.take(2)
        return self._chunk_ended()


def chunk_size(line):
    """The size a chunk-size line (bytes, CRLF included) gives."""
    match = _CHUNK_SIZE_LINE.match(line, 0, len(line) - 2)
    if match is None:
        raise ValueError('illegal chunk header: %r' % (line,))
    return int(match.group(1), 16)


def check_framing(values):
    """Check the Content-Length and Transfer-Encoding fields of `values` (a dict from
    normalized names to lists of values) as h11 does, leaving one value of each; the
    Content-Length text, or None without one.

    As in h11, repeats of one length, in separate fields or in a list ("5, 5"), count as
    one length; the only transfer coding is "chunked", once, in any case.
    """
    codings = values.get('Transfer-Encoding')
    if codings is not None:
        if len(codings) > 1:
            raise ValueError('multiple Transfer-Encoding headers: %r' % (codings,))
        if codings[0].lower() != 'chunked':
            raise ValueError('unsupported Transfer-Encoding %r (only chunked is)' % (codings[0],))
        values['Transfer-Encoding'] = ['chunked']
    lengths = values.get('Content-Length')
    if lengths is None:
        return None
    length = content_length(lengths)
    values['Content-Length'] = [length]
    return length


def content_length(values):
    """The length the Content-Length values agree on, as text; ValueError if they do not."""
    if len(values) == 1 and _LENGTH.match(values[0]):
        return values[0]
    lengths = set(length.strip(' \t') for value in values for length in value.split(','))
    if len(lengths) != 1:
        raise ValueError('Multiple unequal Content-Lengths: %r' % (values,))  # 5.1's words
    length = lengths.pop()
    if not _LENGTH.match(length):
        raise ValueError('bad Content-Length: %r' % (length,))
    return length


def asks_to_close(values):
    """True if the values of a Connection field (or None) hold the option "close"."""
    if values is None:
        return False
    for value in values:
        if 'close' in value.lower():  # cheap refusal for the usual "keep-alive"
            for option in value.split(','):
                if option.strip(' \t').lower() == 'close':
                    return True
    return False


# --- Requests -------------------------------------------------------------------------------

_REFUSED_REQUEST_FIELDS = {
    # The client chooses it: chunked for a streamed body without a Content-Length.
    'Transfer-Encoding': 'Transfer-Encoding is chosen by the client, not given',
    'Upgrade': 'protocol switches (CONNECT, Upgrade) are not supported',
}


# (name, value) -> (normalized name, native value, line) of request fields found valid: a
# client sends the same few (User-Agent, Host...) with every request.
_checked_fields = {}


def _check_field(name, value):
    """(normalized name, native value, line) of a request field; ValueError if invalid."""
    native_name, native_value = native_str(name), native_str(value)
    normalized = _field_name(native_name)
    if not _FIELD_VALUE.match(native_value):
        raise ValueError('illegal value %r for header %s' % (native_value, native_name))
    if normalized in _REFUSED_REQUEST_FIELDS:
        raise ValueError(_REFUSED_REQUEST_FIELDS[normalized])
    checked = normalized, native_value, native_name + ': ' + native_value
    # Only native strings are kept: any other name or value may not be hashable, or may
    # change after it was checked (a bytearray).
    if (native_name is name and native_value is value and
            len(_checked_fields) < _MAX_CACHED_NAMES):
        _checked_fields[name, value] = checked
    return checked


def format_request(method, target, fields, body):
    """The bytes of one HTTP/1.1 request: head, then `body` (bytes or None).

    `fields` are (name, value) pairs; names, values, method and target may be bytes or
    text, read as latin-1.

    Raises:
        ValueError: the request is not valid: a method that is not a token, a target with
            other than visible ASCII, a field name that is not a token, a field value with
            a control character or outer whitespace, no Host or several, a Content-Length
            that is not a number or does not match the body, text that is not latin-1. Or
            it asks for what a client of this module cannot frame or follow: a
            Transfer-Encoding given, a protocol switch (CONNECT, Upgrade).
    """
    method, target = native_str(method), native_str(target)
    if not _TOKEN.match(method):
        raise ValueError('illegal method %r' % (method,))
    if method.upper() == 'CONNECT':  # the connection would stop being HTTP
        raise ValueError('protocol switches (CONNECT, Upgrade) are not supported')
    if not _TARGET.match(target):
        raise ValueError('illegal request target %r' % (target,))
    lines = [method + ' ' + target + ' HTTP/1.1']
    hosts = 0
    lengths = []
    for field in fields:
        try:
            normalized, value, line = _checked_fields[field]
        except (KeyError, TypeError):  # not met before, or unhashable (a bytearray value)
            normalized, value, line = _check_field(*field)
        if normalized == 'Host':
            hosts += 1
        elif normalized == 'Content-Length':
            lengths.append(value)
        lines.append(line)
    if hosts != 1:
        raise ValueError('a request needs one Host header, not %d' % hosts)
    if lengths and int(content_length(lengths)) != len(body or b''):
        raise ValueError('Content-Length %s does not match a body of %d bytes'
                         % (lengths[0], len(body or b'')))
    lines.append('\r\n')
    try:
        head = latin1_bytes('\r\n'.join(lines))
    except UnicodeError:
        raise ValueError('the request head is not latin-1 text: %r' % (lines,))
    return head + body if body else head


LAST_CHUNK = b'0\r\n\r\n'  # with no trailers


def format_chunk(data):
    """`data` (bytes, not empty: an empty chunk is the last one) framed as one chunk."""
    return ('%x\r\n' % len(data)).encode('ascii') + data + b'\r\n'
