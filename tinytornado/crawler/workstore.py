"""The crawl's work store: its seen set, its queue of hosts and its record, behind one interface.

`Crawler` asks its store for work and tells it how each try went; the store decides what
is new, which host may be asked, and what survives the process. Three stores:

- `MemoryWorkStore`: today's crawl in this process, a `frontier.Frontier` (per-host queues,
  politeness counted from each request's sending, AutoThrottle) and a seen set;
- `SqliteWorkStore`: the same, journaled in SQLite (`journal.Journal`), so that a killed
  crawl resumes with its tries, its failing hosts and its options;
- `SharedWorkStore`: a `redisstore.RedisWorkStore`, shared by any number of processes.

Each implements the work-store interface of redisstore.py's docstring as the engine uses
it: ``lease()`` (an item, or None once nothing is queued or in flight), ``done(item,
statistic, new_items)`` (a Future of the items admitted, or None if the lease was lost),
``retry(item)``, ``start(meta, roots, items)``; hosts are paused and slowed through the
object ``hosts`` the `hostpolicy.HostPolicy` is attached to. The in-process stores answer
with Futures already resolved, which a coroutine goes through without a loop pass: the
hot path costs one call more per URL than the bare frontier.

What the in-process stores do that the shared one cannot (a failing host's URLs failed
without a try, `remove_pending`; the journal of a resume) keeps the crawl of one process
exactly what it was. All of them put a URL back for its host's turn after robots.txt
was read in its lease (`put_back`). In the shared store a URL of a host this process
gave up is refused when leased, and AutoThrottle is off: the delay between two hand-outs
to a host is the store's, fixed, crawl-wide (`delay`, or the throttle's `start_delay`
when none is given), since each process's adapted delay would disagree with the others'.

Invariant of the in-process stores: every item leased (or removed with
`remove_pending`) is released once, by `done`, `retry`, `abandon`, `put_back` or
`release`; `lease` resolves None once none is queued or in flight.
"""
from __future__ import absolute_import, division, print_function

import json

from tinytornado import gen
from tinytornado._waiters import resolved_future
from tinytornado.ioloop import IOLoop

from .crawloptions import JOURNALED_OPTIONS
from .frontier import Frontier
from .journal import Journal, contradictions
from .redisclient import RedisClient
from .redisstore import RedisWorkStore
from .seen import new_seen_set
from .urls import normalize_url

__all__ = ['MemoryWorkStore', 'SqliteWorkStore', 'SharedWorkStore', 'SharedHosts',
           'open_work_store', 'crawl_meta', 'meta_contradictions', 'journal_entry',
           'host_key', 'SHARED_META_OPTIONS']

# The options a shared crawl's meta carries, which every worker must share: the
# journaled ones, and the form of the seen set in Redis.
SHARED_META_OPTIONS = JOURNALED_OPTIONS + ('hashed_seen',)


_NOTHING = resolved_future(None)  # read only: a Future's outcome never changes


def journal_entry(item):
    """The (url, depth, max_redirect) the journal keeps of a WorkItem."""
    return (item.url, item.depth, item.max_redirect)


def open_work_store(options, item_type):
    """The store `options` (`crawloptions.OptionValues`) ask for: shared in Redis with
    ``redis`` (crawl ``crawl_id``), else in this process, journaled in ``state`` if set.
    `item_type` makes the items of a shared store (the engine's WorkItem).

    Raises:
        ValueError: the journal holds a crawl and ``resume`` is not set; ``redis``
            without ``crawl_id``, or with ``state``.
    """
    if options.redis is not None:
        if options.crawl_id is None:
            raise ValueError('redis needs a crawl_id naming the crawl')
        if options.state is not None:
            raise ValueError('state is for a crawl of one process: a redis crawl keeps '
                             'its work in Redis')
        return SharedWorkStore(RedisClient(options.redis, wait_timeout=options.redis_wait),
                               options.crawl_id, item_type,
                               lease_seconds=options.lease_seconds, own_client=True)
    if options.state is None:
        return MemoryWorkStore()
    return SqliteWorkStore(options.state, options.resume)


def _normalized_roots(roots):
    return [normalize_url(root) for root in roots]


def _required_roots(roots):
    roots = _normalized_roots(roots)
    if not roots:
        raise ValueError('no root URL to crawl')
    return roots


