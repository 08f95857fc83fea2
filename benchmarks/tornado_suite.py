"""Tornado 5.1.1's own tests, run against tinytornado: how much legacy web code runs unchanged.

Issue 30's measure. The same test modules run twice: on real Tornado 5.1.1 under 2.7 (the
baseline: only the tests that pass there count), and on tinytornado under each interpreter
given, with every `tornado.X` import answered by `tinytornado.X`. Tests that fail only
because they need what tinytornado leaves out on purpose (templates, websockets, auth,
locale, XSRF) are set apart, not counted. The table gives, per module, how many of the
baseline's passes pass on tinytornado; `--failures FILE` lists each one that does not, with
the first line of its error.

    python benchmarks/tornado_suite.py --source /path/to/tornado-5.1.1 \\
        --baseline-python /path/to/python2.7 --python /path/to/python2.7 \\
        --python /path/to/python3.11 --failures /tmp/failures.md

`--source` is the unpacked sdist (`pip download --no-binary :all: tornado==5.1.1`) or its
.tar.gz. Each interpreter needs tinytornado importable (its venv); the baseline's needs
only the sdist's own dependencies (`futures`, `backports_abc` on 2.7).

Each module runs in a child process of its own (`--child`), so a crash or a hang in one
costs only that module; an exception that escapes a test's run is that test's error; a
test that runs longer than `--test-timeout` seconds is stopped with SIGALRM and counted
as an error.
"""
from __future__ import absolute_import, division, print_function

import argparse
import importlib
import json
import logging
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import traceback
import types
import unittest

MODULES = ['web_test', 'httpserver_test', 'httpclient_test', 'simple_httpclient_test',
           'testing_test', 'gen_test']

# What tinytornado leaves out on purpose (issue 30): a test that fails for one of these
# alone is out of scope, not a failure. Matched against the error's text.
OUT_OF_SCOPE = {
    'templates': ['templates', 'tornado.template.', 'UI modules', 'tornado.web.UIModule',
                  'tornado.web.TemplateModule'],
    'XSRF': ['XSRF'],
    'locale': ['locale'],
    'websockets': ['tornado.websocket.', 'websockets'],
    'auth': ['tornado.auth.'],
}
# Modules tinytornado does not have at all; importing them gives a module of placeholders.
ABSENT_MODULES = ['template', 'locale', 'websocket', 'auth']


class MissingFromTinytornado(NotImplementedError):
    """A test used a name tinytornado does not define (the harness's placeholder)."""


def _placeholder(qualified_name):
    """A class standing for a missing name: subclassing it works; using it raises.

    Used as a decorator (called with one class or function) it hands the argument back, so
    the test module still imports; the tests that need what it would have done then fail on
    their own assertions.
    """
    def refuse(cls, *args, **kwargs):
        if cls is placeholder and len(args) == 1 and not kwargs and callable(args[0]):
            return args[0]
        raise MissingFromTinytornado('%s is not in tinytornado' % qualified_name)
    placeholder = type(str(qualified_name.rsplit('.', 1)[-1]), (object,),
                       {'__new__': refuse, '_missing_name': qualified_name})
    return placeholder


def _has_submodule(package, name):
    return any(os.path.exists(os.path.join(directory, name + suffix))
               for directory in package.__path__
               for suffix in ('.py', os.sep + '__init__.py'))


class _Alias(types.ModuleType):
    """`tornado.X` as seen by Tornado's tests: tinytornado.X's names, placeholders for the rest.

    Assignments go through to the real module (tests monkeypatch module globals), except
    submodule aliases, which the import system sets on their parent.
    """

    def __init__(self, name, real):
        types.ModuleType.__init__(self, name)
        self.__dict__['_real'] = real
        self.__dict__['__path__'] = []

    def __getattr__(self, name):
        real = self.__dict__['_real']
        if real is not None and hasattr(real, name):
            return getattr(real, name)
        if name.startswith('__'):
            raise AttributeError(name)
        if self.__name__ == 'tornado' and name in ABSENT_MODULES:
            # `from tornado import locale`: the module of placeholders, as its import gives.
            return importlib.import_module('tornado.' + name)
        if real is not None and hasattr(real, '__path__') and _has_submodule(real, name):
            # `from tornado import gen` before tornado.gen was imported.
            return importlib.import_module('%s.%s' % (self.__name__, name))
        value = _placeholder('%s.%s' % (self.__name__, name))
        self.__dict__[name] = value
        return value

    def __setattr__(self, name, value):
        real = self.__dict__['_real']
        if isinstance(value, types.ModuleType) or real is None or name.startswith('__'):
            self.__dict__[name] = value
        else:
            setattr(real, name, value)


