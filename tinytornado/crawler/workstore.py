"""The crawl's work stores: its seen set, its queue of hosts and its record, each keeping
the contract of storecontract.py, the one interface the engine uses.

- `MemoryWorkStore`: the crawl in this process, a `frontier.Frontier` (per-host queues,
  politeness counted from each request's sending, AutoThrottle) and a seen set;
- `SqliteWorkStore`: the same, journaled in SQLite (`journal.Journal`), so that a killed
  crawl resumes with its tries and its failing hosts (its options and roots were taken
  back when its configuration was resolved: configuration.py);
- `SharedWorkStore`: a `redisstore.RedisWorkStore`, shared by any number of processes.

The in-process stores answer with Futures already resolved, which a coroutine goes
through without a loop pass: the hot path costs one call more per URL than the bare
frontier. They fail a given-up host's URLs themselves (those waiting when it is given
up, those found later, those a resume restores), without a try, through the `report` of
`start`; the SQLite store journals a host's failures in a row as its policy counts them,
read when an item of the host is given back, and each hand-out as a try when it is made
(storecontract.py's rule: a crawl killed during a request resumes with the try counted). In the shared store a URL of a host this
process gave up is refused when leased (the policy's `refusal`: other processes may not
have given it up). The politeness is the same rule in every store
(`politeness.PolitenessRule`): in the shared one the delay between two hand-outs to a host
is the store's, crawl-wide, adapted (without `delay`) to the latencies every process
reports into one estimate per host, and never under the rate ceiling's interval.

Invariant of the in-process stores: every item leased (or taken out of the queue, its
host given up) is released once; `lease` resolves None once none is queued or in flight.
"""
from __future__ import absolute_import, division, print_function

import json

from tinytornado import gen
from tinytornado._waiters import resolved_future
from tinytornado.ioloop import IOLoop
from tinytornado.log import app_log

from .configuration import stored_contradiction
from .crawloptions import JOURNALED_OPTIONS
from .frontier import Frontier
from .hostpolicy import HostPolicy
from .redisclient import ConnectionError
from .redisstore import RedisWorkStore
from .seen import new_seen_set
from .stats import FetchStatistic
from .storecontract import WorkStore
from .urls import normalize_url

__all__ = ['MemoryWorkStore', 'SqliteWorkStore', 'SharedWorkStore', 'SharedHosts',
           'open_work_store', 'journal_entry', 'host_key', 'SHARED_META_OPTIONS']

# The options a shared crawl's meta carries, which every worker must share: the
# journaled ones, and the form of the seen set in Redis.
SHARED_META_OPTIONS = JOURNALED_OPTIONS + ('hashed_seen',)


_NOTHING = resolved_future(None)  # read only: a Future's outcome never changes


def journal_entry(item):
    """The (url, depth, max_redirect) the journal keeps of a WorkItem."""
    return (item.url, item.depth, item.max_redirect)


def open_work_store(configuration, item_type):
    """The store a `configuration.Configuration` asks for, over what it opened: shared in
    Redis through its client, journaled in its journal, else in this process. The store
    owns them from then on. `item_type` makes the items of the stores that make some
    (the engine's WorkItem)."""
    options = configuration.options
    if configuration.client is not None:
        return SharedWorkStore(configuration.client, options.crawl_id, item_type,
                               lease_seconds=options.lease_seconds, own_client=True)
    if configuration.journal is not None:
        return SqliteWorkStore(configuration.journal, item_type)
    return MemoryWorkStore()


def _required_roots(roots):
    roots = [normalize_url(root) for root in roots]
    if not roots:
        raise ValueError('no root URL to crawl')
    return roots


