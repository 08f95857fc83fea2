"""Options that any module defines for itself and a program sets from its command line or
a config file, as in Tornado 5.1's tornado.options.

A module defines what it needs where it needs it, at import::

    from tinytornado.options import define, options

    define('port', default=8888, type=int, help='the port to listen on')

and reads ``options.port`` (or ``options['port']``) once the program's ``main`` has
called `parse_command_line` (``--port=8000``) or `parse_config_file` (a Python file that
assigns ``port = 8000``). `options` is the global `OptionParser` behind the module's
functions; a program can make others, e.g. one per subcommand. In option names a dash
and an underscore are the same character: ``--log-file-prefix`` sets ``log_file_prefix``.

Values have a type, and only values of that type can be assigned: text from a command
line or a config file is parsed by it (int, float, str, bool, datetime, timedelta, or any
class that takes the text), and a ``multiple`` option holds a list of them
(``--ports=80,8000:8002`` is ``[80, 8000, 8001, 8002]``).

When a final parse is done, the parse callbacks run: on the global `options` the first of
them is `tinytornado.log.enable_pretty_logging`, which sets up logging from the logging
options `tinytornado.log.define_logging_options` defines (``--logging=debug``,
``--log_file_prefix=...``; ``--logging=none`` leaves logging alone), as in Tornado 5.1.
"""
from __future__ import absolute_import, division, print_function

import datetime
import numbers
import os
import re
import sys
import textwrap

from tinytornado._compat import binary_type, string_types
from tinytornado.log import define_logging_options, logging_options

__all__ = [
    'Error', 'OptionParser', 'options', 'define', 'parse_command_line', 'parse_config_file',
    'print_help', 'add_parse_callback',
]


class Error(Exception):
    """An option defined twice, given an unknown name, or a value of the wrong type."""


def _normalized(name):
    """The name options are known by: dashes and underscores are the same character."""
    return name.replace('_', '-')


