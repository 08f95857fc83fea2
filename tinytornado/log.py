"""The loggers tinytornado writes to, named as Tornado names them so handlers carry over,
and Tornado 5.1's log formatting.

- ``app_log``: errors in user code (callbacks, coroutines) caught by the framework.
- ``gen_log``: the framework's own messages (connections, protocols, timeouts).
- ``access_log``: one line per request served, for servers built on tinytornado.

`LogFormatter` writes Tornado's lines (``[E 240101 12:00:00 module:42] message``, in color
on a terminal that has colors) and never fails over a message's encoding.
`enable_pretty_logging` sets up the root logger with it, from Tornado's logging settings:
by default those of `logging_options`, a `LoggingOptions` object, which is also where
`tinytornado.options.options` keeps its logging options (``--logging=debug``...).

Every tinytornado module imports this one: it imports nothing of tinytornado's but
_compat, and the modules only logging setup needs are imported when it is done. So it
cannot read ``tinytornado.options.options`` as Tornado's log module does; the options
module, which imports this one, shares `logging_options` instead.
"""
from __future__ import absolute_import, division, print_function

import functools
import logging
import string
import sys

from tinytornado._compat import binary_type

__all__ = [
    'app_log', 'gen_log', 'access_log', 'LogFormatter', 'enable_pretty_logging',
    'define_logging_options', 'LoggingOptions', 'logging_options',
]

app_log = logging.getLogger('tornado.application')
gen_log = logging.getLogger('tornado.general')
access_log = logging.getLogger('tornado.access')


# --- The formatter -----------------------------------------------------------------------------

def _stderr_supports_color():
    """True if stderr is a terminal whose terminfo entry has colors."""
    try:
        if not sys.stderr.isatty():
            return False
        import curses  # here: only a formatter wanting colors needs it
        curses.setupterm(fd=sys.stderr.fileno())
        return curses.tigetnum('colors') > 0
    except Exception:
        # No curses, no terminfo entry, a stderr without a descriptor...: plain text is
        # always better than failing to set up logging.
        return False


def _terminal_colors(colors):
    """({level: the terminal's code to start its color}, the code to go back to normal)."""
    import curses
    set_foreground = curses.tigetstr('setaf') or curses.tigetstr('setf') or b''
    starts = dict((level, curses.tparm(set_foreground, color).decode('ascii'))
                  for level, color in colors.items())
    return starts, (curses.tigetstr('sgr0') or b'').decode('ascii')


def _safe_text(value):
    """`value` as text if it is UTF-8 bytes; the repr of other bytes; text as it is."""
    if isinstance(value, binary_type):
        try:
            return value.decode('utf-8')
        except UnicodeDecodeError:
            return repr(value)
    return value


def _format_percent(fmt, values):
    return fmt % values


def _format_braces(fmt, values):
    return fmt.format(**values)


def _format_dollars(fmt, values):
    return string.Template(fmt).substitute(values)


_STYLES = {'%': _format_percent, '{': _format_braces, '$': _format_dollars}


