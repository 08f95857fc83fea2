# -*- coding: utf-8 -*-
"""tinytornado.options: Tornado 5.1's OptionParser, its global `options` and the logging
options it shares with tinytornado.log.

Each test defines its options on a parser of its own; the global `options` is tested in a
child process (a definition there lasts as long as the process) or swapped for a fresh
parser, and its logging options through tinytornado.log, restored after each test.
"""
from __future__ import absolute_import, division, print_function

import datetime
import io
import json
import logging
import os
import subprocess
import sys
import textwrap

import pytest

import tinytornado
from tinytornado import log, options as options_module
from tinytornado._compat import PY2, string_types, text_type
from tinytornado.log import enable_pretty_logging, logging_options
from tinytornado.options import Error, OptionParser, options

try:
    from unittest import mock
except ImportError:  # 2.7 without the mock backport
    mock = None

REPO = os.path.dirname(os.path.dirname(os.path.abspath(tinytornado.__file__)))
THIS_FILE = sys._getframe().f_code.co_filename  # what define() finds as the defining file
LOG_FILE = enable_pretty_logging.__code__.co_filename


class Email(object):
    """A type of option of our own: built from text, refusing text that is no address."""

    def __init__(self, text):
        if '@' not in text:
            raise ValueError('not an email address: %r' % (text,))
        self.address = text


@pytest.fixture
def parser():
    return OptionParser()


def help_text(parser):
    output = io.BytesIO() if PY2 else io.StringIO()
    parser.print_help(output)
    return output.getvalue()


# --- Defining and reading options -------------------------------------------------------------

def test_parse_command_line_sets_options_of_the_defaults_type(parser):
    parser.define('port', default=80)
    parser.define('host')
    assert (parser.port, parser.host) == (80, None)
    assert parser.parse_command_line(['main.py', '--port=443', '--host=example.com']) == []
    assert parser.port == 443 and parser['port'] == 443 and parser.host == 'example.com'


@pytest.mark.parametrize('args, remaining', [
    (['main.py', '--a=1', 'run', '--b=2'], ['run', '--b=2']),  # options end at the first
    (['main.py', '--a=1', '--', '--b=2'], ['--b=2']),
    (['main.py', '-a=1'], []),  # any number of leading dashes
    (['main.py'], []),
])
def test_parse_command_line_returns_the_arguments_after_the_options(parser, args, remaining):
    parser.define('a', type=int)
    parser.define('b', type=int)
    assert parser.parse_command_line(args) == remaining
    assert (parser.a, parser.b) == (1 if len(args) > 1 else None, None)


def test_parse_command_line_reads_sys_argv_by_default(parser, monkeypatch):
    parser.define('port', default=80)
    monkeypatch.setattr(sys, 'argv', ['main.py', '--port=8000', 'rest'])
    assert parser.parse_command_line() == ['rest'] and parser.port == 8000


def test_subcommands_parse_the_rest_with_a_parser_of_their_own(parser, capsys):
    parser.define('verbose', default=False)
    sub = OptionParser()
    sub.define('name', type=str)
    rest = parser.parse_command_line(['main.py', '--verbose', 'sub', '--name=x'])
    assert rest == ['sub', '--name=x'] and parser.verbose is True
    assert sub.parse_command_line(rest) == [] and sub.name == 'x'
    with pytest.raises(Error):
        sub.parse_command_line(['sub', '--verbose'])


def test_dashes_and_underscores_are_the_same_character(parser):
    parser.define('foo-bar', group='g')
    parser.define('with_underscore', group='g')
    for flag in ('--foo-bar=a', '--foo_bar=b'):
        parser.parse_command_line(['main.py', flag])
        assert parser.foo_bar == parser['foo-bar'] == parser['foo_bar'] == flag[-1]
    parser.with_underscore = 'c'
    assert parser['with-underscore'] == 'c'
    assert 'foo_bar' in parser and 'with-underscore' in parser and 'other' not in parser
    # Introspection keeps the names as defined; --help shows them with dashes.
    assert sorted(parser) == ['foo-bar', 'help', 'with_underscore']
    assert sorted(parser.group_dict('g')) == ['foo-bar', 'with_underscore']
    assert '  --with-underscore ' in help_text(parser)