class _TornadoNames(object):
    """A meta-path finder: `tornado.X` is `tinytornado.X`; `tornado.test...` is Tornado's own.

    Speaks both import protocols: `find_module`/`load_module` (2.7) and `find_spec` (3.x).
    """

    def __init__(self, source_root):
        self.test_directory = os.path.join(source_root, 'tornado', 'test')

    def _handles(self, fullname):
        tornado_own = fullname == 'tornado.test' or fullname.startswith('tornado.test.')
        return fullname == 'tornado' or (fullname.startswith('tornado.') and not tornado_own)

    def find_module(self, fullname, path=None):
        return self if self._handles(fullname) else None

    def load_module(self, fullname):
        if fullname not in sys.modules:
            sys.modules[fullname] = self._alias(fullname)
        return sys.modules[fullname]

    def find_spec(self, fullname, path=None, target=None):
        import importlib.util  # 3.x only, as this method
        if not self._handles(fullname):
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec):
        return self._alias(spec.name)

    def exec_module(self, module):
        pass

    def _alias(self, fullname):
        if fullname == 'tornado':
            real = importlib.import_module('tinytornado')
            module = _Alias('tornado', real)
            # tornado.test is Tornado's own package, found under the sdist.
            module.__dict__['__path__'] = [os.path.dirname(self.test_directory)]
            return module
        tail = fullname[len('tornado.'):]
        if tail.split('.')[0] in ABSENT_MODULES:
            return _Alias(fullname, None)
        try:
            real = importlib.import_module('tinytornado.' + tail)
        except ImportError as error:
            if ('tinytornado.' + tail).split('.')[-1] not in str(error):
                raise
            real = None
        return _Alias(fullname, real)


def _point_tornado_at_tinytornado(source_root):
    sys.meta_path.insert(0, _TornadoNames(source_root))


def _out_of_scope_feature(error_text):
    for feature, marks in sorted(OUT_OF_SCOPE.items()):
        if any(mark in error_text for mark in marks):
            if 'NotImplementedError' in error_text or 'MissingFromTinytornado' in error_text:
                return feature
    return None


class _LoggedErrors(logging.Handler):
    """The tracebacks logged during the current test: a handler's exception (a template
    it rendered, say) is logged by the server, and the test fails only on the 500."""

    def __init__(self):
        logging.Handler.__init__(self)
        self.texts = []

    def emit(self, record):
        if record.exc_info:
            self.texts.append(''.join(traceback.format_exception(*record.exc_info)))


class _Recorder(unittest.TestResult):
    """Each test's outcome and, for a failure, its error's last line. A failure is out of
    scope when its error, or an error logged during the test, is the want of an
    out-of-scope feature."""

    def __init__(self, logged_errors):
        unittest.TestResult.__init__(self)
        self.outcomes = {}
        self.logged_errors = logged_errors

    def startTest(self, test):
        unittest.TestResult.startTest(self, test)
        del self.logged_errors.texts[:]

    def _record(self, test, outcome, detail=''):
        self.outcomes[test.id()] = {'outcome': outcome, 'detail': detail}

    def addSuccess(self, test):
        self._record(test, 'pass')

    def _record_error(self, test, outcome, err):
        text = ''.join(traceback.format_exception(*err))
        last = text.strip().splitlines()[-1] if text.strip() else outcome
        entry = {'outcome': outcome, 'detail': last[:300]}
        feature = _out_of_scope_feature(text) or next(
            (found for found in map(_out_of_scope_feature, self.logged_errors.texts)
             if found), None)
        if feature:
            entry['out_of_scope'] = feature
        # setUp and tearDown errors of one test arrive separately: keep the first.
        self.outcomes.setdefault(test.id(), entry)

    def addError(self, test, err):
        self._record_error(test, 'error', err)

    def addFailure(self, test, err):
        self._record_error(test, 'fail', err)

    def addSkip(self, test, reason):
        self._record(test, 'skip', reason)

    def addExpectedFailure(self, test, err):
        self._record(test, 'expected failure')

    def addUnexpectedSuccess(self, test):
        self._record(test, 'unexpected success')


