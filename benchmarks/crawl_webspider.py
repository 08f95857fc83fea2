"""A crawler written the way Tornado's webspider demo is: the Tornado column of W6.

Its shape follows the demo: a `queues.Queue` of URLs, `workers` coroutines each looping
`fetch_url`, `fetching`/`fetched` sets (a URL already being fetched is skipped when it comes
off the queue, so every link is queued), `HTMLParser` for `<a href>`, and `q.join()` to end.
Two changes make its URL set comparable with the other crawlers': redirects are not followed
by the client but their Location is treated as a link, and error responses are counted as
fetched rather than raised. `max_clients` is raised to `workers`, or Tornado's default of 10
would cap the concurrency the workload asks for. A fetch that gets no response fails the
whole crawl, as the demo would print and skip it and the URL set would quietly shrink.
"""
from __future__ import absolute_import, division, print_function

from six.moves.html_parser import HTMLParser
from six.moves.urllib.parse import urldefrag, urljoin

from tornado import gen, httpclient, queues

from common import url_set_digest

__all__ = ['crawl', 'get_links']


class _URLSeeker(HTMLParser):
    def __init__(self):
        HTMLParser.__init__(self)
        self.urls = []

    def handle_starttag(self, tag, attrs):
        href = dict(attrs).get('href')
        if href and tag == 'a':
            self.urls.append(href)


def get_links(html):
    seeker = _URLSeeker()
    seeker.feed(html)
    seeker.close()
    return seeker.urls


@gen.coroutine
def get_links_from_url(client, url):
    """The absolute, defragmented URLs a response links to (a redirect's Location too)."""
    response = yield client.fetch(url, follow_redirects=False, raise_error=False)
    if response.code == 599:  # no HTTP response at all: a broken run, not a page
        raise response.error
    if response.code in (301, 302, 303, 307, 308):
        links = [response.headers['Location']]
    elif response.code == 200 and response.headers.get(
            'Content-Type', '').startswith('text/html'):
        links = get_links(response.body.decode('utf-8', 'replace'))
    else:
        links = []
    raise gen.Return([urldefrag(urljoin(url, link))[0] for link in links])


@gen.coroutine
def crawl(root_url, workers):
    """Crawl every page under `root_url`; [count, digest] of the URLs fetched."""
    client = httpclient.AsyncHTTPClient(force_instance=True, max_clients=workers)
    q = queues.Queue()
    fetching, fetched, failures = set(), [], []

    @gen.coroutine
    def fetch_url():
        current_url = yield q.get()
        try:
            if current_url in fetching:
                return
            fetching.add(current_url)
            urls = yield get_links_from_url(client, current_url)
            fetched.append(current_url)
            for new_url in urls:
                if new_url.startswith(root_url):
                    yield q.put(new_url)
        except Exception as exc:
            failures.append('%s: %r' % (current_url, exc))
        finally:
            q.task_done()

    @gen.coroutine
    def worker():
        while True:
            yield fetch_url()

    q.put(root_url)
    for _ in range(workers):
        worker()
    yield q.join()
    client.close()
    if failures:
        raise RuntimeError('%d fetches failed, first: %s' % (len(failures), failures[0]))
    raise gen.Return(url_set_digest(fetched))
