"""The work-store contract: all the engine asks of the store that keeps a crawl's work.

A store is made (workstore.py: in memory, journaled in SQLite, or shared in Redis), then
used in one order:

1. ``open(roots, options)`` -> the crawl's roots, normalised (`options`, an
   `OptionValues`, and the roots were resolved before: a kept crawl's were taken back by
   `configuration.resolve`, which opened the journal or Redis client the store uses).
   It makes the store's `seen_urls`, `policy` (a `hostpolicy.HostPolicy` of the options)
   and `hosts` (what the policy pauses and slows).
2. ``start(meta, first_items, report)`` -> Future of the statistics (`FetchStatistic`) of
   the URLs a resumed crawl finished before. A new crawl stores `meta` (the options to
   keep) and queues ``first_items()``, the roots admitted; a crawl kept by the store
   (a journal, or a shared crawl another process started) is taken back instead.
   `report(statistic)` is how the store tells the outputs of a URL it finishes without a
   try: one of a host the policy gave up, which is never asked again.
3. The work, any number of times, from many coroutines at once:

   - ``lease()`` -> Future of an item whose host may be asked now, or None once the
     crawl's work is over (nothing queued, nothing in flight).
   - ``done(item, statistic, new_items)`` -> Future of the new items admitted (the
     engine found them not in `seen_urls`), or None if the lease was lost: another
     holder of the item reports it then, so the caller must not.
   - ``retry(item)``: a failed try; the item comes back with one more try.
   - ``put_back(item)``: no try was made (robots.txt was read in its lease); the item
     comes back as it was, for its host's next turn.
   - ``abandon(item)``: a failed try of a stopping crawl; a store that keeps the crawl
     keeps the item with the try counted.
   - ``unfinished()`` -> the items of this process queued or in flight.

   Each of `retry`, `put_back` and `abandon` answers a Future; every item leased is given
   back once, by one of `done`, `retry`, `put_back` or `abandon`. The leases and
   finishes asked for at once may travel together (the shared store sends a worker's in
   one call); each still answers its own Future. The engine asks for a task's next lease
   with its `done`, before that answers: a store applies them in that order.
4. ``close()``.

Rules every store keeps (tests/test_store_conformance.py checks them on each):

- a URL is admitted once, and finished (reported by one `done`) exactly once;
- `lease` answers None only when no item is queued or leased;
- leases asked for at once hand out what as many asked one at a time would: never more
  than the politeness allows (the per-host cap, the delay, the rate ceiling), and no
  item for a lease not asked for (none waits unstarted while its lease runs out);
- every try counts toward ``max_tries`` (`FetchStatistic.tries`), and a try is a
  hand-out: each lease counts one, but one given back by `put_back` (no request was
  made); a lease its process never gave back (killed, or stopped with the item in
  flight) comes back, in a store that keeps the crawl, with its try counted, so a URL
  that kills every process it is handed to ends as failed;
- a given-up host's URLs are finished by the store, without a try, through `report`;
- a crawl the store keeps resumes where it was after `close`.
"""
from __future__ import absolute_import, division, print_function

import abc

import six

__all__ = ['WorkStore']


@six.add_metaclass(abc.ABCMeta)
class WorkStore(object):
    """The contract of the module docstring; the attributes are set by `open`."""
    seen_urls = None  # what the engine tests a URL against before admitting it
    policy = None  # the `hostpolicy.HostPolicy` of the crawl's options
    hosts = None  # what `policy` pauses and slows
    frontier = None  # an in-process store's queue of hosts (the progress line reads it)
    journal = None  # a journaled store's `journal.Journal`

    @abc.abstractmethod
    def open(self, roots, options):
        """The crawl's roots; makes `seen_urls`, `policy` and `hosts`."""

    @abc.abstractmethod
    def start(self, meta, first_items, report):
        """A Future of the statistics of the URLs finished before (a resume)."""

    @abc.abstractmethod
    def lease(self):
        """A Future of the next item, or None once the work is over."""

    @abc.abstractmethod
    def done(self, item, statistic, new_items):
        """A Future of the new items admitted, or None if the lease was lost."""

    @abc.abstractmethod
    def retry(self, item):
        """Give `item` back after a failed try, with one more try counted."""

    @abc.abstractmethod
    def put_back(self, item):
        """Give `item` back as it was: no try was made."""

    @abc.abstractmethod
    def abandon(self, item):
        """Let go of `item` after a failed try of a stopping crawl."""

    @abc.abstractmethod
    def unfinished(self):
        """The items of this process queued or in flight."""

    @abc.abstractmethod
    def close(self):
        """Free what the store holds; a kept crawl stays for a resume."""
