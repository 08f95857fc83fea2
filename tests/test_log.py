# -*- coding: utf-8 -*-
"""tinytornado.log: Tornado 5.1's LogFormatter, enable_pretty_logging and its options
(a LoggingOptions object, or options of a tinytornado.options.OptionParser).

Records go through real handlers into real files; colors are looked up for real, in a
child process whose stderr is a pseudo-terminal (curses sets up its terminal once per
process).
"""
from __future__ import absolute_import, division, print_function

import glob
import io
import logging
import logging.config
import logging.handlers
import os
import re
import subprocess
import sys

import pytest

import tinytornado
from test_layering import internal_imports
from tinytornado import log
from tinytornado._compat import PY2
from tinytornado.log import (
    LogFormatter, LoggingOptions, define_logging_options, enable_pretty_logging,
    logging_options,
)
from tinytornado.options import Error, OptionParser

REPO = os.path.dirname(os.path.dirname(os.path.abspath(tinytornado.__file__)))
# One record's output: the prefix between the fake color codes, then the message (and
# any traceback lines after it).
LINE_RE = re.compile(br'(?s)\x01\[E [0-9]{6} [0-9]{2}:[0-9]{2}:[0-9]{2} test_log:[0-9]+\]'
                     br'\x02 (.*)\Z')


@pytest.fixture
def make_logger(tmpdir):
    """``make_logger(formatter, encoding=None)``: a logger writing through `formatter` to a
    file; returns it and a function reading the file back (bytes)."""
    made = []

    def make(formatter, encoding=None):
        # A Logger made directly is not registered, so nothing else sees its records.
        logger = logging.Logger('test_log.%d' % len(made))
        filename = str(tmpdir.join('out%d.log' % len(made)))
        handler = logging.FileHandler(filename, encoding=encoding)
        handler.setFormatter(formatter)
        logger.addHandler(handler)
        made.append(handler)

        def output():
            handler.flush()
            with open(filename, 'rb') as f:
                return f.read().rstrip(b'\n')
        return logger, output
    yield make
    for handler in made:
        handler.close()


def fake_colors(formatter):
    """A formatter that colors errors with \\x01 ... \\x02, as if on a terminal."""
    formatter._colors = {logging.ERROR: u'\x01'}
    formatter._normal = u'\x02'
    return formatter


def message_of(output):
    match = LINE_RE.match(output)
    assert match, 'not a LogFormatter line: %r' % (output,)
    return match.group(1)


# --- LogFormatter ----------------------------------------------------------------------------

def test_default_format(make_logger):
    logger, output = make_logger(fake_colors(LogFormatter(color=False)))
    logger.error('the %s', 'message')
    assert message_of(output()) == b'the message'


def test_levels_without_a_color_get_none(make_logger):
    logger, output = make_logger(fake_colors(LogFormatter(color=False)))
    logger.warning('plain')
    assert re.match(br'\[W [0-9]{6} [0-9:]{8} test_log:[0-9]+\] plain\Z', output())


def test_non_utf8_bytes_are_logged_as_their_repr(make_logger):
    logger, output = make_logger(fake_colors(LogFormatter(color=False)))
    logger.error(b'\xe9')
    assert message_of(output()) == repr(b'\xe9').encode('ascii')


def test_utf8_bytes(make_logger):
    # 2.7 logs bytes as they are, so UTF-8 comes out as text; 3.x logs their repr.
    logger, output = make_logger(fake_colors(LogFormatter(color=False)), encoding='utf-8')
    logger.error(u'\xe9'.encode('utf-8'))
    expected = u'\xe9'.encode('utf-8') if PY2 else repr(u'\xe9'.encode('utf-8')).encode()
    assert message_of(output()) == expected


def test_text_message(make_logger):
    logger, output = make_logger(fake_colors(LogFormatter(color=False)), encoding='utf-8')
    logger.error(u'caf\xe9 \u2603')
    assert message_of(output()) == u'caf\xe9 \u2603'.encode('utf-8')


def test_traceback_lines_are_indented_and_bytes_in_them_survive(make_logger):
    logger, output = make_logger(fake_colors(LogFormatter(color=False)))
    try:
        raise ValueError(b'\xe9')
    except ValueError:
        logger.exception('caught it')
    text = message_of(output())
    lines = text.split(b'\n')
    assert lines[0] == b'caught it'
    assert lines[1] == b'    Traceback (most recent call last):'
    assert all(line.startswith(b'    ') for line in lines[1:])
    assert re.search(br'ValueError.*\\xe9', lines[-1])