class _TestTookTooLong(Exception):
    pass


def _with_alarm(suite, seconds):
    """Runs each test of `suite` with an alarm, so a hang is one error, not a lost module."""
    def on_alarm(signum, frame):
        raise _TestTookTooLong('test ran longer than %s s' % seconds)
    signal.signal(signal.SIGALRM, on_alarm)

    def flatten(tests):
        for test in tests:
            if isinstance(test, unittest.TestSuite):
                for inner in flatten(test):
                    yield inner
            else:
                yield test
    for test in flatten(suite):
        def run(result, test=test):
            signal.alarm(seconds)
            try:
                test(result)
            except _TestTookTooLong as error:
                result.addError(test, (type(error), error, None))
            except Exception:
                # An error that escaped the test's own run (AsyncTestCase re-raises one the
                # loop caught after tearDown): that test's error, not the module's crash.
                result.addError(test, sys.exc_info())
            finally:
                signal.alarm(0)
        yield run


# unittest's old spellings, which Tornado 5.1's tests use and Python 3.12 removed: put back
# so that those tests measure tinytornado, not unittest's renames.
_REMOVED_ASSERTIONS = {'assertEquals': 'assertEqual', 'assertNotEquals': 'assertNotEqual',
                       'assertRegexpMatches': 'assertRegex',
                       'assertRaisesRegexp': 'assertRaisesRegex',
                       'assertAlmostEquals': 'assertAlmostEqual', 'assert_': 'assertTrue'}


def _restore_removed_assertions():
    for old, new in _REMOVED_ASSERTIONS.items():
        if not hasattr(unittest.TestCase, old) and hasattr(unittest.TestCase, new):
            setattr(unittest.TestCase, old, getattr(unittest.TestCase, new))


def run_child(arguments):
    """Runs one test module in this process and writes its outcomes as JSON."""
    _restore_removed_assertions()
    source = arguments.source
    if arguments.against == 'tinytornado':
        _point_tornado_at_tinytornado(source)
    else:
        sys.path.insert(0, source)
    # As Tornado's runtests.py: records reach the root logger (ExpectLog counts them there;
    # a higher level would drop them first), the access log stays quiet.
    logging.basicConfig(level=logging.INFO)
    logging.getLogger('tornado.access').setLevel(logging.CRITICAL)
    logged_errors = _LoggedErrors()
    logging.getLogger().addHandler(logged_errors)
    recorder = _Recorder(logged_errors)
    name = 'tornado.test.' + arguments.child
    try:
        __import__(name)
        if arguments.against == 'tinytornado':
            # A test names its own handler 'tornado.test.web_test.X', which tinytornado's
            # import_object reads, as it should for the user's code, as 'tinytornado.'.
            sys.modules['tinytornado.test'] = sys.modules['tornado.test']
            sys.modules['tinytornado.test.' + arguments.child] = sys.modules[name]
        suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[name])
    except Exception:
        text = traceback.format_exc()
        outcomes = {name: {'outcome': 'import error', 'detail': text.strip().splitlines()[-1]}}
    else:
        for run in _with_alarm(suite, arguments.test_timeout):
            run(recorder)
        outcomes = recorder.outcomes
    with open(arguments.json, 'w') as output:
        json.dump(outcomes, output, indent=1, sort_keys=True)


def _unpacked(source, scratch):
    if os.path.isdir(source):
        return os.path.abspath(source)
    with tarfile.open(source) as archive:
        archive.extractall(scratch)
    (top,) = os.listdir(scratch)
    return os.path.join(scratch, top)


def _run_module(python, against, source, module, test_timeout, scratch):
    output = os.path.join(scratch, '%s-%s-%s.json' % (
        against, os.path.basename(os.path.dirname(os.path.dirname(python))), module))
    command = [python, os.path.abspath(__file__), '--child', module, '--against', against,
               '--source', source, '--json', output, '--test-timeout', str(test_timeout)]
    with open(os.devnull, 'w') as quiet:
        code = subprocess.call(command, stdout=quiet, stderr=quiet,
                               cwd=tempfile.gettempdir())
    if not os.path.exists(output):
        return {'tornado.test.' + module: {'outcome': 'crash',
                                            'detail': 'child exited %d' % code}}
    with open(output) as results:
        return json.load(results)


