"""tinytornado.util: Tornado 5.1's helpers under the names legacy code imports, each either
the one definition elsewhere in tinytornado or a small helper of its own."""
from __future__ import absolute_import, division, print_function

import datetime
import errno
import gzip
import io
import json
import re
import socket
import sys
import zlib

import pytest

import tinytornado
from tinytornado import _compat, concurrent, escape, gen, ioloop, netutil, util
from tinytornado._configurable import Configurable as ConfigureHalf
from tinytornado.ioloop import IOLoop
from tinytornado.util import (
    ArgReplacer, GzipDecompressor, ObjectDict, exec_in, import_object, raise_exc_info,
    re_unescape, timedelta_to_seconds,
)


# --- the names defined elsewhere ---------------------------------------------------------

def test_shared_names_are_the_ones_tinytornado_uses():
    assert util.TimeoutError is concurrent.TimeoutError is gen.TimeoutError
    assert util.TimeoutError is ioloop.TimeoutError
    assert util.errno_from_exception is netutil.errno_from_exception
    assert issubclass(util.Configurable, ConfigureHalf)
    assert util.raise_exc_info is _compat.raise_exc_info
    assert util.is_finalizing is _compat.is_finalizing


def test_string_type_names():
    assert util.PY3 is (sys.version_info[0] == 3)
    assert util.bytes_type is bytes
    assert isinstance(u'x', util.unicode_type) and not isinstance(b'x', util.unicode_type)
    assert isinstance(u'x', util.basestring_type) and isinstance('x', util.basestring_type)


def test_errno_from_exception():
    assert util.errno_from_exception(socket.error(errno.ECONNRESET, 'reset')) == errno.ECONNRESET
    assert util.errno_from_exception(Exception()) is None


def test_configurable_configures_the_classes_tinytornado_builds():
    saved = IOLoop._save_configuration()
    try:
        assert issubclass(IOLoop, ConfigureHalf)
        IOLoop.configure('tornado.ioloop.PollIOLoop')
        assert IOLoop.configured_class() is ioloop.PollIOLoop
    finally:
        IOLoop._restore_configuration(saved)


class Shape(util.Configurable):
    @classmethod
    def configurable_base(cls):
        return Shape

    @classmethod
    def configurable_default(cls):
        return Square

    def initialize(self, size=1, colour='red'):
        self.size, self.colour = size, colour


class Square(Shape):
    pass


class Circle(Shape):
    def initialize(self, size=1, colour='red', filled=False):
        Shape.initialize(self, size, colour)
        self.filled = filled


class Curve(Shape):
    """A configurable base of its own, below Shape."""
    @classmethod
    def configurable_base(cls):
        return Curve

    @classmethod
    def configurable_default(cls):
        return Spiral


class Spiral(Curve):
    pass


@pytest.fixture
def shape_configuration():
    saved = Shape._save_configuration(), Curve._save_configuration()
    yield
    Shape._restore_configuration(saved[0])
    Curve._restore_configuration(saved[1])


def test_legacy_configurable_builds_the_default_and_calls_initialize(shape_configuration):
    shape = Shape(3)
    assert type(shape) is Square and isinstance(shape, Shape)
    assert (shape.size, shape.colour) == (3, 'red')


def test_legacy_configurable_builds_the_configured_class_with_its_arguments(
        shape_configuration):
    Shape.configure(Circle, colour='blue', filled=True)
    shape = Shape(2, colour='green')
    assert type(shape) is Circle
    assert (shape.size, shape.colour, shape.filled) == (2, 'green', True)
    # A subclass called by its own name is built as it is, without the configured arguments.
    square = Square(size=5)
    assert type(square) is Square and square.colour == 'red'
    Shape.configure(None)
    assert type(Shape()) is Square


def test_legacy_configurable_levels_keep_their_own_configuration(shape_configuration):
    Shape.configure(Curve)
    assert type(Shape()) is Spiral  # Curve is a base of its own: it builds its default.
    assert Curve.configured_class() is Spiral
    with pytest.raises(ValueError):
        Curve.configure(Circle)


