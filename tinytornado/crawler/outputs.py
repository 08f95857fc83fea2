"""Where finished URLs go: the crawl's outputs, told of each URL in order.

An output has ``record(statistic)``, called once per finished URL with its
`stats.FetchStatistic`, and ``close()``, called once when the crawl ends. `Crawler` walks
its list `outputs` in order after the work store has journaled the URL: the journal first,
then the JSON lines (`JsonLinesOutput`), the totals (`StatisticsOutput`), then the
observers (`CallbackOutput`: ``on_statistic``, a link checker, an HTML report), and
last the WARC archive (`ArchiveOutput`), which the fetcher writes as requests go and
which only needs closing. The journal comes first because a kill between two outputs
must leave the journal ahead: a resume makes the missing lines again from it
(`output.mend_output`), where a line written before its journal entry would be written
twice.
"""
from __future__ import absolute_import, division, print_function

from .crawloptions import API_NAMING
from .output import statistic_line

__all__ = ['Output', 'OutputError', 'JsonLinesOutput', 'StatisticsOutput',
           'CallbackOutput', 'ArchiveOutput']


class OutputError(Exception):
    """A file of the crawl could not be written (a full disk, a closed pipe): the
    message names the file (as the value of `option`, if given), and says why;
    `describe(naming)` names the option as `naming` does (crawloptions.Naming)."""

    def __init__(self, name, error, option=None):
        self.name = name
        self.error = error
        self.option = option
        Exception.__init__(self, self.describe(API_NAMING))

    def describe(self, naming):
        name = self.name if self.option is None else '%s %s' % (
            naming.option(self.option), self.name)
        return '%s: %s' % (name, self.error.strerror or self.error)


class Output(object):
    """The interface of an output; the base records nothing and has nothing to close."""

    def record(self, statistic):
        """One URL has finished with `statistic`."""

    def close(self):
        """The crawl is over."""


class JsonLinesOutput(Output):
    """A JSON line per URL in `stream`, a text file closed with the output if `owned`
    (else its owner closes it); a failed write raises `OutputError` with `name` (default:
    the stream's) and `option`, which ends the crawl."""

    def __init__(self, stream, name=None, option=None, owned=False):
        self.stream = stream
        self.name = name or getattr(stream, 'name', 'the output')
        self.option = option
        self.owned = owned

    def record(self, statistic):
        try:
            self.stream.write(statistic_line(statistic.to_dict()))
            self.stream.flush()  # a line per finished URL survives a killed process
        except (IOError, OSError) as e:
            raise OutputError(self.name, e, self.option)

    def close(self):
        if not self.owned:
            return
        try:
            self.stream.close()
        except (IOError, OSError) as e:  # what the last flush could not write
            raise OutputError(self.name, e, self.option)


class StatisticsOutput(Output):
    """Counts each URL in a `stats.CrawlStatistics`."""

    def __init__(self, statistics):
        self.statistics = statistics

    def record(self, statistic):
        self.statistics.add(statistic)


class CallbackOutput(Output):
    """Calls `fn` with each statistic (``on_statistic``, ``LinkChecker.add_statistic``)."""

    def __init__(self, fn):
        self.fn = fn

    def record(self, statistic):
        self.fn(statistic)


class ArchiveOutput(Output):
    """The WARC archive (`warc.WarcArchive`) the fetcher writes, closed at the end."""

    def __init__(self, archive):
        self.archive = archive

    def close(self):
        self.archive.close()