@pytest.mark.parametrize('first, second', [
    ('foo-bar', 'foo-bar'), ('foo_bar', 'foo_bar'), ('foo-bar', 'foo_bar'),
    ('foo_bar', 'foo-bar'),
])
def test_an_option_is_defined_once(parser, first, second):
    parser.define(first)
    with pytest.raises(Error) as caught:
        parser.define(second)
    assert str(caught.value) == "Option 'foo-bar' already defined in %s" % THIS_FILE


def test_unknown_options_are_attribute_errors(parser):
    with pytest.raises(AttributeError) as caught:
        parser.no_such_option
    assert str(caught.value) == "Unrecognized option 'no-such-option'"
    with pytest.raises(AttributeError):
        parser.no_such_option = 1
    with pytest.raises(AttributeError):
        parser['no_such_option']


def test_items_as_dict_groups_and_group_dict(parser):
    parser.define('a', default=1)
    parser.define('b', default=2, group='b_group')
    assert sorted(parser.items()) == [('a', 1), ('b', 2), ('help', None)]
    assert parser.as_dict() == {'a': 1, 'b': 2, 'help': None}
    # A group not given is the file defining the option; 'help' is the parser's own.
    assert parser.groups() == set(['', THIS_FILE, 'b_group'])
    assert parser.group_dict('b_group') == {'b': 2}
    assert parser.group_dict(THIS_FILE) == {'a': 1}
    assert parser.group_dict('nonexistent') == {}
    assert parser.group_dict('') == parser.as_dict()


def test_the_module_define_finds_the_defining_file(monkeypatch):
    global_options = OptionParser()
    monkeypatch.setattr(options_module, 'options', global_options)
    options_module.define('port', default=1, group=None)
    assert global_options.groups() == set(['', THIS_FILE])


# --- Values and their types -------------------------------------------------------------------

@pytest.mark.parametrize('option_type, text, value', [
    (int, '42', 42),
    (float, '1.5', 1.5),
    (str, 'asdf', 'asdf'),
    (string_types[0], 'caf\xc3\xa9' if PY2 else u'caf\xe9', u'caf\xe9'),
    (datetime.datetime, '2013-04-28 05:16', datetime.datetime(2013, 4, 28, 5, 16)),
    (datetime.datetime, 'Sun Apr 28 05:16:07 2013', datetime.datetime(2013, 4, 28, 5, 16, 7)),
    (datetime.datetime, '20130428', datetime.datetime(2013, 4, 28)),
    (datetime.datetime, '2013-04-28T05:16', datetime.datetime(2013, 4, 28, 5, 16)),
    (datetime.timedelta, '45s', datetime.timedelta(seconds=45)),
    (datetime.timedelta, '45', datetime.timedelta(seconds=45)),
    (datetime.timedelta, '1h 30min', datetime.timedelta(minutes=90)),
    (datetime.timedelta, '1.5 days', datetime.timedelta(hours=36)),
    (datetime.timedelta, '2w 1d', datetime.timedelta(days=15)),
    (datetime.timedelta, '-1e3ms', datetime.timedelta(seconds=-1)),
    (datetime.timedelta, '', datetime.timedelta(0)),
])
def test_text_is_parsed_as_the_type(parser, option_type, text, value):
    parser.define('x', type=option_type)
    parser.parse_command_line(['main.py', '--x=' + text])
    assert parser.x == value and type(parser.x) is type(value)


def test_an_option_of_a_class_of_our_own(parser):
    parser.define('email', type=Email)
    parser.parse_command_line(['main.py', '--email=me@example.com'])
    assert isinstance(parser.email, Email) and parser.email.address == 'me@example.com'
    with pytest.raises(ValueError):
        parser.parse_command_line(['main.py', '--email=nobody'])


@pytest.mark.parametrize('args, value', [
    (['--debug'], True),
    (['--debug=true'], True),
    (['--debug=yes'], True),  # anything but false, 0 and f, in any case
    (['--debug=false'], False),
    (['--debug=FALSE'], False),
    (['--debug=0'], False),
    (['--debug=F'], False),
])
def test_bool_options(parser, args, value):
    parser.define('debug', default=None, type=bool)
    parser.parse_command_line(['main.py'] + args)
    assert parser.debug is value


