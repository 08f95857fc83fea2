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

from .crawloptions import DEFAULT_OPTIONS, JOURNALED_OPTIONS, OptionValues, crawler_options
from .extractors import Admission, Extractors, HtmlLinks, RedirectTarget, SitemapEntries
from .fetch import Fetcher, describe_exception
from .frontier import Frontier
from .hostpolicy import PUT_BACK, HostPolicy, Refused
from .journal import Journal, as_journaled, contradictions
from .outputs import (ArchiveOutput, CallbackOutput, JsonLinesOutput, StatisticsOutput)
from .scope import Scope
from .seen import new_seen_set
from .sitemaps import is_sitemap_depth, sitemap_sources
from .stats import CrawlStatistics, FetchStatistic
from .urls import normalize_url
from .warc import open_archive

__all__ = ['Crawler', 'DEFAULT_OPTIONS', 'WorkItem']

# One unit of work: `depth` counts links followed from a root (a redirect keeps it);
# `max_redirect` is the redirect budget left; `tries` the tries made before this one.
WorkItem = collections.namedtuple('WorkItem', 'url host depth max_redirect tries')


def _host_key(url):
    """The frontier's host of a normalised URL: its host and port."""
    return url.split('/', 3)[2]


class Crawler(object):
    """Crawl every page reachable from `roots` in scope; crawloptions.OPTIONS tells the
    options (`options`, once taken: an `OptionValues`).

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

    def __init__(self, roots, **given):
        self.options = options = OptionValues(crawler_options(given))
        self.io_loop = IOLoop.current()
        self.journal = self._open_journal()
        self.roots = self._roots(roots, given)  # may take options back from the journal
        self.policy = HostPolicy(options)
        self.scope = Scope(self.roots, strict=options.strict, include=options.include,
                           exclude=options.exclude)
        self.seen_urls = new_seen_set(options.hashed_seen)
        self.frontier = Frontier(*self.policy.frontier_settings())
        self.policy.attach(self.frontier)
        self.statistics = CrawlStatistics(options.keep_statistics, options.max_tasks)
        self.done = self.statistics.done
        admission = Admission(self.seen_urls, self.scope, self._admit, options.max_redirect,
                              options.on_links)
        self.extractors = Extractors([
            RedirectTarget(admission), SitemapEntries(admission),
            HtmlLinks(admission, options.frames, options.max_depth)])
        self.http_client = options.http_client
        self._own_client = self.http_client is None
        self.fetcher = None  # made by crawl(), with the client
        self._stopped = Future()
        self._stopping = False
        self._failure = None  # exc_info of an error that ended the crawl
        # Last: a crawl refused above must not have emptied the WARC file.
        self.archive = open_archive(options.warc, options.user_agent, options.obey_robots,
                                    options.resume)
        self.outputs = self._outputs()

    def _outputs(self):
        """The crawl's outputs in order (see outputs.py); the journal is not one of them:
        it is written first, with the URLs a finished one queued."""
        options = self.options
        outputs = [StatisticsOutput(self.statistics)]
        if options.output is not None:
            outputs.insert(0, JsonLinesOutput(options.output))
        if options.on_statistic is not None:
            outputs.append(CallbackOutput(options.on_statistic))
        outputs.extend(options.outputs)
        if self.archive is not None:
            outputs.append(ArchiveOutput(self.archive))
        return outputs

    # -- the crawl ----------------------------------------------------------------------

    @gen.coroutine
    def crawl(self):
        """Run the crawl to its end; a Future of its `CrawlStatistics`."""
        self._start()
        workers = [self._work() for _ in range(self.options.max_tasks)]
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
        options = self.options
        if self._own_client:
            self.http_client = AsyncHTTPClient(force_instance=True,
                                               max_clients=options.max_tasks)
        self.fetcher = Fetcher(self.http_client, options.user_agent, options.connect_timeout,
                               options.request_timeout, options.max_body_size,
                               options.download_non_html, self.archive)
        self.policy.start(self.fetcher)
        if self.journal is not None:
            # Stored on resuming too: a journal of an older version has none yet.
            self.journal.set_meta('options', self._journaled_options())
        if self.journal is not None and not self.journal.is_empty():
            self._restore()
        else:
            self._queue(self._first_items())

    def _first_items(self):
        """The roots, and with `sitemaps` the places of their sitemaps, admitted."""
        sources = [(root, 0) for root in self.roots]
        if self.options.sitemaps:  # sitemaps.py: work items of their own, after the roots
            sources.extend(sitemap_sources(self.roots))
        items = []
        for url, depth in sources:
            if url not in self.seen_urls:  # a root given twice is crawled once
                self._admit(url, depth, self.options.max_redirect, items)
        if self.journal is not None:
            self.journal.set_meta('roots', self.roots)
            self.journal.queue([_journal_entry(item) for item in items])
        return items

    def _close(self, todo):
        self.frontier.close()
        self.statistics.finish(todo, self._stopping)
        if self._own_client:
            self.http_client.close()
        if self.journal is not None:
            self.journal.close()
        for output in self.outputs:
            output.close()

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
            fetched = self.policy.refusal(item)
            if fetched is None and self.policy.obey_robots:
                fetched = yield self.policy.robots_verdict(item)
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

    def _settle(self, item, fetched, started, new_items):
        """The statistic of a try, or None if the item went back to the frontier."""
        if fetched is PUT_BACK:
            return None
        if fetched.__class__ is Refused:
            return self._statistic(item, started, exception=fetched.exception)
        if fetched.transient:
            if self._retry(item, fetched):
                return None
        else:
            self._succeeded(item.host)
        return self._outcome(item, fetched, started, new_items)

    def _retry(self, item, fetched):
        """Count a failure of the item's host; True if the item was put back to retry."""
        given_up = self.policy.failed(item.host, fetched)
        self._journal_failure(item)
        if given_up:
            self._fail_pending(item.host)
        if given_up or item.tries + 1 >= self.options.max_tries:
            return False
        # Once stopped, the item is dropped like those in flight, not finished as failed:
        # a journal keeps it queued, with this try counted.
        if not self._stopping:
            self.frontier.put(item._replace(tries=item.tries + 1), front=True)
        return True

    def _outcome(self, item, fetched, started, new_items):
        """The statistic of a finished try; queues what it links or redirects to."""
        if fetched.status is None:
            return self._statistic(item, started, exception=fetched.exception)
        found = self.extractors.extract(item, fetched, new_items)
        return FetchStatistic(item.url, found.next_url, fetched.status, found.exception,
                              len(fetched.body), fetched.content_type, found.encoding,
                              found.num_urls, len(new_items), item.depth,
                              self._elapsed(started), item.tries + 1)

    def _admit(self, url, depth, max_redirect, new_items):
        """Add a WorkItem for `url`, which the caller found not seen (the test comes before
        the dearer scope test), to `new_items` if the page budget allows."""
        max_pages = self.options.max_pages
        if max_pages is not None and len(self.seen_urls) >= max_pages:
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
        """Journal one finished URL, then tell the outputs in order; queue what it led to."""
        if self.journal is not None:
            self.journal.finish(statistic, [_journal_entry(new) for new in new_items])
        # Journal first, then the line: a kill between the two leaves a line missing,
        # which a resume makes again from the journal (output.mend_output); the other
        # order would leave a line that the resume then writes a second time.
        for output in self.outputs:
            output.record(statistic)
        self._queue(new_items)

    def _queue(self, items):
        for item in items:
            if self.policy.is_given_up(item.host):
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
        return self.policy.given_up(item.host)

    # -- the journal --------------------------------------------------------------------

    def _open_journal(self):
        state = self.options.state
        if state is None:
            return None
        journal = Journal(state)
        if not journal.is_empty() and not self.options.resume:
            journal.close()
            raise ValueError('%s holds a crawl already: resume it, or remove the file'
                             % state)
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
        given = dict((name, options[name]) for name in JOURNALED_OPTIONS if name in options)
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
            if name in JOURNALED_OPTIONS:
                setattr(self.options, name, value)

    def _journaled_options(self):
        return dict((name, as_journaled(getattr(self.options, name)))
                    for name in JOURNALED_OPTIONS)

    def _restore(self):
        """Take the journal's crawl back: finished URLs counted, the others queued with
        their tries, failing hosts paused (or given up) as they were."""
        for host, (failures, pause) in self.journal.hosts().items():
            self.policy.health.restore(host, failures, pause)
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
            failures, pause = self.policy.health.snapshot(item.host)
            self.journal.failed(item.url, item.tries + 1, item.host, failures, pause)

    def _succeeded(self, host):
        if self.journal is not None and self.policy.failures(host):
            self.journal.host_succeeded(host)
        self.policy.succeeded(host)


def _journal_entry(item):
    return (item.url, item.depth, item.max_redirect)

