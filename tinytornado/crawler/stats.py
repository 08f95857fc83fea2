"""What a crawl records: one `FetchStatistic` per URL, and the running totals of a crawl.

`CrawlStatistics` counts every statistic as it comes in, so the report and the summary
never need the per-URL list; keeping that list (`done`) is an option. Its counts are typed:
`categories` ('html', 'redirect', 'error_page', 'other', 'fail', 'robots_disallowed', and
'unchecked' for the URLs of hosts given up, which were never tried; with the bytes of the
first four), `statuses` by HTTP status (an int), `failures` by error class name, and
`other_types` by media type. `counters` names them all as the 500 Lines crawler did ('html',
'status_200', 'fail_TimeoutError', 'other_image/png', ...), for the text report and the
JSON summary only: nothing parses those names back. 'html' counts only 2xx HTML pages: a
4xx or 5xx response, HTML or not, is an 'error_page'.
"""
from __future__ import absolute_import, division, print_function

import collections
import errno
import re
import time

__all__ = ['FetchStatistic', 'CrawlStatistics', 'exception_name', 'url_report_line',
           'failure_cause', 'is_unchecked', 'ROBOTS_DISALLOWED', 'HOST_GIVEN_UP']

# The `exception` of a URL robots.txt kept the crawl from fetching: not counted as a failure.
ROBOTS_DISALLOWED = 'RobotsDisallowed: robots.txt disallows this URL'
# The name of the `exception` of a URL left unchecked because its host was given up
# (politeness.HostHealth): nothing is known of the URL itself, so it is not broken.
HOST_GIVEN_UP = 'HostGivenUp'

_FIELDS = ('url', 'next_url', 'status', 'exception', 'size', 'content_type', 'encoding',
           'num_urls', 'num_new_urls', 'depth', 'elapsed', 'tries')


class FetchStatistic(collections.namedtuple('FetchStatistic', _FIELDS)):
    """The outcome of one URL.

    Fields: url; next_url (a redirect's target, or None); status (the HTTP status, None if
    no response came); exception ('ErrorName: message', or None); size (body bytes);
    content_type and encoding (the charset used to decode an HTML body); num_urls (links
    on the page) and num_new_urls (those not seen before); depth (links followed from a
    root); elapsed (seconds of the last try); tries.
    """
    __slots__ = ()

    def __new__(cls, url, next_url=None, status=None, exception=None, size=0,
                content_type=None, encoding=None, num_urls=0, num_new_urls=0, depth=0,
                elapsed=0.0, tries=1):
        return super(FetchStatistic, cls).__new__(
            cls, url, next_url, status, exception, size, content_type, encoding, num_urls,
            num_new_urls, depth, elapsed, tries)

    def to_dict(self):
        """The fields as a dict, ready for JSON."""
        return dict(zip(self._fields, self))

    @classmethod
    def from_dict(cls, fields):
        """The statistic `to_dict` gave `fields` for (unknown keys are ignored)."""
        return cls(**dict((name, fields[name]) for name in cls._fields if name in fields))


def is_unchecked(statistic):
    """True if the URL of `statistic` was never tried: its host was given up."""
    exception = statistic.exception
    return exception is not None and exception.startswith(HOST_GIVEN_UP + ':')


def exception_name(statistic):
    """The error class name of a failed statistic: 'ConnectionRefusedError: ...' -> ..."""
    return statistic.exception.split(':', 1)[0]


def _media_type(content_type):
    return (content_type or '').split(';', 1)[0].strip().lower()


def url_report_line(statistic):
    """The chapter's one-line report of a URL."""
    s = statistic
    if s.exception:
        return '%s error %s' % (s.url, s.exception)
    if s.next_url:
        return '%s %s redirect %s' % (s.url, s.status, s.next_url)
    if _media_type(s.content_type) == 'text/html':
        return '%s %s %s %s %s %d/%d' % (s.url, s.status, s.content_type, s.encoding, s.size,
                                         s.num_new_urls, s.num_urls)
    return '%s %s %s %s %s' % (s.url, s.status, s.content_type, s.encoding, s.size)


