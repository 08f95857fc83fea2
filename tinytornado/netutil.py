"""Socket plumbing under tcpclient and tcpserver: name resolution, listening sockets, TLS.

`Resolver` runs getaddrinfo in a thread pool, because a DNS lookup blocks and the loop
must not; a numeric address is answered at once without a thread. Tornado 5.1's other
resolvers are here too (`ThreadedResolver`, `BlockingResolver`, `ExecutorResolver`), and
``Resolver.configure`` chooses the class that ``Resolver()`` makes.
"""
from __future__ import absolute_import, division, print_function

import errno
import os
import socket
import ssl
import stat
import sys
import threading
import warnings

import six

from tinytornado import gen
from tinytornado._compat import futures, stdlib_socket
from tinytornado._configurable import Configurable
from tinytornado.concurrent import Future
from tinytornado.ioloop import IOLoop
from tinytornado.log import app_log

__all__ = [
    'Resolver', 'DefaultExecutorResolver', 'ExecutorResolver', 'BlockingResolver',
    'ThreadedResolver', 'OverrideResolver', 'bind_sockets', 'bind_unix_socket',
    'add_accept_handler', 'ACCEPT_RETRY_DELAY', 'ssl_options_to_context', 'ssl_wrap_socket',
    'is_valid_ip', 'errno_from_exception',
]

_DEFAULT_BACKLOG = 128
# accept() errors that say the process or system is out of a resource (descriptors, buffer
# memory): the connection stays queued and accept would fail again at once, every pass.
_OUT_OF_RESOURCES = frozenset([errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM])
ACCEPT_RETRY_DELAY = 1.0  # seconds without accepting after such an error, as asyncio
_RESOLVER_THREADS = 10
_SSL_OPTION_KEYS = frozenset(['certfile', 'keyfile', 'cert_reqs', 'ca_certs', 'ciphers'])

_shared_pool = {}  # 'pid', 'executor': see _shared_thread_pool
_shared_pool_lock = threading.Lock()


def errno_from_exception(e):
    """The errno of an exception from the socket or ssl module, or None."""
    number = getattr(e, 'errno', None)
    if number is None and getattr(e, 'args', None):
        number = e.args[0]
    return number


class _ConfigurableResolver(type):
    """Resolver's metaclass: ``Resolver(...)`` makes the class `Resolver.configure` chose,
    with the keyword arguments given there, as in Tornado 5.1. A subclass called by its
    own name is made as any class is."""

    def __call__(cls, *args, **kwargs):
        if cls is Resolver:
            cls = Resolver.configured_class()
            kwargs = dict(Resolver.configured()[1], **kwargs)
        return type.__call__(cls, *args, **kwargs)


@six.add_metaclass(_ConfigurableResolver)
class Resolver(Configurable):
    """Resolves host names without blocking the loop.

    Subclasses may set themselves up in `initialize` (Tornado 5.1's way, which __init__
    calls with its arguments) or in their own __init__.

    Args:
        executor: a concurrent.futures executor to run getaddrinfo on. By default one
            pool of threads shared by every Resolver, made on first use.
    """
    def __init__(self, *args, **kwargs):
        self.initialize(*args, **kwargs)

    def initialize(self, executor=None):
        self.executor = executor

    def resolve(self, host, port, family=socket.AF_UNSPEC, callback=None):
        """A Future of the list of ``(family, address)`` pairs `host` resolves to, each
        address what socket.connect takes. It fails with socket.gaierror if none.

        Legacy form: with `callback`, ``callback(addresses)`` runs in a later loop pass
        too; if resolving fails, the error is logged instead.
        """
        future = self._resolve(host, port, family)
        if callback is not None:
            warnings.warn('the callback argument is deprecated: use the returned Future',
                          DeprecationWarning, stacklevel=2)
            future.add_done_callback(lambda f: _call_back_resolved(f, callback))
        return future

    def _resolve(self, host, port, family):
        future = Future()
        try:
            addresses = _getaddrinfo_numeric(host, port, family)
        except Exception:
            future.set_exc_info(sys.exc_info())
            return future
        if addresses is not None:
            future.set_result(addresses)
            return future
        executor = self.executor or _shared_thread_pool()
        return gen.convert_yielded(executor.submit(_getaddrinfo, host, port, family))

    def close(self):
        """Release what the resolver holds (the executor is its owner's to shut down)."""

    @classmethod
    def configurable_base(cls):
        return Resolver

    @classmethod
    def configurable_default(cls):
        return Resolver


# Tornado 5.1's default Resolver runs getaddrinfo on the loop's executor; ours runs it on
# its shared pool of threads, which is the same thing.
DefaultExecutorResolver = Resolver


class ExecutorResolver(Resolver):
    """Resolves on `executor`, which `close` shuts down if `close_executor`. Without one,
    it resolves at once, blocking the loop (the Future still resolves in a later pass)."""

    def initialize(self, executor=None, close_executor=True):
        if executor is None:
            executor, close_executor = _BlockingExecutor(), False
        super(ExecutorResolver, self).initialize(executor=executor)
        self.close_executor = close_executor

    def close(self):
        if self.close_executor:
            self.executor.shutdown()


