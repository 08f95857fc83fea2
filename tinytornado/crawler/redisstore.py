"""The crawl's shared work store on Redis: seen set, per-host queues, leases and results
of one crawl that any number of worker processes, on any machines, take work from.

Its interface, which `workstore.SharedWorkStore` turns into the work-store contract of
storecontract.py. Items are WorkItem-like: ``url host depth max_redirect tries``.

- ``admit(items)`` -> Future of the list of those items that were new: each one whose
  URL the crawl has not seen joins the seen set and its host's queue, atomically.
- ``lease()`` -> Future of an item whose host may be asked now, held for `lease_seconds`;
  or None once the crawl is over (nothing queued, nothing leased, crawl-wide). While
  work exists but no host is ready, or other workers hold leases, it waits.
- ``done(item, record, new_items)`` -> Future of the new items admitted, or None if the
  lease was lost (expired and reclaimed): then nothing happened, and the caller must not
  report `item` either, since whoever holds it now will.

  The leases and finishes a worker's tasks ask for while one call is in flight go
  together in the next, one exchange script (``_Grouped``): the finishes first, then as
  many leases as tasks wait for, each host's items taken in one turn when it needs no
  delay between hand-outs (its share when several hosts are ready, within its free
  slots), one a turn otherwise. So a busy worker pays one round trip, and Redis one
  script, for several URLs, and the politeness is that of one lease at a time.
- ``retry(item, delay)`` -> Future of True (False if the lease was lost): the item goes
  back to the front of its host's queue with one more try, ready after `delay` seconds.
- ``put_back(item)`` -> Future of True (False if the lease was lost): the item goes back to
  the front of its host's queue as it was (no try was made: robots.txt was read in its
  lease), and its host is next handed out its delay after now.
- ``lease_time(item)`` -> the time (seconds since the epoch, the store's clock) `item`
  was leased to this store.
- ``pause_host(host, seconds)``, ``set_host_delay(host, seconds)``, ``answered(host,
  latency, ok)`` (the latency of an answer, for the adapted delay) -> Future of None.
- ``renew()`` -> Future of the number of this store's leases given `lease_seconds` more.
- ``reclaim()`` -> Future of the number of expired leases put back in their queues, each
  with one more try (its hand-out counts).
- ``status()`` -> Future of a dict: queued, delayed, leased, finished, seen, hosts,
  started (seconds since the epoch), over.
- ``start(meta, roots)`` -> Future of (created, meta); ``set_meta(key, value)``,
  ``get_meta(key, default)``: the crawl's options, which a joining worker takes.
- ``finished_records(after, count)`` -> Future of a list of (entry id, url, record), the
  URLs finished after entry `after`, in the order they finished.

Politeness is the store's, crawl-wide, the rule of `politeness.PolitenessRule` with its
numbers: at most `max_per_host` leases of one host at once; between two hand-outs to one
host, its delay: fixed (`delay`), or adapted to the latency the workers measure
(``answered``: AutoThrottle's rule on one estimate per host, kept in Redis), and
`set_host_delay` overrides it per host (robots.txt's Crawl-delay); never less than the
rate ceiling's interval; and host pauses (Retry-After, backoff). Every step that
reads and changes the state is one Lua script, run by EVALSHA, so two workers never see
the same state half-changed; times are the server's (TIME, in milliseconds), never a
worker's clock, so workers on machines whose clocks differ still agree.

Keys, all under ``tinycrawl:{CRAWL_ID}:`` (the braces are a Redis Cluster hash tag: every
key of a crawl is in one slot, which the scripts need since they derive the per-host keys
from the prefix they are given):
``seen`` (SET of URLs) or ``seen:BUCKET`` (SETs of 64-bit hashes), ``queue:HOST`` (LIST of item texts, oldest
first), ``ring`` (ZSET of the hosts that may be asked now, scored by their turn: a host
served goes to the back, so hosts take turns), ``waiting`` (ZSET of the hosts that have
queued items and a free lease slot but must wait: paused, or their delay not over,
scored by the time they may be asked; they join the ring then), ``host:HOST`` (HASH of
the host's fields: its leases, items queued, last hand-out, pause, own and adapted delays,
and where it is scheduled, read once and written once by a script), ``leases`` (HASH token
-> item text), ``deadlines`` (ZSET token -> when its lease expires), ``delayed`` (ZSET
item -> when its retry is due), ``finished`` (STREAM: an entry a call, its fields url ->
record), ``hosts`` (SET), ``counts`` (HASH: items queued, URLs seen and finished, the
last turn and token given), ``meta``, and ``reply:OP`` (see below).

Leases. Each hand-out gets a new token, the key of its lease (so that a finish finds
its item without reading or matching anything else); `done` and `retry` count only with
the token of a lease still held, so a worker whose lease
expired and was reclaimed (by any `lease` call: a dead worker's items come back without
anyone watching) cannot finish the URL a second time: a URL is finished, and its record
added to the ``finished`` stream, exactly once; the late finish is dropped, with a log
line. A worker keeps the leases of its items in flight with `renew` (as a queue's
visibility timeout is extended), so `lease_seconds` bounds how long a dead worker's items
wait, not how long a fetch may take. Reclaimed items go back to the front of their
host's queue with one more try: every hand-out counts toward the crawl's max tries.

Redis restarts. A command in flight when the connection drops may or may not have been
applied. Every mutating call carries an operation id, and its script keeps its reply for
`replay_seconds` (a key Redis expires, its value in MessagePack): the store sends a call
again after a ConnectionError, marked as a repeat (only a repeat looks for a kept reply),
and a repeat of an applied call gets the same reply instead of applying it twice (a
`done` whose reply was lost is not mistaken for a lost lease). With appendonly on, the
crawl survives. (Replies kept by a store before this form, JSON, are not read: stores of
one crawl must run the same version, as for the rest of the layout.)

Results. `done` adds ``url`` and ``record`` to the ``finished`` stream, exactly once
per URL: one entry for the finishes of a call (one XADD a call, not one a URL), its
fields the URLs and their values the records. ``tinycrawl --collect FILE`` drains it: it cuts a torn last line of FILE and reads
the URLs of its lines (as `output.mend_output` does), then pages through
`finished_records`, from the start, appending the lines of URLs not in FILE, and goes on
from the last entry id until the crawl is over; killed and run again, it resumes with
exactly one line per URL.

The seen set. Exact: one SET of the URLs themselves (about 100 bytes a URL of 50
characters). With `hashed_seen`: the 64-bit hash of each URL (the first 8 bytes of its
SHA-1, `urls.url_hash`, the in-process `seen.HashedURLSet`'s key), computed by the workers
rather than in Lua so that the one server does not pay for every worker's hashing, kept as
an integer in one of `seen_buckets` sets ``seen:BUCKET`` chosen by its top bits. A set of
at most 512 integers (Redis's ``set-max-intset-entries``) is an intset: 8 bytes a member,
where one big set costs some 55 bytes a member in its hash table. So up to about
``seen_buckets * 400`` URLs cost 8-13 bytes each; past that, buckets turn into hash tables
one by one, and cost what one set would. Two URLs with the same hash count as one: with
10**8 URLs, the chance that any pair does is about 3e-4.
"""
from __future__ import absolute_import, division, print_function

