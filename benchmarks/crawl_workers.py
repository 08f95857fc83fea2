"""Issue 17's scaling: pages/s of one crawl in one process and in 1, 2 and 4 worker
processes over one Redis, against one plain process (no Redis), on the same generated site.

    python benchmarks/crawl_workers.py [--pages 2000] [--rounds 3] [--max-tasks 20]

The site is W6's (crawl_site.py: the seeded demo site, plain links), served by nginx
(apt-get install -y nginx) in a process of its own; Redis is a fresh redis-server without
persistence (tests/redis_server.py starts it). Each run is ``tinycrawl ROOT --no-robots
--delay 0 --max-per-host 1000 --max-rate 0 --max-tasks T`` in new processes: the plain one
alone, the others with ``--redis URL --crawl-id NAME`` (a new crawl name per run), in the
one process or with ``--workers N`` (a launcher process and N workers). A run's rate is
the URLs its --summary files count, which must be the site's whole crawl, divided by the
wall time from starting the command to its exit, Python's start-up included (the same for
every column). The table shows the median of the rounds, runs interleaved so that a slow
moment of the machine falls on every column alike, and redis-server's CPU per URL crawled
(its median CPU seconds over the site's URLs).
"""
from __future__ import absolute_import, division, print_function

import argparse
import io
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, 'tests'))  # the tests' redis-server starter

import crawl_site  # noqa: E402 (after the path is set)
from redis_server import RedisServer, redis_server_path  # noqa: E402

__all__ = ['main']

# (name, workers): None, no Redis; 0, over Redis in the one process (no launcher); N,
# ``--workers N`` (a launcher process and N workers).
MODES = [('plain', None), ('1 process, --redis', 0), ('1 worker', 1), ('2 workers', 2),
         ('4 workers', 4)]


def crawl_command(root_url, workers, max_tasks, redis_url, crawl_id, summary):
    command = [sys.executable, '-m', 'tinytornado.crawler', root_url, '--no-robots',
               '--delay', '0', '--max-per-host', '1000', '--max-rate', '0',
               '--max-tasks', str(max_tasks),
               '--summary', summary, '--no-progress', '-q']
    if workers is not None:
        command += ['--redis', redis_url, '--crawl-id', crawl_id]
    if workers:
        command += ['--workers', str(workers)]
    return command


def summary_urls(summary, workers):
    """The URLs the run's --summary file (a worker's FILE.N each) counts."""
    paths = ['%s.%d' % (summary, n) for n in range(1, workers + 1)] if workers else [summary]
    total = 0
    for path in paths:
        with io.open(path, encoding='utf-8') as f:
            total += json.load(f)['urls']
        os.remove(path)
    return total


def process_cpu_seconds(pid):
    """CPU seconds (user + system) process `pid` has used so far (Linux's /proc)."""
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / float(os.sysconf('SC_CLK_TCK'))


def children_cpu_seconds():
    times = os.times()
    return times[2] + times[3]


def run_once(server, redis, mode, max_tasks, work_dir, run_number):
    """(pages/s, the crawl processes' CPU seconds, redis-server's, URLs crawled) of one
    run of `mode` (its workers, as in MODES)."""
    summary = os.path.join(work_dir, 'summary-%d.json' % run_number)
    command = crawl_command(server.root_url, mode, max_tasks, redis.url(),
                            'bench-%d' % run_number, summary)
    env = dict(os.environ, PYTHONPATH=ROOT)
    redis_cpu, crawl_cpu = process_cpu_seconds(redis.process.pid), children_cpu_seconds()
    started = time.time()
    with open(os.devnull, 'wb') as devnull:
        status = subprocess.call(command, cwd=ROOT, env=env, stdout=devnull)
    elapsed = time.time() - started
    crawl_cpu = children_cpu_seconds() - crawl_cpu
    redis_cpu = process_cpu_seconds(redis.process.pid) - redis_cpu
    if status != 0:
        raise RuntimeError('%s exited %d' % (' '.join(command), status))
    urls = summary_urls(summary, mode)
    if urls != server.expected[0]:
        raise RuntimeError('%r workers fetched %d URLs, not the site\'s %d'
                           % (mode, urls, server.expected[0]))
    return urls / elapsed, crawl_cpu, redis_cpu, urls


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def measure(pages, rounds, max_tasks):
    """{mode name: [(pages/s, crawl CPU s, redis CPU s, URLs) per round]}."""
    program = redis_server_path()
    if program is None:
        raise SystemExit('redis-server is not installed (apt-get install -y redis-server)')
    rates = dict((name, []) for name, _ in MODES)
    work_dir = tempfile.mkdtemp(prefix='crawl-workers-')
    redis = RedisServer(program, work_dir)
    redis.start()
    try:
        with crawl_site.served_site(pages) as server:
            run_number = 0
            for _ in range(rounds):
                for name, workers in MODES:
                    run_number += 1
                    rates[name].append(run_once(server, redis, workers, max_tasks,
                                                work_dir, run_number))
    finally:
        redis.stop()
    return rates


def report(runs, pages, max_tasks, cores):
    rates = dict((name, [run[0] for run in results]) for name, results in runs.items())
    plain = median(rates['plain'])
    lines = ['%d-page site, --max-tasks %d per process, %d cores, medians of %d rounds; CPU: '
             'seconds used by the crawl\'s processes and by redis-server'
             % (pages, max_tasks, cores, len(rates['plain'])),
             '| run | pages/s | vs plain | crawl CPU s | redis CPU s | redis CPU ms/page '
             '| rounds (pages/s) |',
             '| --- | ---: | ---: | ---: | ---: | ---: | --- |']
    for name, _ in MODES:
        redis_cpu = median([run[2] for run in runs[name]])
        urls = runs[name][0][3]  # every run crawls the whole site
        lines.append('| %s | %.0f | %.2fx | %.2f | %.2f | %.3f | %s |' % (
            name, median(rates[name]), median(rates[name]) / plain,
            median([run[1] for run in runs[name]]), redis_cpu, redis_cpu * 1000.0 / urls,
            ', '.join('%.0f' % rate for rate in rates[name])))
    one, two = median(rates['1 worker']), median(rates['2 workers'])
    four = median(rates['4 workers'])
    lines += ['', '2 workers / 1 worker: %.2fx; 4 workers / 2 workers: %.2fx.'
              % (two / one, four / two),
              'On %d cores, nginx, redis-server and the workers share the CPUs: past %d busy '
              'processes a worker only takes time from another.' % (cores, cores)]
    return '\n'.join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--pages', type=int, default=2000)
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--max-tasks', type=int, default=20)
    args = parser.parse_args(argv)
    runs = measure(args.pages, args.rounds, args.max_tasks)
    print(report(runs, args.pages, args.max_tasks, multiprocessing.cpu_count()))


if __name__ == '__main__':
    main()
