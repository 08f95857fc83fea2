"""A reference crawler on asyncio, the 500 Lines chapter's algorithm with the stdlib only.

Python 3 only (``async def``); test_crawler_reference.py imports it there. It is kept as
small as the chapter's: a queue of (url, max_redirect), `max_tasks` workers, `q.join()`,
redirects handled by the crawler through the seen set, links found with the chapter's regex
(good enough for the demo site written with ``variety=False``), one host only, no robots.txt.
HTTP is one GET per connection (``Connection: close``) over ``asyncio.open_connection``.
"""
import asyncio
import re
import urllib.parse

HREF_RE = re.compile(r'''(?i)href=["']([^\s"'<>]+)''')
REDIRECTS = (300, 301, 302, 303, 307, 308)


async def http_get(url):
    """(status, {lower-case header: value}, body) of a GET of the http `url`."""
    parts = urllib.parse.urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port or 80)
    try:
        target = parts.path + ('?' + parts.query if parts.query else '')
        writer.write(('GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n'
                      % (target, parts.netloc)).encode('latin-1'))
        head, _, body = (await reader.read()).partition(b'\r\n\r\n')
    finally:
        writer.close()
    lines = head.decode('latin-1').split('\r\n')
    headers = dict((name.strip().lower(), value.strip()) for name, _, value in
                   (line.partition(':') for line in lines[1:]))
    return int(lines[0].split()[1]), headers, body


class ReferenceCrawler:
    def __init__(self, root, max_tasks=10, max_redirect=10):
        self.root = root
        self.host = urllib.parse.urlsplit(root).netloc
        self.max_tasks = max_tasks
        self.max_redirect = max_redirect
        self.seen_urls = {root}
        self.done = {}  # url -> status
        self.q = asyncio.Queue()

    def add_url(self, url, max_redirect):
        url = urllib.parse.urldefrag(url)[0]
        if (url not in self.seen_urls and url.startswith('http') and
                urllib.parse.urlsplit(url).netloc == self.host):
            self.seen_urls.add(url)
            self.q.put_nowait((url, max_redirect))

    async def fetch(self, url, max_redirect):
        status, headers, body = await http_get(url)
        self.done[url] = status
        if status in REDIRECTS and 'location' in headers:
            next_url = urllib.parse.urljoin(url, headers['location'])
            if max_redirect > 0:
                self.add_url(next_url, max_redirect - 1)
        elif status == 200 and headers.get('content-type', '').startswith('text/html'):
            text = body.decode('utf-8', 'replace')
            for href in HREF_RE.findall(text):
                self.add_url(urllib.parse.urljoin(url, href), self.max_redirect)

    async def work(self):
        while True:
            url, max_redirect = await self.q.get()
            try:
                await self.fetch(url, max_redirect)
            finally:
                self.q.task_done()

    async def crawl(self):
        self.q.put_nowait((self.root, self.max_redirect))
        workers = [asyncio.ensure_future(self.work()) for _ in range(self.max_tasks)]
        await self.q.join()
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        return self.done


def reference_crawl(root, max_tasks=10):
    """{url: status} of a crawl from `root`, on a new asyncio loop in this thread."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)  # 3.6's Queue asks for the current loop
    try:
        return loop.run_until_complete(ReferenceCrawler(root, max_tasks).crawl())
    finally:
        asyncio.set_event_loop(None)
        loop.close()
