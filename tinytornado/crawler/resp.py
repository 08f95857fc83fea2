"""RESP2, the Redis protocol, without I/O: commands packed into bytes, replies parsed out.

`Reader` is what the client parses with: hiredis's C Reader where the `hiredis` package
imports, else `PythonReader`, our own, which has the same interface (``feed(data)``, then
``gets()`` until it returns False) and passes the same tests. Both return an error reply
as a `ReplyError` instance, not raised: in a pipeline the replies after it still belong to
their commands. A reply that breaks the protocol raises `ProtocolError`, after which the
reader's state is undefined and the connection must be dropped.

Replies come as Python values: simple strings and bulk strings as bytes, integers as int,
a nil bulk string or array as None, arrays as lists (nested as sent).

Limits. RESP announces lengths before the bytes, and a reader that believed them would let
any server (a bug, a hostile one, a man in the middle) make the client allocate or buffer
without bound: hiredis 1.x allocates an announced array at once (``*100000000``: 763 MiB),
a bulk string is buffered whole until its last byte, a line without CRLF is buffered for
ever, and nesting has no end. Every reader of `new_reader` enforces `ReplyLimits`: on a
header past one it raises `ReplyTooLarge` (a ProtocolError: the client drops the
connection, fails the commands in flight saying which limit, and reconnects). Ours checks
as it parses; hiredis's is fed through `LimitedReader`, which walks the headers ahead of
it (`_HeaderScanner`), skipping bulk bodies, and hands it only the bytes before a header
past a limit, so that the replies before it still come out.
"""
from __future__ import absolute_import, division, print_function

import numbers

from tinytornado._bytebuffer import ByteBuffer
from tinytornado._compat import binary_type, text_type

try:
    import hiredis
except ImportError:  # Optional: PythonReader parses the same replies.
    hiredis = None

__all__ = ['ReplyError', 'ProtocolError', 'ReplyTooLarge', 'ReplyLimits', 'PythonReader',
           'LimitedReader', 'Reader', 'new_reader', 'pack_command', 'pack_commands']

_CRLF = b'\r\n'
_MiB = 1 << 20


class ReplyError(Exception):
    """An error reply from Redis; ``args[0]`` is the server's message, e.g.
    ``'WRONGTYPE Operation against a key holding the wrong kind of value'``."""

    @property
    def code(self):
        """The message's first word, which names the error: ``'WRONGTYPE'``, ``'NOSCRIPT'``."""
        return self.args[0].split(' ', 1)[0] if self.args and self.args[0] else ''


class ProtocolError(Exception):
    """Bytes from the server that are not RESP2."""


class ReplyTooLarge(ProtocolError):
    """A reply header past one of the client's `ReplyLimits`; the message names the limit."""


class ReplyLimits(object):
    """The most a reply may announce or hold before the client refuses it (`ReplyTooLarge`).

    The defaults are far above what the crawl stores and reads: its largest bulk strings
    are a URL's JSON record or a crawl's meta (kilobytes), its largest array a page of 1000
    finished records, its deepest reply four arrays deep (XREAD's). Within them, what a
    reply can cost is bounded: one bulk string of `max_bulk_length` bytes (held twice while
    it is cut out of the buffer), an array's list of `max_array_length` slots (8 bytes
    each: 8 MiB), `max_depth` arrays open at once.

    Args:
        max_bulk_length: bytes of one bulk string (Redis's own cap, proto-max-bulk-len,
            is 512 MiB).
        max_array_length: elements of one array.
        max_depth: arrays nested inside each other (hiredis 1.x, on 2.7, refuses more
            than 7 itself).
        max_line_length: bytes of one line (a simple string, an error or a header),
            without its CRLF.
    """
    __slots__ = ('max_bulk_length', 'max_array_length', 'max_depth', 'max_line_length')

    def __init__(self, max_bulk_length=64 * _MiB, max_array_length=_MiB, max_depth=32,
                 max_line_length=_MiB):
        self.max_bulk_length = max_bulk_length
        self.max_array_length = max_array_length
        self.max_depth = max_depth
        self.max_line_length = max_line_length

    def __repr__(self):
        return 'ReplyLimits(%s)' % ', '.join('%s=%d' % (name, getattr(self, name))
                                             for name in self.__slots__)

    def check_bulk(self, length):
        if length > self.max_bulk_length:
            raise ReplyTooLarge('a bulk string of %d bytes: over max_bulk_length (%d)'
                                % (length, self.max_bulk_length))

    def check_array(self, length, depth):
        """`depth`: the arrays open around this one."""
        if length > self.max_array_length:
            raise ReplyTooLarge('an array of %d elements: over max_array_length (%d)'
                                % (length, self.max_array_length))
        if length > 0 and depth >= self.max_depth:
            raise ReplyTooLarge('arrays nested over max_depth (%d) deep' % self.max_depth)

    def check_line(self, length):
        """`length`: the bytes of a line so far, without its CRLF."""
        if length > self.max_line_length:
            raise ReplyTooLarge('a line of at least %d bytes: over max_line_length (%d)'
                                % (length, self.max_line_length))


