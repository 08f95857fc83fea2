"""The work stores the conformance suite runs against, one factory per kind.

`work_stores` (a fixture, parametrized: memory, sqlite, redis; `kept_work_stores` and
`shared_work_stores` the kinds with what some rules need) gives a `StoreKind`:
``kind.new()`` makes a store of a new crawl, ``kind.again()`` another store of the same
crawl (a restarted process, or a second worker of a shared crawl). The Redis kind runs
against a real redis-server (tests/redis_server.py), each store on a client of its own,
as worker processes are; ``kind.server()`` is that server, for the rules that run worker
processes on it.
"""
from __future__ import absolute_import, division, print_function

import itertools
import os

import pytest

from tinytornado import gen
from tinytornado.crawler.crawloptions import OptionValues
from tinytornado.crawler.journal import Journal
from tinytornado.crawler.engine import WorkItem
from tinytornado.crawler.redisclient import RedisClient
from tinytornado.crawler.workstore import MemoryWorkStore, SharedWorkStore, SqliteWorkStore

__all__ = ['StoreKind', 'opened', 'started']

KINDS = ['memory', 'sqlite', 'redis']


class StoreKind(object):
    """Makes stores of one kind; see the module docstring.

    `keeps`: a store of the kind keeps a crawl past its close (a journal, Redis).
    `shared`: several stores of one crawl work at once. `expiring`: a lease not
    renewed comes back to the crawl (a dead worker's).
    """

    def __init__(self, name, tmpdir, start_redis_server):
        self.name = name
        self.keeps = name != 'memory'
        self.shared = self.expiring = name == 'redis'
        self._tmpdir = tmpdir
        self._start_redis_server = start_redis_server
        self._server = None
        self._crawls = itertools.count()
        self._crawl = None
        self._stores = []

    def server(self, **options):
        """The redis-server of a Redis kind, started with `options` (its config
        directives, e.g. ``appendonly='yes'``) by the first call that needs it."""
        assert self.name == 'redis', 'a %s store has no redis-server' % self.name
        if self._server is None:
            self._server = self._start_redis_server(**options)
        else:
            assert not options, 'the redis-server was started already'
        return self._server

    def new(self, **options):
        """A store of a new crawl; `options` of a Redis store: lease_seconds."""
        self._crawl = 'crawl%d' % next(self._crawls)
        return self._make(False, options)

    def again(self, **options):
        """Another store of the crawl of the last `new`."""
        return self._make(True, options)

    def _make(self, again, options):
        if self.name == 'memory':
            store = MemoryWorkStore()
        elif self.name == 'sqlite':
            store = SqliteWorkStore(
                Journal(os.path.join(str(self._tmpdir), self._crawl + '.db')), WorkItem)
        else:
            client = RedisClient(self.server().url(), backoff_base=0.01)
            store = SharedWorkStore(client, self._crawl, WorkItem, own_client=True,
                                    **options)
        self._stores.append(store)
        return store

    def close_all(self):
        for store in self._stores:
            if store.policy is not None:  # opened: a close frees what it made
                store.close()


def opened(store, roots, **options):
    """`store` opened for `roots` with crawler `options`; the OptionValues."""
    values = OptionValues(options)
    store.open(roots, values)
    return values


@gen.coroutine
def started(store, roots, reports=None, **options):
    """`store` opened and started for `roots` (each one an item); a Future of the
    statistics `start` restored. `reports` collects what the store reports."""
    opened(store, roots, **options)
    first = [WorkItem(root, root.split('/')[2], 0, 10, 0) for root in store.roots]
    report = reports.append if reports is not None else _unexpected_report
    for item in first:
        store.seen_urls.add(item.url)
    restored = yield store.start({}, lambda: first, report)
    raise gen.Return(restored)


def _unexpected_report(statistic):
    raise AssertionError('the store reported %r' % (statistic,))


def _kinds(request, tmpdir, start_redis_server):
    kind = StoreKind(request.param, tmpdir, start_redis_server)
    yield kind
    kind.close_all()


# Every kind; those that keep a crawl past a store's close; those whose stores share a
# crawl at once and whose leases expire.
work_stores = pytest.fixture(params=KINDS)(_kinds)
kept_work_stores = pytest.fixture(params=[kind for kind in KINDS if kind != 'memory'])(_kinds)
shared_work_stores = pytest.fixture(params=['redis'])(_kinds)
