"""Helpers shared by the stream, client and server tests (whose loops are the ``io_loop``
and ``virtual_clock`` fixtures of tinytornado's pytest plugin).

Certificates are made when first asked for, in a temporary directory, with the
`cryptography` package: a test CA, a server certificate it signs (for localhost,
tinytornado.test, 127.0.0.1 and ::1), a client certificate, and a second CA the
server's certificate does not chain to. No private key is kept in the repository.
"""
from __future__ import absolute_import, division, print_function

import atexit
import collections
import datetime
import os
import shutil
import socket
import tempfile
import time
import warnings

import pytest
import six

from tinytornado.iostream import IOStream, SSLIOStream
from tinytornado.netutil import bind_sockets

__all__ = ['open_fds', 'tls_files', 'TLSFiles', 'tls_server_and_client', 'run', 'stream_pair',
           'unix_socket_path', 'TEST_HOSTNAME']

TEST_HOSTNAME = 'tinytornado.test'
RUN_TIMEOUT = 30

TLSFiles = collections.namedtuple(
    'TLSFiles', 'ca_cert server_cert server_key client_cert client_key other_ca_cert')

_tls_files = []


def run(io_loop, func, timeout=RUN_TIMEOUT):
    """io_loop.run_sync with a limit, so a hung test fails instead of hanging."""
    return io_loop.run_sync(func, timeout=timeout)


@pytest.fixture
def stream_pair(io_loop):
    """Two IOStreams joined by a socketpair; closed after the test. A test module that
    imports this fixture can use it."""
    left, right = socket.socketpair()
    streams = IOStream(left), IOStream(right)
    yield streams
    for stream in streams:
        stream.close()


@pytest.fixture
def unix_socket_path():
    """A path for a Unix socket in a new directory, removed after the test. The directory
    is short-named: a socket's path must fit in about 100 bytes, which pytest's tmpdir
    for a long test name does not."""
    directory = tempfile.mkdtemp(prefix='tt-')
    yield os.path.join(directory, 'socket')
    shutil.rmtree(directory, True)


def open_fds():
    """The number of file descriptors this process has open."""
    return len(os.listdir('/proc/self/fd' if os.path.isdir('/proc/self/fd') else '/dev/fd'))


def tls_files():
    """The test certificates (a TLSFiles of paths); skips the test without `cryptography`."""
    if not _tls_files:
        with warnings.catch_warnings():
            # cryptography's last 2.7 release warns, once, that 2.7 is deprecated.
            warnings.simplefilter('ignore')
            pytest.importorskip('cryptography.x509', reason='the TLS tests make their '
                                'certificates with the cryptography package')
            _tls_files.append(_make_tls_files())
    return _tls_files[0]


def tls_server_and_client(server_class):
    """A `server_class` (a TCPServer) serving TLS with the test certificate on a loopback
    port, and an unconnected SSLIOStream that trusts it: ``(server, address, client)``."""
    files = tls_files()
    server = server_class(ssl_options={'certfile': files.server_cert,
                                       'keyfile': files.server_key})
    listener = bind_sockets(0, '127.0.0.1')[0]
    server.add_socket(listener)
    client = SSLIOStream(socket.socket(), ssl_options={'ca_certs': files.ca_cert})
    return server, listener.getsockname(), client


def _make_tls_files():
    directory = tempfile.mkdtemp(prefix='tinytornado-tls-')
    atexit.register(shutil.rmtree, directory, True)

    def path(name):
        return os.path.join(directory, name)

    ca_key, ca_cert = _make_ca(u'tinytornado test CA')
    _, other_ca_cert = _make_ca(u'tinytornado other CA')
    server_key, server_cert = _make_leaf(ca_key, ca_cert, u'localhost', server=True)
    client_key, client_cert = _make_leaf(ca_key, ca_cert, u'tinytornado client', server=False)
    for name, item in [('ca.pem', ca_cert), ('server.pem', server_cert),
                       ('server.key', server_key), ('client.pem', client_cert),
                       ('client.key', client_key), ('other-ca.pem', other_ca_cert)]:
        with open(path(name), 'wb') as f:
            f.write(_pem(item))
    return TLSFiles(path('ca.pem'), path('server.pem'), path('server.key'),
                    path('client.pem'), path('client.key'), path('other-ca.pem'))


def _utc_now():
    # Naive UTC, which cryptography takes on 2.7 as on 3.x (utcnow() is deprecated).
    return datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=int(time.time()))


def _builder(subject, issuer, public_key, issuer_public_key):
    from cryptography import x509
    from cryptography.x509.oid import NameOID
    now = _utc_now()
    return (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                issuer_public_key), False))


def _new_key():
    from cryptography.hazmat.backends import default_backend
    from cryptography.hazmat.primitives.asymmetric import ec
    return ec.generate_private_key(ec.SECP256R1(), default_backend())


def _sign(builder, key):
    from cryptography.hazmat.backends import default_backend
    from cryptography.hazmat.primitives import hashes
    return builder.sign(key, hashes.SHA256(), default_backend())


def _make_ca(name):
    from cryptography import x509
    key = _new_key()
    builder = (_builder(name, name, key.public_key(), key.public_key())
               .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
               .add_extension(_key_usage(ca=True), True))
    return key, _sign(builder, key)


def _make_leaf(ca_key, ca_cert, name, server):
    import ipaddress
    from cryptography import x509
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    key = _new_key()
    issuer = ca_cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    builder = (_builder(name, issuer, key.public_key(), ca_key.public_key())
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), True)
               .add_extension(_key_usage(ca=False), True))
    if server:
        names = [x509.DNSName(u'localhost'), x509.DNSName(six.text_type(TEST_HOSTNAME)),
                 x509.IPAddress(ipaddress.ip_address(u'127.0.0.1')),
                 x509.IPAddress(ipaddress.ip_address(u'::1'))]
        builder = (builder.add_extension(x509.SubjectAlternativeName(names), False)
                   .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                                  False))
    else:
        builder = builder.add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), False)
    return key, _sign(builder, ca_key)


def _key_usage(ca):
    from cryptography import x509
    return x509.KeyUsage(digital_signature=True, content_commitment=False,
                         key_encipherment=not ca, data_encipherment=False,
                         key_agreement=False, key_cert_sign=ca, crl_sign=ca,
                         encipher_only=False, decipher_only=False)


def _pem(item):
    from cryptography.hazmat.primitives import serialization
    if hasattr(item, 'private_bytes'):
        return item.private_bytes(serialization.Encoding.PEM,
                                  serialization.PrivateFormat.TraditionalOpenSSL,
                                  serialization.NoEncryption())
    return item.public_bytes(serialization.Encoding.PEM)