@pytest.mark.parametrize('option_type, text, value', [
    (str, 'a,b,c', ['a', 'b', 'c']),
    (int, '1,3,5:7', [1, 3, 5, 6, 7]),
    (int, '4:2', []),
    (float, '1,2.5', [1.0, 2.5]),
    (bool, 'true,false', [True, False]),
])
def test_multiple_values(parser, option_type, text, value):
    parser.define('x', type=option_type, multiple=True)
    assert parser.x == []
    parser.parse_command_line(['main.py', '--x=' + text])
    assert parser.x == value and [type(item) for item in parser.x] == [option_type] * len(value)


@pytest.mark.parametrize('option_type, text, message', [
    (datetime.datetime, '28/04/2013', "Unrecognized date/time format: '28/04/2013'"),
    (datetime.timedelta, '5 fortnights',
     "Unrecognized unit 'fortnights' in time span '5 fortnights': use d, days, h, hours, "
     "m, microseconds, milliseconds, min, minutes, ms, s, sec, seconds, us, w, weeks"),
    (datetime.timedelta, 'soon', "Unrecognized time span: 'soon' (e.g. 45s, 1.5h, 1d 12h)"),
])
def test_unparsable_text(parser, option_type, text, message):
    parser.define('x', type=option_type)
    with pytest.raises(Error) as caught:
        parser.parse_command_line(['main.py', '--x=' + text])
    assert str(caught.value) == message


def test_text_the_type_refuses_raises_the_types_error(parser):
    parser.define('port', default=80)
    with pytest.raises(ValueError):
        parser.parse_command_line(['main.py', '--port=http'])
    assert parser.port == 80


def test_only_bool_options_go_without_a_value(parser):
    parser.define('port', default=80)
    with pytest.raises(Error) as caught:
        parser.parse_command_line(['main.py', '--port'])
    assert str(caught.value) == "Option 'port' requires a value"


def test_an_unknown_option_prints_the_help_and_fails(parser, capsys):
    parser.define('port', default=80)
    with pytest.raises(Error) as caught:
        parser.parse_command_line(['main.py', '--prot=8000'])
    assert str(caught.value) == "Unrecognized command line option: 'prot'"
    assert capsys.readouterr() == ('', help_text(parser))


def test_assignments_take_values_of_the_type(parser):
    parser.define('port', default=80)
    parser.port = 8000
    parser['port'] = 8001
    assert parser.port == 8001
    parser.port = None
    assert parser.port is None
    with pytest.raises(Error) as caught:
        parser.port = '8000'  # text is not parsed: it is a value of the wrong type
    assert str(caught.value) == "Option 'port' is required to be a int (%s given)" % str
    assert parser.port is None


def test_assignments_to_multiple_options_take_lists(parser):
    parser.define('ports', type=int, multiple=True)
    parser.ports = [1, None, 2]
    assert parser.ports == [1, None, 2]
    for value in ((1, 2), [1, '2'], 1):
        with pytest.raises(Error) as caught:
            parser.ports = value
        assert str(caught.value) == "Option 'ports' is required to be a list of int"
    assert parser.ports == [1, None, 2]


def test_the_callback_hears_every_new_value(parser):
    trace = []
    parser.define('port', default=80, callback=trace.append)
    parser.define('ports', type=int, multiple=True, callback=trace.append)
    parser.port = 1
    parser.parse_command_line(['main.py', '--port=2', '--ports=3:4'])
    parser['port'] = 5
    assert trace == [1, 2, [3, 4], 5]


# --- Config files ----------------------------------------------------------------------------

@pytest.fixture
def config(tmpdir):
    """``config(source)``: the path of a config file holding `source` (text, UTF-8)."""
    def write(source):
        path = tmpdir.join('app.cfg')
        path.write_binary(textwrap.dedent(source).encode('utf-8'))
        return str(path)
    return write


def define_every_type(parser):
    parser.define('str', type=str)
    parser.define('text', type=string_types[0])
    parser.define('int', type=int)
    parser.define('float', type=float)
    parser.define('when', type=datetime.datetime)
    parser.define('span', type=datetime.timedelta)
    parser.define('email', type=Email)
    parser.define('list-of-int', type=int, multiple=True)
    parser.define('list-of-str', type=str, multiple=True)


def values_of_every_type(parser):
    return (parser.str, parser.text, parser.int, parser.float, parser.when, parser.span,
            parser.email.address, parser.list_of_int, parser.list_of_str)


