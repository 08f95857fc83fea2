"""`EPollIOLoop`: tinytornado's own loop on epoll, by Tornado 5.1's name for it, for code
that configures it by name (``IOLoop.configure('tornado.platform.epoll.EPollIOLoop')``).

On Linux that is what `PollIOLoop` is already; elsewhere there is no epoll, and making
one fails.
"""
from __future__ import absolute_import, division, print_function

import select

from tinytornado.ioloop import PollIOLoop

__all__ = ['EPollIOLoop']


class EPollIOLoop(PollIOLoop):
    """A `PollIOLoop` that insists on epoll (Linux)."""

    def initialize(self, *args, **kwargs):
        if not hasattr(select, 'epoll'):
            raise RuntimeError('EPollIOLoop needs epoll, which this system lacks (Linux has '
                               'it); use IOLoop() for the best poller here')
        super(EPollIOLoop, self).initialize(*args, **kwargs)