import binascii
import collections
import itertools
import json
import os
import sys

import six

from tinytornado import gen
from tinytornado.concurrent import (Future, future_set_exc_info,
                                    future_set_result_unless_cancelled)
from tinytornado.ioloop import IOLoop
from tinytornado.locks import Condition
from tinytornado.log import app_log

from .journal import as_journaled
from .redisclient import ConnectionError
from .urls import url_hash

__all__ = ['RedisWorkStore', 'crawl_prefix']

# Every script starts so: the crawl's prefix, the store's settings (ARGV[1..6]; ARGV[3]
# the politeness rule's numbers, a JSON object made by politeness.PolitenessRule), the
# server's time, and the helpers the steps share.
#
# What a call costs Redis is mostly its number of `redis.call`s (each 1-3 us of dispatch,
# more than most commands' own work), so a call reads each host's fields (one hash) and
# the crawl's counters (one hash) once, keeps them in Lua tables while it runs, and
# writes those it changed once, at its end (`commit`): a script runs alone, so nobody
# sees them in between.
_PRELUDE = """
if redis.replicate_commands then redis.replicate_commands() end
local P = KEYS[1]
-- The call's operation id; marked with a leading '+' when the call is sent again (after
-- a ConnectionError): only then may a reply be kept for it (ids are never reused).
local RESENT = string.sub(ARGV[1], 1, 1) == '+'
local OP = RESENT and string.sub(ARGV[1], 2) or ARGV[1]
local MAX_PER_HOST = tonumber(ARGV[2])
local RULE = cjson.decode(ARGV[3])
local DELAY = RULE.delay  -- ms between two hand-outs to a host; -1: adapted (throttle)
local FLOOR = RULE.floor  -- the rate ceiling: no delay goes under it
local LEASE = tonumber(ARGV[4])
local MAX_SEEN = tonumber(ARGV[5])
local REPLAY = tonumber(ARGV[6])
local time = redis.call('TIME')
local NOW = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

-- The crawl's counters, read at their first use; written by `commit`.
local COUNTS = nil
local COUNT_NAMES = {'queued', 'seen', 'finished', 'turns', 'tokens'}

local function counts()
  if not COUNTS then
    local values = redis.call('HMGET', P .. 'counts', unpack(COUNT_NAMES))
    COUNTS = {}
    for i, name in ipairs(COUNT_NAMES) do COUNTS[name] = tonumber(values[i] or '0') end
  end
  return COUNTS
end

local function count(name, n)
  local c = counts()
  c[name] = c[name] + n
end

-- A host's fields (hash 'host:HOST'), read once a call: its leases (active), items
-- queued, last hand-out (handed), pause end, own delay (robots.txt's Crawl-delay), adapted
-- delay (throttle), and where it is scheduled (zone: 'r' the ring, 'w' waiting, '' none).
local HOST_FIELDS = {'active', 'queued', 'handed', 'paused', 'delay', 'throttle', 'zone',
                     'listed'}
local HOSTS, CHANGED = {}, {}

local function host_state(host)
  local state = HOSTS[host]
  if not state then
    local v = redis.call('HMGET', P .. 'host:' .. host, unpack(HOST_FIELDS))
    state = {active = tonumber(v[1] or '0'), queued = tonumber(v[2] or '0'),
             handed = tonumber(v[3]), paused = tonumber(v[4] or '0'),
             delay = tonumber(v[5]), throttle = tonumber(v[6]), zone = v[7] or '',
             listed = v[8]}
    HOSTS[host] = state
  end
  if not CHANGED[host] then
    CHANGED[host] = true
    CHANGED[#CHANGED + 1] = host
  end
  return state
end

-- The text of integer `n`: Redis writes a Lua number given to a command with '%.17g',
-- a float's formatting, several times the cost of an integer's.
local function integer(n)
  return string.format('%d', n)
end

-- Write what the call changed: each host's fields and the counters, one command each.
local function commit()
  for _, host in ipairs(CHANGED) do
    local s = HOSTS[host]
    local fields = {'active', integer(s.active), 'queued', integer(s.queued),
                    'paused', integer(s.paused), 'zone', s.zone}
    for _, name in ipairs({'handed', 'delay', 'throttle', 'listed'}) do
      if s[name] then
        fields[#fields + 1] = name
        fields[#fields + 1] = s[name]
      end
    end
    redis.call('HSET', P .. 'host:' .. host, unpack(fields))
  end
  if COUNTS then
    local fields = {}
    for _, name in ipairs(COUNT_NAMES) do
      fields[#fields + 1] = name
      fields[#fields + 1] = integer(COUNTS[name])
    end
    redis.call('HSET', P .. 'counts', unpack(fields))
  end
end

-- A call's reply, kept `replay_seconds` under a key of its own (Redis expires it), in
-- MessagePack: packed on every call, and cheaper to make than JSON (whose encoder escapes
-- each '/' of the URLs in it).
local function replayed()
  if not RESENT then return nil end  -- a first send: nothing kept under its new id
  local reply = redis.call('GET', P .. 'reply:' .. OP)
  if reply then return cmsgpack.unpack(reply) end
end

local function remember(reply)
  commit()
  if REPLAY > 0 then
    redis.call('SET', P .. 'reply:' .. OP, cmsgpack.pack(reply), 'PX', REPLAY)
  end
  return reply
end

-- A host's delay: its own (robots.txt's Crawl-delay), else the crawl's fixed one, else
-- the one adapted to its latency (the throttle's, shared by every worker).
local function host_delay(s)
  if s.delay then return s.delay end
  if DELAY >= 0 then return DELAY end
  return s.throttle or RULE.start
end

-- Keep the invariant: a host with queued items and a free slot is in 'ring' if it may
-- be asked now, else in 'waiting', scored with the time it may be; other hosts in
-- neither. A host joins the back of the ring; one in it already keeps its place.
local function schedule(host)
  local s = host_state(host)
  local zone, ready = '', nil
  if s.queued > 0 and (MAX_PER_HOST == 0 or s.active < MAX_PER_HOST) then
    ready = s.paused
    if s.handed then ready = math.max(ready, s.handed + math.max(host_delay(s), FLOOR)) end
    zone = ready <= NOW and 'r' or 'w'
  end
  if s.zone == 'r' and zone ~= 'r' then redis.call('ZREM', P .. 'ring', host) end
  if s.zone == 'w' and zone ~= 'w' then redis.call('ZREM', P .. 'waiting', host) end
  if zone == 'r' and s.zone ~= 'r' then
    count('turns', 1)
    redis.call('ZADD', P .. 'ring', COUNTS.turns, host)
  elseif zone == 'w' then
    redis.call('ZADD', P .. 'waiting', ready, host)
  end
  s.zone = zone
end

-- The URL and host of an item's text, read by a pattern where the two are plain (no
-- escape in them, as normalized URLs are): a cjson decode costs as much as a command.
local function url_host(text)
  local url, host = string.match(text, '^%["([^"\\\\]*)","([^"\\\\]*)",')
  if url then return url, host end
  local item = cjson.decode(text)
  return item[1], item[2]
end

local function host_of(text)
  local _, host = url_host(text)
  return host
end

local function requeue(text)
  local host = host_of(text)
  redis.call('LPUSH', P .. 'queue:' .. host, text)
  host_state(host).queued = host_state(host).queued + 1
  count('queued', 1)
  schedule(host)
end

-- Run `command` on `key` (and `option`, if given) with the values of `list`, in calls of
-- at most 1000 (Lua's unpack has a bounded stack).
local function call_with_all(command, key, list, option)
  for first = 1, #list, 1000 do
    local last = math.min(first + 999, #list)
    if option then
      redis.call(command, key, option, unpack(list, first, last))
    else
      redis.call(command, key, unpack(list, first, last))
    end
  end
end

-- An admission: items of one or more calls' lists, queued at its end (`end_admission`),
-- so that a batch of finishes pushes each host's new items and schedules it once.
local function new_admission()
  return {admitted = 0, queues = {}, hosts = {}, touched = {}}
end

-- `host` is scheduled at the end of the admission, in the order hosts were touched
-- (new hosts join the ring so).
local function touch(admission, host)
  if not admission.touched[host] then
    admission.touched[host] = true
    admission.hosts[#admission.hosts + 1] = host
  end
end

-- ARGV[first..last] are (seen set, its member, item text, host) quadruples; the 0-based
-- indexes of the items that were new.
local function admit_part(admission, first, last)
  local admitted = {}
  for i = first, last, 4 do
    if MAX_SEEN > 0 and counts().seen + admission.admitted >= MAX_SEEN then break end
    if redis.call('SADD', ARGV[i], ARGV[i + 1]) == 1 then
      admission.admitted = admission.admitted + 1
      local host = ARGV[i + 3]
      local queue = admission.queues[host]
      if not queue then
        queue = {}
        admission.queues[host] = queue
      end
      touch(admission, host)
      queue[#queue + 1] = ARGV[i + 2]
      admitted[#admitted + 1] = (i - first) / 4
    end
  end
  return admitted
end

local function end_admission(admission)
  if admission.admitted > 0 then
    count('seen', admission.admitted)
    count('queued', admission.admitted)
  end
  for _, host in ipairs(admission.hosts) do
    local queue = admission.queues[host]
    if queue then
      local s = host_state(host)
      call_with_all('RPUSH', P .. 'queue:' .. host, queue)
      s.queued = s.queued + #queue
      if not s.listed then
        redis.call('SADD', P .. 'hosts', host)
        s.listed = '1'
      end
    end
    schedule(host)
  end
end

-- ARGV[first..] are quadruples to admit; the indexes of the new ones.
local function admit(first)
  redis.call('HSETNX', P .. 'counts', 'started', NOW)
  local admission = new_admission()
  local admitted = admit_part(admission, first, #ARGV)
  end_admission(admission)
  return admitted
end

-- An expired lease's hand-out counts as a try (its worker died, or hung): a URL that
-- kills every worker it is handed to reaches the crawl's max tries, and fails then.
local function reclaim(limit)
  local tokens = redis.call('ZRANGEBYSCORE', P .. 'deadlines', '-inf', NOW, 'LIMIT', 0, limit)
  if #tokens == 0 then return 0 end
  local texts = redis.call('HMGET', P .. 'leases', unpack(tokens))
  redis.call('HDEL', P .. 'leases', unpack(tokens))
  redis.call('ZREM', P .. 'deadlines', unpack(tokens))
  for _, text in ipairs(texts) do
    local item = cjson.decode(text)
    local s = host_state(item[2])
    s.active = s.active - 1
    item[5] = item[5] + 1
    requeue(cjson.encode(item))
  end
  return #tokens
end

-- End the leases of `tokens` still held: texts[i], the text of the item of each lease
-- ended, or false for a lease lost (it expired and was reclaimed); urls[i] and
-- owners[i], its URL and host.
local function release(tokens)
  local leases = redis.call('HMGET', P .. 'leases', unpack(tokens))
  local texts, urls, owners, ended = {}, {}, {}, {}
  for i = 1, #tokens do
    local text = leases[i]
    texts[i] = text or false
    if text then
      ended[#ended + 1] = tokens[i]
      local url, host = url_host(text)
      urls[i], owners[i] = url, host
      local s = host_state(host)
      s.active = s.active - 1
    end
  end
  if #ended > 0 then
    call_with_all('HDEL', P .. 'leases', ended)
    call_with_all('ZREM', P .. 'deadlines', ended)
  end
  return texts, urls, owners
end

-- Finish the `count_of` items whose finishes start at ARGV[first]: each as token,
-- record, n, then n quadruples to admit. A reply per finish ({1, the indexes of its items
-- admitted}, or {0} if its lease was lost).
local function finish(first, count_of)
  if count_of == 0 then return {} end
  local tokens, firsts = {}, {}
  local i = first
  for f = 1, count_of do
    tokens[f], firsts[f] = ARGV[i], i
    i = i + 3 + 4 * tonumber(ARGV[i + 2])
  end
  local texts, urls, owners = release(tokens)
  local admission = new_admission()
  local replies, entry = {}, {}
  for f, text in ipairs(texts) do
    if text then
      local at = firsts[f]
      entry[#entry + 1] = urls[f]
      entry[#entry + 1] = ARGV[at + 1]
      touch(admission, owners[f])  -- a slot of its host is free
      local admitted = admit_part(admission, at + 3, at + 2 + 4 * tonumber(ARGV[at + 2]))
      table.insert(admitted, 1, 1)
      replies[f] = admitted
    else
      replies[f] = {0}
    end
  end
  if #entry > 0 then  -- one entry of the stream for the finishes of a call
    count('finished', #entry / 2)
    call_with_all('XADD', P .. 'finished', entry, '*')
  end
  end_admission(admission)
  return replies
end

-- Lease up to `wanted` items: as many as politeness allows now. A reply {'items', now,
-- wait, token, text, token, text, ...}: the items handed out, and if fewer than wanted,
-- the ms until something is due (-1: nothing is, other workers hold leases); or {'over'}.
local function lease(wanted)
  reclaim(100)
  local due = redis.call('ZRANGEBYSCORE', P .. 'delayed', '-inf', NOW, 'LIMIT', 0, 100)
  for _, text in ipairs(due) do
    redis.call('ZREM', P .. 'delayed', text)
    requeue(text)
  end
  -- Hosts whose wait is over join the ring in the order they became ready.
  local ready = redis.call('ZRANGEBYSCORE', P .. 'waiting', '-inf', NOW, 'LIMIT', 0, 100)
  for _, host in ipairs(ready) do
    schedule(host)
  end
  local handed, leases, deadlines = {'items', NOW, 0}, {}, {}
  local deadline = integer(NOW + LEASE)
  local left = wanted
  while left > 0 do
    local first = redis.call('ZPOPMIN', P .. 'ring')  -- served: to the back, or to wait
    if #first == 0 then break end
    local host = first[1]
    local s = host_state(host)
    s.zone = ''
    -- One item a turn if the host must wait between two hand-outs; else its share of
    -- those still wanted (hosts take turns), within its free slots: the same items as one
    -- lease at a time, in fewer commands.
    local take = 1
    if math.max(host_delay(s), FLOOR) <= 0 then
      take = math.ceil(left / (redis.call('ZCARD', P .. 'ring') + 1))
      if MAX_PER_HOST > 0 then take = math.min(take, MAX_PER_HOST - s.active) end
    end
    local queue = P .. 'queue:' .. host
    local texts = redis.call('LRANGE', queue, 0, take - 1)
    redis.call('LTRIM', queue, #texts, -1)
    s.queued = s.queued - #texts
    s.active = s.active + #texts
    s.handed = NOW
    count('queued', -#texts)
    local token = counts().tokens
    count('tokens', #texts)
    for _, text in ipairs(texts) do
      token = token + 1
      local key = integer(token)
      leases[#leases + 1] = key
      leases[#leases + 1] = text
      deadlines[#deadlines + 1] = deadline
      deadlines[#deadlines + 1] = key
      handed[#handed + 1] = token
      handed[#handed + 1] = text
    end
    left = left - #texts
    schedule(host)
  end
  if #leases > 0 then
    call_with_all('HSET', P .. 'leases', leases)
    call_with_all('ZADD', P .. 'deadlines', deadlines)
  end
  if left == 0 then return handed end
  if left == wanted and counts().queued == 0 and redis.call('ZCARD', P .. 'delayed') == 0
      and redis.call('ZCARD', P .. 'deadlines') == 0 then
    return {'over'}
  end
  local next_due = nil
  for _, name in ipairs({'waiting', 'delayed', 'deadlines'}) do
    local first = redis.call('ZRANGE', P .. name, 0, 0, 'WITHSCORES')
    if #first == 2 and (next_due == nil or tonumber(first[2]) < next_due) then
      next_due = tonumber(first[2])
    end
  end
  handed[3] = next_due and math.max(0, next_due - NOW) or -1
  return handed
end
"""