class LogFormatter(logging.Formatter):
    """Tornado's log format: a colored prefix, the message, indented traceback lines.

    Bytes in a message or a traceback become text whatever they hold (undecodable ones
    are shown as their repr), so a log line never fails over its encoding.

    Args:
        fmt: the line's format; besides the LogRecord attributes it may use ``color``
            and ``end_color``, which surround the colored part. None (what
            `logging.config.dictConfig` passes when its config has no 'format') is the
            default.
        datefmt: strftime format of ``asctime``.
        style: how `fmt` is written: '%' (the default), '{' or '$', as in `logging`.
            (Tornado 5.1 takes the argument and ignores it.)
        color: use colors if stderr is a terminal that has them.
        colors: logging level -> terminal color number (curses' ``setaf`` numbering).
    """

    DEFAULT_FORMAT = ('%(color)s[%(levelname)1.1s %(asctime)s %(module)s:%(lineno)d]'
                      '%(end_color)s %(message)s')
    DEFAULT_DATE_FORMAT = '%y%m%d %H:%M:%S'
    DEFAULT_COLORS = {
        logging.DEBUG: 4,  # blue
        logging.INFO: 2,  # green
        logging.WARNING: 3,  # yellow
        logging.ERROR: 1,  # red
    }

    def __init__(self, fmt=DEFAULT_FORMAT, datefmt=DEFAULT_DATE_FORMAT, style='%',
                 color=True, colors=DEFAULT_COLORS):
        if style not in _STYLES:
            raise ValueError('style must be one of %s, not %r' % (', '.join(_STYLES), style))
        logging.Formatter.__init__(self, datefmt=datefmt)
        self._fmt = self.DEFAULT_FORMAT if fmt is None else fmt
        self._render = _STYLES[style]
        # level -> the code that starts its color, and the code that ends any; Tornado's
        # attribute names, which its tests set to fake a terminal.
        self._colors, self._normal = {}, ''
        if color and _stderr_supports_color():
            self._colors, self._normal = _terminal_colors(colors)

    def format(self, record):
        try:
            record.message = _safe_text(record.getMessage())
        except Exception as e:
            # Arguments that do not fit the message: log what there is rather than nothing.
            record.message = 'Bad message (%r): %r' % (e, record.__dict__)
        record.asctime = self.formatTime(record, self.datefmt)
        if record.levelno in self._colors:
            record.color, record.end_color = self._colors[record.levelno], self._normal
        else:
            record.color = record.end_color = ''
        formatted = self._render(self._fmt, record.__dict__)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            # Line by line, so that one undecodable line is shown as its repr alone and
            # the others keep their line breaks.
            lines = [formatted.rstrip()]
            lines.extend(_safe_text(line) for line in record.exc_text.split('\n'))
            formatted = '\n'.join(lines)
        return formatted.replace('\n', '\n    ')


# --- Setting up logging ------------------------------------------------------------------------

def _parse_bool(text):
    return text.lower() not in ('false', 'f', '0', 'no', 'off', '')


# The settings of enable_pretty_logging: Tornado's names, defaults, types and metavars,
# and what ``--help`` says of them when they are command-line options.
_OPTIONS = (
    ('logging', 'info', str, 'debug|info|warning|error|none',
     "the level of the root logger; 'none' leaves logging as it was set up"),
    ('log_to_stderr', None, bool, None,
     'log to stderr (in color on a terminal); by default only if no log file is given '
     'and nothing else is set up to log'),
    ('log_file_prefix', None, str, 'PATH',
     'the path of a log file to write as well; each process needs its own (put the '
     'port in it, say)'),
    ('log_file_max_size', 100 * 1000 * 1000, int, None,
     'how many bytes the log file may hold before it is rotated (--log-rotate-mode=size)'),
    ('log_file_num_backups', 10, int, None, 'how many rotated log files to keep'),
    ('log_rotate_when', 'midnight', str, None,
     "the unit of --log-rotate-interval: 'S', 'M', 'H', 'D', 'W0'-'W6' or 'midnight'"),
    ('log_rotate_interval', 1, int, None,
     'rotate the log file every this many units (--log-rotate-mode=time)'),
    ('log_rotate_mode', 'size', str, None, "rotate the log file by 'size' or by 'time'"),
)
_PARSERS = dict((name, _parse_bool if option_type is bool else option_type)
                for name, _, option_type, _, _ in _OPTIONS)


class LoggingOptions(object):
    """The settings `enable_pretty_logging` reads, as attributes with Tornado's defaults;
    keyword arguments or assignments change them.

    - ``logging``: the level (debug, info, warning, error, critical), or 'none' to
      leave logging as it is ('info').
    - ``log_to_stderr``: log to stderr, in color on a terminal; None: only if the
      logger has no other handler (None).
    - ``log_file_prefix``: the path of a log file to write to as well (None).
    - ``log_rotate_mode``: rotate that file by 'size' or by 'time' ('size').
    - ``log_file_max_size``: by size, past this many bytes (100 MB).
    - ``log_rotate_when``, ``log_rotate_interval``: by time, every interval of these
      units: S, M, H, D, W0-W6 or midnight, as TimedRotatingFileHandler takes them
      ('midnight', 1).
    - ``log_file_num_backups``: how many rotated files to keep (10).

    Raises:
        TypeError: a keyword argument that is not one of these.
    """

    def __init__(self, **values):
        unknown = sorted(set(values) - set(_PARSERS))
        if unknown:
            raise TypeError('unknown logging option(s): %s' % ', '.join(unknown))
        for name, default, _, _, _ in _OPTIONS:
            setattr(self, name, values.get(name, default))

    def set_from_text(self, name, text):
        """Set option `name` from command-line text: ``--name=text``, or a bare ``--name``
        (`text` None), which only the yes-or-no log_to_stderr may be.

        Raises:
            KeyError: `name` is not a logging option.
            ValueError: `text` is no value of the option.
        """
        parse = _PARSERS.get(name)
        if parse is None:
            raise KeyError('unknown logging option %r' % (name,))
        if text is None and parse is not _parse_bool:
            raise ValueError('option %s needs a value: --%s=...' % (name, name))
        setattr(self, name, True if text is None else parse(text))

    def __repr__(self):
        return 'LoggingOptions(%s)' % ', '.join(
            '%s=%r' % (name, getattr(self, name)) for name, _, _, _, _ in _OPTIONS)


