"""The 500 Lines crawler (Davis and van Rossum) on asyncio + aiohttp: W6's asyncio column.

Its shape follows the chapter's final crawler: a `Crawler` with an `asyncio.Queue` of
(url, max_redirect) pairs, `max_tasks` workers looping get -> fetch -> task_done, redirects
handled by the crawler (the client does not follow them; the target is queued unless seen),
links found with the chapter's `href=` regular expression in text/html responses, `seen_urls`
filtering before a URL is queued, and `crawl()` waiting on `q.join()` before cancelling the
workers. Retries and statistics are left out: on loopback a failed fetch means a broken
run, so any failure fails the measurement instead.
"""
import asyncio
import re
from urllib.parse import urldefrag, urljoin

import aiohttp

from common import url_set_digest

__all__ = ['Crawler', 'crawl']

LINK_PATTERN = re.compile(r'''(?i)href=["']([^\s"'<>]+)''')
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
MAX_REDIRECT = 10


class Crawler:
    def __init__(self, root_url, max_tasks, session):
        self.root_url = root_url
        self.max_tasks = max_tasks
        self.session = session
        self.q = asyncio.Queue()
        self.seen_urls = set()
        self.fetched_urls = []
        self.failures = []
        self.add_url(root_url)

    def url_allowed(self, url):
        return url.startswith(self.root_url)

    def add_url(self, url, max_redirect=MAX_REDIRECT):
        self.seen_urls.add(url)
        self.q.put_nowait((url, max_redirect))

    async def parse_links(self, response):
        links = set()
        if response.status == 200 and response.content_type == 'text/html':
            text = await response.text()
            for url in LINK_PATTERN.findall(text):
                normalized = urldefrag(urljoin(str(response.url), url))[0]
                if self.url_allowed(normalized):
                    links.add(normalized)
        return links

    async def fetch(self, url, max_redirect):
        async with self.session.get(url, allow_redirects=False) as response:
            self.fetched_urls.append(url)
            if response.status in REDIRECT_STATUSES:
                next_url = urldefrag(urljoin(url, response.headers['location']))[0]
                # Unlike the chapter, a redirect off the site is not followed: the benchmark
                # must never leave 127.0.0.1.
                if (self.url_allowed(next_url) and next_url not in self.seen_urls
                        and max_redirect > 0):
                    self.add_url(next_url, max_redirect - 1)
                return
            links = await self.parse_links(response)
            for link in links.difference(self.seen_urls):
                self.q.put_nowait((link, MAX_REDIRECT))
            self.seen_urls.update(links)

    async def work(self):
        try:
            while True:
                url, max_redirect = await self.q.get()
                try:
                    await self.fetch(url, max_redirect)
                except Exception as exc:  # the chapter records it in the URL's statistic
                    self.failures.append('%s: %r' % (url, exc))
                finally:
                    self.q.task_done()
        except asyncio.CancelledError:
            pass

    async def crawl(self):
        workers = [asyncio.ensure_future(self.work()) for _ in range(self.max_tasks)]
        await self.q.join()
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers)


async def crawl(root_url, workers):
    """Crawl every page under `root_url`; [count, digest] of the URLs fetched."""
    connector = aiohttp.TCPConnector(limit=workers)
    async with aiohttp.ClientSession(connector=connector) as session:
        crawler = Crawler(root_url, workers, session)
        await crawler.crawl()
    if crawler.failures:  # a broken run, not a smaller site
        raise RuntimeError('%d fetches failed, first: %s' % (
            len(crawler.failures), crawler.failures[0]))
    return url_set_digest(crawler.fetched_urls)
