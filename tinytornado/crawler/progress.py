"""The live progress line a crawl shows on a terminal: done, queued, in flight, rate."""
from __future__ import absolute_import, division, print_function

from tinytornado.ioloop import PeriodicCallback

__all__ = ['ProgressLine']


class ProgressLine(object):
    """Rewrites one line of `stream` every `interval` seconds while started.

    Args:
        crawler: the `Crawler` to report on.
        stream: a terminal (the caller checks ``isatty()``).
    """

    def __init__(self, crawler, stream, interval=0.5):
        self.crawler = crawler
        self.stream = stream
        self._width = 0
        self._periodic = PeriodicCallback(self.show, interval * 1000)

    def start(self):
        self._periodic.start()

    def stop(self):
        """Stop updating and erase the line, so the report starts on a clean one."""
        self._periodic.stop()
        self._write('')

    def show(self):
        statistics = self.crawler.statistics
        frontier = self.crawler.frontier
        queued = frontier.qsize()
        elapsed = statistics.elapsed()
        fetched = statistics.urls - statistics.restored
        self._write('%d done, %d queued, %d in flight, %.1f urls/s' % (
            statistics.urls, queued, frontier.unfinished() - queued,
            fetched / elapsed if elapsed > 0 else 0.0))

    def _write(self, text):
        # '\r' returns to the line's start; spaces erase what a longer last line left.
        self.stream.write('\r' + text.ljust(self._width) + ('\r' if not text else ''))
        self.stream.flush()
        self._width = len(text)
