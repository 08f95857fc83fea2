"""Bridges between tinytornado and other event loops (see `tinytornado.platform.asyncio`).

Also Tornado 5.1's names for tinytornado's own loop on a chosen poller, which legacy code
configures by name: `tinytornado.platform.select` and `tinytornado.platform.epoll`.
"""
from __future__ import absolute_import, division, print_function

__all__ = []