class BlockingResolver(ExecutorResolver):
    """Resolves at once, blocking the loop while getaddrinfo runs (Tornado 4's default)."""

    def initialize(self):
        super(BlockingResolver, self).initialize()


class ThreadedResolver(ExecutorResolver):
    """Resolves on a pool of threads shared by every resolver. The first to make it
    chooses its size: `num_threads` here, or 10. The pool outlives `close`."""

    def initialize(self, num_threads=_RESOLVER_THREADS):
        super(ThreadedResolver, self).initialize(executor=_shared_thread_pool(num_threads),
                                                 close_executor=False)


class OverrideResolver(Resolver):
    """Resolves through `resolver` after rewriting names with `mapping`, for tests.

    `mapping` keys are a host, a (host, port) or a (host, port, family); values a host
    for a host key, else a (host, port). The most specific key that matches wins.
    """

    def initialize(self, resolver, mapping):
        super(OverrideResolver, self).initialize()
        self.resolver = resolver
        self.mapping = mapping

    def _resolve(self, host, port, family):
        if (host, port, family) in self.mapping:
            host, port = self.mapping[(host, port, family)]
        elif (host, port) in self.mapping:
            host, port = self.mapping[(host, port)]
        elif host in self.mapping:
            host = self.mapping[host]
        return self.resolver.resolve(host, port, family)

    def close(self):
        self.resolver.close()


class _BlockingExecutor(futures.Executor):
    """Runs each job at once, in the caller's thread."""

    def submit(self, fn, *args, **kwargs):
        future = futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as e:
            future.set_exception(e)
        return future


def _call_back_resolved(future, callback):
    if future.cancelled():
        return
    if future.exception() is None:
        IOLoop.current().add_callback(callback, future.result())
    else:
        app_log.error('Exception in callback %r: resolving failed', callback,
                      exc_info=future.exc_info())


def _shared_thread_pool(num_threads=_RESOLVER_THREADS):
    """The pool of threads resolvers share, made on first use (again in a forked child,
    which has the pool but not its threads)."""
    with _shared_pool_lock:
        if _shared_pool.get('pid') != os.getpid():
            _shared_pool['pid'] = os.getpid()
            _shared_pool['executor'] = futures.ThreadPoolExecutor(num_threads)
        return _shared_pool['executor']


def _getaddrinfo(host, port, family, flags=0):
    infos = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM, 0, flags)
    return [(info[0], info[4]) for info in infos]


def _getaddrinfo_numeric(host, port, family):
    """The addresses of a numeric `host`, or None if it is a name to look up."""
    try:
        return _getaddrinfo(host, port, family, socket.AI_NUMERICHOST)
    except socket.gaierror as e:
        if e.args[0] == socket.EAI_NONAME:
            return None
        raise


def is_valid_ip(ip):
    """True if `ip` is an IPv4 or IPv6 address (not a name)."""
    if not ip or '\x00' in ip:
        return False
    try:
        return _getaddrinfo_numeric(ip, 0, socket.AF_UNSPEC) is not None
    except socket.gaierror:
        return False


def bind_sockets(port, address=None, family=socket.AF_UNSPEC, backlog=_DEFAULT_BACKLOG,
                 flags=None, reuse_port=False):
    """Listening, non-blocking sockets on `port` for every address `address` resolves to
    (every interface if it is None or ""). With port 0 the system picks a free port,
    and all the sockets get the same one.

    An address family the host cannot bind (IPv6 without an IPv6 address, say) is
    skipped as long as another one binds.

    Args:
        flags: the AI_* flags for getaddrinfo, ``socket.AI_PASSIVE`` if None (without
            it, no `address` means the loopback addresses, not every interface).
        reuse_port: set SO_REUSEPORT, so that other processes can listen on the port.
    """
    if reuse_port and not hasattr(socket, 'SO_REUSEPORT'):
        raise ValueError('reuse_port: this platform has no SO_REUSEPORT')
    if flags is None:
        flags = socket.AI_PASSIVE
    sockets = []
    errors = []
    try:
        for af, sockaddr in _unique(_getaddrinfo(address or None, port, family, flags)):
            if sockets and port == 0:
                sockaddr = (sockaddr[0], sockets[0].getsockname()[1]) + tuple(sockaddr[2:])
            try:
                sockets.append(_listening_socket(af, sockaddr, backlog, reuse_port))
            except socket.error as e:
                if errno_from_exception(e) != errno.EADDRNOTAVAIL:
                    raise
                errors.append(e)
    except Exception:
        for sock in sockets:
            sock.close()
        raise
    if not sockets and errors:
        raise errors[0]
    return sockets


def _unique(addresses):
    seen = set()
    for entry in addresses:
        if entry not in seen:
            seen.add(entry)
            yield entry