class OptionParser(object):
    """A set of options, read and assigned as attributes or items.

    Every parser has a ``help`` option: ``--help`` prints the options and exits.
    """

    def __init__(self):
        # Through __dict__: assignments to attributes are assignments to options.
        # normalized name -> _Option; both names are Tornado's, which legacy code reads.
        self.__dict__['_options'] = {}
        self.__dict__['_parse_callbacks'] = []
        self.define('help', type=bool, help='print this help and exit',
                    callback=self._help_callback)

    def _option(self, name):
        option = self._options.get(_normalized(name))
        if option is None:
            raise AttributeError('Unrecognized option %r' % _normalized(name))
        return option

    def __getattr__(self, name):
        return self._option(name).value()

    def __setattr__(self, name, value):
        self._option(name).set(value)

    __getitem__ = __getattr__
    __setitem__ = __setattr__

    def __contains__(self, name):
        return _normalized(name) in self._options

    def __iter__(self):
        """The options' names, as they were defined."""
        return iter([option.name for option in self._options.values()])

    def items(self):
        """[(name, value)] of every option."""
        return [(option.name, option.value()) for option in self._options.values()]

    def groups(self):
        """The set of the options' groups (a group not given is the defining file)."""
        return set(option.group_name for option in self._options.values())

    def group_dict(self, group):
        """{name: value} of the options in `group` (of all of them if `group` is empty),
        e.g. to pass as keyword arguments."""
        return dict((option.name, option.value()) for option in self._options.values()
                    if not group or option.group_name == group)

    def as_dict(self):
        """{name: value} of every option."""
        return dict(self.items())

    def define(self, name, default=None, type=None, help=None, metavar=None,
               multiple=False, group=None, callback=None):
        """Define option `name`.

        Args:
            default: its value until one is set (a ``multiple`` option's default is []).
            type: the type of its values: str, int, float, bool, datetime.datetime,
                datetime.timedelta, or a class whose constructor parses text. Without
                it: the type of `default`, str if there is no default or `multiple`.
            help, metavar: what ``--help`` says: ``--name=METAVAR  help (default ...)``.
            multiple: the value is a list of `type`; text gives it comma-separated,
                and integers ``low:high`` ranges too (both ends included).
            group: the heading of its ``--help`` section; by default the file that
                defines the option.
            callback: called with the new value whenever it is set or parsed.

        Raises:
            Error: an option of that name (dashes or underscores alike) exists.
        """
        key = _normalized(name)
        if key in self._options:
            raise Error('Option %r already defined in %s' %
                        (key, self._options[key].file_name))
        if type is None:
            type = str if multiple or default is None else default.__class__
        file_name = _defining_file()
        self._options[key] = _Option(
            name, default=default, type=type, help=help, metavar=metavar,
            multiple=multiple, file_name=file_name, group_name=group or file_name,
            callback=callback)

    def parse_command_line(self, args=None, final=True):
        """Set options from ``--name=value`` arguments (``--name`` for a bool).

        Args:
            args: the arguments (default `sys.argv`); ``args[0]``, the program, is
                skipped. The options end at the first argument that is not one
                (without a leading dash), or after ``--``.
            final: run the parse callbacks (logging setup among them) when done;
                pass False to every parse but the last when combining sources.

        Returns:
            The arguments after the options.

        Raises:
            Error: an unknown option (the help is printed first), or an option other
                than a bool given without a value.
        """
        if args is None:
            args = sys.argv
        remaining = []
        for index in range(1, len(args)):
            if args[index] == '--':
                remaining = args[index + 1:]
                break
            if not args[index].startswith('-'):
                remaining = args[index:]
                break
            self._parse_argument(args[index])
        if final:
            self.run_parse_callbacks()
        return remaining

    def _parse_argument(self, argument):
        name, equals, text = argument.lstrip('-').partition('=')
        key = _normalized(name)
        option = self._options.get(key)
        if option is None:
            self.print_help()
            raise Error('Unrecognized command line option: %r' % key)
        if not equals:
            if option.type is not bool:
                raise Error('Option %r requires a value' % key)
            text = 'true'
        option.parse(text)

    def parse_config_file(self, path, final=True):
        """Set options from the Python file at `path` (UTF-8): each global variable it
        leaves that has an option's name (with underscores) sets that option.

        The file is executed, so it must be trusted. It sees its own absolute path as
        ``__file__``. A value is either of the option's type (a list of them for a
        ``multiple`` option) or text, parsed as on the command line.

        Args:
            final: as for `parse_command_line`.

        Raises:
            Error: a value of the wrong type.
        """
        config = {'__file__': os.path.abspath(path)}
        with open(path, 'rb') as f:
            source = f.read()
        # Compiled apart from this module, whose __future__ imports are not the file's
        # (on 2.7 a config file's 1/2 is 0 in Tornado 5.1 too).
        exec(compile(source, config['__file__'], 'exec', dont_inherit=True), config, config)
        for name, value in config.items():
            option = self._options.get(_normalized(name))
            if option is not None:
                option.set_from_config(value)
        if final:
            self.run_parse_callbacks()

    def print_help(self, file=None):
        """Print the usage and every option, by group, to `file` (default stderr)."""
        if file is None:
            file = sys.stderr
        print('Usage: %s [OPTIONS]' % sys.argv[0], file=file)
        print('\nOptions:\n', file=file)
        groups = {}
        for option in self._options.values():
            groups.setdefault(option.group_name, []).append(option)
        for group_name in sorted(groups):
            if group_name:
                print('\n%s options:\n' % os.path.normpath(group_name), file=file)
            for option in sorted(groups[group_name], key=lambda option: option.name):
                for line in _help_lines(option):
                    print(line, file=file)
        print(file=file)

    def _help_callback(self, value):
        if value:
            self.print_help()
            sys.exit(0)

    def add_parse_callback(self, callback):
        """Have `callback()` called at the end of every final parse."""
        self._parse_callbacks.append(callback)

    def run_parse_callbacks(self):
        """Call the parse callbacks, in the order they were added."""
        for callback in self._parse_callbacks:
            callback()

    def mockable(self):
        """This parser as `mock.patch.object` can patch: with
        ``mock.patch.object(options.mockable(), 'port', 8001)``, ``options.port`` is
        8001 inside the block and what it was after it."""
        return _Mockable(self)


def _defining_file():
    """The file of the code that called OptionParser.define, directly or through the
    module's define(); '' for the options a parser defines itself (``help``)."""
    this_file = _defining_file.__code__.co_filename
    frame = sys._getframe(2)  # this function <- OptionParser.define <- its caller
    if frame.f_code.co_filename == this_file and frame.f_code.co_name == 'define':
        frame = frame.f_back
    file_name = frame.f_code.co_filename
    return '' if file_name == this_file else file_name


