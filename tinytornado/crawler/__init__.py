"""The tinytornado crawler: the 500 Lines crawler grown into a tool people run for real.

Pure building blocks (no I/O, no event loop) live in their own modules: ``urls``
(normalisation, joining, hashing), ``links`` (HTML link extraction and charset detection),
``scope`` (which URLs a crawl may follow), ``robots`` (robots.txt rules) and ``demosite``
(a seeded generated website for the demo mode, the tests and the benchmarks).
"""
from __future__ import absolute_import, division, print_function

__all__ = []