class PythonReader(object):
    """A RESP2 reply parser with hiredis.Reader's interface, in pure Python.

    Parsing is incremental: what a `gets` has parsed stays parsed (an array's finished
    elements, a bulk string's header), so a large reply arriving in many pieces costs
    O(its size), not O(size x pieces). `limits` (`ReplyLimits`, the defaults if None) are
    checked as each header is parsed. A bulk string's room is made once its header is
    read, so its bytes are copied into the buffer once and cut out once: it peaks at twice
    its size, where a buffer doubling as it fills could reach three times (a 40 MiB bulk
    string: 80 MiB, was 128 MiB).
    """

    def __init__(self, protocolError=ProtocolError, replyError=ReplyError, limits=None):
        self._protocol_error = protocolError
        self._reply_error = replyError
        self._limits = limits or ReplyLimits()
        self._buffer = ByteBuffer(keep=_MiB)
        self._bulk_length = None  # a bulk string's length once its header is parsed
        self._arrays = []  # arrays being filled, innermost last: [items, still missing]
        self._searched = 0  # bytes at the front known to hold no CRLF

    def feed(self, data):
        """Append bytes received from the server."""
        if not self._buffer.size and type(data) is binary_type and data:
            self._buffer.adopt(data)  # the common case: a reply arriving whole, not copied
        else:
            self._buffer.append(data)

    def gets(self):
        """The next complete reply, or False if its bytes have not all arrived."""
        while True:
            value = self._next_value()
            if value is _INCOMPLETE:
                return False
            if value is _ARRAY_STARTED:
                continue
            reply = self._place(value)
            if reply is not _INCOMPLETE:
                return reply

    def _place(self, value):
        """Put `value` in the array being filled; the reply once the outermost is full."""
        arrays = self._arrays
        while arrays:
            innermost = arrays[-1]
            innermost[0].append(value)
            innermost[1] -= 1
            if innermost[1]:
                return _INCOMPLETE
            arrays.pop()
            value = innermost[0]
        return value

    def _next_value(self):
        if self._bulk_length is not None:
            return self._bulk_body()
        buffer = self._buffer
        end = buffer.find(_CRLF, self._searched)
        if end < 0:
            # A CR at the end may be half of the CRLF; the search goes on from there.
            self._searched = max(buffer.size - 1, 0)
            self._limits.check_line(self._searched)
            return _INCOMPLETE
        self._searched = 0
        self._limits.check_line(end)
        line = buffer.consume(end + 2)
        kind, text = line[:1], line[1:-2]
        if kind == b'$':
            length = _length(text, self._protocol_error)
            self._limits.check_bulk(length)
            if buffer.size < length + 2:
                buffer.room(length + 2 - buffer.size)
            self._bulk_length = length
            return self._bulk_body()
        if kind == b'*':
            length = _length(text, self._protocol_error)
            self._limits.check_array(length, len(self._arrays))
            return self._array_start(length)
        if kind == b'+':
            return text
        if kind == b':':
            return _integer(text, self._protocol_error)
        if kind == b'-':
            return self._reply_error(text.decode('utf-8', 'replace'))
        raise self._protocol_error('not a RESP2 reply: %r' % (line[:100],))

    def _bulk_body(self):
        length = self._bulk_length
        if length < 0:
            self._bulk_length = None
            return None
        if self._buffer.size < length + 2:
            return _INCOMPLETE
        self._bulk_length = None
        value = self._buffer.consume(length)
        if self._buffer.consume(2) != _CRLF:
            raise self._protocol_error('a bulk string of %d bytes is not followed by CRLF'
                                       % (length,))
        return value

    def _array_start(self, length):
        if length < 0:
            return None
        if length == 0:
            return []
        self._arrays.append([[], length])
        return _ARRAY_STARTED


def _integer(text, error_class):
    # int() alone would also take ' 1', '1_000' and '+1', which RESP does not allow.
    digits = text[1:] if text[:1] == b'-' else text
    if not digits.isdigit():
        raise error_class('not a RESP2 integer: %r' % (text[:100],))
    return int(text)


def _length(text, error_class):
    length = _integer(text, error_class)
    if length < -1:
        raise error_class('a negative length: %d' % (length,))
    return length


_INCOMPLETE = object()
_ARRAY_STARTED = object()
_SCALAR_KINDS = (b'+', b'-', b':')


