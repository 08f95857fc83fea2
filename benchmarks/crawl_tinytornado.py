"""W6's tinytornado column: tinytornado's own crawler, configured like the other two.

One worker per `workers`, no robots.txt (nginx has none and the peers do not ask), and the
URL set read from the per-URL statistics.
"""
from __future__ import absolute_import, division, print_function

from tinytornado import gen

from common import Unavailable, import_optional, url_set_digest

__all__ = ['crawl']


@gen.coroutine
def crawl(root_url, workers):
    """Crawl every page under `root_url`; [count, digest] of the URLs fetched."""
    crawler_class = getattr(import_optional('tinytornado.crawler'), 'Crawler', None)
    if crawler_class is None:
        raise Unavailable('tinytornado.crawler has no Crawler yet')
    crawler = crawler_class([root_url], max_tasks=workers)
    yield crawler.crawl()
    raise gen.Return(url_set_digest([statistic.url for statistic in crawler.done]))
