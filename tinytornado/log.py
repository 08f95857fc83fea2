"""The loggers tinytornado writes to, named as Tornado names them so handlers carry over.

- ``app_log``: errors in user code (callbacks, coroutines) caught by the framework.
- ``gen_log``: the framework's own messages (connections, protocols, timeouts).
- ``access_log``: one line per request served, for servers built on tinytornado.
"""
from __future__ import absolute_import, division, print_function

import logging

__all__ = ['app_log', 'gen_log', 'access_log']

app_log = logging.getLogger('tornado.application')
gen_log = logging.getLogger('tornado.general')
access_log = logging.getLogger('tornado.access')
