"""One request of the crawl: fetch a URL (redirects not followed) and say what came back.

`Fetcher.fetch` never raises for a failed request: a connection error, a timeout or a body
over the size cap is a `Fetched` with `exception` set, because for the crawler these are
outcomes to record (and maybe retry), not bugs. Bodies are received through a streaming
callback, so the cap holds however the body is framed, and a body that is not HTML can be
dropped as soon as its headers are in (``download_non_html=False``). With an `archive`
(a `warc.WarcArchive`), every request and response is written to it as on the wire.
"""
from __future__ import absolute_import, division, print_function

import email.utils
import ssl
import time

from tinytornado import gen
from tinytornado.concurrent import Future
from tinytornado.httpclient import HTTPRequest, HTTPResponse
from tinytornado.httputil import HTTPInputError, NoResponseError

from .links import is_html_content_type
from .warc import truncation

__all__ = ['Fetcher', 'Fetched', 'Download', 'BodyTooLarge', 'describe_exception',
           'retry_after_seconds', 'is_certificate_failure']

RETRY_STATUSES = frozenset([429, 502, 503, 504])
_NO_CLIENT_LIMIT = 1 << 62


class BodyTooLarge(Exception):
    """The body went past the crawl's `max_body_size`."""


class _SkipBody(Exception):
    """Raised from a callback to stop downloading a body the crawl does not want."""


class Fetched(object):
    """What one request gave: a response (`status` set) or a failure (`exception` set).

    `body` is b'' when the body was skipped (`body_skipped`) or the request failed.
    `transient`: the failure may pass (no answer, or 429 and 502-504), so a later try
    may do better; a malformed or oversized response will not. `host_final`: every URL of
    the host would fail the same (its certificate is not trusted).
    """
    __slots__ = ('url', 'status', 'headers', 'body', 'body_skipped', 'exception',
                 'transient', 'host_final')

    def __init__(self, url, status=None, headers=None, body=b'', body_skipped=False,
                 exception=None, transient=None, host_final=False):
        self.url = url
        self.status = status
        self.headers = headers if headers is not None else {}
        self.body = body
        self.body_skipped = body_skipped
        self.exception = exception
        self.transient = status in RETRY_STATUSES if transient is None else transient
        self.host_final = host_final

    @property
    def content_type(self):
        return self.headers.get('Content-Type')


class Download(object):
    """One request of a `Fetcher`, under way: `outcome` says what the client's
    HTTPResponse to it gave.

    Checks the head as the client parsed it (`status` and `headers` are kept for the
    outcome of a body refused), then collects the body's chunks, enforcing the cap.
    """
    __slots__ = ('url', 'max_body_size', 'download_non_html', 'status', 'headers', 'chunks',
                 'size', 'skipped', 'too_large')

    def __init__(self, url, max_body_size, download_non_html):
        self.url = url
        self.max_body_size = max_body_size
        self.download_non_html = download_non_html
        self.status = self.headers = None  # of the head, once it is in
        self.chunks = []
        self.size = 0
        self.skipped = False
        self.too_large = False

    def outcome(self, response):
        """The `Fetched` that the client's `response` (to this request) means."""
        if response.code == 599 or self.skipped or self.too_large:
            return _failure(self, response.error)
        return Fetched(self.url, response.code, response.headers, b''.join(self.chunks))

    def on_head(self, head):
        """The client's head_callback: `head` is an httputil.ResponseHead."""
        self.status, self.headers = head.code, head.headers
        # The client's parser left one value of a Content-Length repeated, and refused
        # values that disagree.
        length = head.headers.get('Content-Length')
        if length is not None and length.isdigit() and int(length) > self.max_body_size:
            self._refuse_body()
        if not self.download_non_html and not is_html_content_type(
                head.headers.get('Content-Type')) and not 300 <= head.code < 400:
            self.skipped = True
            raise _SkipBody()

    def on_chunk(self, chunk):
        self.size += len(chunk)
        if self.size > self.max_body_size:
            self._refuse_body()
        self.chunks.append(chunk)

    def _refuse_body(self):
        self.too_large = True
        raise BodyTooLarge('the body is over %d bytes' % self.max_body_size)


