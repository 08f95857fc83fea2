"""RESP2, the Redis protocol, without I/O: commands packed into bytes, replies parsed out.

`Reader` is what the client parses with: hiredis's C Reader where the `hiredis` package
imports, else `PythonReader`, our own, which has the same interface (``feed(data)``, then
``gets()`` until it returns False) and passes the same tests. Both return an error reply
as a `ReplyError` instance, not raised: in a pipeline the replies after it still belong to
their commands. A reply that breaks the protocol raises `ProtocolError`, after which the
reader's state is undefined and the connection must be dropped.

Replies come as Python values: simple strings and bulk strings as bytes, integers as int,
a nil bulk string or array as None, arrays as lists (nested as sent).
"""
from __future__ import absolute_import, division, print_function

import numbers

from tinytornado._bytebuffer import ByteBuffer
from tinytornado._compat import binary_type, text_type

try:
    import hiredis
except ImportError:  # Optional: PythonReader parses the same replies.
    hiredis = None

__all__ = ['ReplyError', 'ProtocolError', 'PythonReader', 'Reader', 'new_reader',
           'pack_command', 'pack_commands']

_CRLF = b'\r\n'


class ReplyError(Exception):
    """An error reply from Redis; ``args[0]`` is the server's message, e.g.
    ``'WRONGTYPE Operation against a key holding the wrong kind of value'``."""

    @property
    def code(self):
        """The message's first word, which names the error: ``'WRONGTYPE'``, ``'NOSCRIPT'``."""
        return self.args[0].split(' ', 1)[0] if self.args and self.args[0] else ''


class ProtocolError(Exception):
    """Bytes from the server that are not RESP2."""


class PythonReader(object):
    """A RESP2 reply parser with hiredis.Reader's interface, in pure Python.

    Parsing is incremental: what a `gets` has parsed stays parsed (an array's finished
    elements, a bulk string's header), so a large reply arriving in many pieces costs
    O(its size), not O(size x pieces).
    """

    def __init__(self, protocolError=ProtocolError, replyError=ReplyError):
        self._protocol_error = protocolError
        self._reply_error = replyError
        self._buffer = ByteBuffer(keep=1 << 20)
        self._bulk_length = None  # a bulk string's length once its header is parsed
        self._arrays = []  # arrays being filled, innermost last: [items, still missing]

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
        end = self._buffer.find(_CRLF)
        if end < 0:
            return _INCOMPLETE
        line = self._buffer.consume(end + 2)
        kind, text = line[:1], line[1:-2]
        if kind == b'$':
            self._bulk_length = self._length(text)
            return self._bulk_body()
        if kind == b'*':
            return self._array_start(self._length(text))
        if kind == b'+':
            return text
        if kind == b':':
            return self._integer(text)
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

    def _integer(self, text):
        # int() alone would also take ' 1', '1_000' and '+1', which RESP does not allow.
        digits = text[1:] if text[:1] == b'-' else text
        if not digits.isdigit():
            raise self._protocol_error('not a RESP2 integer: %r' % (text[:100],))
        return int(text)

    def _length(self, text):
        length = self._integer(text)
        if length < -1:
            raise self._protocol_error('a negative length: %d' % (length,))
        return length


_INCOMPLETE = object()
_ARRAY_STARTED = object()

if hiredis is not None:
    Reader = hiredis.Reader
else:
    Reader = PythonReader


def new_reader(reader_class=None):
    """A reader (of `reader_class`, default `Reader`) returning our ReplyError and
    raising our ProtocolError."""
    return (reader_class or Reader)(protocolError=ProtocolError, replyError=ReplyError)


def pack_command(args):
    """The bytes of one command, e.g. ``pack_command(('SET', 'k', 1))``.

    Arguments may be bytes, text (sent as UTF-8), int or float; anything else is a
    TypeError, rather than its str() going to the server unnoticed.
    """
    parts = [('*%d\r\n' % len(args)).encode('ascii')]
    for arg in args:
        value = _argument_bytes(arg)
        parts.append(('$%d\r\n' % len(value)).encode('ascii'))
        parts.append(value)
        parts.append(_CRLF)
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
