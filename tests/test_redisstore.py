"""The Redis work store against a real redis-server (tests/redis_server.py): stores on
separate connections stand for workers in separate processes.

Politeness is checked on the server's clock: hand-out times are the server's TIME, as
the store records them (`lease_time`), and the test asserts the least gaps, never how
fast anything went. Waits that must last (a lease expiring, a host paused) are real time:
the server's clock cannot be moved.
"""
from __future__ import absolute_import, division, print_function

import collections
import json
import random

import pytest
import six

from tinytornado import gen
from tinytornado.crawler.engine import WorkItem
from tinytornado.crawler.redisclient import RedisClient
from tinytornado.crawler.redisstore import RedisWorkStore, crawl_prefix
from tinytornado.crawler.urls import url_hash
from tinytornado.iostream import StreamClosedError
from tinytornado.tcpclient import TCPClient
from tinytornado.tcpserver import TCPServer
from tinytornado.testing import bind_unused_port


def item(url, depth=0, tries=0):
    return WorkItem(url, url.split('/', 3)[2], depth, 10, tries)


def items(*urls):
    return [item(url) for url in urls]


def record(url):
    return json.dumps({'url': url})


class _Stores(object):
    """Makes stores, each on a client of its own (a worker process), of one server."""

    def __init__(self, start_redis_server):
        self._start_redis_server = start_redis_server
        self.server = None
        self.clients = []

    def __call__(self, crawl_id='crawl', **settings):
        if self.server is None:
            self.server = self._start_redis_server()
        client = RedisClient(self.server.url(), backoff_base=0.01, backoff_max=0.1)
        self.clients.append(client)
        return RedisWorkStore(client, crawl_id, WorkItem, **settings)

    def close(self):
        for client in self.clients:
            client.close()


@pytest.fixture
def new_store(start_redis_server, io_loop):
    """``new_store(crawl_id='crawl', **settings)`` -> a RedisWorkStore on a new client."""
    stores = _Stores(start_redis_server)
    yield stores
    stores.close()


def ms(seconds):
    """Server times and gaps in whole milliseconds, the store's unit: exact to compare."""
    return int(round(seconds * 1000))