class MemoryWorkStore(object):
    """The work of a crawl in this process; see the module docstring."""
    in_process = True
    journal = None
    resuming = False

    def __init__(self):
        self.frontier = self.seen_urls = None
        # Hosts whose new URLs are not queued: the engine fails them (given up).
        self.hold_back = None

    @property
    def hosts(self):
        """What the host policy pauses and slows: the frontier."""
        return self.frontier

    def take_roots(self, roots, given, options):
        """The normalised roots; ValueError if there is none."""
        return _required_roots(roots)

    def attach(self, policy, options):
        """Make the queue of `policy`'s politeness (a `hostpolicy.HostPolicy`), and the
        seen set `options` ask for."""
        self.seen_urls = new_seen_set(options.hashed_seen)
        self.frontier = Frontier(*policy.frontier_settings())
        self.hold_back = policy.is_given_up
        policy.attach(self.frontier)

    def start(self, meta, roots, items):
        """Queue `items`, the roots admitted; a Future of (True, `meta`)."""
        self.queue(items)
        return resolved_future((True, meta))

    # -- the work ------------------------------------------------------------------------

    def queue(self, items):
        """Queue `items`, admitted already (in `seen_urls`)."""
        put = self.frontier.put
        for item in items:
            put(item)

    def lease(self):
        if self.frontier.unfinished() == 0:
            return resolved_future(None)
        return self.frontier.get()

    def done(self, item, statistic, new_items):
        """Record `statistic` of leased `item`; queue `new_items` (admitted by the engine
        through `seen_urls`) but those of held-back hosts; a Future of `new_items`."""
        self._record(statistic, new_items)
        hold_back = self.hold_back
        put = self.frontier.put
        for new in new_items:
            if not hold_back(new.host):
                put(new)
        self.release(item)
        return resolved_future(new_items)

    def retry(self, item):
        """Put `item` back, before its host's others, with one more try."""
        self.frontier.put(item._replace(tries=item.tries + 1), front=True)
        self.release(item)
        return resolved_future(True)

    def put_back(self, item):
        """Put `item` back as it was, for its host's next turn (no try was made)."""
        self.frontier.put(item, front=True)
        self.release(item)
        return _NOTHING

    def abandon(self, item):
        """Let go of `item` unfinished: a stopped crawl drops it (a journal keeps it)."""
        self.release(item)
        return _NOTHING

    def release(self, item):
        """`item`, leased or removed, is dealt with; once nothing is left, every waiting
        `lease` resolves None."""
        frontier = self.frontier
        frontier.task_done(item)
        if frontier.unfinished() == 0:
            frontier.release_getters(None)

    def remove_pending(self, host):
        """Take the waiting items of `host` out of the queue (each to be `release`d)."""
        return self.frontier.remove_pending(host)

    def finish(self, statistic):
        """Record `statistic` of an item never leased, or removed (its host given up)."""
        self._record(statistic, ())

    def unfinished(self):
        """Items queued or in flight."""
        return self.frontier.unfinished()

    def close(self):
        self.frontier.close()

    # -- the record (a journal's) ----------------------------------------------------------

    def _record(self, statistic, new_items):
        pass  # nothing outlives the process

    def failed(self, item, failures, pause):
        """`item` failed a try; its host has `failures` in a row and `pause` seconds."""

    def host_succeeded(self, host):
        """`host`, which had failures, answered."""


