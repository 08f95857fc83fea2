"""The crawl itself: the 500 Lines crawler's loop, on tinytornado, without its defects.

`Crawler.crawl` starts `max_tasks` workers over the crawl's work store (workstore.py: in
memory, journaled in SQLite, or shared in Redis). Each loops: lease an item, process it,
tell the store it is done (with the URLs it led to) or to retry it; the crawl is over when
the store's `lease` answers None (nothing queued, nothing in flight), or when `stop` cancels
the workers. No locks: a coroutine runs undisturbed between two ``yield``s, so "is this URL
new? then queue it" is atomic in one process; a shared store makes it atomic crawl-wide.

Processing an item is one try: the robots.txt check, one request with redirects not
followed, then the response's links or redirect target. Every URL gets exactly one
`FetchStatistic`, made when it is finished; any exception while fetching, reading or
parsing it is recorded there, and the worker goes on. A failure that may pass (no
response, 429, 502-504) puts the item back in the store for another try, after a pause
of the URL that grows with each of its tries; only failures that say the host is in
trouble pause the host (`politeness.HostHealth`), and a host given up leaves its URLs
unchecked, not broken.

Redirects are the crawler's, as in the chapter: the target is queued as a new item with
one redirect less to go, through the same seen set as links, so chains that meet are
fetched once; the target must be in scope like any link.

With `sitemaps`, each root site's robots.txt and /sitemap.xml are work items too, of negative
depth, and the pages their sitemaps list come in as roots (sitemaps.py tells how). A
robots.txt the politeness reads is fetched once: its work item takes that response (with
its redirects followed) instead of asking again.
"""
from __future__ import absolute_import, division, print_function

import collections
import sys

import six

from tinytornado import gen
from tinytornado._compat import raise_exc_info
from tinytornado.concurrent import Future
from tinytornado.httpclient import AsyncHTTPClient
from tinytornado.ioloop import IOLoop
from tinytornado.log import app_log

from .configuration import configure
from .crawloptions import (DEFAULT_OPTIONS, JOURNALED_OPTIONS, FileRefused,
                           check_crawler_options)
from .extractors import Admission, Extractors, checked_extractors, default_extractors
from .fetch import Fetcher, describe_exception
from .hostpolicy import PutBack, Refused
from .journal import as_journaled
from .output import STDOUT, STDOUT_NAME, open_output
from .outputs import (ArchiveOutput, CallbackOutput, JsonLinesOutput, OutputError,
                      StatisticsOutput)
from .scope import Scope
from .sitemaps import ROBOTS_DEPTH, is_sitemap_depth, sitemap_sources
from .stats import CrawlStatistics, FetchStatistic
from .warc import open_archive
from .workstore import host_key, open_work_store

__all__ = ['Crawler', 'DEFAULT_OPTIONS', 'WorkItem', 'GivenBack']

# One unit of work: `depth` counts links followed from a root (a redirect keeps it);
# `max_redirect` is the redirect budget left; `tries` the tries made before this one.
WorkItem = collections.namedtuple('WorkItem', 'url host depth max_redirect tries')

# A try's end, besides a FetchStatistic (its URL finished): the item went back to the store
# (for another try, for its host's turn, or dropped once the crawl stops); `stored` is the
# store's Future of that.
GivenBack = collections.namedtuple('GivenBack', 'stored')

# The failure of a URL whose hand-outs all ended with its lease expired (a shared store
# counts each as a try): it killed or hung every worker it went to, and is not tried again.
_LEASES_LOST = 'LeaseExpired: handed out %d times, never finished'


def _log_failed_give_back(future):
    try:
        future.result()
    except Exception as e:  # the store is gone: the lease runs out instead
        app_log.warning('an item leased ahead could not be given back (%s): it comes back '
                        'to the crawl when its lease expires, with a try counted', e)