EVERY_TYPE = ('asdf', 'qwer', 42, 1.5, datetime.datetime(2013, 4, 28, 5, 16),
              datetime.timedelta(seconds=45), 'me@example.com', [1, 2, 3], ['a', 'b'])


def test_config_file_values_of_the_options_types(parser, config):
    define_every_type(parser)
    parser.parse_config_file(config('''
        from datetime import datetime, timedelta
        from test_options import Email
        str = 'asdf'
        text = 'qwer'
        int = 42
        float = 1.5
        when = datetime(2013, 4, 28, 5, 16)
        span = timedelta(seconds=45)
        email = Email('me@example.com')
        list_of_int = [1, 2, 3]
        list_of_str = ['a', 'b']
    '''))
    assert values_of_every_type(parser) == EVERY_TYPE


def test_config_file_text_is_parsed_as_on_the_command_line(parser, config):
    define_every_type(parser)
    parser.parse_config_file(config('''
        str = 'asdf'
        text = 'qwer'
        int = '42'
        float = '1.5'
        when = '2013-04-28 05:16'
        span = '45s'
        email = 'me@example.com'
        list_of_int = '1:3'
        list_of_str = 'a,b'
    '''))
    assert values_of_every_type(parser) == EVERY_TYPE


def test_config_file_names_file_and_encoding(parser, config):
    parser.define('user-name', default='')
    parser.define('my_path')
    parser.define('unused', default=1)
    path = config(u'''
        user_name = 'caf\xe9'
        my_path = __file__
        other = 1
    ''')
    parser.parse_config_file(os.path.relpath(path))
    # 'caf\xe9' is bytes on 2.7 (the file's UTF-8, as a str literal), text on 3.x.
    assert parser.user_name == (u'caf\xe9'.encode('utf-8') if PY2 else u'caf\xe9')
    assert parser.my_path == path and parser.unused == 1


def test_config_file_is_python_of_its_own(parser, config):
    # Not this module's __future__ imports: on 2.7, 1/2 is 0 there (as in Tornado 5.1).
    parser.define('half', type=int if PY2 else float)
    parser.parse_config_file(config('half = 1/2'))
    assert parser.half == (0 if PY2 else 0.5)


def test_errors_in_a_config_file_name_it(parser, config):
    path = config('''
        port = 80
        raise ValueError('broken config')
    ''')
    with pytest.raises(ValueError) as caught:
        parser.parse_config_file(path)
    assert str(caught.traceback[-1].path) == path


@pytest.mark.parametrize('source, message', [
    ('port = 80.0', "Option 'port' is required to be a int (%s given)" % float),
    ('ports = 80', "Option 'ports' is required to be a list of int or a comma-separated "
                   "string"),
    ('ports = (80, 81)', "Option 'ports' is required to be a list of int or a "
                         "comma-separated string"),
    ('ports = [80, 81.0]', "Option 'ports' is required to be a list of int"),
])
def test_config_file_values_of_the_wrong_type(parser, config, source, message):
    parser.define('port', default=1)
    parser.define('ports', type=int, multiple=True)
    with pytest.raises(Error) as caught:
        parser.parse_config_file(config(source))
    assert str(caught.value) == message


def test_config_file_values_run_callbacks(parser, config):
    trace = []
    parser.define('port', default=80, callback=trace.append)
    parser.parse_config_file(config('port = 8000'))
    assert trace == [8000]


# --- Parse callbacks -------------------------------------------------------------------------

def test_parse_callbacks_run_after_each_final_parse(parser, config):
    trace = []
    parser.define('port', default=80, callback=lambda value: trace.append(('port', value)))
    parser.add_parse_callback(lambda: trace.append('first'))
    parser.add_parse_callback(lambda: trace.append('second'))
    parser.parse_command_line(['main.py', '--port=1'], final=False)
    parser.parse_config_file(config('port = 2'), final=False)
    assert trace == [('port', 1), ('port', 2)]
    parser.parse_command_line(['main.py', '--port=3'])
    parser.parse_config_file(config('port = 4'))
    parser.run_parse_callbacks()
    assert trace == [('port', 1), ('port', 2), ('port', 3), 'first', 'second',
                     ('port', 4), 'first', 'second', 'first', 'second']