def _version_of(python):
    return subprocess.check_output(
        [python, '-c', 'import platform; print(platform.python_version())']
    ).decode('ascii').strip()


def _score(baseline, outcomes):
    """(passing, counted, out of scope, failures) over the baseline's passing tests."""
    passing, out_of_scope, failures = 0, 0, []
    for test_id in sorted(baseline):
        if baseline[test_id]['outcome'] != 'pass':
            continue
        outcome = outcomes.get(test_id)
        if outcome is None:
            # The whole module failed to import or crashed: one entry stands for all.
            outcome = next((entry for key, entry in outcomes.items()
                            if entry['outcome'] in ('import error', 'crash')),
                           {'outcome': 'not run', 'detail': 'absent from the run'})
        if outcome['outcome'] == 'pass':
            passing += 1
        elif outcome.get('out_of_scope'):
            out_of_scope += 1
        else:
            failures.append((test_id, outcome))
    counted = passing + len(failures)
    return passing, counted, out_of_scope, failures


def run_parent(arguments):
    scratch = tempfile.mkdtemp(prefix='tornado-suite-')
    source = _unpacked(arguments.source, os.path.join(scratch, 'source'))
    modules = arguments.module or MODULES
    baseline = {}
    for module in modules:
        baseline[module] = _run_module(arguments.baseline_python, 'tornado', source, module,
                                       arguments.test_timeout, scratch)
    rows, report = [], []
    totals = {}
    for python in arguments.python:
        version = _version_of(python)
        for module in modules:
            outcomes = _run_module(python, 'tinytornado', source, module,
                                   arguments.test_timeout, scratch)
            passing, counted, out_of_scope, failures = _score(baseline[module], outcomes)
            rows.append((module, version, passing, counted, out_of_scope))
            total = totals.setdefault(version, [0, 0, 0])
            total[0] += passing
            total[1] += counted
            total[2] += out_of_scope
            report.append('## %s on Python %s: %d of %d pass\n' % (module, version, passing,
                                                                    counted))
            report.extend('- `%s`: %s: %s' % (test_id, outcome['outcome'], outcome['detail'])
                          for test_id, outcome in failures)
            report.append('')
    print('Tornado 5.1.1 test modules: baseline on Python %s (%s)'
          % (_version_of(arguments.baseline_python), arguments.baseline_python))
    print('%-24s %-8s %8s %8s %7s %13s' % ('module', 'python', 'pass', 'counted', '%',
                                             'out of scope'))
    for module, version, passing, counted, out_of_scope in rows:
        print('%-24s %-8s %8d %8d %6.1f%% %13d' % (
            module, version, passing, counted, 100.0 * passing / max(counted, 1),
            out_of_scope))
    for version, (passing, counted, out_of_scope) in sorted(totals.items()):
        print('%-24s %-8s %8d %8d %6.1f%% %13d' % (
            'all', version, passing, counted, 100.0 * passing / max(counted, 1),
            out_of_scope))
    if arguments.failures:
        with open(arguments.failures, 'w') as listing:
            listing.write('\n'.join(report) + '\n')
        print('failures listed in %s' % arguments.failures)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--source', required=True,
                        help="Tornado 5.1.1's sdist: a directory or the .tar.gz")
    parser.add_argument('--baseline-python', default=sys.executable,
                        help='the interpreter real Tornado runs on (2.7 for issue 30)')
    parser.add_argument('--python', action='append', default=[],
                        help='an interpreter with tinytornado installed (repeat)')
    parser.add_argument('--module', action='append', choices=MODULES,
                        help='only these test modules (repeat); default: all six')
    parser.add_argument('--failures', help='write the failing tests here (markdown)')
    parser.add_argument('--test-timeout', type=int, default=60,
                        help='seconds one test may run before it counts as an error')
    parser.add_argument('--child', help=argparse.SUPPRESS)
    parser.add_argument('--against', choices=['tornado', 'tinytornado'],
                        help=argparse.SUPPRESS)
    parser.add_argument('--json', help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        run_child(arguments)
        return
    if not arguments.python:
        arguments.python = [sys.executable]
    run_parent(arguments)


if __name__ == '__main__':
    main()