class SqliteWorkStore(MemoryWorkStore):
    """A `MemoryWorkStore` journaled in the SQLite file `path`: whatever instant the
    process dies at, a resume (`resume`) finds each URL finished with its links queued,
    or queued with its tries.

    Raises:
        ValueError: `path` holds a crawl and `resume` is not set.
    """

    def __init__(self, path, resume):
        MemoryWorkStore.__init__(self)
        journal = Journal(path)
        if not journal.is_empty() and not resume:
            journal.close()
            raise ValueError('%s holds a crawl already: resume it, or remove the file'
                             % path)
        self.journal = journal
        self.resuming = not journal.is_empty()

    def take_roots(self, roots, given, options):
        """The normalised roots; a resumed crawl takes them and its options (set on
        `options`) back from the journal. ValueError if `roots` or `given` options
        contradict the journal's, or there is no root."""
        try:
            roots = _normalized_roots(roots)
            if self.resuming:
                self._take_options(roots, given, options)
                roots = roots or self.journal.get_meta('roots', [])
            return _required_roots(roots)
        except ValueError:
            self.journal.close()
            raise

    def _take_options(self, roots, given, options):
        """Set the journaled options on `options`; a journal without options (from an
        older version) leaves those given."""
        stored = self.journal.get_meta('options')
        if stored is None:
            return
        given = dict((name, given[name]) for name in JOURNALED_OPTIONS if name in given)
        wrong = meta_contradictions(given, roots, dict(
            options=stored, roots=self.journal.get_meta('roots', [])), "the journal's")
        if wrong:
            raise ValueError('resume: ' + '; '.join(wrong))
        for name, value in stored.items():
            if name in JOURNALED_OPTIONS:
                setattr(options, name, value)

    def start(self, meta, roots, items):
        """Journal `meta` (the options; on resuming too: a journal of an older version
        has none yet); a new crawl's roots and `items` too, and queue them."""
        self.journal.set_meta('options', meta)
        if self.resuming:
            return resolved_future((False, meta))
        self.journal.set_meta('roots', roots)
        self.journal.queue([journal_entry(item) for item in items])
        return MemoryWorkStore.start(self, meta, roots, items)

    def restore(self, item_type):
        """The journal's crawl: ({host: (failures, pause)}, the finished URLs' statistic
        dicts, the unfinished items with their tries); every URL joins `seen_urls`."""
        finished, pending = [], []
        for entry in self.journal.restore():
            self.seen_urls.add(entry.url)
            if entry.statistic is not None:
                finished.append(entry.statistic)
            else:
                pending.append(item_type(entry.url, host_key(entry.url), entry.depth,
                                         entry.max_redirect, entry.tries))
        return self.journal.hosts(), finished, pending

    def _record(self, statistic, new_items):
        self.journal.finish(statistic, [journal_entry(new) for new in new_items])

    def failed(self, item, failures, pause):
        self.journal.failed(item.url, item.tries + 1, item.host, failures, pause)

    def host_succeeded(self, host):
        self.journal.host_succeeded(host)

    def close(self):
        MemoryWorkStore.close(self)
        self.journal.close()


def host_key(url):
    """The host (and port) of a normalised URL: the key of its queue."""
    return url.split('/', 3)[2]


class SharedWorkStore(object):
    """The work of a crawl shared by many processes: a `redisstore.RedisWorkStore` as the
    engine uses it; see the module docstring.

    Args:
        client: a `redisclient.RedisClient` (closed with the store if `own_client`).
        crawl_id: the crawl's name in Redis.
        item_type: makes the items `lease` gives (the engine's WorkItem).
        lease_seconds: how long an item stays with this process before another may
            take it; longer than the slowest try of a URL.

    Its `seen_urls` is this process's: what it admitted or found in the crawl, tested
    before the store's own seen set so that a link seen again costs no round trip.
    """
    in_process = False
    frontier = journal = hold_back = None
    resuming = False

    def __init__(self, client, crawl_id, item_type, lease_seconds=60.0, own_client=False):
        self.client = client
        self.crawl_id = crawl_id
        self.item_type = item_type
        self.lease_seconds = lease_seconds
        self.own_client = own_client
        self.store = self.seen_urls = self.hosts = None
        self._leased = 0

    def take_roots(self, roots, given, options):
        """The normalised roots; a worker joining the crawl takes them (and its options)
        from the crawl's meta beforehand (`crawl_meta`)."""
        return _required_roots(roots)

    def attach(self, policy, options):
        """Make the Redis store of `policy`'s politeness (`hostpolicy.HostPolicy`):
        its per-host cap and its delay, fixed (AutoThrottle's start with none given)."""
        self.seen_urls = new_seen_set(options.hashed_seen)
        self.store = RedisWorkStore(
            self.client, self.crawl_id, self.item_type, lease_seconds=self.lease_seconds,
            max_per_host=policy.max_per_host, delay=policy.delay,
            hashed_seen=options.hashed_seen, max_pages=options.max_pages)
        self.hosts = SharedHosts(self.store)
        policy.attach(self.hosts)

    @gen.coroutine
    def start(self, meta, roots, items):
        """Start the crawl with `meta` (its options), `roots` and `items` (the roots
        admitted), or join it; ValueError if it was started with other options or roots.
        """
        fields = dict(options=dict(meta, hashed_seen=self.store.hashed_seen), roots=roots)
        created, stored = yield self.store.start(fields, items)
        if not created:
            wrong = meta_contradictions(fields['options'], roots, stored, "the crawl's")
            if wrong:
                raise ValueError('crawl %s: %s' % (self.crawl_id, '; '.join(wrong)))
        raise gen.Return((created, stored))

    def lease(self):
        future = self.store.lease()
        future.add_done_callback(self._count_lease)
        return future

    def _count_lease(self, future):
        if not future.cancelled() and future.exception() is None and future.result():
            self._leased += 1

    def done(self, item, statistic, new_items):
        """Finish `item` with `statistic`, admitting `new_items`; a Future of those
        new crawl-wide, or None if the lease was lost."""
        self._leased -= 1
        return self.store.done(item, json.dumps(statistic.to_dict(), sort_keys=True),
                               new_items)

    def retry(self, item):
        """Put `item` back with one more try; the pause of its host is the store's."""
        self._leased -= 1
        return self.store.retry(item)

    def put_back(self, item):
        """Put `item` back as it was, its host next asked its delay from now."""
        self._leased -= 1
        return self.store.put_back(item)

    # A stopped crawl gives its failed item back with the try counted, as a journal
    # keeps it.
    abandon = retry

    def remove_pending(self, host):
        """Nothing: the URLs of a host this process gave up are refused when leased."""
        return ()

    def failed(self, item, failures, pause):
        """Nothing: the pause is the store's (`SharedHosts.pause_host`)."""

    def host_succeeded(self, host):
        """Nothing: failures in a row are counted per process."""

    def unfinished(self):
        """The items leased to this process and not given back."""
        return self._leased

    def close(self):
        if self.own_client:
            self.client.close()