# ARGV[7..]: quadruples to admit.
_ADMIT = """
local reply = replayed()
if reply then return reply end
return remember(admit(7))
"""

# ARGV[7]: how many meta fields follow as (name, JSON) pairs; then quadruples to admit.
_START = """
local reply = replayed()
if reply then return reply end
local meta = P .. 'meta'
if redis.call('HSETNX', P .. 'counts', 'created', NOW) == 0 then
  return remember({0, redis.call('HGETALL', meta)})
end
local pairs_end = 7 + 2 * tonumber(ARGV[7])
for i = 8, pairs_end, 2 do
  redis.call('HSET', meta, ARGV[i], ARGV[i + 1])
end
admit(pairs_end + 1)
return remember({1, redis.call('HGETALL', meta)})
"""

# A worker's finishes and leases of one round trip. ARGV[7]: how many items are wanted;
# ARGV[8]: how many finishes follow (see `finish`). The finishes come first, so that the
# leases may hand out what they admitted. A reply {the finishes' replies, the leases'}.
_EXCHANGE = """
local reply = replayed()
if reply then return reply end
local finishes = finish(9, tonumber(ARGV[8]))
local leased = {'items', NOW, -1}
if tonumber(ARGV[7]) > 0 then leased = lease(tonumber(ARGV[7])) end
reply = {finishes, leased}
if #finishes == 0 and #leased <= 3 then  -- nothing to replay
  commit()
  return reply
end
return remember(reply)
"""

