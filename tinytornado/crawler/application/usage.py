"""The command line's checks before a crawl: each mistake is one line that names its option.

`check_arguments` runs on argparse's result before the demo server starts and before any
request, so that a mistake costs nothing and shows no traceback; `check_files` again once
a resume has taken its files back. File options are only looked at (is it a directory?
may a file be written there?): nothing is created or truncated, so a refused crawl leaves
every file as it was. The rules of the option table (ranges, requires, excludes:
crawloptions.py) are checked where the Python API checks them, and said with the
command line's names by `CommandLineNaming`; `option_names` puts them in a message of
another ValueError.
"""
from __future__ import absolute_import, division, print_function

import os
import re

from ..crawloptions import FILE_OPTIONS, OPTIONS, BOOL, REGEXES, Naming
from ..output import STDOUT
from ..urls import normalize_url

__all__ = ['UsageError', 'CommandLineNaming', 'COMMAND_LINE', 'check_arguments',
           'check_files', 'check_combinations', 'option_name', 'option_names',
           'FILE_OPTIONS', 'STDOUT']



class UsageError(ValueError):
    """A mistake on the command line; the message names the option."""


_HOST_FIRST_RE = re.compile(r'[\w-]+(\.[\w-]+)*(:\d+)?(/|$)')
_IDENTIFIER_RE = re.compile(r'\b[a-z]+(?:_[a-z]+)+\b')


def option_name(dest):
    """The command line's name of an argparse `dest`: 'max_tasks' -> '--max-tasks'."""
    return '--' + dest.replace('_', '-')


_BY_NAME = dict((option.name, option) for option in OPTIONS)


class CommandLineNaming(Naming):
    """The command line's names of options in a message: their flags."""

    def option(self, name):
        option = _BY_NAME.get(name)
        if option is None or option.cli is None:
            return option_name(name)
        if isinstance(option.cli, list):
            return '/'.join(flag for flag, _, _ in option.cli)
        return '/'.join(option.cli) if isinstance(option.cli, tuple) else option.cli

    def needed(self, name):
        metavar = _BY_NAME[name].metavar
        return self.option(name) + (' ' + metavar if metavar else '')

    def setting(self, name, value):
        """'--max-depth 5', '--lenient', 'crawl without --frames', 'URL http://a/'."""
        if name == 'roots':
            return 'URL ' + ' '.join(value)
        option = _BY_NAME[name]
        if isinstance(option.cli, list):  # a bool's flags, each setting its value
            for flag, flag_value, _ in option.cli:
                if flag_value == value:
                    return flag
            return 'crawl without ' + '/'.join(flag for flag, _, _ in option.cli)
        flag = option.cli[-1] if isinstance(option.cli, tuple) else option.cli
        if option.type == BOOL:
            return flag if value else 'crawl without ' + flag
        if value is None or value == []:
            return 'crawl without ' + flag
        values = value if option.type == REGEXES else [value]
        return ' '.join('%s %s' % (flag, item) for item in values)

    def contradiction(self, name, given, stored, whose):
        return '%s contradicts %s %s' % (self.setting(name, given), whose,
                                         self.setting(name, stored))

    def source(self, source, label):
        return self.option(source)


COMMAND_LINE = CommandLineNaming()


def check_arguments(args):
    """Check argparse's `args` for what the crawl would fail on that the option table's
    rules do not say (regular expressions, roots, headers, files).

    Raises:
        UsageError: the first mistake found, in one line.
    """
    for dest in ('include', 'exclude'):
        for pattern in getattr(args, dest) or ():
            _check_regex(dest, pattern)
    for root in args.roots:
        _check_root(root)
    _check_header('user_agent', args.user_agent)
    check_files(args)


def check_files(args):
    """Check the file options of `args` (argparse's, or an OptionValues).

    Raises:
        UsageError: the first mistake found, in one line.
    """
    for dest, access in FILE_OPTIONS:
        path = getattr(args, dest, None)
        if path is not None and not (dest == 'output' and path == STDOUT):
            _check_file(dest, path, access)
    _check_one_file_each(args)


def check_combinations(args):
    """Check the options given (before a resume takes its journal's) for those that go
    not with the URLs, or with a value of another; the table's requires and excludes
    are crawloptions.option_mistake's.

    Raises:
        UsageError: the first mistake found, in one line.
    """
    if args.demo and args.roots:
        raise UsageError('--demo crawls the demo site: give it no URL, or no --demo')
    for flag, name in (('--collect', 'collect'), ('--status', 'status')):
        if getattr(args, name) and args.roots:
            raise UsageError('%s takes no URL: it reads the crawl %s' % (flag, args.crawl_id))
    if args.output == STDOUT and args.verbose:
        raise UsageError('--output - and -v/--verbose both write to standard output: '
                         'give one')


def _check_header(dest, value):
    # A line break would end the header, or split the request, on the wire: every try
    # would fail, so say so before the first.
    if value is not None and re.search(r'[\x00-\x08\x0a-\x1f\x7f]', value):
        raise UsageError('%s %r holds a control character (a line break?): a header is '
                         'one line' % (option_name(dest), value))


def _check_one_file_each(args):
    """Two file options naming one file would overwrite each other's lines."""
    named = {}
    for dest, access in FILE_OPTIONS:
        path = getattr(args, dest, None)
        if path is None or path == STDOUT or not access & os.W_OK:
            continue
        real = os.path.realpath(path)
        if os.path.exists(real) and not os.path.isfile(real):
            continue  # /dev/null, a FIFO: nothing to overwrite
        if real in named:
            raise UsageError('%s %s and %s %s name one file: give each its own' % (
                option_name(named[real][0]), named[real][1], option_name(dest), path))
        named[real] = (dest, path)


def _check_regex(dest, pattern):
    try:
        re.compile(pattern)
    except re.error as e:
        raise UsageError('%s %r is not a regular expression: %s' % (option_name(dest), pattern, e))


def _check_root(root):
    try:
        normalize_url(root)
    except ValueError as e:
        hint = ''
        if _HOST_FIRST_RE.match(root):  # a host name, as typed in a browser
            hint = ' (did you mean http://%s ?)' % root
        raise UsageError('the root URL %r cannot be crawled: %s%s' % (root, e, hint))


def _check_file(dest, path, access):
    """The file at `path` can be opened as `access` says, or made in its directory (a file
    only read must exist)."""
    if os.path.isdir(path):
        raise UsageError('%s %s: is a directory' % (option_name(dest), path))
    if not access & os.W_OK and not os.path.isfile(path):
        raise UsageError('%s %s: no such file' % (option_name(dest), path))
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise UsageError('%s %s: no such directory: %s' % (option_name(dest), path,
                                                           directory))
    if os.path.exists(path):
        allowed = os.access(path, access)
    else:
        allowed = os.access(directory, os.W_OK | os.X_OK)
    if not allowed:
        raise UsageError('%s %s: permission denied' % (option_name(dest), path))


def option_names(message, dests):
    """`message` with each Python option name among `dests` (those with a '_') written
    as the command line's option: 'max_tasks must be...' -> '--max-tasks must be...'."""
    def replace(match):
        word = match.group()
        return option_name(word) if word in dests else word
    return _IDENTIFIER_RE.sub(replace, message)
