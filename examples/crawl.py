"""Crawl a site from a script: `Crawler(roots).crawl()` run to its end by `IOLoop.run_sync`.

    python examples/crawl.py [URL...]     # no URL: serve the demo site and crawl it

The third stage of the 500 Lines crawler: a queue of URLs, workers taking from it, the
crawl waiting until the queue is done. `tinytornado.crawler.application.cli` is the same with
every option on the command line (``python -m tinytornado.crawler --help``).
"""
from __future__ import absolute_import, division, print_function

import sys

from tinytornado.crawler import Crawler
from tinytornado.crawler.demo.server import urls_or_demo
from tinytornado.crawler.stats import url_report_line
from tinytornado.ioloop import IOLoop

__all__ = ['main']


def main(argv=None):
    roots, server = urls_or_demo(sys.argv[1:] if argv is None else argv)
    io_loop = IOLoop.current()
    statistics = io_loop.run_sync(Crawler(roots, max_tasks=10).crawl)
    for statistic in sorted(statistics.done)[:10]:
        print(url_report_line(statistic))
    print('...')
    sys.stdout.write(statistics.report())
    if server is not None:
        io_loop.run_sync(server.close)


if __name__ == '__main__':
    main()