class _HeaderScanner(object):
    """Walks the framing of the replies in the bytes fed to a reader that does not check
    `ReplyLimits` itself: reads each header line, skips each bulk body by its length,
    builds nothing. The walk is one loop with the checks inline: it runs on every reply,
    before hiredis, and a method call per element would double its cost.

    `line_start` is where, in the bytes of the last `scan`, the line it raised on began.
    """

    def __init__(self, limits):
        self._limits = limits
        self._partial = b''  # the start of a line that the end of a chunk cut
        self._skip = 0  # bytes of a bulk body, and its CRLF, still to come
        self._open = []  # elements still to come of each array open, innermost last
        self.line_start = 0

    def scan(self, data):
        """Check the next bytes from the server; raise ProtocolError (ReplyTooLarge for a
        limit) at the first header that breaks the protocol or a limit."""
        cut = len(self._partial)
        if cut:  # a line cut at the end of the last chunk: read it whole
            data, self._partial = self._partial + data, b''
        position = 0
        if self._skip:
            if self._skip > len(data):
                self._skip -= len(data)
                return
            position, self._skip = self._skip, 0
            self._element_done()
        try:
            self._walk(data, position)
        except ProtocolError:
            self.line_start = max(self.line_start - cut, 0)
            raise

    def _walk(self, data, position):
        limits = self._limits
        max_line, max_bulk = limits.max_line_length, limits.max_bulk_length
        still_open = self._open
        find = data.find
        size = len(data)
        while position < size:
            self.line_start = position
            end = find(_CRLF, position)
            if end < 0:
                self._partial = data[position:]
                limits.check_line(size - position - 1)  # its last byte may be the CR
                return
            if end - position > max_line:
                limits.check_line(end - position)
            kind = data[position:position + 1]
            if kind == b'$' or kind == b'*':
                text = data[position + 1:end]
                length = int(text) if text.isdigit() else _length(text, ProtocolError)
                if kind == b'*':
                    limits.check_array(length, len(still_open))
                    position = end + 2
                    if length > 0:
                        still_open.append(length)
                        continue
                elif length > max_bulk:
                    limits.check_bulk(length)
                elif length >= 0:
                    position = end + length + 4
                    if position > size:
                        self._skip = position - size  # the element ends in a later chunk
                        return
                else:
                    position = end + 2
            elif kind in _SCALAR_KINDS:
                position = end + 2
            else:
                raise ProtocolError('not a RESP2 reply: %r' % (data[position:end][:100],))
            while still_open:  # an element is complete: count it in the arrays open
                still_open[-1] -= 1
                if still_open[-1]:
                    break
                still_open.pop()

    def _element_done(self):
        still_open = self._open
        while still_open:
            still_open[-1] -= 1
            if still_open[-1]:
                return
            still_open.pop()


class LimitedReader(object):
    """`reader` (hiredis's), fed only the bytes within `limits` (`ReplyLimits`).

    The replies before a header past a limit come out of `gets` as usual; then `gets`
    raises the `ReplyTooLarge` (or ProtocolError) that the scan met.
    """

    def __init__(self, reader, limits):
        self._reader = reader
        self._scanner = _HeaderScanner(limits)
        self._error = None

    def feed(self, data):
        if self._error is not None:
            return
        try:
            self._scanner.scan(data)
        except ProtocolError as e:
            self._error = e
            data = data[:self._scanner.line_start]
        self._reader.feed(data)

    def gets(self):
        reply = self._reader.gets()
        if reply is False and self._error is not None:
            raise self._error
        return reply


if hiredis is not None:
    Reader = hiredis.Reader
else:
    Reader = PythonReader


def new_reader(reader_class=None, limits=None):
    """A reader (of `reader_class`, default `Reader`) returning our ReplyError, raising
    our ProtocolError, and enforcing `limits` (`ReplyLimits`, the defaults if None):
    itself if it is a PythonReader, else through a `LimitedReader`."""
    reader_class = reader_class or Reader
    limits = limits or ReplyLimits()
    if issubclass(reader_class, PythonReader):
        return reader_class(protocolError=ProtocolError, replyError=ReplyError, limits=limits)
    return LimitedReader(reader_class(protocolError=ProtocolError, replyError=ReplyError),
                         limits)


def pack_command(args):
    """The bytes of one command, e.g. ``pack_command(('SET', 'k', 1))``.

    Arguments may be bytes, text (sent as UTF-8), int or float; anything else is a
    TypeError, rather than its str() going to the server unnoticed.
    """
    parts = [b'*%d\r\n' % len(args)]
    for arg in args:
        kind = arg.__class__  # the common kinds first, without a call
        if kind is binary_type:
            value = arg
        elif kind is text_type:
            value = arg.encode('utf-8')
        elif kind is int:  # not bool, a subclass: refused below
            value = b'%d' % arg
        else:
            value = _argument_bytes(arg)
        parts.append(b'$%d\r\n%s\r\n' % (len(value), value))
    return b''.join(parts)


def pack_commands(commands):
    """The bytes of several commands (each a sequence of arguments), to send in one write."""
    return b''.join([pack_command(args) for args in commands])


def _argument_bytes(arg):
    if isinstance(arg, binary_type):
        return arg
    if isinstance(arg, text_type):
        return arg.encode('utf-8')
    if isinstance(arg, float):
        return repr(arg).encode('ascii')  # repr: the shortest text that reads back exact
    if isinstance(arg, numbers.Integral) and not isinstance(arg, bool):
        return ('%d' % arg).encode('ascii')
    # True would go as b'True', None as b'None': bugs in the caller, not values to store.
    raise TypeError('a Redis argument must be bytes, text, int or float, not %s: %r'
                    % (type(arg).__name__, arg))
