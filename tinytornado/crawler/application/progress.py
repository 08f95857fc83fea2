"""The live progress line a crawl shows on a terminal: done, queued, in flight, rate.

The line never reaches the terminal's last column: a line that wraps cannot be rewritten
with '\\r', and each update would leave a row of debris. The width is read at each update
(the terminal may be resized); the wordiest form of the line that fits is shown, cut short
if even the tersest does not.
"""
from __future__ import absolute_import, division, print_function

import os
import struct

from tinytornado.ioloop import PeriodicCallback

try:
    import fcntl
    import termios
except ImportError:  # not a POSIX system: $COLUMNS or the fallback width
    fcntl = termios = None

__all__ = ['ProgressLine', 'terminal_columns', 'fit_line']

# From wordiest to tersest; each is given (done, queued, in flight, urls per second).
_FORMS = (
    '%d done, %d queued, %d in flight, %.1f urls/s',
    '%d done %d queued %d active %.1f/s',
    '%d done %d queued %.1f/s',
)


def terminal_columns(stream, fallback=80):
    """The width of the terminal `stream` writes to: $COLUMNS if set (as the shell and
    shutil read it), else the terminal's own size, else `fallback`.

    shutil.get_terminal_size (3.3+) asks about stdout, which is often a pipe while the
    progress line goes to stderr; the ioctl asks the stream itself, on 2.7 too.
    """
    columns = os.environ.get('COLUMNS', '')
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if fcntl is not None:
        try:
            size = fcntl.ioctl(stream.fileno(), termios.TIOCGWINSZ, b'\0' * 8)
        except (AttributeError, IOError, OSError, ValueError):
            pass  # not a terminal, or a stream without a file descriptor
        else:
            columns = struct.unpack('hhhh', size)[1]
            if columns > 0:
                return columns
    return fallback


def fit_line(counts, columns):
    """The progress line of `counts` (done, queued, in flight, rate) in `columns` - 1."""
    room = max(columns - 1, 1)
    done, queued, _, rate = counts
    lines = (_FORMS[0] % counts, _FORMS[1] % counts, _FORMS[2] % (done, queued, rate))
    for line in lines:
        if len(line) <= room:
            return line
    return lines[-1][:room]


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
        self._write('', terminal_columns(self.stream))

    def show(self):
        statistics = self.crawler.statistics
        frontier = self.crawler.frontier
        queued = frontier.qsize()
        elapsed = statistics.elapsed()
        fetched = statistics.urls - statistics.restored
        counts = (statistics.urls, queued, frontier.unfinished() - queued,
                  fetched / elapsed if elapsed > 0 else 0.0)
        columns = terminal_columns(self.stream)
        self._write(fit_line(counts, columns), columns)

    def _write(self, text, columns):
        # '\r' returns to the line's start; spaces erase what a longer last line left, as
        # far as the terminal, maybe narrowed since, has room.
        width = min(self._width, columns - 1)
        self.stream.write('\r' + text.ljust(width) + ('\r' if not text else ''))
        self.stream.flush()
        self._width = len(text)