# ARGV[7] token. The lease's request (robots.txt) went out after its hand-out: the host's
# delay counts again from now.
_PUT_BACK = """
local reply = replayed()
if reply then return reply end
local text = release({ARGV[7]})[1]
if not text then return remember({0}) end
host_state(host_of(text)).handed = NOW
requeue(text)
return remember({1})
"""

# ARGV[7] token, ARGV[8] delay in ms.
_RETRY = """
local reply = replayed()
if reply then return reply end
local text = release({ARGV[7]})[1]
if not text then return remember({0}) end
local item = cjson.decode(text)
item[5] = item[5] + 1
text = cjson.encode(item)
local delay = tonumber(ARGV[8])
if delay > 0 then
  redis.call('ZADD', P .. 'delayed', NOW + delay, text)
  schedule(item[2])
else
  requeue(text)
end
return remember({1})
"""

# ARGV[7] host, ARGV[8] milliseconds: a pause only grows.
_PAUSE = """
local s = host_state(ARGV[7])
s.paused = math.max(s.paused, NOW + tonumber(ARGV[8]))
schedule(ARGV[7])
commit()
"""

# ARGV[7] host, ARGV[8] milliseconds between two hand-outs to it.
_SET_DELAY = """
host_state(ARGV[7]).delay = tonumber(ARGV[8])
schedule(ARGV[7])
commit()
"""