class Crawler(object):
    """Crawl every page reachable from `roots` in scope; crawloptions.OPTIONS tells the
    options (`options`, once resolved: an `OptionValues`). Instead of roots and options,
    a `configuration.Configuration` resolved beforehand may be given (the command line
    does: `configuration.resolve` waits for a shared crawl's options).

    ::

        statistics = IOLoop.current().run_sync(Crawler(['http://example.test/']).crawl)
        print(statistics.report())

    The crawl's work is in its `store` (workstore.py): by default in this process, journaled
    in SQLite with `state`, or a `workstore.SharedWorkStore` that several processes crawl
    together.

    `output` is a path ('-': standard output), or a text stream its caller closes. The
    crawl opens a path itself, once its store has accepted the crawl (a crawl refused
    leaves the file as it was), and closes it at its end. With a journal (`state`), a
    URL's line is written
    once the journal has the URL as finished: after a kill, the output may lack the last
    URL's line and end in a torn line, never the other way round. A resumed crawl mends
    the file at `output` from its journal first (`output.open_output`): it then holds
    exactly one line per finished URL, at every instant after::

        Crawler([], state=state, resume=True, output=path)

    A resumed crawl takes its roots and the options that shape it (scope, politeness,
    tries) back from the journal (`configuration.configure`): give them again or not, but
    the same; the others (`max_tasks`, timeouts, `hashed_seen`, where results go) may
    change, and the files the command line wrote are written again unless given others.

    Polite by default: at most `max_per_host` (2) requests in flight to one host, and
    between two requests to it a delay adapted to its latency by AutoThrottle's rule
    (`politeness.AutoThrottle`: from `start_delay`, halfway to latency /
    `target_concurrency` after each answer, within `min_delay` and `max_delay`, never
    shorter after an answer that is not a 200). A `delay` fixes the delay instead, and a
    robots.txt Crawl-delay fixes its host's. Whatever the delay, no host gets more than
    `max_rate` requests per second (5). ``max_per_host=None, delay=0, max_rate=0`` crawl
    as fast as `max_tasks` allows.

    What a response leads to is told by `extractors` (extractors.py tells how to write
    one): the first that wants a response reads it. By default
    ``extractors.default_extractors(frames)``: redirects, sitemaps and HTML pages; a list
    given replaces them (add yours to ``default_extractors()`` to keep them).

    Raises:
        ValueError: a root is not an http(s) URL, an option is invalid (out of its range,
            without one it requires, with one it excludes: a
            `crawloptions.ConfigurationError`), `state` holds a crawl and `resume` is
            not set, roots or options given to a resume contradict the journal's, the
            `output` file cannot be written, or `frames` is given with `extractors`.
        TypeError: an unknown option, an extractor without its methods, or a
            configuration given with roots or options.
    """

    def __init__(self, roots=None, store=None, extractors=None, configuration=None,
                 **given):
        if extractors is not None:  # checked before a store is opened, as options are
            if 'frames' in given:
                raise ValueError('frames chooses the default extractors: with extractors, '
                                 'give HtmlLinks(frames=True) among them instead')
            extractors = checked_extractors(extractors)
        if configuration is None:
            check_crawler_options(given)
            configuration = configure(given, roots or ())
        elif roots is not None or given:
            raise TypeError('Crawler takes a configuration, or roots and options: not both')
        self.options = options = configuration.options
        self.io_loop = IOLoop.current()
        self.store = (store if store is not None
                      else open_work_store(configuration, WorkItem))
        # The store's contract (storecontract.py): open it, start it, use it.
        self.roots = self.store.open(configuration.roots, options)
        self.policy = self.store.policy
        self.scope = Scope(self.roots, strict=options.strict, include=options.include,
                           exclude=options.exclude)
        self.seen_urls = self.store.seen_urls
        self.statistics = CrawlStatistics(options.keep_statistics, options.max_tasks)
        self.done = self.statistics.done
        admission = Admission(self.seen_urls, self.scope, self._admit, options.max_redirect,
                              options.on_links, options.on_written_links,
                              options.on_external_links, options.max_depth)
        if extractors is None:  # frames may come from a resumed crawl's journal
            extractors = default_extractors(options.frames)
        self.extractors = Extractors(extractors, admission)
        self.http_client = options.http_client
        self._own_client = self.http_client is None
        self.fetcher = None  # made by crawl(), with the client
        self._stopped = Future()
        self._stopping = False
        self._failure = None  # exc_info of an error that ended the crawl
        # Last: a crawl refused above must not have emptied the WARC file, nor the output.
        self.archive = open_archive(options.warc, options.user_agent, options.obey_robots,
                                    options.resume)
        self.outputs = self._outputs(self._open_output())

    @property
    def frontier(self):
        """The in-process store's queue of hosts (None for a shared store's)."""
        return self.store.frontier

    @property
    def journal(self):
        """The SQLite store's `journal.Journal`, or None."""
        return self.store.journal

    def _open_output(self):
        """The JsonLinesOutput of `output`, or None. A path is opened here, a resumed
        crawl's mended from its journal first."""
        output = self.options.output
        if output is None or not isinstance(output, six.string_types):
            return None if output is None else JsonLinesOutput(output)
        journal = self.store.journal
        try:
            stream = open_output(output, journal if journal is not None and
                                 not journal.is_empty() else None,
                                 shared=self.options.redis is not None)
        except (ValueError, IOError, OSError) as e:  # the crawl is refused: free it all
            self.store.close()
            if self.archive is not None:
                self.archive.close()
            raise FileRefused('output', output, e)
        if output == STDOUT:
            return JsonLinesOutput(stream, STDOUT_NAME, owned=True)
        return JsonLinesOutput(stream, output, 'output', owned=True)

    def _outputs(self, lines):
        """The crawl's outputs in order (see outputs.py): `lines` (the JSON lines, or
        None) first; the journal is not one of them: the store writes it first, with the
        URLs a finished one queued."""
        options = self.options
        outputs = [StatisticsOutput(self.statistics)]
        if lines is not None:
            outputs.insert(0, lines)
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
        workers = []
        try:
            yield self._start()
            workers = [self._work() for _ in range(self.options.max_tasks)]
            gen.multi(workers).add_done_callback(lambda _: self._end())
            yield self._stopped
        finally:
            todo = self.store.unfinished()  # in flight counts: it was not finished
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
        the URLs not finished stay queued there for `resume`; a shared store gives the
        leases of this process to other workers once they expire.
        """
        self._stopping = True
        self._end()

    def _end(self):
        if not self._stopped.done():
            self._stopped.set_result(None)

    @gen.coroutine
    def _start(self):
        options = self.options
        if self._own_client:
            self.http_client = AsyncHTTPClient(force_instance=True,
                                               max_clients=options.max_tasks)
        self.fetcher = Fetcher(self.http_client, options.user_agent, options.connect_timeout,
                               options.request_timeout, options.max_body_size,
                               options.download_non_html, self.archive,
                               validate_cert=not options.insecure, ca_file=options.ca_file)
        self.policy.start(self.fetcher)
        if self.options.sitemaps:
            self.policy.keep_robots_responses(
                url for url, depth in sitemap_sources(self.roots) if depth == ROBOTS_DEPTH)
        finished = yield self.store.start(self._journaled_options(), self._first_items,
                                          self._record)
        for statistic in finished:  # a resume's
            self.statistics.add(statistic, restored=True)

    def _first_items(self):
        """The roots, and with `sitemaps` the places of their sitemaps, admitted."""
        sources = [(root, 0) for root in self.roots]
        if self.options.sitemaps:  # sitemaps.py: work items of their own, after the roots
            sources.extend(sitemap_sources(self.roots))
        items = []
        for url, depth in sources:
            if url not in self.seen_urls:  # a root given twice is crawled once
                self._admit(url, depth, self.options.max_redirect, items)
        return items

    def _close(self, todo):
        self.store.close()
        self.statistics.finish(todo, self._stopping)
        if self._own_client and self.http_client is not None:
            self.http_client.close()
        failure = None
        for output in self.outputs:  # each is closed, whichever fails
            try:
                output.close()
            except OutputError:
                failure = failure or sys.exc_info()
        if failure is not None:
            raise_exc_info(failure)

    @gen.coroutine
    def _work(self):
        store = self.store
        following = None  # the next item's lease, asked for with the last finish
        try:
            # Checked as well as cancelled: a cancel that meets an outcome already on its
            # way lets the worker go round once more.
            while not self._stopped.done():
                try:
                    item = yield store.lease() if following is None else following
                    following = None
                    if item is None:
                        return  # the crawl's work is over
                    if item.tries >= self.options.max_tries:
                        yield self._finish_unfinishable(item)
                    else:
                        following = yield self._process(item)
                except gen.CancelledError:
                    raise
                except Exception:
                    # Not a URL's failure (those are recorded): the output or the store
                    # failed. The crawl cannot go on without them; crawl() raises the
                    # first (every worker meets a store that is gone: one is enough).
                    self._fail(sys.exc_info())
        except gen.CancelledError:
            pass  # stop() was called: crawl() cancels the workers
        finally:
            self._let_go(following)

    def _let_go(self, following):
        """Give up `following`, a lease asked for with a finish that no task will take
        (the crawl is stopping, or failed): one not answered is cancelled; an item handed
        out goes back as it was, untried."""
        if following is None or following.cancel() or following.cancelled():
            return
        if following.exception() is None and following.result() is not None:
            self.io_loop.add_future(self.store.put_back(following.result()),
                                    _log_failed_give_back)

    def _fail(self, exc_info):
        if self._failure is None:
            self._failure = exc_info
        self.stop()

    # -- one URL ------------------------------------------------------------------------

    @gen.coroutine
    def _process(self, item):
        """Try `item` once: record its statistic, or give it back to the store; a Future
        of the next item (see `_work`), or None.

        One coroutine per try, which waits on the HTTP client's Future and the store's
        itself: this is the crawl's hot path, and each nested coroutine would add a
        generator, a Runner and a Future per URL.
        """
        started = self.io_loop.time()
        new_items = []
        try:
            fetched = self.policy.refusal(item)
            if fetched is None and self.policy.obey_robots:
                fetched = yield self.policy.robots_verdict(item)
            if fetched is None and item.depth == ROBOTS_DEPTH:  # read for its sitemaps
                fetched = self.policy.robots_response(item.url)  # None: not read yet
            if fetched is None:
                sending = self.policy.hosts.request_started(item.host)
                download, response = self.fetcher.start(
                    item.url, sending=sending,
                    download_non_html=is_sitemap_depth(item.depth) or None)  # XML, wanted
                fetched = download.outcome((yield response))
                sending.answered(fetched.status == 200)  # the throttle's latency
            outcome = self._settle(item, fetched, started, new_items)
        except gen.CancelledError:
            raise
        except Exception as e:  # whatever went wrong belongs to this URL's statistic
            app_log.debug('crawling %s failed', item.url, exc_info=True)
            outcome = self._statistic(item, started, exception=describe_exception(e))
        if isinstance(outcome, GivenBack):
            yield outcome.stored
            return
        # The store records the URL first (a journal, a shared crawl's stream), then the
        # outputs: see _record. The next lease is asked for with the finish, so that a
        # store that sends both together (the shared one) makes one round trip a URL.
        finished = self.store.done(item, outcome, new_items)
        following = None if self._stopped.done() else self.store.lease()
        try:
            admitted = yield finished
            if admitted is not None:  # None: the lease was lost, its new holder reports
                self._record(outcome)
        except BaseException:  # the store or an output failed, or the crawl stops
            self._let_go(following)
            raise
        raise gen.Return(following)

    @gen.coroutine
    def _finish_unfinishable(self, item):
        """Finish as failed, untried, an item whose every hand-out expired unfinished."""
        statistic = FetchStatistic(item.url, exception=_LEASES_LOST % item.tries,
                                   depth=item.depth, tries=item.tries)
        if (yield self.store.done(item, statistic, [])) is not None:
            self._record(statistic)

    def _settle(self, item, fetched, started, new_items):
        """The end of a try: its FetchStatistic, or a GivenBack.

        `fetched` is what the policy or the request answered: a `hostpolicy.PutBack` (no
        try), a `hostpolicy.Refused` (none made, or robots.txt says no), or an answer to
        settle (`fetch.Fetched`, or the policy's `hostpolicy.Failure`, alike).
        """
        if isinstance(fetched, PutBack):
            return GivenBack(self.store.put_back(item))
        if isinstance(fetched, Refused):
            return self._statistic(item, started, exception=fetched.exception,
                                   tried=fetched.tried)
        if fetched.transient:
            retried = self._retry(item, fetched)
            if retried is not None:
                return retried
        elif fetched.host_final:  # the store fails the host's others at `done`
            self.policy.give_up(item.host, fetched.exception)
        else:
            self.policy.succeeded(item.host)  # a journaling store reads it at `done`
        return self._outcome(item, fetched, started, new_items)

    def _retry(self, item, fetched):
        """Count the failure (of the URL, and of its host if it says the host is in
        trouble); the GivenBack of its retry, after its back-off, or None if it fails for
        good."""
        pause, given_up = self.policy.failed(item, fetched)  # the store fails its others
        if given_up or item.tries + 1 >= self.options.max_tries:
            return None
        # Once stopped, the item is dropped like those in flight, not finished as failed:
        # a journal keeps it queued, with this try counted.
        if self._stopping:
            return GivenBack(self.store.abandon(item))
        return GivenBack(self.store.retry(item, pause))

    def _outcome(self, item, fetched, started, new_items):
        """The statistic of a finished try; collects what it links or redirects to."""
        if fetched.status is None:
            return self._statistic(item, started, exception=fetched.exception)
        found = self.extractors.extract(item, fetched, new_items)
        return FetchStatistic(item.url, found.next_url, fetched.status, found.exception,
                              len(fetched.body), fetched.content_type, found.encoding,
                              found.num_urls, len(new_items), item.depth,
                              self._elapsed(started), item.tries + 1)

    def _admit(self, url, depth, max_redirect, new_items):
        """Add a WorkItem for `url`, which the caller found not seen (the test comes before
        the dearer scope test), to `new_items` if the page budget allows.

        A shared store's `seen_urls` holds only what this process saw, and never more than
        the crawl did, so its budget test here is one the store's own would pass too.
        """
        max_pages = self.options.max_pages
        if max_pages is not None and len(self.seen_urls) >= max_pages:
            return
        self.seen_urls.add(url)
        new_items.append(WorkItem(url, host_key(url), depth, max_redirect, 0))

    def _statistic(self, item, started, exception, tried=True):
        return FetchStatistic(item.url, exception=exception, depth=item.depth,
                              tries=item.tries + tried, elapsed=self._elapsed(started))

    def _elapsed(self, started):
        return round(self.io_loop.time() - started, 6)

    # -- recording ----------------------------------------------------------------------

    def _record(self, statistic):
        """Tell the outputs in order of a URL the store has recorded."""
        # Store first, then the line: a kill between the two leaves a line missing,
        # which a resume makes again from the journal (output.mend_output); the other
        # order would leave a line that the resume then writes a second time.
        for output in self.outputs:
            output.record(statistic)

    def _journaled_options(self):
        return dict((name, as_journaled(getattr(self.options, name)))
                    for name in JOURNALED_OPTIONS)
