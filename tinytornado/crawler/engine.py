"""The crawl itself: the 500 Lines crawler's loop, on tinytornado, without its defects.

`Crawler.crawl` starts `max_tasks` workers. Each loops: take an item from the frontier,
process it, mark it done (in a ``finally``, so `join` cannot hang on a failure). `crawl`
waits for the frontier's `join` (or for `stop`), then cancels the workers. No locks: a
coroutine runs undisturbed between two ``yield``s, so "is this URL new? then queue it" is
atomic.

Processing an item is one try: the robots.txt check, one request with redirects not
followed, then the response's links or redirect target. Every URL gets exactly one
`FetchStatistic`, made when it is finished; any exception while fetching, reading or
parsing it is recorded there, and the worker goes on. A failure that may pass (no
response, 429, 502-504) puts the item back in the frontier for another try, after a pause
of its host that grows with each failure in a row (`politeness.HostHealth`).

Redirects are the crawler's, as in the chapter: the target is queued as a new item with
one redirect less to go, through the same seen set as links, so chains that meet are
fetched once; the target must be in scope like any link.

With `sitemaps`, each root site's robots.txt and /sitemap.xml are work items too, of negative
depth, and the pages their sitemaps list come in as roots (sitemaps.py tells how).
"""
from __future__ import absolute_import, division, print_function

import collections
import sys

from tinytornado import gen
from tinytornado._compat import raise_exc_info
from tinytornado.concurrent import Future
from tinytornado.httpclient import AsyncHTTPClient
from tinytornado.ioloop import IOLoop
from tinytornado.log import app_log

from .fetch import Fetcher, describe_exception, retry_after_seconds
from .frontier import Frontier
from .journal import Journal, as_journaled, contradictions
from .links import content_type_charset, decode_html, extract_links, is_html_content_type
from .output import statistic_line
from .politeness import AutoThrottle, HostHealth, RobotsCache
from .scope import Scope
from .seen import new_seen_set
from .sitemaps import (MAX_SITEMAPS, SitemapError, is_sitemap_depth, read_sitemap,
                       sitemap_entries, sitemap_sources)
from .stats import ROBOTS_DISALLOWED, CrawlStatistics, FetchStatistic
from .urls import normalize_url, url_host, urljoin
from .warc import open_archive

__all__ = ['Crawler', 'DEFAULT_OPTIONS', 'WorkItem']

REDIRECT_STATUSES = frozenset([300, 301, 302, 303, 307, 308])
USER_AGENT = 'tinycrawl/0.1 (+https://github.com/tinytornado)'

# Every option of `Crawler`, with its default.
DEFAULT_OPTIONS = collections.OrderedDict([
    ('max_tasks', 10),            # workers: requests in flight at once
    ('max_redirect', 10),         # redirects followed from one link
    ('max_tries', 4),             # tries of one URL when it fails in a way that may pass
    ('strict', True),             # strict: the roots' hosts; lenient: their domains too
    ('include', None),            # regex(es): only URLs matching one are crawled
    ('exclude', None),            # regex(es): URLs matching one are not crawled
    ('max_pages', None),          # the most URLs a crawl takes in
    ('max_depth', None),          # the most links followed from a root
    ('max_per_host', 2),          # requests in flight to one host (None: max_tasks)
    ('delay', None),              # seconds between two requests to one host (None: adapted
                                  # to each host's latency, by the four options below)
    ('target_concurrency', 1.0),  # AutoThrottle: requests in flight to aim for per host
    ('start_delay', 1.0),         # AutoThrottle: a host's delay before its first answer
    ('min_delay', 0.0),           # AutoThrottle: the bounds of a host's delay
    ('max_delay', 10.0),
    ('obey_robots', True),        # read and obey robots.txt
    ('user_agent', USER_AGENT),
    ('max_crawl_delay', 10.0),    # the longest robots.txt Crawl-delay honoured
    ('connect_timeout', 10.0),
    ('request_timeout', 30.0),
    ('max_body_size', 10 * 1024 * 1024),
    ('download_non_html', True),  # False: stop a non-HTML response after its headers
    ('frames', False),            # follow <frame> and <iframe> too
    ('sitemaps', False),          # queue the pages the roots' sites list in sitemaps
    ('backoff', 1.0),             # first pause of a failing host; doubles each time
    ('max_backoff', 60.0),
    ('max_retry_after', 300.0),   # the longest Retry-After honoured
    ('max_host_failures', 30),    # failures in a row before a host is given up
    ('hashed_seen', False),       # keep the seen set as 64-bit hashes
    ('keep_statistics', True),    # keep every FetchStatistic in `done`
    ('output', None),             # a text file: one JSON line per URL as it finishes
    ('on_statistic', None),       # called with each FetchStatistic as it finishes
    ('on_links', None),           # called with (url, its links the crawl takes) per page
    ('state', None),              # path of the SQLite journal
    ('resume', False),            # go on with the crawl in `state`
    ('http_client', None),        # an AsyncHTTPClient (default: one of the crawl's own)
    ('warc', None),               # a .warc.gz file: every request and response, as sent
])