# ARGV[7..]: the tokens of leases held: each still held gets `lease_seconds` from now.
# The number renewed.
_RENEW = """
local renewed, deadline = 0, integer(NOW + LEASE)
for first = 7, #ARGV, 1000 do  -- unpack's stack is bounded
  local tokens = {unpack(ARGV, first, math.min(first + 999, #ARGV))}
  local held = redis.call('HMGET', P .. 'leases', unpack(tokens))
  local scores = {}
  for i, text in ipairs(held) do
    if text then
      scores[#scores + 1] = deadline
      scores[#scores + 1] = tokens[i]
    end
  end
  if #scores > 0 then redis.call('ZADD', P .. 'deadlines', unpack(scores)) end
  renewed = renewed + #scores / 2
end
return renewed
"""

# ARGV[7] host, ARGV[8] the latency of an answer in ms, ARGV[9] 1 if it was a 200: an
# adapted delay moves halfway to latency / target, within bounds, never shorter after an
# answer that is not a 200 (politeness.AutoThrottle's rule, on the shared estimate).
_ANSWERED = """
local host = ARGV[7]
if DELAY >= 0 then return end
local s = host_state(host)
if s.delay then return end
local old = host_delay(s)
local new = math.min(math.max((old + tonumber(ARGV[8]) / RULE.target) / 2, RULE.min),
                     RULE.max)
if ARGV[9] ~= '1' then new = math.max(new, old) end
s.throttle = new
schedule(host)
commit()
"""

_RECLAIM = """
local total, n = 0, 100
while n == 100 do
  n = reclaim(100)
  total = total + n
end
commit()
return total
"""

_STATUS = """
local counts = redis.call('HMGET', P .. 'counts', 'queued', 'seen', 'started', 'finished')
return {tonumber(counts[1] or '0'), redis.call('ZCARD', P .. 'delayed'),
        redis.call('ZCARD', P .. 'deadlines'), tonumber(counts[4] or '0'),
        tonumber(counts[2] or '0'), redis.call('SCARD', P .. 'hosts'),
        counts[3] or false, NOW}
"""

_SCRIPTS = dict(admit=_ADMIT, start=_START, exchange=_EXCHANGE, retry=_RETRY,
                put_back=_PUT_BACK, pause=_PAUSE, set_delay=_SET_DELAY, answered=_ANSWERED,
                reclaim=_RECLAIM, renew=_RENEW,
                status=_STATUS)

_ATTEMPTS = 3  # sends of a call; a Redis restart costs one

