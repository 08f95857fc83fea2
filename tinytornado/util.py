"""Tornado 5.1's grab bag of helpers, for legacy code that imports them from ``tornado.util``.

Most names here are defined once elsewhere in tinytornado and only named here as Tornado
named them: `TimeoutError` is the one gen, ioloop and concurrent raise, `ObjectDict` is
_objectdict's (httputil's `HTTPFile` is one), `Configurable` and `import_object` are
_configurable's, `errno_from_exception` is netutil's, and `raise_exc_info`,
`is_finalizing` and the type names are _compat's. New code imports them from those
modules.

`Configurable` is 5.1's whole class, for legacy code's own configurable interfaces: calling
the base builds the configured class and calls its `initialize`. tinytornado's own bases
(IOLoop, Resolver, AsyncHTTPClient) take only the ``configure`` half (_configurable) and
build their class themselves.
"""
from __future__ import absolute_import, division, print_function

import re
import zlib

from tinytornado._compat import (
    PY3, binary_type, is_finalizing, positional_index, raise_exc_info, string_types,
    text_type,
)
from tinytornado import _configurable
from tinytornado._configurable import import_object
from tinytornado._objectdict import ObjectDict
from tinytornado.concurrent import TimeoutError
from tinytornado.netutil import errno_from_exception

__all__ = [
    'ObjectDict', 'import_object', 'raise_exc_info', 'exec_in', 'errno_from_exception',
    'TimeoutError', 'Configurable', 'ArgReplacer', 'timedelta_to_seconds', 'PY3',
    'unicode_type', 'basestring_type', 'bytes_type', 'GzipDecompressor', 're_unescape',
    'is_finalizing',
]

unicode_type = text_type
basestring_type = string_types[0]  # basestring on 2.7, str on 3.x
bytes_type = binary_type


class Configurable(_configurable.Configurable):
    """A configurable interface, as Tornado 5.1's: calling the base (a subclass defining
    `configurable_base` and `configurable_default`) builds the configured class, and a
    subclass sets its instances up in `initialize`, not ``__init__``."""

    def __new__(cls, *args, **kwargs):
        base = cls.configurable_base()
        init_kwargs = {}
        impl = cls
        if cls is base:
            impl = cls.configured_class()
            init_kwargs.update(base.configured()[1])  # The caller's arguments win.
        init_kwargs.update(kwargs)
        if impl.configurable_base() is not base:
            return impl(*args, **init_kwargs)  # A configurable base of its own, below.
        instance = super(Configurable, cls).__new__(impl)
        instance.initialize(*args, **init_kwargs)
        return instance

    def initialize(self):
        """Set a new instance up; `__new__` calls it with the constructor's arguments."""


def exec_in(code, glob, loc=None):
    """Execute `code` (source text or a code object) in the namespaces `glob` and `loc`.

    Source is compiled first, so that it does not inherit this module's ``__future__``
    imports (on 2.7, ``print_function``).
    """
    if isinstance(code, string_types):
        code = compile(code, '<string>', 'exec', dont_inherit=True)
    exec(code, glob, loc)


def timedelta_to_seconds(td):
    """The seconds in timedelta `td`, as a float: ``td.total_seconds()``."""
    return td.total_seconds()


_ESCAPED_CHARACTER = re.compile(r'\\(.)', re.DOTALL)


def re_unescape(s):
    """Undo `re.escape`: ``\\\\x`` becomes ``x``.

    Raises:
        ValueError: `s` escapes a letter or digit (``\\\\d``, ``\\\\b``...), which
            re.escape never does: its meaning in a regex is not the character's.
    """
    return _ESCAPED_CHARACTER.sub(_unescaped, s)


def _unescaped(match):
    character = match.group(1)
    if character.isalnum() and ord(character) < 128:
        raise ValueError('cannot unescape %r' % match.group(0))
    return character


class ArgReplacer(object):
    """Finds or replaces one named argument in an ``(args, kwargs)`` pair, for decorators.

    The argument is found by position if the function's signature has it there and the
    call passed that many positional arguments, else among the keyword arguments.
    """

    def __init__(self, func, name):
        self.name = name
        self.arg_pos = positional_index(func, name)

    def _passed_by_position(self, args):
        return self.arg_pos is not None and len(args) > self.arg_pos

    def get_old_value(self, args, kwargs, default=None):
        """The argument's value in this call, or `default` if it was not passed."""
        if self._passed_by_position(args):
            return args[self.arg_pos]
        return kwargs.get(self.name, default)

    def replace(self, new_value, args, kwargs):
        """Put `new_value` where the argument is: ``(old value or None, args, kwargs)``.

        A positional argument is replaced in a new list of args; otherwise `kwargs` gets
        `new_value` under the name (it is changed in place).
        """
        if self._passed_by_position(args):
            args = list(args)
            old_value, args[self.arg_pos] = args[self.arg_pos], new_value
            return old_value, args, kwargs
        old_value = kwargs.get(self.name)
        kwargs[self.name] = new_value
        return old_value, args, kwargs


class GzipDecompressor(object):
    """Streaming decompression of gzip data (header and checksum checked), as zlib's objects.

    `decompress` may be given the data in pieces; `flush` at the end returns the rest and
    notices a truncated stream. Unlike httputil's ContentDecoder it has no size cap of its
    own: `max_length` bounds each call, and what it left is `unconsumed_tail`.
    """

    def __init__(self):
        self.decompressobj = zlib.decompressobj(16 + zlib.MAX_WBITS)  # 16: gzip framing

    def decompress(self, value, max_length=0):
        """The bytes `value` decodes to so far; at most `max_length` of them if it is not 0.

        Raises:
            zlib.error: `value` is not gzip data.
        """
        return self.decompressobj.decompress(value, max_length or 0)

    @property
    def unconsumed_tail(self):
        """The input a `max_length` left over: give it to the next `decompress` call."""
        return self.decompressobj.unconsumed_tail

    def flush(self):
        """The bytes still buffered; call it once, after the last `decompress`."""
        return self.decompressobj.flush()