def test_a_config_option_reads_a_file_between_command_line_options(parser, config):
    # Tornado's documented way to combine the two: the file overrides what is before
    # --config on the command line, what comes after overrides the file.
    parser.define('config', callback=lambda path: parser.parse_config_file(path, final=False))
    parser.define('a', default=0)
    parser.define('b', default=0)
    parser.define('c', default=0)
    path = config('a = 10\nb = 20\nc = 30')
    parser.parse_command_line(['main.py', '--a=1', '--config=' + path, '--c=3'])
    assert (parser.a, parser.b, parser.c) == (10, 20, 3)


# --- Help ------------------------------------------------------------------------------------

def test_help_is_grouped_by_file_and_wrapped(parser, monkeypatch):
    monkeypatch.setattr(sys, 'argv', ['server.py'])
    parser.define('port', default=8888, help='the port to listen on')
    parser.define('name', metavar='NAME', help='')
    parser.define('backends', type=str, multiple=True, group='app', metavar='HOST:PORT,...',
                  help='the servers that requests are passed on to, tried in turn '
                       'until one answers')
    parser.define('a_very_long_option_name_indeed', default='', group='app')
    assert help_text(parser) == '\n'.join([
        'Usage: server.py [OPTIONS]',
        '',
        'Options:',
        '',
        '  --help                           print this help and exit',
        '',
        '%s options:' % os.path.normpath(THIS_FILE),
        '',
        '  --name=NAME                      ',
        '  --port                           the port to listen on (default 8888)',
        '',
        'app options:',
        '',
        '  --a-very-long-option-name-indeed ',
        '  --backends=HOST:PORT,...         the servers that requests are passed on to,',
        '                                   tried in turn until one answers (default [])',
        '',
        '',
    ])


def test_a_flag_longer_than_its_column_puts_the_help_on_the_next_line(parser):
    parser.define('a_long_option_name_that_overflows', default=1, help='what it is')
    assert ('  --a-long-option-name-that-overflows \n' + ' ' * 35 + 'what it is (default 1)\n'
            in help_text(parser))


def test_help_option_prints_the_help_and_exits(parser, capsys):
    parser.define('port', default=8888, help='the port to listen on')
    with pytest.raises(SystemExit) as caught:
        parser.parse_command_line(['main.py', '--help', '--port=1'])
    assert caught.value.code == 0 and parser.port == 8888
    stdout, stderr = capsys.readouterr()
    assert stdout == '' and stderr == help_text(parser)
    assert 'Usage: ' in stderr and 'the port to listen on' in stderr


# --- mockable --------------------------------------------------------------------------------

def test_mockable_assignments_are_undone_by_deleting_them(parser):
    parser.define('port', default=80)
    mockable = parser.mockable()
    mockable.port = 8000
    assert parser.port == mockable.port == 8000
    with pytest.raises(Error):
        mockable.port = 8001  # one patch per mockable(): the value to go back to is kept
    del mockable.port
    assert parser.port == 80


@pytest.mark.skipif(mock is None, reason='no mock on this Python')
def test_mock_patch_object(parser):
    parser.define('port', default=80)
    parser.parse_command_line(['main.py', '--port=2'])
    with mock.patch.object(parser.mockable(), 'port', 3):
        assert parser.port == 3
        parser.port = 4
        with mock.patch.object(parser.mockable(), 'port', 5):
            assert parser.port == 5
        assert parser.port == 4
    assert parser.port == 2


# --- The global options and logging ----------------------------------------------------------

LOGGING_DEFAULTS = dict(logging='info', log_to_stderr=None, log_file_prefix=None,
                        log_file_max_size=100 * 1000 * 1000, log_file_num_backups=10,
                        log_rotate_when='midnight', log_rotate_interval=1,
                        log_rotate_mode='size')


@pytest.fixture
def restore_logging_options(monkeypatch):
    """Whatever the test does to tinytornado.log.logging_options is undone after it."""
    for name in LOGGING_DEFAULTS:
        monkeypatch.setattr(logging_options, name, getattr(logging_options, name))


def test_the_global_options_have_tornados_logging_options():
    assert dict((name, options[name]) for name in LOGGING_DEFAULTS) == LOGGING_DEFAULTS
    assert options.group_dict(LOG_FILE) == LOGGING_DEFAULTS
    assert ('  --logging=debug|info|warning|error|none \n' in help_text(options) and
            '  --log-file-prefix=PATH ' in help_text(options))