def _help_lines(option):
    """An option's lines of help, laid out as Tornado's: the flag in 30 columns, then
    its description wrapped to 44 (beginning on the next line after a longer flag)."""
    flag = _normalized(option.name)
    if option.metavar:
        flag += '=' + option.metavar
    description = option.help or ''
    if option.default is not None and option.default != '':
        description += ' (default %s)' % (option.default,)
    lines = textwrap.wrap(description, 44)
    if len(flag) > 30 or not lines:
        lines.insert(0, '')
    yield '  --%-30s %s' % (flag, lines[0])
    for line in lines[1:]:
        yield '%-34s %s' % ('', line)


class _Mockable(object):
    """An `OptionParser` as `mock.patch.object` can patch.

    mock.patch, leaving, deletes the attribute it set when it did not find it in the
    object's __dict__ (as with an OptionParser's options): deleting one here sets the
    option back to the value the assignment replaced.
    """

    def __init__(self, parser):
        self.__dict__['_parser'] = parser
        self.__dict__['_originals'] = {}

    def __getattr__(self, name):
        return getattr(self._parser, name)

    def __setattr__(self, name, value):
        if name in self._originals:
            raise Error('option %r was patched already through this object: call '
                        'mockable() once per patch' % (name,))
        self._originals[name] = getattr(self._parser, name)
        setattr(self._parser, name, value)

    def __delattr__(self, name):
        setattr(self._parser, name, self._originals.pop(name))


class _Option(object):
    """One option: how it was defined, and its value (its default until one is set)."""

    def __init__(self, name, default=None, type=str, help=None, metavar=None,
                 multiple=False, file_name=None, group_name=None, callback=None):
        self.name = name
        self.default = [] if default is None and multiple else default
        self.type = type
        self.help = help
        self.metavar = metavar
        self.multiple = multiple
        self.file_name = file_name
        self.group_name = group_name
        self.callback = callback
        # Where the value lives: here, unless keep_value_in() moved it.
        self._holder, self._attribute = self, '_value'
        self._value = self.default

    def value(self):
        return getattr(self._holder, self._attribute)

    def keep_value_in(self, holder):
        """Keep the value from now on in `holder`'s attribute of the option's name, which
        others read and assign; what it holds is the value."""
        self._holder, self._attribute = holder, self.name

    def parse(self, text):
        """Set the value from text, as the option's type (comma-separated for
        ``multiple``, integers in ``low:high`` ranges too), and return it."""
        parse = _PARSERS.get(self.type, self.type)
        if not self.multiple:
            value = parse(text)
        elif _is_integer_type(self.type):
            value = [number for part in text.split(',') for number in _parse_range(parse, part)]
        else:
            value = [parse(part) for part in text.split(',')]
        self._store(value)
        return value

    def set(self, value):
        """Set the value as it is, which must be of the option's type (a list of them
        for ``multiple``) or None."""
        if self.multiple:
            if not isinstance(value, list) or not all(
                    item is None or isinstance(item, self.type) for item in value):
                raise Error('Option %r is required to be a list of %s' %
                            (self.name, self.type.__name__))
        elif value is not None and not isinstance(value, self.type):
            raise Error('Option %r is required to be a %s (%s given)' %
                        (self.name, self.type.__name__, type(value)))
        self._store(value)

    def set_from_config(self, value):
        """Set the value from a config file's: text is parsed, unless the option holds
        one str; anything else is set as it is."""
        if self.multiple and not isinstance(value, (list, str)):
            raise Error('Option %r is required to be a list of %s or a comma-separated '
                        'string' % (self.name, self.type.__name__))
        # Tornado 5.1 sets the text of a multiple str option as it is, and so fails on
        # the comma-separated text its documentation shows: here it is parsed.
        if isinstance(value, str) and (self.multiple or self.type is not str):
            self.parse(value)
        else:
            self.set(value)

    def _store(self, value):
        setattr(self._holder, self._attribute, value)
        if self.callback is not None:
            self.callback(value)


def _is_integer_type(option_type):
    # bool is an Integral too, but true:false is no range.
    return issubclass(option_type, numbers.Integral) and not issubclass(option_type, bool)


def _parse_range(parse, text):
    low, _, high = text.partition(':')
    first = parse(low)
    return range(first, (parse(high) if high else first) + 1)


def _parse_bool(text):
    return text.lower() not in ('false', '0', 'f')


