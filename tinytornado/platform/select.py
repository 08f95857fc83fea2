"""`SelectIOLoop`: tinytornado's own loop waiting with select(), as Tornado 5.1's
`tornado.platform.select` offers it, for code that configures it by name.

select() runs everywhere but costs time in proportion to the descriptors watched, and
cannot watch one numbered FD_SETSIZE (1024) or more: the default loop (epoll on Linux)
is the one to use otherwise.
"""
from __future__ import absolute_import, division, print_function

from tinytornado._poller import SelectPoller
from tinytornado.ioloop import PollIOLoop

__all__ = ['SelectIOLoop']

# Tornado 5.1's name for its select() poller, which legacy tests subclass.
_Select = SelectPoller


class SelectIOLoop(PollIOLoop):
    """A `PollIOLoop` on a `SelectPoller`; made and configured like any IOLoop."""

    def initialize(self, *args, **kwargs):
        super(SelectIOLoop, self).initialize(*args, impl=SelectPoller(), **kwargs)
