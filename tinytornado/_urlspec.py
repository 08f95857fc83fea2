"""Tornado 5.1's `URLSpec` (``web.url``): a path regex, the handler it routes to, the
handler's initialize() arguments, and a name to build URLs back from (`reverse`)."""
from __future__ import absolute_import, division, print_function

import re

from tinytornado._compat import binary_type, string_types, text_type
from tinytornado.escape import url_escape, url_unescape, utf8
from tinytornado.util import import_object, re_unescape

__all__ = ['URLSpec', 'url']


class URLSpec(object):
    """Route paths matching `pattern` (anchored at both ends) to `handler`.

    Args:
        pattern: a regex; its groups are the handler's path arguments (named groups:
            keyword arguments).
        handler: a RequestHandler subclass, or its dotted name (imported when made).
        kwargs: the handler's initialize() keyword arguments.
        name: the name `Application.reverse_url` knows it by.
    """

    def __init__(self, pattern, handler, kwargs=None, name=None):
        if isinstance(pattern, string_types):
            if not pattern.endswith('$'):
                pattern += '$'
            self.regex = re.compile(pattern)
        else:
            self.regex = pattern
        if isinstance(handler, string_types):
            handler = import_object(handler)
        self.handler_class = handler
        self.target = handler
        self.kwargs = kwargs or {}
        self.target_kwargs = self.kwargs
        self.name = name
        self._path, self._group_count = self._find_groups()

    def __repr__(self):
        return '%s(%r, %s, kwargs=%r, name=%r)' % (
            type(self).__name__, self.regex.pattern, self.handler_class, self.kwargs,
            self.name)

    def match(self, path):
        """``(args, kwargs)`` of a path this spec routes (percent-decoded bytes, None for
        a group that did not take part), or None."""
        match = self.regex.match(path)
        if match is None:
            return None
        if self.regex.groupindex:
            return [], dict((str(name), _unquote_or_none(value))
                            for name, value in match.groupdict().items())
        return [_unquote_or_none(value) for value in match.groups()], {}

    def _find_groups(self):
        """The pattern as a ``%s`` template of its groups, or (None, None) when it cannot
        be reversed (nested or non-capturing groups)."""
        pattern = self.regex.pattern
        if pattern.startswith('^'):
            pattern = pattern[1:]
        if pattern.endswith('$'):
            pattern = pattern[:-1]
        if self.regex.groups != pattern.count('('):
            return None, None
        pieces = []
        for fragment in pattern.split('('):
            if ')' in fragment:
                fragment = fragment[fragment.index(')') + 1:]
                pieces.append('%s')
            try:
                pieces.append(re_unescape(fragment).replace('%', '%%'))
            except ValueError:  # a regex escape with no literal meaning (\d...)
                return None, None
        return ''.join(pieces), self.regex.groups

    def reverse(self, *args):
        """The path for `args` (one per group; percent-escaped here)."""
        if self._path is None:
            raise ValueError('Cannot reverse url regex ' + self.regex.pattern)
        if len(args) != self._group_count:
            raise ValueError('%s takes %d arguments to reverse, not %d'
                             % (self.regex.pattern, self._group_count, len(args)))
        escaped = []
        for arg in args:
            if not isinstance(arg, (text_type, binary_type)):
                arg = str(arg)
            escaped.append(url_escape(utf8(arg), plus=False))
        return self._path % tuple(escaped)


url = URLSpec


def _unquote_or_none(value):
    # Path arguments stay bytes here: the handler decodes them (decode_argument).
    return None if value is None else url_unescape(value, encoding=None, plus=False)