def _parse_text(text):
    """Text as text: bytes (2.7's command line) decoded as UTF-8."""
    return text.decode('utf-8') if isinstance(text, binary_type) else text


# The formats of datetime options, tried in turn.
_DATETIME_FORMATS = (
    '%a %b %d %H:%M:%S %Y',
    '%Y-%m-%d %H:%M:%S',
    '%Y-%m-%d %H:%M',
    '%Y-%m-%dT%H:%M',
    '%Y%m%d %H:%M:%S',
    '%Y%m%d %H:%M',
    '%Y-%m-%d',
    '%Y%m%d',
    '%H:%M:%S',
    '%H:%M',
)


def _parse_datetime(text):
    for date_format in _DATETIME_FORMATS:
        try:
            return datetime.datetime.strptime(text, date_format)
        except ValueError:
            continue  # not this format: the next one may fit
    raise Error('Unrecognized date/time format: %r' % (text,))


# A timedelta option's text is a sum of terms, each a number and a unit ('1h 30m');
# a number alone is seconds.
_TIMEDELTA_TERM = re.compile(r'\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*(\w*)\s*')
_TIMEDELTA_UNITS = dict(
    [(unit, unit) for unit in ('weeks', 'days', 'hours', 'minutes', 'seconds',
                               'milliseconds', 'microseconds')] +
    [('w', 'weeks'), ('d', 'days'), ('h', 'hours'), ('m', 'minutes'), ('min', 'minutes'),
     ('', 'seconds'), ('s', 'seconds'), ('sec', 'seconds'), ('ms', 'milliseconds'),
     ('us', 'microseconds')])


def _parse_timedelta(text):
    total = datetime.timedelta()
    position = 0
    while position < len(text):
        term = _TIMEDELTA_TERM.match(text, position)
        if term is None:
            raise Error('Unrecognized time span: %r (e.g. 45s, 1.5h, 1d 12h)' % (text,))
        unit = _TIMEDELTA_UNITS.get(term.group(2))
        if unit is None:
            raise Error('Unrecognized unit %r in time span %r: use %s' % (
                term.group(2), text, ', '.join(sorted(u for u in _TIMEDELTA_UNITS if u))))
        total += datetime.timedelta(**{unit: float(term.group(1))})
        position = term.end()
    return total


# How text becomes a value of a type; a type not here is called with the text.
_PARSERS = {
    datetime.datetime: _parse_datetime,
    datetime.timedelta: _parse_timedelta,
    bool: _parse_bool,
    string_types[0]: _parse_text,  # basestring on 2.7, str on 3.x
}


options = OptionParser()
"""The global options: those `define` defines, and Tornado's logging options."""


def define(name, default=None, type=None, help=None, metavar=None, multiple=False,
           group=None, callback=None):
    """Define an option of the global `options` (see `OptionParser.define`)."""
    return options.define(name, default=default, type=type, help=help, metavar=metavar,
                          multiple=multiple, group=group, callback=callback)


def parse_command_line(args=None, final=True):
    """Set the global `options` from the command line (see
    `OptionParser.parse_command_line`); returns the arguments after the options."""
    return options.parse_command_line(args, final=final)


def parse_config_file(path, final=True):
    """Set the global `options` from a config file (see `OptionParser.parse_config_file`)."""
    return options.parse_config_file(path, final=final)


def print_help(file=None):
    """Print the global `options` to `file` (default stderr)."""
    return options.print_help(file)


def add_parse_callback(callback):
    """Have `callback()` called at the end of every final parse of the global `options`."""
    options.add_parse_callback(callback)


def _define_logging_options():
    """Tornado's logging options on the global `options`, with their values kept in
    `tinytornado.log.logging_options`.

    Tornado's log module reads tornado.options.options. Ours may import nothing above
    _compat (every layer imports it), so it cannot: it reads its own `logging_options`,
    and keeping the values there makes ``options.logging = 'debug'``,
    ``--logging=debug`` and ``log.logging_options.logging = 'debug'`` one and the same,
    whichever `enable_pretty_logging` or `tinytornado.testing.main` then reads.
    (Registering this parser with log as its default instead would leave two objects
    holding the settings, and what testing.main sets in one unread through the other.)
    """
    define_logging_options(options)
    for name in vars(logging_options):
        options._options[_normalized(name)].keep_value_in(logging_options)


_define_logging_options()