class MemoryWorkStore(WorkStore):
    """The work of a crawl in this process; see the module docstring."""

    def __init__(self):
        self.roots = self.report = None

    def open(self, roots, options):
        """The normalised roots; ValueError if there is none."""
        self.roots = _required_roots(roots)
        self.seen_urls = new_seen_set(options.hashed_seen)
        self.policy = HostPolicy(options)
        self.frontier = self.hosts = Frontier(*self.policy.frontier_settings())
        self.policy.attach(self.frontier)
        return self.roots

    def start(self, meta, first_items, report):
        """Queue the first items; a Future of no statistic (nothing was finished)."""
        self.report = report
        self._queue(first_items())
        return resolved_future([])

    # -- the work ------------------------------------------------------------------------

    def lease(self):
        if self.frontier.unfinished() == 0:
            return resolved_future(None)
        return self.frontier.get()

    def done(self, item, statistic, new_items):
        """Record `statistic` of leased `item`; queue `new_items` (admitted by the engine
        through `seen_urls`), failing those of given-up hosts; a Future of `new_items`."""
        self._record(item, statistic, new_items)
        is_given_up = self.policy.is_given_up
        put = self.frontier.put
        refused = []
        for new in new_items:
            if is_given_up(new.host):
                refused.append(new)
            else:
                put(new)
        if is_given_up(item.host):
            self._fail_pending(item.host)
        self._release(item)
        for new in refused:
            self._fail_given_up(new, 0)
        return resolved_future(new_items)

    def retry(self, item, delay=0.0):
        """Put `item` back, before its host's others, with one more try, due after
        `delay` seconds (its back-off)."""
        self._record_failure(item)
        self.frontier.put_later(item._replace(tries=item.tries + 1), delay)
        self._release(item)
        return _NOTHING

    def put_back(self, item):
        """Put `item` back as it was, for its host's next turn (no try was made)."""
        self.frontier.put(item, front=True)
        self._release(item)
        return _NOTHING

    def abandon(self, item):
        """Let go of `item` unfinished: a stopped crawl drops it (a journal keeps it,
        with its failed try counted)."""
        self._record_failure(item)
        self._release(item)
        return _NOTHING

    def unfinished(self):
        """Items queued or in flight."""
        return self.frontier.unfinished()

    def close(self):
        self.frontier.close()

    def _queue(self, items):
        """Queue `items`, admitted already (in `seen_urls`), failing those of given-up
        hosts (a resume's)."""
        is_given_up = self.policy.is_given_up
        put = self.frontier.put
        for item in items:
            if is_given_up(item.host):
                self._fail_given_up(item, 0)
            else:
                put(item)

    def _release(self, item):
        """`item`, leased or removed, is dealt with; once nothing is left, every waiting
        `lease` resolves None."""
        frontier = self.frontier
        frontier.task_done(item)
        if frontier.unfinished() == 0:
            frontier.release_getters(None)

    def _fail_pending(self, host):
        """Finish every waiting URL of given-up `host` as failed, without a try."""
        for item in self.frontier.remove_pending(host):
            try:
                self._fail_given_up(item, item.tries)
            finally:
                self._release(item)

    def _fail_given_up(self, item, tries):
        """Finish `item`, of a given-up host, as failed after `tries`, and report it."""
        statistic = FetchStatistic(item.url, depth=item.depth, tries=tries,
                                   exception=self.policy.given_up(item.host))
        self._record(item, statistic, ())
        self.report(statistic)

    # -- the record (a journal's) ----------------------------------------------------------

    def _record(self, item, statistic, new_items):
        pass  # nothing outlives the process

    def _record_failure(self, item):
        pass