def _listening_socket(af, sockaddr, backlog, reuse_port):
    sock = socket.socket(af, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        if af == socket.AF_INET6:
            # Else "::" would take the IPv4 port as well and the AF_INET bind would fail.
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.setblocking(False)
        sock.bind(sockaddr)
        sock.listen(backlog)
    except Exception:
        sock.close()
        raise
    return sock


def bind_unix_socket(file, mode=0o600, backlog=_DEFAULT_BACKLOG):
    """A listening, non-blocking Unix socket at the path `file`, with permissions `mode`.

    A socket file left there (by a server that ended without removing it) is replaced;
    any other kind of file is not.

    Raises:
        ValueError: `file` exists and is not a socket.
    """
    try:
        if stat.S_ISSOCK(os.stat(file).st_mode):
            os.remove(file)
        else:
            raise ValueError('%s exists and is not a socket' % (file,))
    except OSError as e:
        if e.errno != errno.ENOENT:
            raise
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        sock.bind(file)
        os.chmod(file, mode)
        sock.listen(backlog)
    except Exception:
        sock.close()
        raise
    return sock


def add_accept_handler(sock, callback):
    """Call `callback(connection, address)` for each connection to the listening `sock`.

    When accept() fails for want of a resource (too many open files, say), the error is
    logged and accepting pauses for `ACCEPT_RETRY_DELAY` seconds, as asyncio does, rather
    than failing again on every pass. Returns a function that stops accepting (it does
    not close `sock`).
    """
    io_loop = IOLoop.current()
    removed = []
    paused = []  # The timer that resumes accepting, while paused.

    def accept_handler(fd, events):
        # At most a backlog's worth per pass, so a flood of connections cannot keep the
        # loop from everything else.
        for _ in range(_DEFAULT_BACKLOG):
            if removed:
                return  # a callback stopped the accepting
            try:
                connection, address = sock.accept()
            except socket.error as e:
                number = errno_from_exception(e)
                if number in (errno.EWOULDBLOCK, errno.EAGAIN):
                    return
                if number == errno.ECONNABORTED:
                    continue  # the client gave up before we took it
                if number in _OUT_OF_RESOURCES:
                    pause(e)
                    return
                raise
            callback(connection, address)

    def pause(error):
        app_log.error('accept() on %r failed (%s): not accepting for %.1f s',
                      sock.getsockname(), error, ACCEPT_RETRY_DELAY)
        io_loop.remove_handler(sock)
        paused.append(io_loop.call_later(ACCEPT_RETRY_DELAY, resume))

    def resume():
        del paused[:]
        io_loop.add_handler(sock, accept_handler, IOLoop.READ)

    def remove_handler():
        if paused:
            io_loop.remove_timeout(paused.pop())
        else:
            io_loop.remove_handler(sock)
        removed.append(True)

    io_loop.add_handler(sock, accept_handler, IOLoop.READ)
    return remove_handler


def ssl_options_to_context(ssl_options, server_side=False):
    """The ssl.SSLContext for `ssl_options`: a context (returned as it is), None (the
    defaults) or a dict with some of certfile, keyfile, cert_reqs, ca_certs, ciphers.

    Contexts made here start from ``ssl.create_default_context``: a client verifies the
    server's certificate and host name (against `ca_certs`, else the system's CAs)
    unless cert_reqs is ssl.CERT_NONE; a server needs `certfile` and asks clients for
    a certificate only if cert_reqs says so.
    """
    if isinstance(ssl_options, ssl.SSLContext):
        return ssl_options
    options = dict(ssl_options or {})
    unknown = set(options) - _SSL_OPTION_KEYS
    if unknown:
        raise ValueError('unknown ssl_options: %s' % ', '.join(sorted(unknown)))
    purpose = ssl.Purpose.CLIENT_AUTH if server_side else ssl.Purpose.SERVER_AUTH
    context = ssl.create_default_context(purpose, cafile=options.get('ca_certs'))
    if 'certfile' in options:
        context.load_cert_chain(options['certfile'], options.get('keyfile'))
    elif server_side:
        raise ValueError('a TLS server needs a certificate: give ssl_options a certfile')
    if 'cert_reqs' in options:
        if options['cert_reqs'] == ssl.CERT_NONE:
            context.check_hostname = False  # must come first: it needs verification
        context.verify_mode = options['cert_reqs']
    if 'ciphers' in options:
        context.set_ciphers(options['ciphers'])
    return context


def ssl_wrap_socket(sock, ssl_options, server_hostname=None, **kwargs):
    """Wrap `sock` in an ssl.SSLSocket made from `ssl_options` (see
    ssl_options_to_context); other keyword arguments go to SSLContext.wrap_socket.

    A client's `server_hostname` is sent for SNI and checked against the certificate.
    """
    server_side = kwargs.get('server_side', False)
    context = ssl_options_to_context(ssl_options, server_side=server_side)
    if not server_side:
        kwargs['server_hostname'] = server_hostname
    return context.wrap_socket(stdlib_socket(sock), **kwargs)