def test_is_finalizing_is_false_while_the_program_runs():
    assert util.is_finalizing() is False


# --- import_object -------------------------------------------------------------------------

@pytest.mark.parametrize('name, expected', [
    ('tornado.escape.utf8', escape.utf8),
    (u'tornado.escape.utf8', escape.utf8),
    ('tornado.escape', escape),
    (u'tornado.escape', escape),
    ('tornado', tinytornado),
    ('tinytornado.util.ObjectDict', ObjectDict),
    ('json', json),
    ('json.decoder.JSONDecodeError' if util.PY3 else 'json.decoder.JSONDecoder',
     getattr(json.decoder, 'JSONDecodeError', json.decoder.JSONDecoder)),
])
def test_import_object_imports_modules_and_their_names(name, expected):
    assert import_object(name) is expected


def test_import_object_imports_a_submodule_not_yet_imported():
    import json.tool
    del sys.modules['json.tool'], json.tool
    module = import_object('json.tool')
    assert module is sys.modules['json.tool'] is json.tool


@pytest.mark.parametrize('name, words', [
    ('tornado.no_such_module', ['tornado.no_such_module']),
    ('tornado.escape.no_such_name', ['tinytornado.escape', 'no_such_name']),
    ('no_such_top_level_module', ['no_such_top_level_module']),
    ('tornado.escape.utf8.more', ['tornado.escape.utf8.more']),
])
def test_import_object_says_what_it_could_not_import(name, words):
    with pytest.raises(ImportError) as caught:
        import_object(name)
    assert [word for word in words if word not in str(caught.value)] == []


# --- ObjectDict ----------------------------------------------------------------------------

def test_object_dict_keys_are_attributes():
    d = ObjectDict(a=1)
    d.b = 2
    d['c'] = 3
    assert (d.a, d['b'], d.c) == (1, 2, 3)
    assert d == {'a': 1, 'b': 2, 'c': 3}
    assert json.loads(json.dumps(d)) == {'a': 1, 'b': 2, 'c': 3}


def test_object_dict_missing_attribute_is_an_attribute_error():
    d = ObjectDict()
    with pytest.raises(AttributeError) as caught:
        d.missing
    assert 'missing' in str(caught.value)
    assert getattr(d, 'missing', 'default') == 'default'
    assert not hasattr(d, 'missing')


# --- raise_exc_info, exec_in ---------------------------------------------------------------

def test_raise_exc_info_reraises_the_same_exception_with_its_traceback():
    class TwoArguments(Exception):
        def __init__(self, first, second):
            super(TwoArguments, self).__init__()
            self.pair = (first, second)

    def fail():
        raise TwoArguments(1, 2)

    try:
        fail()
    except TwoArguments:
        exc_info = sys.exc_info()
    with pytest.raises(TwoArguments) as caught:
        raise_exc_info(exc_info)
    assert caught.value is exc_info[1]
    assert 'fail' in [entry.name for entry in caught.traceback]


def test_exec_in_runs_source_in_the_namespaces_given():
    glob, loc = {'x': 2}, {}
    exec_in('y = x * 21', glob, loc)
    assert (loc, 'y' in glob) == ({'y': 42}, False)
    exec_in(compile('z = x + 1', '<test>', 'exec'), glob)
    assert glob['z'] == 3


def test_exec_in_does_not_inherit_this_modules_future_imports():
    # This module has `division`: 7 / 2 == 3.5 here, but not in code that lacks it on 2.7.
    namespace = {}
    exec_in('half = 7 / 2', namespace)
    assert namespace['half'] == (3 if _compat.PY2 else 3.5)


@pytest.mark.skipif(not _compat.PY2, reason='print is a function on 3.x')
def test_exec_in_runs_a_python2_print_statement():
    out = io.BytesIO()
    exec_in('print >> out, "world"', {'out': out})
    assert out.getvalue() == b'world\n'


# --- ArgReplacer ---------------------------------------------------------------------------

def legacy_function(x, y, callback=None, z=None):
    pass


class Legacy(object):
    def method(self, x, callback=None):
        pass