class SqliteWorkStore(MemoryWorkStore):
    """A `MemoryWorkStore` journaled in `journal` (a `journal.Journal`, which it closes):
    whatever instant the process dies at, a resume finds each URL finished with its links
    queued, or queued with its tries. A journal that holds a crawl is resumed (whether
    one may be is the configuration's rule: configuration.py). `item_type` makes the
    items it restores (the engine's WorkItem).
    """

    def __init__(self, journal, item_type):
        MemoryWorkStore.__init__(self)
        self.journal = journal
        self.item_type = item_type
        self.resuming = not journal.is_empty()
        self._failures = {}  # host -> its failures in a row, as journaled

    def open(self, roots, options):
        """As `MemoryWorkStore.open`; the journal is closed if the crawl is refused."""
        try:
            return MemoryWorkStore.open(self, roots, options)
        except ValueError:
            self.journal.close()
            raise

    def start(self, meta, first_items, report):
        """Journal `meta` (the options; on resuming too: a journal of an older version
        has none yet); a new crawl's roots and first items too, and queue them; a resume
        takes the journal's crawl back."""
        self.journal.set_meta('options', meta)
        if self.resuming:
            self.report = report
            return resolved_future(self._restore())
        self.journal.set_meta('roots', self.roots)
        return MemoryWorkStore.start(self, meta, self._journaled(first_items), report)

    def lease(self):
        """As `MemoryWorkStore.lease`; the hand-out is journaled as a try before the
        item is given, so that a crawl killed during its request resumes with it
        counted (a URL that kills the crawl each time it is fetched ends as failed)."""
        future = MemoryWorkStore.lease(self)
        if future.done():  # the hot path: no callback
            self._journal_hand_out(future)
        else:
            future.add_done_callback(self._journal_hand_out)
        return future

    def _journal_hand_out(self, future):
        item = None if future.cancelled() or future.exception() else future.result()
        if item is not None:
            self.journal.handed_out(item.url, item.tries + 1)

    def put_back(self, item):
        """As `MemoryWorkStore.put_back`: no try was made, so the journal's count of
        the hand-out is taken back."""
        self.journal.handed_out(item.url, item.tries)
        return MemoryWorkStore.put_back(self, item)

    def _journaled(self, first_items):
        def journaled():
            items = first_items()
            self.journal.queue([journal_entry(item) for item in items])
            return items
        return journaled

    def _restore(self):
        """Take the journal's crawl back: the failing hosts paused (or given up) as they
        were, every URL in `seen_urls`, the unfinished ones queued with their tries; the
        finished ones' statistics."""
        health = self.policy.health
        for host, (failures, pause) in self.journal.hosts().items():
            health.restore(host, failures, pause)
            self._failures[host] = failures
        finished, pending = [], []
        for entry in self.journal.restore():
            self.seen_urls.add(entry.url)
            if entry.statistic is not None:
                finished.append(FetchStatistic.from_dict(entry.statistic))
            else:
                pending.append(self.item_type(entry.url, host_key(entry.url), entry.depth,
                                              entry.max_redirect, entry.tries))
        self._queue(pending)
        return finished

    def _record(self, item, statistic, new_items):
        self._record_host(item)
        self.journal.finish(statistic, [journal_entry(new) for new in new_items])

    def _record_failure(self, item):
        failures, pause = self.policy.health.snapshot(item.host)
        self.journal.failed(item.url, item.tries + 1, item.host, failures, pause)
        self._failures[item.host] = failures

    def _record_host(self, item):
        """Journal the failures in a row of `item`'s host if its try changed them."""
        failures = self.policy.failures(item.host)
        if failures != self._failures.get(item.host, 0):
            if failures:
                self._record_failure(item)
            else:
                self.journal.host_succeeded(item.host)
                del self._failures[item.host]

    def close(self):
        MemoryWorkStore.close(self)
        self.journal.close()


def host_key(url):
    """The host (and port) of a normalised URL: the key of its queue."""
    return url.split('/', 3)[2]