def test_a_message_that_cannot_be_formatted_is_still_logged(make_logger):
    logger, output = make_logger(LogFormatter(color=False))
    logger.error('%d items', 'not a number')
    assert b'] Bad message (' in output() and b'not a number' in output()


def test_fmt_datefmt_and_styles(make_logger):
    formats = [('%', '%(levelname)s|%(asctime)s|%(message)s'),
               ('{', '{levelname}|{asctime}|{message}'),
               ('$', '$levelname|$asctime|$message')]
    for style, fmt in formats:
        logger, output = make_logger(LogFormatter(fmt=fmt, datefmt='%Y', style=style,
                                                  color=False))
        logger.error('multi\nline')
        assert re.match(br'ERROR\|[0-9]{4}\|multi\n    line\Z', output()), style


def test_unknown_style_is_refused():
    with pytest.raises(ValueError):
        LogFormatter(style='<')


@pytest.mark.parametrize('formatter, expected', [
    ({'()': LogFormatter, 'color': False, 'fmt': '%(levelname)s %(message)s'},
     'ERROR configured\n'),
    # The class form (3.x) passes (format, datefmt, style), format None when not given.
    pytest.param({'class': 'tinytornado.log.LogFormatter', 'datefmt': '%Y'},
                 '[E YYYY test_log:NN] configured\n',
                 marks=pytest.mark.skipif(PY2, reason="2.7's dictConfig has no 'class'")),
])
def test_dict_config_can_make_it(tmpdir, formatter, expected):
    filename = str(tmpdir.join('configured.log'))
    logging.config.dictConfig({
        'version': 1,
        'incremental': False,
        'disable_existing_loggers': False,
        'formatters': {'tornado': formatter},
        'handlers': {'file': {'class': 'logging.FileHandler', 'filename': filename,
                              'formatter': 'tornado'}},
        'loggers': {'test_log.configured': {'handlers': ['file'], 'propagate': False}},
    })
    logger = logging.getLogger('test_log.configured')
    try:
        logger.error('configured')
    finally:
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
            handler.close()
    with open(filename) as f:
        assert re.sub(r'[0-9]{4} test_log:[0-9]+', 'YYYY test_log:NN', f.read()) == expected


COLOR_PROBE = '''
import logging, sys
from tinytornado.log import LogFormatter
formatter = LogFormatter(%s)
for level in (logging.ERROR, logging.INFO, 5):
    record = logging.LogRecord('probe', level, 'probe.py', 1, 'hi', None, None)
    sys.stdout.write(repr(str(formatter.format(record))) + '\\n')
'''


def formatted_on_a_terminal(term, arguments='', tty=True):
    """What LogFormatter(arguments) makes of records at ERROR, INFO and level 5, in a child
    process whose stderr is a pseudo-terminal of type `term` (or a pipe)."""
    import pty
    master, slave = pty.openpty() if tty else os.pipe()[::-1]
    env = dict(os.environ, TERM=term, PYTHONPATH=REPO)
    try:
        output = subprocess.check_output([sys.executable, '-c', COLOR_PROBE % arguments],
                                         stderr=slave, env=env, cwd=REPO)
    finally:
        os.close(master)
        os.close(slave)
    return output.decode('ascii').splitlines()


def skip_without_a_color_terminal():
    """Skip unless there are pseudo-terminals and curses knows xterm-256color (checked in
    a child process: curses sets up its terminal once per process)."""
    if sys.platform == 'win32':
        pytest.skip('no pseudo-terminals')
    probe = "import curses, sys; curses.setupterm('xterm-256color', sys.stdout.fileno())"
    if subprocess.call([sys.executable, '-c', probe], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE) != 0:
        pytest.skip('no curses or no terminfo entry for xterm-256color')


def test_colors_on_a_terminal_that_has_them():
    skip_without_a_color_terminal()
    error, info, other = formatted_on_a_terminal('xterm-256color')
    # setaf 1 (red) for ERROR, 2 (green) for INFO; sgr0 ends the color.
    assert error.startswith(r"'\x1b[31m[E ") and info.startswith(r"'\x1b[32m[I ")
    assert r'probe:1]\x1b(B\x1b[m hi' in error
    assert other.startswith("'[L ")  # 'Level 5': no color, as for any unlisted level


def test_custom_colors():
    skip_without_a_color_terminal()
    error, info, _ = formatted_on_a_terminal('xterm-256color', 'colors={40: 5}')
    assert error.startswith(r"'\x1b[35m[E ") and info.startswith("'[I ")


