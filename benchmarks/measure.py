"""One measurement: one workload, once, on one implementation, in this fresh process.

    python benchmarks/measure.py WORKLOAD IMPLEMENTATION PARAMS_JSON EXPECTED_JSON

Prints one JSON line: seconds (wall), cpu_seconds, result, rss_base_kb (after imports,
inputs and a small warm-up run) and rss_peak_kb (the process's high-water mark, VmHWM);
or {"unavailable": why}; or {"error": traceback} and exit status 1 when the workload fails or
returns anything but the expected result. run.py starts one process per measurement so that
implementations never share a loop, a heap or a peak-RSS counter.
"""
from __future__ import absolute_import, division, print_function

import json
import resource
import sys
import timeit
import traceback
import warnings

import specs
from common import Unavailable, import_optional

__all__ = ['make_implementation', 'measure']

WARM_UP_DIVISOR = 50


def make_implementation(name):
    """The object whose methods run the workloads on implementation `name`."""
    if name in ('tinytornado', 'tornado'):
        from impl_tornado import TornadoStyle
        return TornadoStyle(name)
    if sys.version_info[0] < 3:
        raise Unavailable('Python 2 has no asyncio')
    from impl_asyncio_py3 import AsyncioStyle
    if name == 'asyncio':
        import asyncio
        return AsyncioStyle(asyncio.new_event_loop)
    if name == 'uvloop':
        return AsyncioStyle(import_optional('uvloop').new_event_loop)
    raise ValueError('unknown implementation %r' % name)


def _proc_status_kb(field):
    with open('/proc/self/status') as status:
        for line in status:
            if line.startswith(field + ':'):
                return int(line.split()[1])
    raise ValueError('no %s in /proc/self/status' % field)


def current_rss_kb():
    return _proc_status_kb('VmRSS')


def peak_rss_kb():
    """The high-water mark of this process's resident set.

    VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss across exec(), so a child
    of a large parent would report the parent's peak.
    """
    return _proc_status_kb('VmHWM')


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _warm_up_params(params):
    return dict((name, max(1, value // WARM_UP_DIVISOR) if isinstance(value, int) else value)
                for name, value in params.items())


def measure(workload, implementation, params, expected):
    run = getattr(implementation, workload.function)
    if workload.function != 'w6_crawl':  # a warm-up crawl would only warm nginx's cache
        run(**specs.make_inputs(workload, _warm_up_params(params)))
    inputs = specs.make_inputs(workload, params)
    rss_base_kb = current_rss_kb()
    cpu_start = cpu_seconds()
    start = timeit.default_timer()
    result = run(**inputs)
    seconds = timeit.default_timer() - start
    cpu = cpu_seconds() - cpu_start
    if result != expected:
        raise AssertionError('%s returned %r, expected %r' % (workload.key, result, expected))
    return {'seconds': seconds, 'cpu_seconds': cpu, 'result': result,
            'rss_base_kb': rss_base_kb,
            'rss_peak_kb': peak_rss_kb()}


def main(argv):
    key, name, params, expected = argv[1], argv[2], json.loads(argv[3]), json.loads(argv[4])
    workload = [w for w in specs.WORKLOADS if w.key == key][0]
    # Tornado 6 warns about IOLoop.current() outside a running loop; noise, not a result.
    warnings.simplefilter('ignore', DeprecationWarning)
    try:
        report = measure(workload, make_implementation(name), params, expected)
    except Unavailable as exc:
        report = {'unavailable': str(exc)}
    except Exception:
        report = {'error': traceback.format_exc()}
    print(json.dumps(report))
    return 1 if 'error' in report else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
