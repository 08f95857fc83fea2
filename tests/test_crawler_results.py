"""How the engine tells a try's ends apart: by type (a FetchStatistic, or the item given
back to the store), whatever class of Future the store answers with.
"""
from __future__ import absolute_import, division, print_function

from tinytornado import gen
from tinytornado.concurrent import Future, chain_future
from tinytornado.crawler.engine import Crawler

from crawler_sites import FlakyServer, Pages, by_url, links, unthrottled


class StoreFuture(Future):
    """A Future of a store's own class (a subclass, as a store may well use)."""


def answering_with_its_own_futures(store, calls):
    """Make `store`'s retry and put_back answer StoreFutures, counted in `calls`."""
    def wrap(name):
        method = getattr(store, name)

        def call(*args):
            calls.append(name)
            own = StoreFuture()
            chain_future(method(*args), own)
            return own
        setattr(store, name, call)
    wrap('retry')
    wrap('put_back')


def test_a_store_s_own_futures_are_told_from_statistics(serve):
    site = Pages({'/': links('/flaky'), '/flaky': 'ok'})
    server, origin = serve(site, FlakyServer, failures={'/flaky': 1})
    # A delay: the root's robots.txt is read for it, then it goes back for its host's turn.
    crawler = Crawler([origin + '/'], **unthrottled(dict(max_tries=3, backoff=0.0,
                                                         delay=0.01)))
    calls = []
    answering_with_its_own_futures(crawler.store, calls)
    statistics = yield crawler.crawl()
    assert sorted(set(calls)) == ['put_back', 'retry']
    flaky = by_url(statistics)[origin + '/flaky']
    assert (flaky.status, flaky.tries) == (200, 2)
    assert sorted(by_url(statistics)) == [origin + '/', origin + '/flaky']