def meta_contradictions(options, roots, stored, whose):
    """What in `options` (a dict) and `roots` contradicts the ``options`` and ``roots`` of
    a crawl's `stored` meta (`whose`: "the journal's"): a list of texts, roots first."""
    stored_options = stored.get('options') or {}
    wrong = ['%s=%r contradicts %s %s=%r' % (name, options[name], whose, name,
                                             stored_options[name])
             for name in contradictions(options, stored_options)]
    stored_roots = stored.get('roots') or []
    if roots and set(roots) != set(stored_roots):
        wrong.insert(0, 'roots %r contradict %s roots %r' % (roots, whose, stored_roots))
    return wrong


@gen.coroutine
def crawl_meta(client, crawl_id):
    """A Future of the meta ({'options': ..., 'roots': ...}) of crawl `crawl_id` in
    the Redis of `client`, or None if it has not started."""
    store = RedisWorkStore(client, crawl_id, item_type=tuple)
    options = yield store.get_meta('options')
    roots = yield store.get_meta('roots')
    raise gen.Return(None if options is None else dict(options=options, roots=roots))


class _Unspaced(object):
    """A request whose spacing the shared store counted when it handed its item out."""
    __slots__ = ()

    def sent(self):
        pass

    def ended(self):
        pass

    def answered(self, ok):
        pass


_UNSPACED = _Unspaced()


class SharedHosts(object):
    """A shared store's hosts as the host policy sees them: pauses (Retry-After, backoff)
    and robots.txt's Crawl-delays go to the store, for the whole crawl.

    The store spaces its hand-outs, not the requests: a request needs no telling
    (`request_started`). Each process reads a site's robots.txt once, in the lease of the
    first URL of the site it gets; a host with a delay (`host_delay`: its Crawl-delay,
    else the crawl's) then has that URL put back (`SharedWorkStore.put_back`), its next
    hand-out the delay after, so that robots.txt and the page are spaced as two pages are.
    """

    def __init__(self, store):
        self.store = store
        self.io_loop = IOLoop.current()
        self._delays = {}  # host -> the Crawl-delay this process read for it

    def request_started(self, key):
        return _UNSPACED

    def host_delay(self, key):
        """Seconds between two hand-outs to host `key`, crawl-wide."""
        return self._delays.get(key, self.store.delay)

    def pause_host(self, key, seconds):
        self._sent(self.store.pause_host(key, seconds))

    def set_host_delay(self, key, delay):
        self._delays[key] = delay
        self._sent(self.store.set_host_delay(key, delay))

    def _sent(self, future):
        # Not waited for; a failure is the loop's to log (the crawl goes on, less polite).
        self.io_loop.add_future(future, lambda done: done.result())