@pytest.mark.skipif(sys.platform == 'win32', reason='no pseudo-terminals')
@pytest.mark.parametrize('term, arguments, tty', [
    ('dumb', '', True),  # a terminal without colors
    ('no-such-terminal', '', True),  # no terminfo entry
    ('xterm-256color', 'color=False', True),
    ('xterm-256color', '', False),  # stderr is not a terminal
])
def test_no_colors(term, arguments, tty):
    for line in formatted_on_a_terminal(term, arguments, tty):
        assert '\\x1b' not in line and line.endswith(":1] hi'")


# --- LoggingOptions and define_logging_options -----------------------------------------------

DEFAULTS = dict(logging='info', log_to_stderr=None, log_file_prefix=None,
                log_file_max_size=100 * 1000 * 1000, log_file_num_backups=10,
                log_rotate_when='midnight', log_rotate_interval=1, log_rotate_mode='size')


def test_logging_options_have_tornados_defaults():
    options = LoggingOptions()
    assert dict((name, getattr(options, name)) for name in DEFAULTS) == DEFAULTS
    changed = LoggingOptions(logging='debug', log_file_num_backups=3)
    assert (changed.logging, changed.log_file_num_backups) == ('debug', 3)
    assert "logging='debug'" in repr(changed)
    with pytest.raises(TypeError) as caught:
        LoggingOptions(log_level='debug')
    assert 'log_level' in str(caught.value)


@pytest.mark.parametrize('name, text, value', [
    ('logging', 'debug', 'debug'),
    ('log_to_stderr', None, True),
    ('log_to_stderr', 'false', False),
    ('log_to_stderr', '1', True),
    ('log_file_max_size', '1000', 1000),
    ('log_file_prefix', '/tmp/x.log', '/tmp/x.log'),
])
def test_set_from_text(name, text, value):
    options = LoggingOptions()
    options.set_from_text(name, text)
    assert getattr(options, name) == value


@pytest.mark.parametrize('name, text, error', [
    ('log_level', 'debug', KeyError),
    ('log_file_max_size', 'big', ValueError),
    ('logging', None, ValueError),
])
def test_set_from_text_refuses(name, text, error):
    with pytest.raises(error):
        LoggingOptions().set_from_text(name, text)


def test_define_logging_options_fills_in_what_is_missing():
    class Settings(object):
        logging = 'warning'
    settings = Settings()
    assert define_logging_options(settings) is settings
    assert settings.logging == 'warning'
    assert settings.log_rotate_mode == 'size' and settings.log_to_stderr is None
    assert define_logging_options() is logging_options


def test_define_logging_options_on_an_option_parser():
    parser = OptionParser()
    assert define_logging_options(parser) is parser
    assert dict((name, parser[name]) for name in DEFAULTS) == DEFAULTS
    # Grouped under this module in --help, as Tornado's are under tornado/log.py.
    assert parser.group_dict(log.define_logging_options.__code__.co_filename) == DEFAULTS
    parser.parse_command_line(['main.py', '--logging=debug', '--log-to-stderr=false',
                               '--log_file_max_size=5', '--log-file-prefix=/tmp/x.log'],
                              final=False)
    assert (parser.logging, parser.log_to_stderr, parser.log_file_max_size,
            parser.log_file_prefix) == ('debug', False, 5, '/tmp/x.log')
    with pytest.raises(Error) as caught:
        define_logging_options(parser)
    assert "Option 'logging' already defined in " in str(caught.value)


def test_a_final_parse_sets_up_logging_as_the_parser_says(monkeypatch):
    root = logging.getLogger()
    monkeypatch.setattr(root, 'handlers', [logging.NullHandler()])
    monkeypatch.setattr(root, 'level', root.level)
    parser = define_logging_options(OptionParser())
    parser.parse_command_line(['main.py', '--logging=debug', '--log-to-stderr'])
    assert root.level == logging.DEBUG
    assert formatters_of(root) == [(logging.NullHandler, type(None)),
                                   (logging.StreamHandler, LogFormatter)]
    root.handlers = [logging.NullHandler()]
    parser.parse_command_line(['main.py', '--logging=none'])
    assert root.level == logging.DEBUG and len(root.handlers) == 1


# --- enable_pretty_logging -------------------------------------------------------------------

@pytest.fixture
def logger():
    logger = logging.Logger('test_log.pretty')
    yield logger
    for handler in logger.handlers:
        handler.close()


def formatters_of(logger):
    return [(type(h), type(h.formatter)) for h in logger.handlers]