def test_the_global_logging_options_are_log_s_logging_options(restore_logging_options):
    options.logging = 'warning'
    options.parse_command_line(['main.py', '--log-file-max-size=1000'], final=False)
    assert (logging_options.logging, logging_options.log_file_max_size) == ('warning', 1000)
    logging_options.set_from_text('log_to_stderr', 'false')  # as tinytornado.testing.main
    logging_options.log_rotate_mode = 'time'
    assert (options.log_to_stderr, options.log_rotate_mode) == (False, 'time')
    assert log.define_logging_options() is logging_options


def test_enable_pretty_logging_reads_the_global_options(restore_logging_options):
    logger = logging.Logger('test_options')
    options.logging = 'error'
    enable_pretty_logging(logger=logger)
    assert logger.level == logging.ERROR and len(logger.handlers) == 1


PROGRAM = '''
import json, logging, sys
from tinytornado.options import define, options, parse_command_line, parse_config_file
from tinytornado.log import enable_pretty_logging
define('port', default=8888, type=int, help='the port to listen on')
%s
root = logging.getLogger()
print(json.dumps([options.port, logging.getLevelName(root.level),
                  [type(h).__name__ for h in root.handlers]]))
'''


def run_program(statements, *args):
    """(port, the root logger's level, its handlers' class names) after `statements` ran
    in a child process, with `args` as its command line."""
    env = dict(os.environ, PYTHONPATH=REPO)
    output = subprocess.check_output(
        [sys.executable, '-c', PROGRAM % statements] + list(args), env=env, cwd=REPO)
    return tuple(json.loads(output.decode('ascii').splitlines()[-1]))


@pytest.mark.parametrize('statements, args, expected', [
    # Importing changes nothing; a final parse sets up logging, as the options say.
    ('', [], (8888, 'WARNING', [])),
    ('parse_command_line()', ['--port=80'], (80, 'INFO', ['StreamHandler'])),
    ('parse_command_line()', ['--logging=debug'], (8888, 'DEBUG', ['StreamHandler'])),
    ('parse_command_line(final=False)', ['--port=80'], (80, 'WARNING', [])),
    ('parse_command_line()', ['--logging=none'], (8888, 'WARNING', [])),
    ('parse_command_line()', ['--logging=None'], (8888, 'WARNING', [])),
    ('options.logging = "none"; parse_command_line()', [], (8888, 'WARNING', [])),
    ('options.logging = None; parse_command_line()', [], (8888, 'WARNING', [])),
    ('options.logging = None; parse_command_line()', ['--logging=info'],
     (8888, 'INFO', ['StreamHandler'])),
    ('options.logging = "error"; enable_pretty_logging()', [],
     (8888, 'ERROR', ['StreamHandler'])),
])
def test_a_program_using_the_global_options(statements, args, expected):
    assert run_program(statements, *args) == expected


def test_a_program_reading_a_config_file(tmpdir):
    path = tmpdir.join('server.cfg')
    path.write('port = 80\nlogging = "error"\nlog_file_prefix = %r\n' %
               str(tmpdir.join('server.log')))
    assert run_program('parse_config_file(%r)' % str(path)) == (
        80, 'ERROR', ['RotatingFileHandler'])


def test_a_program_asking_for_help():
    env = dict(os.environ, PYTHONPATH=REPO)
    process = subprocess.Popen([sys.executable, '-c', PROGRAM % 'parse_command_line()',
                                '--help'], env=env, cwd=REPO, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    stdout, stderr = process.communicate()
    assert process.returncode == 0 and stdout == b''
    help_lines = stderr.decode('ascii').splitlines()
    assert help_lines[:4] == ['Usage: -c [OPTIONS]', '', 'Options:', '']
    assert '<string> options:' in help_lines
    assert [line for line in help_lines if line.endswith('tinytornado/log.py options:')]
    assert '  --port                           the port to listen on (default 8888)' in (
        help_lines)


def test_text_options_are_text(parser):
    parser.define('name', type=string_types[0])
    parser.parse_command_line(['main.py', '--name=x'])
    assert isinstance(parser.name, text_type)
