"""The demo site: a seeded, generated website and the server that serves it on 127.0.0.1.

``website`` builds the site (`Site`), ``pages`` renders its pages, ``server`` serves it
(`DemoServer`). ``tinycrawl --demo`` crawls it; the tests and the benchmarks use it too.
"""
from __future__ import absolute_import, division, print_function
