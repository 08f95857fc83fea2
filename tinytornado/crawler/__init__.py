"""The tinytornado crawler: the 500 Lines crawler grown into a tool people run for real.

Pure building blocks (no I/O, no event loop) live in their own modules: ``urls``
(normalisation, joining, hashing), ``links`` (HTML link extraction and charset detection),
``scope`` (which URLs a crawl may follow), ``robots`` (robots.txt rules), ``sitemaps``
(reading sitemaps) and ``demosite`` (a seeded generated website for the demo mode, the
tests and the benchmarks).

The crawl itself: ``engine`` (`Crawler`) on ``frontier`` (per-host queues served in turn),
``fetch`` (one request), ``politeness`` (robots.txt, failing hosts), ``seen``, ``journal``
(resuming), ``output`` (a JSON line per URL, mended from the journal on resume), ``stats``
(`FetchStatistic`, the report); ``demo`` serves the demo site and ``__main__`` is the
command line.
"""
from __future__ import absolute_import, division, print_function

from .engine import Crawler
from .stats import CrawlStatistics, FetchStatistic

__all__ = ['Crawler', 'FetchStatistic', 'CrawlStatistics']
