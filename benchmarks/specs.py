"""The workloads of issue 8: their sizes, inputs and the result each must produce.

A workload's `function` names the method every implementation (impl_tornado.py,
impl_asyncio_py3.py) provides; `expected(params)` is the result that method must return,
so an implementation that skips work fails instead of looking fast.
"""
from __future__ import absolute_import, division, print_function

import collections
import random

__all__ = ['Workload', 'WORKLOADS', 'select', 'make_inputs', 'ops_count', 'TIMER_SEED',
           'MAX_TIMER_DELAY']

TIMER_SEED = 8
MAX_TIMER_DELAY = 0.2

# key: what --only matches (by prefix); full/quick: keyword arguments of `function`;
# ops: how many operations a run performs (us/op and op/s are per this);
# rate: report operations per second (True) or microseconds per operation (False).
Workload = collections.namedtuple(
    'Workload', 'key title function full quick ops unit rate expected')


def _sum_below(n):
    return n * (n - 1) // 2


WORKLOADS = [
    Workload('W1-return', 'W1 coroutine call, immediate return', 'w1_return',
             {'calls': 200000}, {'calls': 20000},
             lambda p: p['calls'], 'us/call', False,
             lambda p: _sum_below(p['calls'])),
    Workload('W1-moment', 'W1 coroutine call, one loop pass', 'w1_moment',
             {'calls': 200000}, {'calls': 20000},
             lambda p: p['calls'], 'us/call', False,
             lambda p: _sum_below(p['calls'])),
    Workload('W2', 'W2 coroutines x loop passes', 'w2_switches',
             {'coroutines': 1000, 'switches': 200}, {'coroutines': 1000, 'switches': 20},
             lambda p: p['coroutines'] * p['switches'], 'us/switch', False,
             lambda p: p['coroutines'] * p['switches']),
    # W3 fires the half that is not cancelled; (fired, wrongly_fired) must be (n - n//2, 0).
    Workload('W3-100k', 'W3 call_later timers, half cancelled', 'w3_timers',
             {'timers': 100000}, {'timers': 10000},
             lambda p: p['timers'], 'us/timer', False,
             lambda p: [p['timers'] - p['timers'] // 2, 0]),
    Workload('W3-1M', 'W3 call_later timers, half cancelled', 'w3_timers',
             {'timers': 1000000}, {'timers': 100000},
             lambda p: p['timers'], 'us/timer', False,
             lambda p: [p['timers'] - p['timers'] // 2, 0]),
    Workload('W4', 'W4 add_callback chain', 'w4_callbacks',
             {'callbacks': 1000000}, {'callbacks': 100000},
             lambda p: p['callbacks'], 'us/callback', False,
             lambda p: p['callbacks']),
    Workload('W5', 'W5 TCP echo, 64-byte messages', 'w5_echo',
             {'clients': 100, 'messages': 2000}, {'clients': 20, 'messages': 200},
             lambda p: p['clients'] * p['messages'], 'msg/s', True,
             lambda p: p['clients'] * p['messages']),
    # W6's expected URL set comes from the site run.py serves; its params are filled in there.
    Workload('W6', 'W6 crawl of the demo site, 100 workers', 'w6_crawl',
             {'pages': 5000, 'workers': 100}, {'pages': 1000, 'workers': 100},
             None, 'pages/s', True, None),
]


def select(only):
    """The workloads whose key starts with one of the comma-separated prefixes in `only`."""
    if not only:
        return list(WORKLOADS)
    prefixes = [p.strip().upper() for p in only.split(',') if p.strip()]
    chosen = [w for w in WORKLOADS if any(w.key.upper().startswith(p) for p in prefixes)]
    if not chosen:
        raise SystemExit('--only %r matches no workload (have: %s)'
                         % (only, ', '.join(w.key for w in WORKLOADS)))
    return chosen


def make_inputs(workload, params):
    """The keyword arguments of the workload's function; made before the clock starts."""
    if workload.function != 'w3_timers':
        return dict(params)
    # The same seeded delays for every implementation, drawn outside the timed region.
    rng = random.Random(TIMER_SEED)
    return {'delays': [rng.uniform(0, MAX_TIMER_DELAY) for _ in range(params['timers'])]}


def ops_count(workload, params, result):
    """How many operations the run performed (W6: the pages it fetched)."""
    if workload.ops is None:
        return result[0]
    return workload.ops(params)