class Fetcher(object):
    """Fetches URLs for the crawler with `http_client` (an AsyncHTTPClient).

    Args:
        user_agent: the User-Agent header.
        connect_timeout, request_timeout: seconds.
        max_body_size: the most body bytes kept; a longer body fails the fetch.
        download_non_html: if False, a body that is not HTML is not downloaded.
        archive: a `warc.WarcArchive` that records every exchange, or None.
        validate_cert: verify the servers' TLS certificates.
        ca_file: the PEM file of the authorities trusted (None: the system's).
    """

    def __init__(self, http_client, user_agent, connect_timeout=10.0, request_timeout=30.0,
                 max_body_size=10 * 1024 * 1024, download_non_html=True, archive=None,
                 validate_cert=True, ca_file=None):
        self.validate_cert = validate_cert
        self.ca_file = ca_file
        self.http_client = http_client
        self.user_agent = user_agent
        self.connect_timeout = connect_timeout
        self.request_timeout = request_timeout
        self.max_body_size = max_body_size
        self.download_non_html = download_non_html
        self.archive = archive

    @gen.coroutine
    def fetch(self, url, follow_redirects=False, download_non_html=None, sending=None):
        """A Future of the `Fetched` outcome of a GET of `url`."""
        download, response = self.start(url, follow_redirects, download_non_html, sending)
        raise gen.Return(download.outcome((yield response)))

    def start(self, url, follow_redirects=False, download_non_html=None, sending=None):
        """Send a GET of `url`: its `Download`, and a Future of the client's HTTPResponse
        (every outcome is one, code 599 when there was none); what `fetch` gives is the
        download's `outcome` of that response.

        `sending`, if given (what `Frontier.request_started` returns), is told each time
        the request is written (``sent()``) and once the response's Future is done
        (``ended()``).

        For a caller that is a coroutine already (the crawl's worker), waiting on the
        client's Future itself saves a coroutine per request. The Download does not keep
        the Future: the response refers to the download (its request's callbacks), and
        a cycle would wait for the garbage collector.
        """
        if download_non_html is None:
            download_non_html = self.download_non_html
        download = Download(url, self.max_body_size, download_non_html)
        recorder = None if self.archive is None else self.archive.recorder()
        request = HTTPRequest(
            url, follow_redirects=follow_redirects, max_redirects=5,
            connect_timeout=self.connect_timeout, request_timeout=self.request_timeout,
            user_agent=self.user_agent, decompress_response=True,
            validate_cert=self.validate_cert, ca_certs=self.ca_file,
            # The cap is ours (Content-Length in the head callback, the decoded size as
            # chunks come), so that a body too large is told from a broken response.
            max_body_size=_NO_CLIENT_LIMIT,
            head_callback=download.on_head, streaming_callback=download.on_chunk,
            sent_callback=None if sending is None else sending.sent, wire_recorder=recorder)
        try:
            response = self.http_client.fetch(request, raise_error=False)
        except Exception as e:  # refused at once (a closed client): still an outcome
            response = Future()
            response.set_result(HTTPResponse(request, 599, error=e))
        if sending is not None:
            response.add_done_callback(lambda _: sending.ended())
        if recorder is not None:
            response.add_done_callback(lambda done: _finish_record(recorder, download, done))
        return download, response


def _failure(download, error):
    """The outcome of a request that ended early: skipped on purpose, or failed."""
    url = download.url
    if download.skipped:
        return Fetched(url, download.status, download.headers, body_skipped=True)
    if download.too_large:
        return Fetched(url, download.status, download.headers, transient=False,
                       exception=describe_exception(error))
    # A malformed response will be as malformed next time, and so will a certificate not
    # trusted; a network failure, or a server closing without a word, may pass.
    if is_certificate_failure(error):
        return Fetched(url, exception=describe_exception(error) + CERTIFICATE_HINT,
                       transient=False, host_final=True)
    return Fetched(url, exception=describe_exception(error), transient=(
        isinstance(error, NoResponseError) or not isinstance(error, HTTPInputError)))


CERTIFICATE_HINT = (' (final for the host: not retried; trust its authority with --ca-file FILE.pem, '
                    'or skip the check with --insecure)')


def is_certificate_failure(error):
    """True if `error` is a TLS certificate that failed verification (its name, its
    chain): a later try meets the same certificate."""
    if isinstance(error, ssl.CertificateError):  # 3.7+: SSLCertVerificationError too
        return True
    return (isinstance(error, ssl.SSLError) and
            getattr(error, 'reason', None) == 'CERTIFICATE_VERIFY_FAILED')


def _finish_record(recorder, download, done):
    """The fetch is over: its recorder writes the hop left unfinished, if any, with the
    response cut short if its head was in (`download.status`, from the head callback)."""
    response = None if done.cancelled() else done.result()
    if response is None or response.code != 599 or download.status is None:
        recorder.finish()
    else:
        recorder.finish(truncation(response.error, download.too_large))


def describe_exception(error):
    """'ErrorName: message' for a statistic (the type alone if there is no message)."""
    message = str(error)
    name = type(error).__name__
    return '%s: %s' % (name, message) if message else name


def retry_after_seconds(headers, now=None):
    """The delay a Retry-After header asks for (seconds or an HTTP date), or None."""
    value = headers.get('Retry-After')
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    parsed = email.utils.parsedate_tz(value)
    if parsed is None:
        return None
    return max(0.0, email.utils.mktime_tz(parsed) - (time.time() if now is None else now))
