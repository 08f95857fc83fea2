"""A crawl's configuration, resolved once: its options checked, and those its store keeps
taken back.

`resolve` is the one way from the options given to a crawl's `Configuration`, for a
crawl, ``--collect`` and ``--status`` alike: the options checked against the table
(`crawloptions.option_mistake`: ranges, requires, excludes), the roots normalised, and
the place that keeps the crawl opened, once per process: the journal (``state``) or one
Redis client (``redis``), which the work store then uses. A crawl kept there gives its
roots and the options that shape it back (`take_back`, the one place that does it): a
resume's journal, or a shared crawl's meta in Redis (a process given no URL waits for it
up to `join_timeout`). Options given may repeat the kept ones, not contradict them: a
`Contradiction` names each. A journal also gives back the command line's own journaled
options (the demo site's) and the paths of the files written (`RESUMED_PATHS`), taken
unless given again: a resume writes where the crawl did.

`configure` is `resolve` without the wait for Redis, which a constructor cannot do:
`Crawler(roots, **options)` uses it, and a shared crawl's options are then checked when
its store starts the crawl or joins it (`stored_contradiction`, the same rule).
"""
from __future__ import absolute_import, division, print_function

import os

from tinytornado import gen
from tinytornado.ioloop import IOLoop

from .crawloptions import RESUMED_PATHS, ConfigurationError, OptionValues, option_mistake
from .journal import Journal, contradictions
from .redisclient import RedisClient
from .redisstore import RedisWorkStore, crawl_prefix
from .urls import normalize_url

__all__ = ['Configuration', 'configure', 'resolve', 'crawl_meta', 'wait_for_crawl',
           'stored_contradiction', 'Contradiction', 'NothingToResume', 'CrawlNotStarted']


class Contradiction(ConfigurationError):
    """Options (or roots) given contradict those of the crawl kept in `source`: the
    option that names the place ('resume', 'redis'); `label` is the Python API's name of
    it ('resume', 'crawl NAME'), `wrong` a list of (name, given, kept)."""

    def describe(self, naming):
        source, label, whose, wrong = self.parts
        return '%s: %s' % (naming.source(source, label), '; '.join(
            naming.contradiction(name, given, kept, whose) for name, given, kept in wrong))


class NothingToResume(ConfigurationError):
    """A resume with no root given, of a `state` that holds no crawl."""

    def describe(self, naming):
        return '%s: %s %s holds no crawl to resume (give URLs to start one)' % (
            naming.option('resume'), naming.option('state'), self.parts[0])


class CrawlNotStarted(ConfigurationError):
    """No process started crawl `crawl_id` in the Redis at `url` within `timeout`."""

    def describe(self, naming):
        crawl_id, url, timeout = self.parts
        return ('crawl %s was not started in %s within %gs (%s): start it with its URLs, '
                'or check %s' % (crawl_id, url, timeout, naming.option('join_timeout'),
                                 naming.option('crawl_id')))


class Configuration(object):
    """One crawl's configuration; see the module docstring.

    Attributes:
        options: an `crawloptions.OptionValues`, resolved.
        roots: the roots, normalised (a resume's or a joining process's taken back).
        given: {name: value} of the options given (not left at their defaults).
        journal: the `journal.Journal` of ``state``, or None.
        client: the `redisclient.RedisClient` of ``redis``, or None.
        resuming: the journal holds a crawl, which this one goes on with.
    """
    __slots__ = ('options', 'roots', 'given', 'journal', 'client', 'resuming')

    def __init__(self, options, roots, given):
        self.options = options
        self.roots = roots
        self.given = given
        self.journal = self.client = None
        self.resuming = False

    def close(self):
        """Close the journal or client, when no work store took them over."""
        if self.journal is not None:
            self.journal.close()
        if self.client is not None:
            self.client.close()

    def take_back(self, kept, kept_roots, source, label, whose):
        """Take the options in `kept` and the roots `kept_roots` back, those given having
        been checked against them (ValueError: a `Contradiction`)."""
        given = dict((name, value) for name, value in self.given.items() if name in kept)
        mistake = stored_contradiction(given, self.roots, kept, kept_roots, source, label,
                                       whose)
        if mistake is not None:
            raise mistake
        for name, value in kept.items():
            if name in OptionValues.__slots__:  # the others are the store's
                setattr(self.options, name, value)
        self.roots = self.roots or list(kept_roots)

    # -- the journal --------------------------------------------------------------------

    def _open_journal(self):
        path = self.options.state
        if self.options.resume and not self.roots and not os.path.exists(path):
            raise NothingToResume(path)  # and makes no file
        self.journal = journal = Journal(path)
        try:
            self.resuming = not journal.is_empty()
            if self.resuming and not self.options.resume:
                raise ValueError('%s holds a crawl already: resume it, or remove the file'
                                 % path)
            if self.resuming:
                self._take_journal_back()
            elif self.options.resume and not self.roots:
                raise NothingToResume(path)
        except Exception:
            journal.close()
            self.journal = None
            raise

    def _take_journal_back(self):
        journal = self.journal
        for name, path in journal.get_meta('files', {}).items():
            if name in RESUMED_PATHS and name not in self.given:
                setattr(self.options, name, path)
        kept = journal.get_meta('options')
        roots = journal.get_meta('roots', [])
        if kept is None:  # a journal of an older version: the options given are taken
            self.roots = self.roots or roots
            return
        kept.update(journal.get_meta('demo', {}))  # the command line's journaled options
        self.take_back(kept, roots, 'resume', 'resume', "the journal's")

    # -- Redis --------------------------------------------------------------------------

    @gen.coroutine
    def _take_shared_back(self, join_timeout, say):
        options = self.options
        if join_timeout is None or self.roots:
            meta = yield crawl_meta(self.client, options.crawl_id)
        else:
            meta = yield wait_for_crawl(self.client, options.crawl_id, join_timeout, say)
            if meta is None:
                raise CrawlNotStarted(options.crawl_id, options.redis, join_timeout)
        if meta is not None:
            self.take_back(meta['options'], meta['roots'] or [], 'redis',
                           'crawl %s' % options.crawl_id, "the crawl's")