@gen.coroutine
def server_time(store):
    """The server's TIME, to the millisecond below, as the store keeps time."""
    seconds, microseconds = yield store.client.execute('TIME')
    raise gen.Return(int(seconds) + int(microseconds) // 1000 / 1000.0)


@gen.coroutine
def lease_all(store):
    """Lease and finish everything left; the URLs in the order handed out."""
    urls = []
    while True:
        leased = yield store.lease()
        if leased is None:
            raise gen.Return(urls)
        urls.append(leased.url)
        yield store.done(leased, record(leased.url))


@gen.coroutine
def finished_urls(store):
    records = yield store.finished_records()
    raise gen.Return([url for _, url, _ in records])


def test_crawl_ids_with_braces_are_refused():
    assert crawl_prefix('news') == 'tinycrawl:{news}:'
    for bad in ['', 'a{b', 'a}b']:
        with pytest.raises(ValueError):
            crawl_prefix(bad)


def test_admit_dedups_across_two_workers(new_store):
    first, second = new_store(), new_store()
    admitted = yield [first.admit(items('http://a/1', 'http://a/2', 'http://b/1')),
                      second.admit(items('http://a/2', 'http://b/1', 'http://b/2',
                                         'http://b/2'))]
    # Whichever ran first, each URL was admitted by one of them only.
    assert sorted(admitted[0] + admitted[1]) == items('http://a/1', 'http://a/2',
                                                      'http://b/1', 'http://b/2')
    status = yield second.status()
    assert (status['seen'], status['queued'], status['hosts']) == (4, 4, 2)
    assert (yield first.admit(items('http://b/2'))) == []


def test_hosts_are_served_in_turn_each_in_its_order(new_store):
    store = new_store()
    yield store.admit(items('http://a/1', 'http://a/2', 'http://a/3', 'http://b/1',
                            'http://b/2', 'http://c/1'))
    assert (yield lease_all(store)) == ['http://a/1', 'http://b/1', 'http://c/1',
                                        'http://a/2', 'http://b/2', 'http://a/3']


def test_lease_done_retry(new_store):
    store = new_store()
    yield store.admit(items('http://a/1', 'http://b/1'))
    first = yield store.lease()
    assert first == item('http://a/1')
    new = yield store.done(first, record(first.url), [item('http://a/2', 1),
                                                      item('http://b/1', 1)])
    assert new == [item('http://a/2', 1)]  # b/1 was queued already
    second = yield store.lease()
    assert second == item('http://b/1')
    assert (yield store.retry(second)) is True
    status = yield store.status()
    assert (status['queued'], status['leased'], status['finished']) == (2, 0, 1)
    # Back at the front of its host, with its try counted.
    assert (yield store.lease()) == item('http://a/2', 1)
    assert (yield store.lease()) == item('http://b/1', tries=1)
    with pytest.raises(ValueError):
        store.done(item('http://c/1'), '{}')


def test_urls_whose_item_texts_hold_escapes_come_back_whole(new_store):
    """The scripts read an item text's URL and host with a pattern where neither holds a
    JSON escape, and decode the text otherwise (a reclaim's, written by cjson, escapes
    each '/'): either way a URL is leased, finished and recorded as it was admitted."""
    store = new_store()
    urls = ['http://a/plain', six.ensure_str(u'http://a/caf\xe9'), 'http://a/say"hi"',
            'http://a/back\\slash']
    yield store.admit(items(*urls))
    assert sorted((yield lease_all(store))) == sorted(urls)
    assert sorted((yield finished_urls(store))) == sorted(urls)
    status = yield store.status()
    assert (status['over'], status['finished'], status['leased']) == (True, 4, 0)


def test_records_are_read_once_each_in_pages(new_store):
    store = new_store()
    yield store.admit(items(*['http://a/%d' % n for n in range(5)]))
    yield lease_all(store)
    first = yield store.finished_records(count=3)
    rest = yield store.finished_records(after=first[-1][0], count=3)
    assert [(url, json.loads(text)['url']) for _, url, text in first + rest] == [
        ('http://a/%d' % n, 'http://a/%d' % n) for n in range(5)]
    assert (yield store.finished_records(after=rest[-1][0])) == []


def test_the_per_host_cap_holds_across_workers(new_store):
    first, second = new_store(max_per_host=2), new_store(max_per_host=2)
    yield first.admit(items('http://a/1', 'http://a/2', 'http://a/3'))
    held = yield [first.lease(), first.lease()]
    assert [leased.url for leased in held] == ['http://a/1', 'http://a/2']
    yield first.admit(items('http://b/1'))
    assert (yield second.lease()).url == 'http://b/1'
    waiting = second.lease()
    yield gen.sleep(0.3)  # several polls: a/3 must wait for a slot of host a
    assert not waiting.done()
    yield first.done(held[0], record(held[0].url))
    assert (yield waiting).url == 'http://a/3'


def test_the_delay_holds_across_workers_on_the_servers_clock(new_store):
    workers = [new_store(delay=0.2), new_store(delay=0.2)]
    yield workers[0].admit(items(*['http://a/%d' % n for n in range(4)] +
                                 ['http://b/%d' % n for n in range(4)]))
    handed = collections.defaultdict(list)

    @gen.coroutine
    def work(store):
        while True:
            leased = yield store.lease()
            if leased is None:
                return
            handed[leased.host].append(store.lease_time(leased))
            yield store.done(leased, record(leased.url))

    yield [work(store) for store in workers for _ in range(2)]
    for host in ('a', 'b'):
        times = sorted(handed[host])
        assert len(times) == 4
        assert min(ms(later) - ms(earlier) for earlier, later in zip(times, times[1:])) >= 200


def test_an_expired_lease_is_reclaimed_with_a_try_more_and_its_done_is_lost(new_store):
    dying, other = new_store(lease_seconds=0.2), new_store()
    yield dying.admit([item('http://a/1', tries=2), item('http://b/1')])
    abandoned = yield [dying.lease(), dying.lease()]
    # `other` waits, since the crawl is not over while leases are out, and then gets
    # the items back, the expired hand-out counted as a try.
    again = yield [other.lease(), other.lease()]
    assert sorted(again) == [item('http://a/1', tries=3), item('http://b/1', tries=1)]
    for leased in again:
        yield other.done(leased, record('by other'), items('http://a/2'))
    # Too late: nothing happens, not even to their links.
    assert (yield dying.done(abandoned[0], record('by dying'), items('http://a/3'))) is None
    assert (yield dying.retry(abandoned[1])) is False
    with pytest.raises(ValueError):
        dying.done(abandoned[0], '{}')
    records = yield other.finished_records()
    assert sorted((url, text) for _, url, text in records) == [
        ('http://a/1', record('by other')), ('http://b/1', record('by other'))]
    status = yield other.status()
    assert (status['seen'], status['queued'], status['leased']) == (3, 1, 0)


def test_a_late_finish_by_the_same_worker_is_dropped_with_a_log_line(new_store,
                                                                      app_log_records):
    # One worker, two tasks: the first's lease expires (not renewed), the second gets the
    # URL again; each finishes with the token of its own lease, so the first's finish is
    # dropped (logged), and the second's counts: no ValueError, the URL finished once.
    store = new_store(lease_seconds=0.1)
    yield store.admit(items('http://a/1'))
    first = yield store.lease()
    yield gen.sleep(0.2)
    second = yield store.lease()
    assert (second.url, second.tries) == ('http://a/1', 1)
    assert (yield store.done(first, record('late'), items('http://a/2'))) is None
    assert [r.getMessage() for r in app_log_records] == [
        'http://a/1 not finished: its lease was lost (it expired, and the URL was handed '
        'out again); its new holder finishes it']
    assert (yield store.done(second, record('on time'), items('http://a/3'))) == items(
        'http://a/3')
    records = yield store.finished_records()
    assert [(url, text) for _, url, text in records] == [('http://a/1', record('on time'))]


def test_reclaim_puts_expired_leases_back(new_store):
    store = new_store(lease_seconds=0.1)
    yield store.admit(items('http://a/1', 'http://b/1'))
    yield [store.lease(), store.lease()]
    assert (yield store.reclaim()) == 0
    yield gen.sleep(0.2)
    assert (yield store.reclaim()) == 2
    status = yield store.status()
    assert (status['queued'], status['leased']) == (2, 0)


def test_the_crawl_is_over_only_once_no_lease_is_out(new_store):
    first, second = new_store(), new_store()
    assert (yield first.lease()) is None  # nothing admitted: nothing to do
    yield first.admit(items('http://a/1'))
    held = yield first.lease()
    waiting = second.lease()
    yield gen.sleep(0.3)
    assert not waiting.done()
    assert (yield second.status())['over'] is False
    yield first.done(held, record(held.url), items('http://a/2'))
    last = yield waiting
    assert last.url == 'http://a/2'
    ending = first.lease()
    yield gen.sleep(0.3)
    assert not ending.done()
    yield second.done(last, record(last.url))
    assert (yield ending) is None
    assert (yield second.status())['over'] is True


def test_a_pause_holds_back_one_host_crawl_wide(new_store):
    pausing, leasing = new_store(), new_store()
    yield pausing.admit(items('http://a/1', 'http://b/1'))
    before = yield server_time(pausing)
    yield pausing.pause_host('a', 0.3)
    yield pausing.pause_host('a', 0.1)  # a pause only grows
    first = yield leasing.lease()
    assert first.url == 'http://b/1'
    second = yield leasing.lease()
    assert second.url == 'http://a/1'
    assert ms(leasing.lease_time(second)) >= ms(before) + 300


def test_a_host_delay_set_by_one_worker_holds_for_all(new_store):
    setting, leasing = new_store(), new_store()
    yield setting.admit(items('http://a/1', 'http://a/2', 'http://b/1', 'http://b/2'))
    yield setting.set_host_delay('a', 0.25)
    times = {}
    while True:
        leased = yield leasing.lease()
        if leased is None:
            break
        times[leased.url] = leasing.lease_time(leased)
        yield leasing.done(leased, record(leased.url))
    assert ms(times['http://a/2']) - ms(times['http://a/1']) >= 250
    assert sorted(times, key=times.get)[-1] == 'http://a/2'  # b's did not wait for a


def test_a_retry_after_a_delay(new_store):
    store = new_store()
    yield store.admit(items('http://a/1'))
    leased = yield store.lease()
    before = yield server_time(store)
    yield store.retry(leased, 0.3)
    status = yield store.status()
    assert (status['queued'], status['delayed'], status['over']) == (0, 1, False)
    again = yield store.lease()
    assert again == item('http://a/1', tries=1)
    assert ms(store.lease_time(again)) >= ms(before) + 300


def test_put_back_keeps_the_try_and_the_place_and_waits_the_delay(new_store):
    store, other = new_store(delay=0.3), new_store(delay=0.3)
    yield store.admit([item('http://a/1', tries=2), item('http://a/2')])
    leased = yield store.lease()
    before = yield server_time(store)
    assert (yield store.put_back(leased)) is True
    status = yield store.status()
    assert (status['queued'], status['leased'], status['delayed']) == (2, 0, 0)
    with pytest.raises(ValueError):
        store.put_back(leased)  # the lease is released
    # Another worker gets it, before a/2, its tries as they were, the delay after now.
    again = yield other.lease()
    assert again == item('http://a/1', tries=2)
    assert ms(other.lease_time(again)) >= ms(before) + 300
    yield other.done(again, record(again.url))
    assert (yield lease_all(store)) == ['http://a/2']


def test_put_back_waits_the_hosts_own_delay_and_not_after_a_lost_lease(new_store):
    dying, store = new_store(lease_seconds=0.1), new_store()
    yield store.admit(items('http://a/1'))
    yield store.set_host_delay('a', 0.25)
    lost = yield dying.lease()
    yield gen.sleep(0.2)
    assert (yield store.reclaim()) == 1
    assert (yield dying.put_back(lost)) is False  # nothing happened
    leased = yield store.lease()
    yield store.admit(items('http://b/1'))
    before = yield server_time(store)
    yield store.put_back(leased)
    first, second = yield [store.lease(), store.lease()]
    assert [first.url, second.url] == ['http://b/1', 'http://a/1']
    assert ms(store.lease_time(second)) >= ms(before) + 250
    assert second.tries == 1  # the expired hand-out's; a put back counts none


def test_start_or_join_and_meta(new_store):
    first, second = new_store(), new_store()
    options = {'roots': ['http://a/'], 'max_depth': 3}
    assert (yield first.start(options, items('http://a/'))) == (True, options)
    # A joining worker takes the crawl's options, whatever it was given.
    assert (yield second.start({'roots': ['http://b/']}, items('http://b/'))) == (
        False, options)
    yield second.set_meta('scope', {'strict': True})
    assert (yield first.get_meta('scope')) == {'strict': True}
    assert (yield first.get_meta('missing', 'default')) == 'default'
    status = yield first.status()
    assert status['seen'] == 1 and status['started'] <= status['now']


def test_every_key_of_a_crawl_is_under_its_prefix(new_store):
    store, other_crawl = new_store('one'), new_store('two')
    yield [store.start({'roots': []}, items('http://a/1')), other_crawl.admit(
        items('http://a/1'))]
    leased = yield store.lease()
    yield store.pause_host('a', 1)
    yield store.done(leased, '{}', items('http://a/2'))
    keys = yield store.client.execute('KEYS', '*')
    assert sorted(keys) == sorted((yield store.client.execute('KEYS', 'tinycrawl:{one}:*')) +
                                  (yield store.client.execute('KEYS', 'tinycrawl:{two}:*')))
    assert (yield other_crawl.status())['seen'] == 1


class _ReplyDropper(TCPServer):
    """A proxy to Redis that can lose the next reply: the command was applied, the
    client never hears so, as when a server dies between running and answering."""

    def __init__(self, redis_port):
        TCPServer.__init__(self)
        self.redis_port = redis_port
        self.drop_next_reply = False
        self.dropped = 0
        self._tcp_client = TCPClient()
        self._streams = []

    @gen.coroutine
    def handle_stream(self, stream, address):
        upstream = yield self._tcp_client.connect('127.0.0.1', self.redis_port)
        self._streams += [stream, upstream]
        yield [self._pump(stream, upstream, False), self._pump(upstream, stream, True)]

    @gen.coroutine
    def _pump(self, source, target, replies):
        try:
            while True:
                data = yield source.read_bytes(65536, partial=True)
                if replies and self.drop_next_reply:
                    self.drop_next_reply = False
                    self.dropped += 1
                    break
                yield target.write(data)
        except StreamClosedError:
            pass
        source.close()
        target.close()

    def close(self):
        self.stop()
        for stream in self._streams:
            stream.close()
        self._tcp_client.close()


@pytest.mark.gen_test(timeout=20)
def test_a_call_whose_reply_was_lost_is_not_applied_twice(redis_server):
    sock, port = bind_unused_port()
    proxy = _ReplyDropper(redis_server.port)
    proxy.add_sockets([sock])
    client = RedisClient('redis://127.0.0.1:%d/0' % port, backoff_base=0.01)
    store = RedisWorkStore(client, 'crawl', WorkItem)
    try:
        yield store.admit(items('http://a/1', 'http://a/2'))
        proxy.drop_next_reply = True
        leased = yield store.lease()  # sent again: the same lease, not a second one
        assert leased.url == 'http://a/1'
        proxy.drop_next_reply = True
        # Sent again: not taken for a lost lease, and its links are reported admitted.
        assert (yield store.done(leased, '{}', items('http://a/3'))) == items('http://a/3')
        assert (proxy.dropped, client.connections_made) == (2, 3)
        status = yield store.status()
        assert (status['leased'], status['queued'], status['finished']) == (0, 2, 1)
    finally:
        client.close()
        proxy.close()


@pytest.mark.gen_test(timeout=30)
def test_the_crawl_survives_a_redis_restart(start_redis_server, io_loop):
    server = start_redis_server(appendonly='yes', appendfsync='always')
    client = RedisClient(server.url(), backoff_base=0.01, backoff_max=0.1, wait_timeout=20)
    store = RedisWorkStore(client, 'crawl', WorkItem, max_per_host=1)
    try:
        yield store.admit(items('http://a/1', 'http://a/2', 'http://b/1'))
        held = yield [store.lease(), store.lease()]
        server.kill()
        server.start()
        # The leases, their tokens and the queue came back from the append-only file.
        assert (yield store.done(held[0], '{}', items('http://c/1'))) == items('http://c/1')
        yield store.done(held[1], '{}')
        assert sorted((yield lease_all(store))) == ['http://a/2', 'http://c/1']
        assert sorted((yield finished_urls(store))) == [
            'http://a/1', 'http://a/2', 'http://b/1', 'http://c/1']
        assert client.connections_made == 2
    finally:
        client.close()


@pytest.mark.gen_test(timeout=60)
def test_bytes_per_url_of_the_seen_set(new_store, record_property):
    """Measures, and records, what a URL costs in the seen set, exact and hashed."""
    urls = ['http://host%d.example.test/section/%d/page-%d.html' % (n % 100, n % 37, n)
            for n in range(100000)]
    costs = {}
    for hashed in (False, True):
        store = new_store('hashed' if hashed else 'exact', hashed_seen=hashed)
        before = yield used_memory(store)
        for start in range(0, len(urls), 2000):
            yield store.admit(items(*urls[start:start + 2000]))
        assert (yield store.status())['seen'] == len(urls)
        seen_bytes = yield seen_set_bytes(store)
        total = (yield used_memory(store)) - before
        costs[hashed] = (seen_bytes / len(urls), total / len(urls))
    average_length = sum(map(len, urls)) / len(urls)
    for hashed, (seen, total) in sorted(costs.items()):
        name = 'hashed' if hashed else 'exact'
        record_property('seen_bytes_per_url_' + name, round(seen, 1))
        record_property('stored_bytes_per_url_' + name, round(total, 1))
        print('%s seen set: %.1f bytes per URL (%.1f with the queue), URLs of %.1f '
              'characters' % (name, seen, total, average_length))
    assert costs[True][0] < costs[False][0]


@gen.coroutine
def seen_set_bytes(store):
    keys = yield store.client.execute('KEYS', store.prefix + 'seen*')
    sizes = yield store.client.pipeline([('MEMORY', 'USAGE', key, 'SAMPLES', 0)
                                         for key in keys])
    raise gen.Return(sum(sizes))


@gen.coroutine
def used_memory(store):
    info = yield store.client.execute('INFO', 'memory')
    fields = dict(line.split(b':', 1) for line in info.splitlines() if b':' in line)
    raise gen.Return(int(fields[b'used_memory']))


def test_a_hashed_seen_set_keeps_64_bit_integers_in_buckets(new_store):
    store = new_store(hashed_seen=True, seen_buckets=2)
    urls = ['http://a/%d' % n for n in range(20)]
    assert (yield store.admit(items(*urls + urls[:5]))) == items(*urls)
    assert (yield store.admit(items(*urls[10:] + ['http://b/1']))) == items('http://b/1')
    buckets = sorted((yield store.client.execute('KEYS', store.prefix + 'seen*')))
    assert buckets == [(store.prefix + name).encode('ascii') for name in ('seen:0', 'seen:1')]
    members = []
    for bucket in buckets:
        assert (yield store.client.execute('OBJECT', 'ENCODING', bucket)) == b'intset'
        members += (yield store.client.execute('SMEMBERS', bucket))
    assert sorted(int(member) for member in members) == sorted(
        url_hash(url) - (1 << 64) if url_hash(url) >= 1 << 63 else url_hash(url)
        for url in urls + ['http://b/1'])
    assert (yield store.status())['seen'] == 21
    assert sorted((yield lease_all(store))) == sorted(urls + ['http://b/1'])


def test_bad_settings_are_refused(new_store):
    for settings in [dict(seen_buckets=3), dict(seen_buckets=0), dict(lease_seconds=0),
                     dict(max_per_host=0)]:
        with pytest.raises(ValueError):
            new_store(**settings)


def _link_graph(rng, pages, hosts):
    """{url: the URLs it links to} of a random site over `hosts` hosts."""
    urls = ['http://h%d.test/p%d' % (n % hosts, n) for n in range(pages)]
    return dict((url, rng.sample(urls, 3)) for url in urls)


def _reachable(graph, root):
    found, todo = set([root]), [root]
    while todo:
        for link in graph[todo.pop()]:
            if link not in found:
                found.add(link)
                todo.append(link)
    return found


@pytest.mark.gen_test(timeout=60)
def test_workers_that_get_killed_lose_and_duplicate_nothing(new_store):
    """Workers on several stores crawl a random link graph; some die holding leases.
    Every URL reachable is finished exactly once, and reported (done accepted) once."""
    rng = random.Random(17)
    graph = _link_graph(rng, pages=400, hosts=5)
    root = 'http://h0.test/p0'
    reported, kills = [], []
    settings = dict(lease_seconds=0.3, max_per_host=3, poll_interval=0.02)

    @gen.coroutine
    def worker(store):
        while True:
            leased = yield store.lease()
            if leased is None:
                raise gen.Return('over')
            if len(kills) < 8 and rng.random() < 0.03:
                kills.append(leased.url)
                raise gen.Return('killed')  # its lease is left to expire
            yield gen.sleep(rng.random() * 0.002)
            links = [item(link, leased.depth + 1) for link in graph[leased.url]]
            admitted = yield store.done(leased, record(leased.url), links)
            if admitted is not None:
                reported.append(leased.url)

    @gen.coroutine
    def process(store):
        while (yield worker(store)) == 'killed':
            store = new_store(**settings)  # a new process takes the dead one's place

    shared = new_store(**settings)
    yield shared.start({'roots': [root]}, [item(root)])
    yield [process(store) for store in (
        [shared, shared, new_store(**settings), new_store(**settings)])]
    expected = _reachable(graph, root)
    assert len(kills) > 0
    assert sorted(reported) == sorted(expected)
    records = []
    after = '0'
    while True:
        page = yield shared.finished_records(after=after, count=100)
        if not page:
            break
        records.extend(url for _, url, _ in page)
        after = page[-1][0]
    assert sorted(records) == sorted(expected)
    status = yield shared.status()
    assert (status['over'], status['seen'], status['finished']) == (True, len(expected),
                                                                    len(expected))


def test_max_pages_bounds_the_urls_admitted_crawl_wide(new_store):
    first, second = new_store(max_pages=3), new_store(max_pages=3)
    assert (yield first.admit(items('http://a/1', 'http://a/2'))) == items(
        'http://a/1', 'http://a/2')
    assert (yield second.admit(items('http://a/1', 'http://a/3', 'http://a/4'))) == items(
        'http://a/3')
    assert (yield first.status())['seen'] == 3


# -- batches: a worker's leases and finishes share round trips ----------------------------

def counting_calls(store):
    """The list of the number of arguments of each exchange script `store` runs."""
    calls = []
    script = store._scripts['exchange']

    def counted(keys=(), args=()):
        calls.append(len(args))
        return script(keys=keys, args=args)
    store._scripts['exchange'] = counted
    return calls


def test_leases_asked_together_go_in_one_call_and_take_only_those_asked(new_store):
    store = new_store()
    yield store.admit(items(*['http://a/%d' % n for n in range(8)]))
    calls = counting_calls(store)
    held = yield [store.lease() for _ in range(5)]
    assert len(calls) == 1
    assert sorted(leased.url for leased in held) == ['http://a/%d' % n for n in range(5)]
    # Only those asked for are leased: none waits unstarted for its lease to expire.
    status = yield store.status()
    assert (status['leased'], status['queued']) == (5, 3)
    admitted = yield [store.done(leased, record(leased.url), items(leased.url + '/x'))
                      for leased in held]
    assert len(calls) == 2
    assert admitted == [items(leased.url + '/x') for leased in held]
    assert len((yield store.finished_records())) == 5


def test_the_finishes_of_one_call_are_one_entry_of_records(new_store):
    store = new_store()
    yield store.admit(items(*['http://a/%d' % n for n in range(6)]))
    batches = []
    for _ in range(2):
        held = yield [store.lease() for _ in range(3)]
        yield [store.done(leased, record(leased.url)) for leased in held]  # one call
        batches.append([leased.url for leased in held])
    first = yield store.finished_records(count=1)  # a count of entries, not of URLs
    assert [url for _, url, _ in first] == batches[0]
    assert len(set(entry for entry, _, _ in first)) == 1
    rest = yield store.finished_records(after=first[-1][0], count=1)
    assert [(url, json.loads(text)['url']) for _, url, text in rest] == [
        (url, url) for url in batches[1]]
    assert (yield store.finished_records(after=rest[-1][0])) == []
    assert (yield store.status())['finished'] == 6


def test_leases_asked_together_keep_the_cap_and_the_delay(new_store):
    # A batch hands out what one lease at a time would: never a third item of a host
    # capped at 2, and items of a host with a delay one delay apart (server's clock).
    capped = new_store(crawl_id='capped', max_per_host=2)
    yield capped.admit(items('http://a/1', 'http://a/2', 'http://a/3', 'http://b/1'))
    asked = [capped.lease() for _ in range(4)]
    yield gen.sleep(0.3)  # several polls
    held = dict((future.result().url, future) for future in asked if future.done())
    assert sorted(held) == ['http://a/1', 'http://a/2', 'http://b/1']
    waiting = [future for future in asked if not future.done()]
    first = held['http://a/1'].result()
    yield capped.done(first, record(first.url))  # a slot of host a is free
    assert (yield waiting[0]).url == 'http://a/3'
    slow = new_store(crawl_id='slow', delay=0.2)
    yield slow.admit(items('http://a/1', 'http://a/2', 'http://a/3', 'http://b/1',
                           'http://b/2'))
    held = yield [slow.lease() for _ in range(5)]
    for host in ('a', 'b'):
        times = sorted(slow.lease_time(leased) for leased in held if leased.host == host)
        assert min(ms(later) - ms(earlier) for earlier, later in zip(times, times[1:])) >= 200


def test_a_late_finish_in_a_batch_is_dropped_and_the_others_count(new_store,
                                                                   app_log_records):
    store = new_store(lease_seconds=0.1)
    yield store.admit(items('http://a/1'))
    first = yield store.lease()
    yield gen.sleep(0.2)  # expired: the next lease reclaims it, a try counted
    yield store.admit(items('http://b/1'))
    second, other = yield [store.lease(), store.lease()]
    assert sorted((second.url, second.tries, other.url, other.tries)[::2]) == [
        'http://a/1', 'http://b/1']
    replies = yield [store.done(first, record('late'), items('http://a/2')),
                     store.done(second, record(second.url), items('http://a/3')),
                     store.done(other, record(other.url), [])]
    assert replies == [None, items('http://a/3'), []]
    assert len(app_log_records) == 1
    assert sorted(url for _, url, _ in (yield store.finished_records())) == [
        'http://a/1', 'http://b/1']