# One unit of work: `depth` counts links followed from a root (a redirect keeps it);
# `max_redirect` is the redirect budget left; `tries` the tries made before this one.
WorkItem = collections.namedtuple('WorkItem', 'url host depth max_redirect tries')


def _host_key(url):
    """The frontier's host of a normalised URL: its host and port."""
    return url.split('/', 3)[2]


class Crawler(object):
    """Crawl every page reachable from `roots` in scope; see DEFAULT_OPTIONS for options.

    ::

        statistics = IOLoop.current().run_sync(Crawler(['http://example.test/']).crawl)
        print(statistics.report())

    With a journal (`state`) and an `output`, a URL's line is written once the journal
    has the URL as finished: after a kill, the output may lack the last URL's line and
    end in a torn line, never the other way round. To resume, open the output with
    `tinytornado.crawler.output.open_output`, which mends it from the journal; the
    output then holds exactly one line per finished URL, at every instant after::

        Crawler([], state=state, resume=True, output=open_output(path, state))

    A resumed crawl takes its roots and the options that shape it (scope, politeness,
    tries) back from the journal: give them again or not, but the same; the others
    (`max_tasks`, timeouts, `hashed_seen`, where results go) may change.

    Polite by default: at most `max_per_host` (2) requests in flight to one host, and
    between two requests to it a delay adapted to its latency by AutoThrottle's rule
    (`politeness.AutoThrottle`: from `start_delay`, halfway to latency /
    `target_concurrency` after each answer, within `min_delay` and `max_delay`, never
    shorter after an answer that is not a 200). A `delay` fixes the delay instead, and a
    robots.txt Crawl-delay fixes its host's. ``max_per_host=None, delay=0`` crawl as fast
    as `max_tasks` allows.

    Raises:
        ValueError: a root is not an http(s) URL, an option is invalid, `state`
            holds a crawl and `resume` is not set, or roots or options given to a resume
            contradict the journal's.
        TypeError: an unknown option.
    """

    def __init__(self, roots, **options):
        unknown = set(options) - set(DEFAULT_OPTIONS)
        if unknown:
            raise TypeError('unknown Crawler options: %s' % ', '.join(sorted(unknown)))
        for name, default in DEFAULT_OPTIONS.items():
            setattr(self, name, options.get(name, default))
        if self.max_tasks < 1 or self.max_tries < 1:
            raise ValueError('max_tasks and max_tries must be at least 1')
        self.io_loop = IOLoop.current()
        self.journal = self._open_journal()
        self.roots = self._roots(roots, options)
        self.scope = Scope(self.roots, strict=self.strict, include=self.include,
                           exclude=self.exclude)
        self.seen_urls = new_seen_set(self.hashed_seen)
        self.frontier = self._frontier()
        self.statistics = CrawlStatistics(self.keep_statistics, self.max_tasks)
        self.done = self.statistics.done
        self.health = HostHealth(self.frontier, self.backoff, self.max_backoff,
                                 self.max_retry_after, self.max_host_failures)
        self._own_client = self.http_client is None
        self.fetcher = self.robots = None  # made by crawl(), with the client
        self._stopped = Future()
        self._stopping = False
        self._failure = None  # exc_info of an error that ended the crawl
        self._sitemaps_left = MAX_SITEMAPS  # child sitemaps this crawl may still queue
        # Last: a crawl refused above must not have emptied the WARC file.
        self.archive = open_archive(self.warc, self.user_agent, self.obey_robots, self.resume)

    # -- the crawl ----------------------------------------------------------------------

    @gen.coroutine
    def crawl(self):
        """Run the crawl to its end; a Future of its `CrawlStatistics`."""
        self._start()
        workers = [self._work() for _ in range(self.max_tasks)]
        finished = self.frontier.join()
        finished.add_done_callback(lambda _: self._end())
        try:
            yield self._stopped
        finally:
            todo = self.frontier.unfinished()  # in flight counts: it was not finished
            finished.cancel()
            for worker in workers:
                worker.cancel()
            yield workers
            self._close(todo)
        if self._failure is not None:
            raise_exc_info(self._failure)
        raise gen.Return(self.statistics)

    def stop(self):
        """End the crawl now, as if its queue were empty; in-flight URLs are dropped.

        `crawl` then returns the statistics so far (`interrupted` is set). With a journal,
        the URLs not finished stay queued there for `resume`.
        """
        self._stopping = True
        self._end()

    def _end(self):
        if not self._stopped.done():
            self._stopped.set_result(None)

    def _start(self):
        if self._own_client:
            self.http_client = AsyncHTTPClient(force_instance=True, max_clients=self.max_tasks)
        self.fetcher = Fetcher(self.http_client, self.user_agent, self.connect_timeout,
                               self.request_timeout, self.max_body_size,
                               self.download_non_html, self.archive)
        self.robots = RobotsCache(self.fetcher, self.frontier, self.user_agent,
                                  self.min_delay if self.delay is None else self.delay,
                                  self.max_crawl_delay)
        if self.journal is not None:
            # Stored on resuming too: a journal of an older version has none yet.
            self.journal.set_meta('options', self._journaled_options())
        if self.journal is not None and not self.journal.is_empty():
            self._restore()
        else:
            items = []
            for root in self.roots:
                if root not in self.seen_urls:  # a root given twice is crawled once
                    self._admit(root, 0, self.max_redirect, items)
            if self.sitemaps:  # sitemaps.py: work items of their own, after the roots
                for url, depth in sitemap_sources(self.roots):
                    if url not in self.seen_urls:
                        self._admit(url, depth, self.max_redirect, items)
            if self.journal is not None:
                self.journal.set_meta('roots', self.roots)
                self.journal.queue([_journal_entry(item) for item in items])
            self._queue(items)

    def _frontier(self):
        """The frontier: a fixed `delay`, or one adapted to each host (AutoThrottle)."""
        if self.max_per_host is not None and self.max_per_host < 1:
            raise ValueError('max_per_host must be at least 1 (or None: no limit)')
        if self.delay is not None:
            if self.delay < 0:
                raise ValueError('delay must be 0 or more (or None: adapted)')
            return Frontier(self.max_per_host, self.delay)
        throttle = AutoThrottle(self.target_concurrency, self.start_delay, self.min_delay,
                                self.max_delay)
        return Frontier(self.max_per_host, throttle.start_delay, throttle)

    def _close(self, todo):
        self.frontier.close()
        self.statistics.finish(todo, self._stopping)
        if self._own_client:
            self.http_client.close()
        if self.journal is not None:
            self.journal.close()
        if self.archive is not None:
            self.archive.close()

    @gen.coroutine
    def _work(self):
        try:
            # Checked as well as cancelled: a cancel that meets an outcome already on its
            # way lets the worker go round once more.
            while not self._stopped.done():
                item = yield self.frontier.get()
                try:
                    yield self._process(item)
                except gen.CancelledError:
                    raise
                except Exception:
                    # Not a URL's failure (those are recorded): the output or the journal
                    # failed. The crawl cannot go on without them; crawl() raises it.
                    self._fail(sys.exc_info())
                finally:
                    self.frontier.task_done(item)
        except gen.CancelledError:
            pass  # crawl() cancels the workers once the queue is done or stop() was called

    def _fail(self, exc_info):
        if self._failure is None:
            self._failure = exc_info
        self.stop()

    # -- one URL ------------------------------------------------------------------------

    @gen.coroutine
    def _process(self, item):
        """Try `item` once: record its statistic, or put it back for another try.

        One coroutine per try, which waits on the HTTP client's Future itself: this is the
        crawl's hot path, and each nested coroutine would add a generator, a Runner and a
        Future per URL.
        """
        started = self.io_loop.time()
        new_items = []
        try:
            fetched = self._refusal(item)
            if fetched is None and self.obey_robots:
                fetched = yield self._robots_refusal(item)
            if fetched is None:
                sending = self.frontier.request_started(item.host)
                download, response = self.fetcher.start(
                    item.url, sending=sending,
                    download_non_html=is_sitemap_depth(item.depth) or None)  # XML, wanted
                fetched = download.outcome((yield response))
                sending.answered(fetched.status == 200)  # the throttle's latency
            statistic = self._settle(item, fetched, started, new_items)
        except gen.CancelledError:
            raise
        except Exception as e:  # whatever went wrong belongs to this URL's statistic
            app_log.debug('crawling %s failed', item.url, exc_info=True)
            statistic = self._statistic(item, started, exception=describe_exception(e))
        if statistic is not None:
            self._record(statistic, new_items)

    def _refusal(self, item):
        """A _Refused if the item's host was given up, else None."""
        if self.health.is_given_up(item.host):
            return _Refused(self._given_up(item))
        return None

    @gen.coroutine
    def _robots_refusal(self, item):
        """None if robots.txt lets the crawl fetch `item` now; else a _Refused, a
        _Failure (robots.txt unavailable), or _PUT_BACK."""
        had_rules = self.robots.has_rules(item.url)
        try:
            allowed = yield self.robots.allowed(item.url, item.host)
        except gen.CancelledError:
            raise
        except Exception as e:  # robots.txt unavailable: a failure that may pass
            raise gen.Return(_Failure(describe_exception(e)))
        if not allowed:
            raise gen.Return(_Refused(ROBOTS_DISALLOWED))
        if not had_rules and self.frontier.host_delay(item.host):
            # robots.txt was just read, for this item, and the host wants a delay (from
            # it, or from the crawl's own): back to the frontier for a turn.
            self.frontier.put(item, front=True)
            raise gen.Return(_PUT_BACK)
        raise gen.Return(None)

    def _settle(self, item, fetched, started, new_items):
        """The statistic of a try, or None if the item went back to the frontier."""
        if fetched is _PUT_BACK:
            return None
        if fetched.__class__ is _Refused:
            return self._statistic(item, started, exception=fetched.exception)
        if fetched.transient:
            if self._retry(item, fetched):
                return None
        else:
            self._succeeded(item.host)
        return self._outcome(item, fetched, started, new_items)

    def _retry(self, item, fetched):
        """Count a failure of the item's host; True if the item was put back to retry."""
        retry_after = fetched.headers and retry_after_seconds(fetched.headers)
        given_up = self.health.failed(item.host, retry_after or None)
        self._journal_failure(item)
        if given_up:
            self._fail_pending(item.host)
        if given_up or item.tries + 1 >= self.max_tries:
            return False
        # Once stopped, the item is dropped like those in flight, not finished as failed:
        # a journal keeps it queued, with this try counted.
        if not self._stopping:
            self.frontier.put(item._replace(tries=item.tries + 1), front=True)
        return True

    def _outcome(self, item, fetched, started, new_items):
        """The statistic of a finished try; queues what it links or redirects to."""
        status = fetched.status
        if status is None:
            return self._statistic(item, started, exception=fetched.exception)
        content_type = fetched.content_type
        next_url = encoding = None
        num_urls = 0
        exception = fetched.exception
        # Only a redirect's Location counts: the others are not looked up.
        location = fetched.headers.get('Location') if status in REDIRECT_STATUSES else None
        if location:
            next_url, num_urls = self._redirect(item, location, new_items)
        elif is_sitemap_depth(item.depth):
            exception, num_urls = self._sitemap(item, fetched, new_items)
        elif 200 <= status < 300 and is_html_content_type(content_type):
            encoding, num_urls = self._links(item, fetched.body, content_type, new_items)
        else:
            encoding = content_type_charset(content_type)
        return FetchStatistic(item.url, next_url, status, exception, len(fetched.body),
                              content_type, encoding, num_urls, len(new_items), item.depth,
                              self._elapsed(started), item.tries + 1)

    def _redirect(self, item, location, new_items):
        """(next_url, num_urls) of a redirect; queues its target if it may be followed."""
        try:
            next_url = urljoin(item.url, location)
        except ValueError:
            return location, 0  # not http(s): recorded, never followed
        if (item.max_redirect > 0 and next_url not in self.seen_urls and
                self.scope.allows(next_url)):
            self._admit(next_url, item.depth, item.max_redirect - 1, new_items)
        return next_url, 1

    def _links(self, item, body, content_type, new_items):
        """(encoding, num_urls) of an HTML page; queues the links not seen before."""
        text, encoding = decode_html(body, content_type)
        links = extract_links(text, item.url, frames=self.frames)
        depth = item.depth + 1
        if self.max_depth is None or depth <= self.max_depth:
            seen_urls = self.seen_urls
            for link in links:
                # Most links were seen before: the cheap test first.
                if link not in seen_urls and self.scope.allows(link):
                    self._admit(link, depth, self.max_redirect, new_items)
        if self.on_links is not None:
            # Every sighting, not only the first: a link checker names all referrers.
            self.on_links(item.url, [link for link in links if link in self.seen_urls])
        return encoding, len(links)

    def _sitemap(self, item, fetched, new_items):
        """(exception, num_urls) of a sitemap (or a robots.txt read for its sitemaps); queues
        the pages it lists in scope, as roots, and the sitemaps it lists on hosts in scope.

        A sitemap that cannot be read is this statistic's exception ('SitemapError: ...'),
        a missing one its status: either is counted in the report, and the crawl goes on.
        """
        if fetched.exception is not None or not 200 <= fetched.status < 300:
            return fetched.exception, 0  # a body over the cap, say: not one to read
        try:
            sitemap = read_sitemap(fetched.body, item.depth)
        except SitemapError as e:
            return describe_exception(e), 0
        entries = sitemap_entries(item.url, item.depth, sitemap)
        for url, depth in entries:
            if url not in self.seen_urls and self._sitemap_entry_allowed(url, depth):
                self._admit(url, depth, self.max_redirect, new_items)
        if self.on_links is not None:  # a link checker names the sitemap as a referrer
            self.on_links(item.url, [url for url, _ in entries if url in self.seen_urls])
        return None, len(sitemap.pages) + len(sitemap.sitemaps)

    def _sitemap_entry_allowed(self, url, depth):
        if not is_sitemap_depth(depth):
            return self.scope.allows(url)
        # A sitemap file need only be on a host in scope: --include/--exclude choose pages.
        if self._sitemaps_left <= 0 or not self.scope.host_allowed(url_host(url)):
            return False
        self._sitemaps_left -= 1
        return True

    def _admit(self, url, depth, max_redirect, new_items):
        """Add a WorkItem for `url`, which the caller found not seen (the test comes before
        the dearer scope test), to `new_items` if the page budget allows."""
        if self.max_pages is not None and len(self.seen_urls) >= self.max_pages:
            return
        self.seen_urls.add(url)
        new_items.append(WorkItem(url, _host_key(url), depth, max_redirect, 0))

    def _statistic(self, item, started, exception):
        return FetchStatistic(item.url, exception=exception, depth=item.depth,
                              tries=item.tries + 1, elapsed=self._elapsed(started))

    def _elapsed(self, started):
        return round(self.io_loop.time() - started, 6)

    # -- recording ----------------------------------------------------------------------

    def _record(self, statistic, new_items):
        """Journal, count and stream out one finished URL; queue what it led to."""
        if self.journal is not None:
            self.journal.finish(statistic, [_journal_entry(new) for new in new_items])
        # Journal first, then the line: a kill between the two leaves a line missing,
        # which a resume makes again from the journal (output.mend_output); the other
        # order would leave a line that the resume then writes a second time.
        if self.output is not None:
            self.output.write(statistic_line(statistic.to_dict()))
            self.output.flush()  # a line per finished URL survives a killed process
        self.statistics.add(statistic)
        if self.on_statistic is not None:
            self.on_statistic(statistic)
        self._queue(new_items)

    def _queue(self, items):
        for item in items:
            if self.health.is_given_up(item.host):
                self._record(FetchStatistic(item.url, depth=item.depth, tries=0,
                                            exception=self._given_up(item)), [])
            else:
                self.frontier.put(item)

    def _fail_pending(self, host):
        """Record every waiting URL of a given-up host as failed."""
        for item in self.frontier.remove_pending(host):
            try:
                self._record(FetchStatistic(item.url, depth=item.depth, tries=item.tries,
                                            exception=self._given_up(item)), [])
            finally:
                self.frontier.task_done(item)

    def _given_up(self, item):
        return 'HostGivenUp: %d failures in a row on %s' % (
            self.health.failures(item.host), item.host)

    # -- the journal --------------------------------------------------------------------

    def _open_journal(self):
        if self.state is None:
            return None
        journal = Journal(self.state)
        if not journal.is_empty() and not self.resume:
            journal.close()
            raise ValueError('%s holds a crawl already: resume it, or remove the file'
                             % self.state)
        return journal

    def _roots(self, roots, options):
        """The normalised roots; a resumed crawl takes its options back from the journal."""
        try:
            roots = [normalize_url(root) for root in roots]
            if self.journal is not None and not self.journal.is_empty():
                self._take_journaled_options(roots, options)
                roots = roots or self.journal.get_meta('roots', [])
            if not roots:
                raise ValueError('no root URL to crawl')
        except ValueError:
            if self.journal is not None:
                self.journal.close()
            raise
        return roots

    def _take_journaled_options(self, roots, options):
        """Set the journaled options of the crawl resumed; ValueError if `roots` or
        `options` given contradict them. A journal without options (from an older
        version) leaves the options given."""
        stored = self.journal.get_meta('options')
        if stored is None:
            return
        given = dict((name, options[name]) for name in _JOURNALED_OPTIONS if name in options)
        wrong = ['%s=%r contradicts the journal\'s %s=%r' % (name, given[name], name,
                                                             stored[name])
                 for name in contradictions(given, stored)]
        stored_roots = self.journal.get_meta('roots', [])
        if roots and set(roots) != set(stored_roots):
            wrong.insert(0, 'roots %r contradict the journal\'s roots %r' % (roots,
                                                                          stored_roots))
        if wrong:
            raise ValueError('resume: ' + '; '.join(wrong))
        for name, value in stored.items():
            if name in _JOURNALED_OPTIONS:
                setattr(self, name, value)

    def _journaled_options(self):
        return dict((name, as_journaled(getattr(self, name))) for name in _JOURNALED_OPTIONS)

    def _restore(self):
        """Take the journal's crawl back: finished URLs counted, the others queued with
        their tries, failing hosts paused (or given up) as they were."""
        for host, (failures, pause) in self.journal.hosts().items():
            self.health.restore(host, failures, pause)
        pending = []
        for entry in self.journal.restore():
            self.seen_urls.add(entry.url)
            if entry.statistic is not None:
                self.statistics.add(FetchStatistic.from_dict(entry.statistic), restored=True)
            else:
                pending.append(WorkItem(entry.url, _host_key(entry.url), entry.depth,
                                        entry.max_redirect, entry.tries))
        self._queue(pending)

    def _journal_failure(self, item):
        if self.journal is not None:
            failures, pause = self.health.snapshot(item.host)
            self.journal.failed(item.url, item.tries + 1, item.host, failures, pause)

    def _succeeded(self, host):
        if self.journal is not None and self.health.failures(host):
            self.journal.host_succeeded(host)
        self.health.succeeded(host)


# The options that shape what a crawl fetches, and how politely: journaled, taken back by
# a resume, which refuses values that contradict them. The others (max_tasks, timeouts,
# hashed_seen, where the results go) may change from one run of a crawl to the next.
_JOURNALED_OPTIONS = (
    'max_redirect', 'max_tries', 'strict', 'include', 'exclude', 'max_pages', 'max_depth',
    'max_per_host', 'delay', 'obey_robots', 'user_agent', 'max_crawl_delay',
    'max_body_size', 'download_non_html', 'frames', 'backoff', 'max_backoff',
    'max_retry_after', 'max_host_failures', 'target_concurrency', 'start_delay', 'min_delay',
    'max_delay', 'sitemaps',
)


def _journal_entry(item):
    return (item.url, item.depth, item.max_redirect)


class _Failure(object):
    """A try that failed before its request (robots.txt could not be read)."""
    status = None
    headers = None
    transient = True

    def __init__(self, exception):
        self.exception = exception


class _Refused(object):
    """A try the crawl refused to make (robots.txt disallows it, or a given-up host)."""

    def __init__(self, exception):
        self.exception = exception


_PUT_BACK = object()  # a try that did not happen: the item went back to the frontier
