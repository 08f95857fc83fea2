"""tinytornado's crawler and a reference crawler on asyncio (the chapter's algorithm, in
reference_crawler_py3.py) crawl the same demo site and must agree: the comparison with
asyncio the users asked for. Python 3 only, as asyncio is.
"""
from __future__ import absolute_import, division, print_function

import collections

import pytest

from tinytornado._compat import PY2, futures
from tinytornado.crawler.demo.website import Site
from tinytornado.crawler.engine import Crawler

from crawler_sites import UNTHROTTLED, by_url

pytestmark = pytest.mark.skipif(PY2, reason='asyncio needs Python 3')


def test_same_urls_and_status_counts_as_a_crawler_on_asyncio(serve):
    from reference_crawler_py3 import reference_crawl
    # variety=False: plain links, which the chapter's regex reads as a parser does.
    site = Site(seed=5, pages=80, variety=False)
    server, origin = serve(site)
    with futures.ThreadPoolExecutor(1) as executor:
        # Its own loop in a thread; this loop serves both crawlers.
        reference = yield executor.submit(reference_crawl, origin + '/')
    statistics = yield Crawler([origin + '/'], obey_robots=False, **UNTHROTTLED).crawl()
    ours = dict((url, statistic.status) for url, statistic in by_url(statistics).items())
    assert ours == reference
    assert statistics.status_counts() == collections.Counter(reference.values())
    assert len(ours) > 80