# The most leases and finishes one call carries: its arguments and reply stay bounded.
_MOST_PER_CALL = 200

_LEASE = 'lease'  # a request for a lease, beside the finishes (tuples) of an exchange


def crawl_prefix(crawl_id):
    """The prefix of every key of crawl `crawl_id`, with its Redis Cluster hash tag."""
    if not crawl_id or '{' in crawl_id or '}' in crawl_id:
        raise ValueError('a crawl id must be non-empty and without braces: %r' % (crawl_id,))
    return 'tinycrawl:{%s}:' % crawl_id


class RedisWorkStore(object):
    """The work of crawl `crawl_id` in the Redis of `client`; see the module docstring.

    Args:
        client: a `redisclient.RedisClient`; one store per worker process (or more: each
            store is a worker of its own as far as leases go).
        item_type: builds the items `lease` returns from (url, host, depth, max_redirect,
            tries): the crawler's WorkItem.
        lease_seconds: how long a leased item stays with its worker before it may be
            reclaimed, unless renewed (`renew`).
        max_per_host: leases of one host at once, crawl-wide; None for no limit.
        delay: seconds between two hand-outs to one host, crawl-wide.
        politeness: the rule's numbers (`politeness.PolitenessRule.store_settings`), which
            override `delay`: a fixed or adapted delay, and the rate ceiling's floor.
        hashed_seen: keep 64-bit hashes of the URLs seen, not the URLs, in
            `seen_buckets` sets (a power of two; see the module docstring).
        max_pages: the most URLs the crawl admits; None for no limit.
        poll_interval: the longest a waiting `lease` sleeps before asking again (another
            worker's `done` may have made work; this store's own calls wake it at once).
        replay_seconds: how long the reply of a call is kept for a repeat of it.

    The settings that shape the crawl (`max_per_host`, `delay`, `max_pages`,
    `hashed_seen`, `seen_buckets`) go with every call: workers of one crawl must use the
    same (a crawl's meta carries them).
    """

    def __init__(self, client, crawl_id, item_type, lease_seconds=60.0, max_per_host=None,
                 delay=0.0, hashed_seen=False, seen_buckets=4096, max_pages=None,
                 poll_interval=0.1, replay_seconds=60.0, politeness=None):
        if lease_seconds <= 0 or poll_interval <= 0:
            raise ValueError('lease_seconds and poll_interval must be positive')
        if max_per_host is not None and max_per_host < 1:
            raise ValueError('max_per_host must be at least 1, or None')
        if seen_buckets < 1 or seen_buckets & (seen_buckets - 1):
            raise ValueError('seen_buckets must be a power of two')
        self.client = client
        self.crawl_id = crawl_id
        self.prefix = crawl_prefix(crawl_id)
        self.item_type = item_type
        self.hashed_seen = hashed_seen
        self.delay = delay
        self._exact_seen = self.prefix + 'seen'
        self._bucket_shift = 64 - (seen_buckets.bit_length() - 1)
        self.poll_interval = poll_interval
        self.io_loop = IOLoop.current()
        if politeness is None:
            politeness = dict(delay=_milliseconds(delay), floor=0, start=0, min=0, max=0,
                              target=1.0)
        self.adaptive = politeness['delay'] < 0
        self.min_interval = politeness['floor'] / 1000.0
        self._settings = [max_per_host or 0, json.dumps(politeness, sort_keys=True),
                          _milliseconds(lease_seconds), max_pages or 0,
                          _milliseconds(replay_seconds)]
        self._scripts = dict((name, client.register_script(_PRELUDE + body))
                             for name, body in _SCRIPTS.items())
        self._operation_ids = _operation_ids()
        # id(item) -> (item, token, server time of the hand-out) of our leases: per item
        # leased, not per URL, since a URL may be leased to this store twice (its first
        # lease lost), and each holder must finish it with its own token.
        self._leases = {}
        self._changed = Condition()  # our own calls that may make work wake our leases
        self._exchanges = _Grouped(self._exchange, self._wait)

    def __repr__(self):
        return '<RedisWorkStore %s on %s>' % (self.crawl_id, self.client.url)

    # -- the work ------------------------------------------------------------------------

    @gen.coroutine
    def admit(self, items):
        """Queue the items whose URLs are new to the crawl; a Future of those items."""
        items = list(items)
        indexes = yield self._run('admit', self._admission(items))
        self._changed.notify_all()
        raise gen.Return([items[index] for index in indexes])

    def lease(self):
        """The next item some host may be asked for, leased to this store; None once
        the crawl is over. Leases and finishes asked for together go in one call (see
        `_Grouped`), which hands out as many items as politeness allows now."""
        return self._exchanges.add(_LEASE)

    def done(self, item, record, new_items=()):
        """Finish `item` with `record` (the JSON text of its statistic) and admit
        `new_items`, atomically; a Future of those admitted, or None if the lease was
        lost (see the module docstring). Sent with the other finishes and leases asked
        for meanwhile (see `_Grouped`).

        Raises:
            ValueError: (at once) `item` is not leased to this store.
        """
        future = self._exchanges.add((item, self._token(item), record, list(new_items)))
        self._changed.notify_all()  # a call waiting to ask for leases again goes now
        return future

    @gen.coroutine
    def _exchange(self, batch):
        """One call for the finishes and the leases of `batch` (a lease whose Future was
        cancelled is not asked for); None, or the seconds to wait before asking again for
        the leases left, put back at the front of the queue."""
        finishes = [(future, request) for future, request in batch if request is not _LEASE]
        waiting = [future for future, request in batch
                   if request is _LEASE and not future.cancelled()]
        if not finishes and not waiting:
            raise gen.Return(None)
        arguments = [len(waiting), len(finishes)]
        for _, (item, token, record, new_items) in finishes:
            arguments += [token, record, len(new_items)]
            arguments += self._admission(new_items)
        finished, leased = yield self._run('exchange', arguments)
        for (future, (item, _, _, new_items)), reply in zip(finishes, finished):
            self._ended(item)
            if reply[0] == 1:
                admitted = [new_items[index] for index in reply[1:]]
            else:
                _log_lost(item, 'finished')
                admitted = None
            future_set_result_unless_cancelled(future, admitted)
        raise gen.Return(self._hand_out(waiting, leased))

    def _hand_out(self, waiting, reply):
        """Give the items of a lease `reply` to the Futures `waiting`; None, or the seconds
        to wait before asking again for those left (put back first in the queue)."""
        if reply[0] == b'over':
            for future in waiting:
                future_set_result_unless_cancelled(future, None)
            return None
        now, wait, handed = reply[1], reply[2], reply[3:]
        for future, index in zip(waiting, range(0, len(handed), 2)):
            # A task cancelled meanwhile (its crawl stopping) leaves its item unregistered:
            # its lease expires, and the item comes back to the crawl, as a dead worker's.
            if not future.cancelled():
                future.set_result(self._leased(handed[index], handed[index + 1], now))
        left = waiting[len(handed) // 2:]
        if not left:
            return None
        self._exchanges.put_back((future, _LEASE) for future in left)
        if self._exchanges.waiting(lambda request: request is not _LEASE):
            return None  # finishes asked for meanwhile go at once
        return self.poll_interval if wait < 0 else min(wait / 1000.0, self.poll_interval)

    def retry(self, item, delay=0.0):
        """Put `item` back with one more try, ready after `delay` seconds; a Future of
        False if the lease was lost (nothing happened), else True.

        Raises:
            ValueError: (at once) `item` is not leased to this store.
        """
        return self._give_back('retry', item, self._token(item), [_milliseconds(delay)])

    def put_back(self, item):
        """Put `item` back as it was (no try was made), before its host's others, and
        hand out nothing more of its host until the host's delay has passed from now; a
        Future of False if the lease was lost (nothing happened), else True.

        Raises:
            ValueError: (at once) `item` is not leased to this store.
        """
        return self._give_back('put_back', item, self._token(item), [])

    @gen.coroutine
    def _give_back(self, name, item, token, arguments):
        """End the lease of `item` by script `name`: True, or False if it was lost."""
        reply = yield self._run(name, [token] + arguments)
        self._ended(item)
        if reply[0] != 1:
            _log_lost(item, 'given back')
        raise gen.Return(reply[0] == 1)

    def lease_time(self, item):
        """The server's time (seconds since the epoch) `item` was leased to this store."""
        return self._leases[id(item)][2]

    def renew(self):
        """Give every lease this store holds `lease_seconds` from now (those still
        held: a lease lost is not taken back); a Future of how many were renewed."""
        return self._run('renew', [token for _, token, _ in self._leases.values()])

    @gen.coroutine
    def reclaim(self):
        """Put every expired lease's item back in its queue; a Future of how many."""
        reclaimed = yield self._run('reclaim')
        self._changed.notify_all()
        raise gen.Return(reclaimed)

    # -- hosts ---------------------------------------------------------------------------

    @gen.coroutine
    def pause_host(self, host, seconds):
        """Hand out nothing of `host` during the next `seconds` (a pause only grows)."""
        yield self._run('pause', [host, _milliseconds(seconds)])

    @gen.coroutine
    def answered(self, host, latency, ok):
        """An answer of `host` took `latency` seconds (`ok`: a 200): an adapted delay
        moves toward it, for the whole crawl."""
        yield self._run('answered', [host, _milliseconds(latency), 1 if ok else 0])
        self._changed.notify_all()

    @gen.coroutine
    def set_host_delay(self, host, seconds):
        """Seconds between two hand-outs to `host` from now on, for the whole crawl."""
        yield self._run('set_delay', [host, _milliseconds(seconds)])
        self._changed.notify_all()

    # -- the crawl -----------------------------------------------------------------------

    @gen.coroutine
    def start(self, meta, roots):
        """Start the crawl with `meta` (a dict of JSON values) and admit `roots`, unless
        it has started already: then join it. A Future of (created, the crawl's meta)."""
        roots = list(roots)
        fields = [value for name, text in sorted(meta.items())
                  for value in (name, _meta_text(text))]
        created, stored = yield self._run('start', [len(meta)] + fields +
                                          self._admission(roots))
        self._changed.notify_all()
        names, texts = stored[::2], stored[1::2]
        raise gen.Return((created == 1, dict(
            (six.ensure_str(name), _meta_value(text)) for name, text in zip(names, texts))))

    @gen.coroutine
    def set_meta(self, key, value):
        """Store `value` (JSON) under `key` in the crawl's meta."""
        yield self._command('HSET', self.prefix + 'meta', key, _meta_text(value))

    @gen.coroutine
    def get_meta(self, key, default=None):
        """The value stored under `key` in the crawl's meta, or `default`."""
        text = yield self._command('HGET', self.prefix + 'meta', key)
        raise gen.Return(default if text is None else _meta_value(text))

    @gen.coroutine
    def status(self):
        """A Future of the crawl's counts, its start and the server's time (seconds)."""
        values = yield self._run('status')
        queued, delayed, leased, finished, seen, hosts, started, now = values
        raise gen.Return(dict(
            queued=queued, delayed=delayed, leased=leased, finished=finished, seen=seen,
            hosts=hosts, started=None if started is None else int(started) / 1000.0,
            now=now / 1000.0, over=not (queued or delayed or leased)))

    @gen.coroutine
    def finished_records(self, after='0', count=1000):
        """The URLs finished in the `count` stream entries after entry `after` ('0': from
        the start), each entry the finishes of one call: a Future of a list of (entry id,
        url, record), native strings, oldest first."""
        reply = yield self._command('XREAD', 'COUNT', count, 'STREAMS',
                                    self.prefix + 'finished', after)
        records = []
        for entry_id, fields in reply[0][1] if reply else []:
            entry_id = six.ensure_str(entry_id)
            records.extend((entry_id, six.ensure_str(url), six.ensure_str(record))
                           for url, record in zip(fields[::2], fields[1::2]))
        raise gen.Return(records)

    # -- helpers -------------------------------------------------------------------------

    def _admission(self, items):
        """The (seen set, member, item text, host) arguments that admit `items`."""
        arguments = []
        for item in items:
            text = json.dumps([item.url, item.host, item.depth, item.max_redirect,
                               item.tries], separators=(',', ':'))
            arguments.extend(self._seen_key(item.url) + (text, item.host))
        return arguments

    def _seen_key(self, url):
        """(the set, the member) that stand for `url` in the seen set."""
        if not self.hashed_seen:
            return self._exact_seen, url
        fingerprint = url_hash(url)
        bucket = fingerprint >> self._bucket_shift
        # Signed, so that Redis keeps it as a 64-bit integer of an intset.
        member = fingerprint - (1 << 64) if fingerprint >= 1 << 63 else fingerprint
        return '%sseen:%x' % (self.prefix, bucket), member

    def _leased(self, token, text, now):
        url, host, depth, max_redirect, tries = json.loads(six.ensure_text(text))
        item = self.item_type(six.ensure_str(url), six.ensure_str(host), depth,
                              max_redirect, tries)
        self._leases[id(item)] = (item, token, now / 1000.0)
        return item

    def _token(self, item):
        lease = self._leases.get(id(item))
        if lease is None or lease[0] is not item:
            raise ValueError('%s is not leased to this store' % (item.url,))
        return lease[1]

    def _wait(self, seconds):
        """Wait `seconds`, or less if a call of this store may have made work."""
        return self._changed.wait(self.io_loop.time() + seconds)

    def _ended(self, item):
        del self._leases[id(item)]
        self._changed.notify_all()

    @gen.coroutine
    def _run(self, name, arguments=()):
        """Run script `name`; sent again after a ConnectionError, with the same
        operation id, so that a call applied once is not applied twice."""
        operation, arguments = next(self._operation_ids), self._settings + list(arguments)
        # Marked as sent again after the first attempt: a script looks for the reply it
        # kept only then, and a first send costs no lookup.
        reply = yield self._retrying(lambda attempt: self._scripts[name](
            keys=[self.prefix], args=[('+' if attempt else '') + operation] + arguments))
        raise gen.Return(reply)

    def _command(self, *arguments):
        return self._retrying(lambda attempt: self.client.execute(*arguments))

    @gen.coroutine
    def _retrying(self, send):
        """The reply of `send(attempt)`, sent again after a ConnectionError."""
        for attempt in range(_ATTEMPTS):
            try:
                reply = yield send(attempt)
            except ConnectionError:
                if attempt + 1 == _ATTEMPTS:
                    raise
            else:
                raise gen.Return(reply)


class _Grouped(object):
    """Requests (a worker's leases and finishes) that go to Redis together: those made in
    one pass of the loop, or while a call of them is in flight, make the next call; one
    is in flight at a time. So a worker's tasks share round trips as a database's
    transactions share a group commit: the busier the worker, the more each call carries,
    and an idle one waits for no batch to fill.

    `call(batch)` sends a batch, a list of (Future, request), and resolves the Futures;
    a Future of None, or of the seconds `wait(seconds)` waits before the next call. A
    call that fails fails the Futures of its batch it left pending.
    """

    def __init__(self, call, wait):
        self._call = call
        self._wait = wait
        self._pending = collections.deque()
        self._running = False

    def add(self, request):
        """A Future of the reply to `request`, sent with the next call."""
        future = Future()
        self._pending.append((future, request))
        if not self._running:
            self._running = True
            IOLoop.current().add_callback(self._send)  # after this pass's requests
        return future

    def waiting(self, test):
        """Whether a request waiting for the next call passes `test`."""
        return any(test(request) for _, request in self._pending)

    def put_back(self, requests):
        """Send (Future, request) pairs not answered yet first in the next call."""
        self._pending.extendleft(reversed(list(requests)))

    @gen.coroutine
    def _send(self):
        try:
            while self._pending:
                batch = [self._pending.popleft()
                         for _ in range(min(len(self._pending), _MOST_PER_CALL))]
                try:
                    wait = yield self._call(batch)
                except Exception:  # each request's caller sees it
                    error = sys.exc_info()
                    for future, _ in batch:
                        if not future.done():
                            future_set_exc_info(future, error)
                    continue
                if wait is not None:
                    yield self._wait(wait)
                else:
                    # A loop pass for the tasks this call's replies woke: their next
                    # requests (a finished task's lease) go in the next call, not in
                    # one more after it.
                    yield gen.moment
        finally:
            self._running = False


def _log_lost(item, how):
    app_log.warning('%s not %s: its lease was lost (it expired, and the URL was handed out '
                    'again); its new holder finishes it', item.url, how)


def _milliseconds(seconds):
    return int(round(seconds * 1000))


def _operation_ids():
    """Ids unique across the stores of every process: a random prefix, then a count."""
    prefix = binascii.hexlify(os.urandom(8)).decode('ascii')
    return ('%s-%d' % (prefix, n) for n in itertools.count())


def _meta_text(value):
    return json.dumps(as_journaled(value), sort_keys=True)


def _meta_value(text):
    return as_journaled(json.loads(six.ensure_text(text)))