# What enable_pretty_logging() reads when given no options: Tornado reads
# tornado.options.options, whose logging options keep their values here.
logging_options = LoggingOptions()


def define_logging_options(options=None):
    """Give `options` Tornado's logging settings, with their defaults, and return it.

    An option parser (a `tinytornado.options.OptionParser`: anything with ``define`` and
    ``add_parse_callback``) gets them as options, and ``enable_pretty_logging(options)``
    as a parse callback, as Tornado 5.1 does; any other object gets each setting it does
    not have yet as a plain attribute. None means `logging_options`, which has them
    already, and where ``tinytornado.options.options`` keeps them.

    Raises:
        tinytornado.options.Error: the parser has an option of one of these names.
    """
    if options is None:
        return logging_options
    if hasattr(options, 'define'):
        _define_on_parser(options)
    else:
        _fill_in_defaults(options)
    return options


def _define_on_parser(parser):
    for name, default, option_type, metavar, help_text in _OPTIONS:
        parser.define(name, default=default, type=option_type, metavar=metavar,
                      help=help_text)
    parser.add_parse_callback(functools.partial(enable_pretty_logging, parser))


def _fill_in_defaults(settings):
    for name, default, _, _, _ in _OPTIONS:
        if not hasattr(settings, name):
            setattr(settings, name, default)


def enable_pretty_logging(options=None, logger=None):
    """Set up `logger` (default: the root logger) as `options` say, with `LogFormatter`.

    With Tornado's defaults (`logging_options` when `options` is None): the level INFO,
    and a stderr handler unless the logger has one already. ``options.logging`` 'none'
    (or None) leaves everything as it is; ``log_file_prefix`` adds a rotating log file
    (by size or by time, as ``log_rotate_mode`` says), written in UTF-8.

    Raises:
        ValueError: an unknown level or rotation mode.
    """
    if options is None:
        options = logging_options
    if options.logging is None or options.logging.lower() == 'none':
        return
    if logger is None:
        logger = logging.getLogger()
    logger.setLevel(_level(options.logging))
    if options.log_file_prefix:
        handler = _file_handler(options)
        handler.setFormatter(LogFormatter(color=False))
        logger.addHandler(handler)
    if options.log_to_stderr or (options.log_to_stderr is None and not logger.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(LogFormatter())
        logger.addHandler(handler)


def _level(name):
    level = getattr(logging, name.upper(), None)
    if not isinstance(level, int):
        raise ValueError('unknown logging level %r: use debug, info, warning, error, '
                         'critical or none' % (name,))
    return level


def _file_handler(options):
    from logging import handlers  # here: every module imports this one, few log to files
    mode = options.log_rotate_mode
    if mode == 'size':
        return handlers.RotatingFileHandler(
            options.log_file_prefix, maxBytes=options.log_file_max_size,
            backupCount=options.log_file_num_backups, encoding='utf-8')
    if mode == 'time':
        return handlers.TimedRotatingFileHandler(
            options.log_file_prefix, when=options.log_rotate_when,
            interval=options.log_rotate_interval,
            backupCount=options.log_file_num_backups, encoding='utf-8')
    raise ValueError('log_rotate_mode must be "size" or "time", not %r' % (mode,))