def test_defaults_set_info_and_a_stderr_handler(logger):
    enable_pretty_logging(LoggingOptions(), logger)
    assert logger.level == logging.INFO
    assert formatters_of(logger) == [(logging.StreamHandler, LogFormatter)]
    assert logger.handlers[0].stream is sys.stderr


def test_without_options_the_module_options_are_read(logger, monkeypatch):
    monkeypatch.setattr(logging_options, 'logging', 'error')
    enable_pretty_logging(logger=logger)
    assert logger.level == logging.ERROR and len(logger.handlers) == 1


def test_the_root_logger_is_the_default(monkeypatch):
    root = logging.getLogger()
    monkeypatch.setattr(root, 'handlers', [logging.NullHandler()])
    monkeypatch.setattr(root, 'level', root.level)
    enable_pretty_logging(LoggingOptions(logging='debug'))
    assert root.level == logging.DEBUG and len(root.handlers) == 1


def test_no_stderr_handler_when_the_logger_has_one(logger):
    logger.addHandler(logging.NullHandler())
    enable_pretty_logging(LoggingOptions(logging='warning'), logger)
    assert logger.level == logging.WARNING and len(logger.handlers) == 1
    enable_pretty_logging(LoggingOptions(log_to_stderr=True), logger)
    assert formatters_of(logger)[1] == (logging.StreamHandler, LogFormatter)


@pytest.mark.parametrize('level', ['none', 'None', None])
def test_logging_none_changes_nothing(logger, level):
    logger.setLevel(logging.CRITICAL)
    enable_pretty_logging(LoggingOptions(logging=level), logger)
    assert logger.level == logging.CRITICAL and logger.handlers == []


def test_unknown_level(logger):
    for level in ('loud', 'basic_format'):
        with pytest.raises(ValueError) as caught:
            enable_pretty_logging(LoggingOptions(logging=level), logger)
        assert repr(level) in str(caught.value)


def test_log_file_rotated_by_size(logger, tmpdir):
    prefix = str(tmpdir.join('app.log'))
    options = LoggingOptions(log_file_prefix=prefix, log_file_max_size=200,
                             log_file_num_backups=2)
    enable_pretty_logging(options, logger)
    # A file handler only: no stderr handler is added once there is one.
    assert formatters_of(logger) == [(logging.handlers.RotatingFileHandler, LogFormatter)]
    for index in range(12):
        logger.info(u'line %02d caf\xe9 %s', index, 'x' * 40)
    logger.handlers[0].flush()
    assert sorted(os.path.basename(f) for f in glob.glob(prefix + '*')) == [
        'app.log', 'app.log.1', 'app.log.2']
    with io.open(prefix, encoding='utf-8') as f:
        last = f.read().splitlines()
    assert re.match(u'\\[I [0-9]{6} [0-9:]{8} test_log:[0-9]+\\] line 11 caf\xe9 x+\\Z',
                    last[-1])
    with io.open(prefix + '.2', encoding='utf-8') as f:
        # Two lines to a file: the oldest ones kept are 06 and 07, the others are gone.
        assert re.findall(u'] line ([0-9]+)', f.read()) == [u'06', u'07']


def test_log_file_rotated_by_time(logger, tmpdir):
    prefix = str(tmpdir.join('timed.log'))
    options = LoggingOptions(log_file_prefix=prefix, log_rotate_mode='time',
                             log_rotate_when='M', log_rotate_interval=2,
                             log_file_num_backups=4)
    enable_pretty_logging(options, logger)
    handler = logger.handlers[0]
    assert type(handler) is logging.handlers.TimedRotatingFileHandler
    assert (handler.when, handler.interval, handler.backupCount) == ('M', 120, 4)
    assert not handler.formatter._colors  # files get no color codes
    logger.warning('timed')
    handler.flush()
    with open(prefix) as f:
        assert f.read().endswith('] timed\n')


def test_unknown_rotate_mode(logger, tmpdir):
    options = LoggingOptions(log_file_prefix=str(tmpdir.join('x.log')),
                             log_rotate_mode='daily')
    with pytest.raises(ValueError) as caught:
        enable_pretty_logging(options, logger)
    assert "'daily'" in str(caught.value) and logger.handlers == []


def test_log_imports_nothing_of_tinytornado_but_compat():
    # Every layer may import log (tests/test_layering.py's OPEN_TO_ALL), which that test
    # therefore does not check: log must stay below them all.
    path = log.__file__.replace('.pyc', '.py')
    assert set(name for _, name in internal_imports('tinytornado.log', path)) == set(
        ['tinytornado._compat'])
