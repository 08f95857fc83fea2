"""The tinytornado crawler: the 500 Lines crawler grown into a tool people run for real.

Pure building blocks (no I/O, no event loop) live in their own modules: ``urls``
(normalisation, joining, hashing), ``links`` (HTML link extraction and charset detection),
``scope`` (which URLs a crawl may follow), ``robots`` (robots.txt rules) and ``sitemaps``
(reading sitemaps).

The crawl itself: ``engine`` (`Crawler`) is a coordinator over parts, each behind its own
interface: ``crawloptions`` (every option declared once, with the options it requires or
excludes, and what argparse, `Crawler`, the journal, usage's checks and
docs/crawler-options.md are made from), ``configuration`` (a crawl's configuration
resolved once: checked, its journal or Redis client opened, a kept crawl's options taken
back), ``frontier`` (per-host
queues served in turn) with ``seen`` and ``journal`` (resuming), ``hostpolicy`` (delay,
per-host cap, pauses, Retry-After, robots.txt and AutoThrottle, from ``politeness``),
``fetch`` (one request), ``extractors`` (what a response leads to: redirect targets,
sitemap entries, HTML links), ``outputs`` (the ordered list told of each finished URL:
JSON lines through ``output``, the totals of ``stats``, observers, the WARC archive);
``redisstore`` is the work store shared by many processes.

Two sub-packages sit apart from that library: ``application`` is tinycrawl, the command
line and what only it uses (``__main__`` runs it), and ``demo`` is the demo site (a seeded
generated website and its server, for the demo mode, the tests and the benchmarks).
"""
from __future__ import absolute_import, division, print_function

from .engine import Crawler
from .stats import CrawlStatistics, FetchStatistic

__all__ = ['Crawler', 'FetchStatistic', 'CrawlStatistics']
