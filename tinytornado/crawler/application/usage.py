"""The command line's checks before a crawl: each mistake is one line that names its option.

`check_arguments` runs on argparse's result before the demo server starts and before any
request, so that a mistake costs nothing and shows no traceback. File options are only
looked at (is it a directory? may a file be written there?): nothing is created or
truncated, so a refused crawl leaves every file as it was. The Python API (`Crawler`)
raises ValueError with its own option names; `option_names` puts the command line's
names in such a message.
"""
from __future__ import absolute_import, division, print_function

import os
import re

from ..crawloptions import FILE_OPTIONS, NUMBER_LIMITS, limit_mistake
from ..urls import normalize_url

__all__ = ['UsageError', 'check_arguments', 'check_combinations', 'option_name',
           'option_names', 'FILE_OPTIONS', 'NUMBER_LIMITS', 'STDOUT']

STDOUT = '-'  # --output's name for standard output


class UsageError(ValueError):
    """A mistake on the command line; the message names the option."""


_HOST_FIRST_RE = re.compile(r'[\w-]+(\.[\w-]+)*(:\d+)?(/|$)')
_IDENTIFIER_RE = re.compile(r'\b[a-z]+(?:_[a-z]+)+\b')


def option_name(dest):
    """The command line's name of an argparse `dest`: 'max_tasks' -> '--max-tasks'."""
    return '--' + dest.replace('_', '-')


def check_arguments(args):
    """Check argparse's `args` for what the crawl would fail on.

    Raises:
        UsageError: the first mistake found, in one line.
    """
    for dest, relation, bound in NUMBER_LIMITS:
        _check_number(dest, getattr(args, dest, None), relation, bound)
    for dest in ('include', 'exclude'):
        for pattern in getattr(args, dest) or ():
            _check_regex(dest, pattern)
    for root in args.roots:
        _check_root(root)
    _check_header('user_agent', args.user_agent)
    for dest, access in FILE_OPTIONS:
        path = getattr(args, dest, None)
        if path is not None and not (dest == 'output' and path == STDOUT):
            _check_file(dest, path, access)
    _check_one_file_each(args)


def check_combinations(args):
    """Check the options given (before a resume takes its journal's) for two that
    contradict each other, or one that needs another.

    Raises:
        UsageError: the first mistake found, in one line.
    """
    if args.quiet and args.verbose:
        raise UsageError('-q/--quiet and -v/--verbose contradict each other: give one')
    if args.demo and args.roots:
        raise UsageError('--demo crawls the demo site: give it no URL, or no --demo')
    if args.crawl_id and not args.redis:
        raise UsageError('--crawl-id names a crawl in Redis: it needs --redis URL')
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


def _check_number(dest, value, relation, bound):
    mistake = limit_mistake(option_name(dest), value, relation, bound)
    if mistake is not None:
        raise UsageError(mistake)


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