def configure(given, roots=(), defaults=()):
    """The `Configuration` of the options `given` ({name: value}; the others take their
    value in `defaults`, else the table's) and `roots`, its journal opened and taken back;
    a Redis crawl's client made (not connected yet) and its meta not read.

    Raises:
        ValueError: an option out of its range, one without another it needs, two that
            exclude each other (each a `ConfigurationError`), a root that is not an
            http(s) URL, a bad Redis URL or crawl id, a journal that holds a crawl and
            no ``resume``, or options that contradict the journal's (`Contradiction`).
        sqlite3.Error: ``state`` cannot hold a journal.
    """
    values = dict(defaults)
    values.update(given)
    options = OptionValues(values)
    mistake = option_mistake(options)
    if mistake is not None:
        raise mistake
    configuration = Configuration(options, [normalize_url(root) for root in roots],
                                  dict(given))
    if options.redis:
        crawl_prefix(options.crawl_id)  # a bad id is refused before any connection
        configuration.client = RedisClient(options.redis, wait_timeout=options.redis_wait)
    elif options.state:
        configuration._open_journal()
    return configuration


@gen.coroutine
def resolve(given, roots=(), defaults=(), join_timeout=None, say=None):
    """A Future of the `Configuration` of `given` and `roots` (see `configure`), a Redis
    crawl's options and roots taken back from its meta if it was started; with no root
    and a `join_timeout`, waiting that long for it to be started (`say` is told so).

    Raises:
        ValueError: as `configure`; `CrawlNotStarted`.
        redisclient.ConnectionError: Redis unreachable for ``redis_wait`` seconds.
    """
    configuration = configure(given, roots, defaults)
    if configuration.client is not None:
        try:
            yield configuration._take_shared_back(join_timeout, say)
        except BaseException:
            configuration.close()
            raise
    raise gen.Return(configuration)


def stored_contradiction(given, roots, kept, kept_roots, source, label, whose):
    """A `Contradiction` of what in `given` ({name: value}) and `roots` contradicts the
    options `kept` and the roots `kept_roots` of a kept crawl, roots first; or None.
    Names `kept` lacks contradict nothing (a journal of an older version)."""
    wrong = []
    if roots and set(roots) != set(kept_roots or ()):
        wrong.append(('roots', roots, kept_roots))
    wrong.extend((name, given[name], kept[name]) for name in contradictions(given, kept))
    return Contradiction(source, label, whose, wrong) if wrong else None


@gen.coroutine
def crawl_meta(client, crawl_id):
    """A Future of the meta ({'options': ..., 'roots': ...}) of crawl `crawl_id` in
    the Redis of `client`, or None if it has not started."""
    store = RedisWorkStore(client, crawl_id, item_type=tuple)
    options = yield store.get_meta('options')
    roots = yield store.get_meta('roots')
    raise gen.Return(None if options is None else dict(options=options, roots=roots))


@gen.coroutine
def wait_for_crawl(client, crawl_id, timeout, say, poll_interval=0.5):
    """A Future of the meta of crawl `crawl_id` in the Redis of `client` (`crawl_meta`)
    once it has been started, asking every `poll_interval` seconds; None if it has not
    been within `timeout` seconds. If it has not at first, `say` is told so, once."""
    io_loop = IOLoop.current()
    deadline = io_loop.time() + timeout
    while True:
        meta = yield crawl_meta(client, crawl_id)
        left = deadline - io_loop.time()
        if meta is not None or left <= 0:
            raise gen.Return(meta)
        if say is not None:
            say('crawl %s has not been started: waiting up to %gs for it (--join-timeout)'
                % (crawl_id, timeout))
            say = None
        yield gen.sleep(min(poll_interval, left))