class SharedWorkStore(WorkStore):
    """The work of a crawl shared by many processes: a `redisstore.RedisWorkStore` as the
    engine uses it; see the module docstring.

    Args:
        client: a `redisclient.RedisClient` (closed with the store if `own_client`).
        crawl_id: the crawl's name in Redis.
        item_type: makes the items `lease` gives (the engine's WorkItem).
        lease_seconds: how long an item stays with this process unless renewed: while
            items are in flight, the store renews their leases every third of it, so a
            dead process's items come back this long after it died, and a slow fetch
            keeps its item.

    Its `seen_urls` is this process's: what it admitted or found in the crawl, tested
    before the store's own seen set so that a link seen again costs no round trip.
    """

    def __init__(self, client, crawl_id, item_type, lease_seconds=60.0, own_client=False):
        self.client = client
        self.crawl_id = crawl_id
        self.item_type = item_type
        self.lease_seconds = lease_seconds
        self.own_client = own_client
        self.store = self.roots = None
        self.io_loop = IOLoop.current()
        self._leased = 0
        self._renewal = None  # the timeout of the next renewal, while items are leased
        self._closed = False

    def open(self, roots, options):
        """The normalised roots (a worker joining the crawl takes them, and its options,
        from the crawl's meta beforehand: `configuration.resolve`); makes the Redis store of the
        policy's politeness: its per-host cap and its delay, fixed (AutoThrottle's start
        with none given)."""
        self.roots = _required_roots(roots)
        self.seen_urls = new_seen_set(options.hashed_seen)
        self.policy = HostPolicy(options)
        self.store = RedisWorkStore(
            self.client, self.crawl_id, self.item_type, lease_seconds=self.lease_seconds,
            max_per_host=self.policy.max_per_host, delay=self.policy.delay,
            politeness=self.policy.rule.store_settings(), hashed_seen=options.hashed_seen,
            max_pages=options.max_pages)
        self.hosts = SharedHosts(self.store)
        self.policy.attach(self.hosts)
        return self.roots

    @gen.coroutine
    def start(self, meta, first_items, report):
        """Start the crawl with `meta` (its options), the roots and the first items, or
        join it; ValueError if it was started with other options or roots. Nothing was
        finished by this process before."""
        fields = dict(options=dict(meta, hashed_seen=self.store.hashed_seen),
                      roots=self.roots)
        created, stored = yield self.store.start(fields, first_items())
        if not created:
            mistake = stored_contradiction(
                fields['options'], self.roots, stored.get('options') or {},
                stored.get('roots'), 'redis', 'crawl %s' % self.crawl_id, "the crawl's")
            if mistake is not None:
                raise mistake
        raise gen.Return([])

    def lease(self):
        future = self.store.lease()
        future.add_done_callback(self._count_lease)
        return future

    def _count_lease(self, future):
        if not future.cancelled() and future.exception() is None and future.result():
            self._leased += 1
            if self._renewal is None and not self._closed:
                self._renewal = self.io_loop.call_later(self.lease_seconds / 3.0,
                                                        self._renew)

    def _given_back(self):
        self._leased -= 1
        if self._leased == 0 and self._renewal is not None:
            self.io_loop.remove_timeout(self._renewal)
            self._renewal = None

    def _renew(self):
        """Renew the leases of the items in flight, and again a third of a lease later."""
        self._renewal = self.io_loop.call_later(self.lease_seconds / 3.0, self._renew)
        self.io_loop.add_future(self.store.renew(), self._renewed)

    def _renewed(self, future):
        try:
            future.result()
        except ConnectionError as e:  # the next renewal tries again
            app_log.warning('crawl %s: the leases of this process could not be renewed '
                            '(%s): a lease that expires goes to another worker',
                            self.crawl_id, e)

    def done(self, item, statistic, new_items):
        """Finish `item` with `statistic`, admitting `new_items`; a Future of those
        new crawl-wide, or None if the lease was lost."""
        self._given_back()
        return self.store.done(item, json.dumps(statistic.to_dict(), sort_keys=True),
                               new_items)

    def retry(self, item, delay=0.0):
        """Put `item` back with one more try, due after `delay` seconds (its back-off);
        the pause of its host is the store's."""
        self._given_back()
        return self.store.retry(item, delay)

    def put_back(self, item):
        """Put `item` back as it was, its host next asked its delay from now."""
        self._given_back()
        return self.store.put_back(item)

    # A stopped crawl gives its failed item back with the try counted, as a journal
    # keeps it.
    abandon = retry

    def unfinished(self):
        """The items leased to this process and not given back."""
        return self._leased

    def close(self):
        """Stop renewing leases: those of items still in flight expire, and come back
        to the crawl with a try counted, as a dead process's would."""
        self._closed = True
        if self._renewal is not None:
            self.io_loop.remove_timeout(self._renewal)
            self._renewal = None
        if self.own_client:
            self.client.close()


class _SharedSending(object):
    """A request whose spacing the shared store counted when it handed its item out; its
    answer's latency (from its last sending) goes to the store's adapted delay."""
    __slots__ = ('hosts', 'key', 'since')

    def __init__(self, hosts, key):
        self.hosts, self.key = hosts, key
        self.since = hosts.io_loop.time()

    def sent(self):
        self.since = self.hosts.io_loop.time()

    def ended(self):
        pass

    def answered(self, ok):
        store = self.hosts.store
        if store.adaptive:
            latency = self.hosts.io_loop.time() - self.since
            self.hosts._sent(store.answered(self.key, latency, ok))


class SharedHosts(object):
    """A shared store's hosts as the host policy sees them: pauses (Retry-After, backoff)
    and robots.txt's Crawl-delays go to the store, for the whole crawl.

    The store spaces its hand-outs, not the requests: a request is told of only for the
    latency of its answer (`request_started`), which adapts the store's delay. Each process reads a site's robots.txt once, in the lease of the
    first URL of the site it gets; a host with a delay (`host_delay`: its Crawl-delay,
    else the crawl's) then has that URL put back (`SharedWorkStore.put_back`), its next
    hand-out the delay after, so that robots.txt and the page are spaced as two pages are.
    """

    def __init__(self, store):
        self.store = store
        self.io_loop = IOLoop.current()
        self._delays = {}  # host -> the Crawl-delay this process read for it

    def request_started(self, key):
        return _SharedSending(self, key)

    def host_delay(self, key):
        """Seconds between two hand-outs to host `key`, crawl-wide (at least the rate
        ceiling's interval)."""
        return max(self._delays.get(key, self.store.delay), self.store.min_interval)

    def pause_host(self, key, seconds):
        self._sent(self.store.pause_host(key, seconds))

    def set_host_delay(self, key, delay):
        self._delays[key] = delay
        self._sent(self.store.set_host_delay(key, delay))

    def _sent(self, future):
        # Not waited for; a failure is the loop's to log (the crawl goes on, less polite).
        self.io_loop.add_future(future, lambda done: done.result())
