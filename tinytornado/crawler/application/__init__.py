"""tinycrawl, the crawler's application: the command line and what only it uses.

``cli`` is the command line (``tinycrawl``, ``python -m tinytornado.crawler``); ``usage``
checks its arguments, ``workers`` runs ``--workers N`` processes, ``collect`` is
``--collect`` and ``--status``, ``progress`` the live progress line, ``linkcheck`` the
broken links, ``report`` the HTML report. The crawler library below it (`Crawler` and its
parts) knows nothing of them.
"""
from __future__ import absolute_import, division, print_function