def test_arg_replacer_finds_a_positional_argument():
    replacer = ArgReplacer(legacy_function, 'callback')
    args, kwargs = (1, 2, 'old', 3), {}
    assert replacer.get_old_value(args, kwargs) == 'old'
    assert replacer.replace('new', args, kwargs) == ('old', [1, 2, 'new', 3], {})
    assert args == (1, 2, 'old', 3)


def test_arg_replacer_finds_a_keyword_argument():
    replacer = ArgReplacer(legacy_function, 'callback')
    args, kwargs = (1,), {'y': 2, 'callback': 'old', 'z': 3}
    assert replacer.get_old_value(args, kwargs) == 'old'
    assert replacer.replace('new', args, kwargs) == (
        'old', (1,), {'y': 2, 'callback': 'new', 'z': 3})
    assert kwargs['callback'] == 'new'  # changed in place, as Tornado's


def test_arg_replacer_adds_an_omitted_argument_as_a_keyword():
    replacer = ArgReplacer(legacy_function, 'callback')
    assert replacer.get_old_value((1, 2), {}) is None
    assert replacer.get_old_value((1, 2), {}, default='d') == 'd'
    assert replacer.replace('new', (1, 2), {}) == (None, (1, 2), {'callback': 'new'})


def test_arg_replacer_on_a_bound_method_counts_self_as_tornados_did():
    replacer = ArgReplacer(Legacy().method, 'callback')
    assert replacer.arg_pos == 2
    assert replacer.get_old_value(('x',), {'callback': 'cb'}) == 'cb'


def test_arg_replacer_for_a_name_taken_only_by_keyword():
    def takes_kwargs(x, **kwargs):
        pass

    replacer = ArgReplacer(takes_kwargs, 'callback')
    assert replacer.arg_pos is None
    assert replacer.replace('new', (1, 2, 3), {}) == (None, (1, 2, 3), {'callback': 'new'})


# --- timedelta_to_seconds, re_unescape -----------------------------------------------------

@pytest.mark.parametrize('delta, seconds', [
    (datetime.timedelta(hours=1), 3600.0),
    (datetime.timedelta(days=1, microseconds=500000), 86400.5),
    (datetime.timedelta(seconds=-1.25), -1.25),
])
def test_timedelta_to_seconds(delta, seconds):
    assert timedelta_to_seconds(delta) == seconds


@pytest.mark.parametrize('text', [
    u'/favicon.ico', u'a+b*c?(d)[e]{f}|g^h$', u'tab\tnew\nline', u'!$@#%;~-_ &', u'caf\u00e9'])
def test_re_unescape_undoes_re_escape(text):
    assert re_unescape(re.escape(text)) == text


@pytest.mark.parametrize('pattern', [u'\\d', u'a\\b', u'\\Z', u'x\\1'])
def test_re_unescape_refuses_escapes_re_escape_never_makes(pattern):
    with pytest.raises(ValueError) as caught:
        re_unescape(pattern)
    assert 'cannot unescape' in str(caught.value)


# --- GzipDecompressor ----------------------------------------------------------------------

def gzipped(data):
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode='wb') as f:
        f.write(data)
    return out.getvalue()


def test_gzip_decompressor_decodes_data_fed_in_pieces():
    data = b''.join(('line %d\n' % i).encode('ascii') for i in range(2000))
    compressed = gzipped(data)
    decompressor = GzipDecompressor()
    pieces = [decompressor.decompress(compressed[i:i + 100])
              for i in range(0, len(compressed), 100)]
    assert b''.join(pieces) + decompressor.flush() == data


def test_gzip_decompressor_max_length_leaves_an_unconsumed_tail():
    data = b'x' * 10000
    decompressor = GzipDecompressor()
    first = decompressor.decompress(gzipped(data), 1000)
    assert len(first) == 1000 and decompressor.unconsumed_tail
    rest = decompressor.decompress(decompressor.unconsumed_tail)
    assert first + rest + decompressor.flush() == data


def test_gzip_decompressor_refuses_what_is_not_gzip():
    with pytest.raises(zlib.error):
        GzipDecompressor().decompress(zlib.compress(b'zlib, not gzip'))