class CrawlStatistics(object):
    """Totals of a crawl, updated by `add` as each URL finishes.

    Attributes:
        done: every FetchStatistic in the order they finished, or None if not kept.
        categories: a Counter of the URLs of each category of the module's docstring, and
            of the body bytes of 'html', 'error_page' and 'other' ('html_bytes', ...).
        statuses: a Counter of the URLs that got each HTTP status (an int).
        failures: a Counter of the failed URLs by error class name ('TimeoutError').
        other_types: a Counter of the 'other' URLs by media type ('unknown': none).
        urls: how many URLs finished; restored: how many of them a resumed crawl
            read from its journal.
        todo: URLs left in the queue when the crawl ended (0 unless it was stopped).
        interrupted: the crawl was stopped before its queue was empty.
        unanswered: the first few statistics of URLs that got no response.
    """

    MAX_UNANSWERED = 5

    def __init__(self, keep_statistics=True, max_tasks=None):
        self.done = [] if keep_statistics else None
        self.categories = collections.Counter()
        self.statuses = collections.Counter()
        self.failures = collections.Counter()
        self.other_types = collections.Counter()
        self.urls = 0
        self.restored = 0
        self.todo = 0
        self.interrupted = False
        self.unanswered = []
        self.unchecked_hosts = {}  # host given up -> why its URLs were left unchecked
        self.max_tasks = max_tasks
        self.started = time.time()
        self.finished = None

    def add(self, statistic, restored=False):
        """Count one finished URL."""
        self.urls += 1
        self.restored += restored
        if self.done is not None:
            self.done.append(statistic)
        categories = self.categories
        status = statistic.status
        if status is None and len(self.unanswered) < self.MAX_UNANSWERED:
            self.unanswered.append(statistic)
        if statistic.exception == ROBOTS_DISALLOWED:
            categories['robots_disallowed'] += 1
        elif is_unchecked(statistic):
            categories['unchecked'] += 1
            self.unchecked_hosts[statistic.url.split('/', 3)[2]] = statistic.exception
        elif statistic.exception:
            categories['fail'] += 1
            self.failures[exception_name(statistic)] += 1
        elif statistic.next_url:
            categories['redirect'] += 1
        elif status >= 400:
            categories['error_page'] += 1
            categories['error_page_bytes'] += statistic.size
        elif 200 <= status < 300 and _media_type(statistic.content_type) == 'text/html':
            categories['html'] += 1
            categories['html_bytes'] += statistic.size
        else:
            categories['other'] += 1
            categories['other_bytes'] += statistic.size
            self.other_types[_media_type(statistic.content_type) or 'unknown'] += 1
        if status is not None:
            self.statuses[status] += 1

    @property
    def counters(self):
        """Every count under the name the text report and the JSON summary show it by:
        the categories' own, 'status_<code>', 'fail_<Error>' and 'other_<media type>'."""
        counters = collections.Counter(self.categories)
        for prefix, counts in (('status_', self.statuses), ('fail_', self.failures),
                               ('other_', self.other_types)):
            counters.update(dict((prefix + str(key), count) for key, count in counts.items()))
        return counters

    def status_counts(self):
        """{status: count} over the URLs that got a response."""
        return dict(self.statuses)

    def got_no_response(self):
        """True if URLs finished and none got a response: no root could be fetched, since
        every other URL comes from a response."""
        return self.urls > 0 and not self.statuses

    def finish(self, todo, interrupted):
        """Note the end of the crawl."""
        self.finished = time.time()
        self.todo = todo
        self.interrupted = interrupted

    def elapsed(self):
        return (self.finished or time.time()) - self.started

    def summary(self):
        """The totals as a dict, ready for JSON."""
        return {
            'urls': self.urls,
            'restored': self.restored,
            'todo': self.todo,
            'interrupted': self.interrupted,
            'elapsed': round(self.elapsed(), 3),
            'max_tasks': self.max_tasks,
            'started': _iso_time(self.started),
            'finished': _iso_time(self.finished) if self.finished else None,
            'counters': dict(self.counters),
            'unchecked': {'urls': self.categories['unchecked'],
                          'hosts': dict(self.unchecked_hosts)},
        }

    def report(self):
        """The chapter's text report: totals, one line per counter, Todo and Done."""
        elapsed = self.elapsed()
        outcome = 'Interrupted after' if self.interrupted else 'Finished'
        # The rate is of this run's fetches: URLs a resume restored took no time here.
        rate = (self.urls - self.restored) / elapsed if elapsed else 0.0
        # The chapter's rate per task comes after the plain one, which a reader expects.
        lines = [outcome + ' %d urls in %.3f secs (%.1f urls/sec) (max_tasks=%s: %.3f '
                 'urls/sec/task)' % (self.urls, elapsed, rate, self.max_tasks,
                                     rate / (self.max_tasks or 1))]
        if self.restored:
            lines.append('Resumed: %d urls were done before' % self.restored)
        counters = self.counters
        width = max([len(key) for key in counters] or [0])
        for key in sorted(counters):
            lines.append('%*s %10d' % (width + 4, key, counters[key]))
        for host in sorted(self.unchecked_hosts):
            lines.append('Unchecked (host given up): %s' % self.unchecked_hosts[host])
        lines.append('Todo: %d' % self.todo)
        lines.append('Done: %d' % self.urls)
        lines.append('Date: %s local time' % time.ctime(self.finished or time.time()))
        return '\n'.join(lines) + '\n'


def _iso_time(timestamp):
    return time.strftime('%Y-%m-%dT%H:%M:%S', time.localtime(timestamp))


# How politeness.RobotsCache words a robots.txt it could not read, before the cause.
_ROBOTS_UNAVAILABLE = 'RobotsUnavailable: robots.txt: '
_ERRNO_RE = re.compile(r'\[Errno (-?\d+)\] ')


def failure_cause(statistic):
    """Why the URL of `statistic` got no response, in words for a person: 'connection
    refused to 127.0.0.1:1', not the error's class."""
    exception = statistic.exception
    if exception == ROBOTS_DISALLOWED:
        return 'robots.txt disallows it'
    host = statistic.url.split('/', 3)[2]
    if not exception.startswith(_ROBOTS_UNAVAILABLE):
        return _network_cause(exception, host)
    exception = exception[len(_ROBOTS_UNAVAILABLE):]
    if exception.startswith('HTTP '):
        return 'its robots.txt answered %s, which forbids crawling the site for now' % (
            exception,)
    return _network_cause(exception, host) + ', reading its robots.txt'


def _network_cause(exception, host):
    name, _, message = exception.partition(': ')
    match = _ERRNO_RE.match(message)
    if match is None:
        return '%s (%s)' % (exception, host)
    message = message[match.end():]
    if int(match.group(1)) == errno.ECONNREFUSED:
        return 'connection refused to %s' % host
    if name == 'gaierror':  # name resolution: its errno is not an errno module code
        return 'cannot resolve %s: %s' % (host, message)
    return '%s: %s' % (host, message[:1].lower() + message[1:])
