"""W6's tinytornado column: tinytornado's own crawler, configured like the other two.

`max_tasks` is the workload's workers; robots.txt is not obeyed because the peers do not
read it (the site's robots.txt would keep tinytornado out of /private/ and change the URL
set). The URL set is read from the per-URL statistics. The crawl's polite defaults (2
requests per host, a delay adapted to the host) are turned off, as the peers have none:
every worker may ask the one host at once, with no delay, as before those defaults.
"""
from __future__ import absolute_import, division, print_function

from tinytornado import gen

from common import import_optional, url_set_digest

__all__ = ['crawl']


def _crawler_class():
    package = import_optional('tinytornado.crawler')
    if hasattr(package, 'Crawler'):
        return package.Crawler
    return import_optional('tinytornado.crawler.engine').Crawler


@gen.coroutine
def crawl(root_url, workers):
    """Crawl every page under `root_url`; [count, digest] of the URLs fetched."""
    options = dict(max_tasks=workers, obey_robots=False, max_per_host=workers, delay=0.0,
                   max_rate=0.0)
    try:
        crawler = _crawler_class()([root_url], **options)
    except TypeError:  # a version before the rate ceiling, which has none to lift
        del options['max_rate']
        crawler = _crawler_class()([root_url], **options)
    yield crawler.crawl()
    failures = [s for s in crawler.done if s.exception]
    if failures:  # recorded and skipped by the crawler; here they make the run invalid
        raise RuntimeError('%d fetches failed, first: %s %s' % (
            len(failures), failures[0].url, failures[0].exception))
    raise gen.Return(url_set_digest([statistic.url for statistic in crawler.done]))
