"""Tornado 5.1's signed values (its secure cookies): a value with a timestamp and an HMAC of
both, so that a value signed by Tornado 5.1 with the same secret verifies here, and back.

Version 2 (made by default): ``2|<len>:<key version>|<len>:<timestamp>|<len>:<name>|<len>:
<base64 value>|<hex HMAC-SHA256 of all before it>``. Version 1 (read by default, made on
request): ``<base64 value>|<timestamp>|<hex HMAC-SHA1 of name, value and timestamp>``. A
secret may be a dict of key version -> secret, for rotating secrets (version 2 only).
"""
from __future__ import absolute_import, division, print_function

import base64
import binascii
import hashlib
import hmac
import re
import time

from tinytornado.escape import utf8
from tinytornado.log import gen_log

__all__ = ['create_signed_value', 'decode_signed_value', 'get_signature_key_version',
           'signature_v1', 'signature_v2']

DEFAULT_SIGNED_VALUE_VERSION = 2
DEFAULT_SIGNED_VALUE_MIN_VERSION = 1
_VERSION_PREFIX = re.compile(br'^([1-9][0-9]*)\|(.*)$')
_DAY = 86400


def create_signed_value(secret, name, value, version=None, clock=None, key_version=None):
    """`value` (text or bytes) signed for cookie `name`, as bytes."""
    version = DEFAULT_SIGNED_VALUE_VERSION if version is None else version
    timestamp = utf8(str(int((clock or time.time)())))
    value = base64.b64encode(utf8(value))
    if version == 1:
        if isinstance(secret, dict):
            raise ValueError('version 1 signed values take a single secret, not a dict')
        return b'|'.join([value, timestamp, signature_v1(secret, name, value, timestamp)])
    if version != 2:
        raise ValueError('Unsupported version %d' % version)
    to_sign = b'|'.join([b'2', _field(str(key_version or 0)), _field(timestamp),
                         _field(name), _field(value), b''])
    if isinstance(secret, dict):
        secret = secret[key_version]
    return to_sign + signature_v2(secret, to_sign)


def decode_signed_value(secret, name, value, max_age_days=31, clock=None, min_version=None):
    """The bytes `value` was signed with, if its signature, name and age are good; else
    None."""
    clock = clock or time.time
    min_version = DEFAULT_SIGNED_VALUE_MIN_VERSION if min_version is None else min_version
    if min_version > 2:
        raise ValueError('Unsupported min_version %d' % min_version)
    if not value:
        return None
    value = utf8(value)
    version = _version(value)
    if version < min_version:
        return None
    if version == 1:
        return _decode_v1(secret, name, value, max_age_days, clock)
    if version == 2:
        return _decode_v2(secret, name, value, max_age_days, clock)
    return None


def get_signature_key_version(value):
    """The key version a version-2 signed value names, or None for another version."""
    value = utf8(value)
    if _version(value) < 2:
        return None
    try:
        return _fields_v2(value)[0]
    except ValueError:
        return None


def _version(value):
    match = _VERSION_PREFIX.match(value)
    if match is None:
        return 1
    version = int(match.group(1))
    return 1 if version > 999 else version  # a version-1 value starting with digits and |


def _field(text):
    text = utf8(text)
    return utf8('%d:' % len(text)) + text


def _fields_v2(value):
    """(key version, timestamp, name, value, signature) of a version-2 value.

    Raises:
        ValueError: it is malformed.
    """
    rest = value[2:]
    fields = []
    for _ in range(4):
        length, _colon, rest = rest.partition(b':')
        size = int(length)
        if rest[size:size + 1] != b'|':
            raise ValueError('malformed v2 signed value field')
        fields.append(rest[:size])
        rest = rest[size + 1:]
    return (int(fields[0]),) + tuple(fields[1:]) + (rest,)


def _decode_v2(secret, name, value, max_age_days, clock):
    try:
        key_version, timestamp, name_field, value_field, passed = _fields_v2(value)
    except ValueError:
        return None
    if isinstance(secret, dict):
        if key_version not in secret:
            return None
        secret = secret[key_version]
    if not hmac.compare_digest(passed, signature_v2(secret, value[:len(value) - len(passed)])):
        return None
    if name_field != utf8(name) or int(timestamp) < clock() - max_age_days * _DAY:
        return None
    return _b64decode(value_field)


def _decode_v1(secret, name, value, max_age_days, clock):
    parts = value.split(b'|')
    if len(parts) != 3:
        return None
    if not hmac.compare_digest(parts[2], signature_v1(secret, name, parts[0], parts[1])):
        gen_log.warning('Invalid cookie signature %r', value)
        return None
    timestamp = int(parts[1])
    if timestamp < clock() - max_age_days * _DAY:
        gen_log.warning('Expired cookie %r', value)
        return None
    if timestamp > clock() + 31 * _DAY:
        gen_log.warning('Cookie timestamp in future; possible tampering %r', value)
        return None
    if parts[1].startswith(b'0'):
        gen_log.warning('Tampered cookie %r', value)
        return None
    return _b64decode(parts[0])


def _b64decode(data):
    try:
        return base64.b64decode(data)
    except (TypeError, binascii.Error):  # 2.7 raises TypeError for bad padding
        return None


def signature_v1(secret, *parts):
    """Version 1's signature of `parts` (HMAC-SHA1, hex bytes): the parts are run
    together, so moving digits from one to the next keeps it (why version 2 exists)."""
    mac = hmac.new(utf8(secret), digestmod=hashlib.sha1)
    for part in parts:
        mac.update(utf8(part))
    return utf8(mac.hexdigest())


def signature_v2(secret, text):
    """Version 2's signature of `text` (HMAC-SHA256, hex bytes)."""
    return utf8(hmac.new(utf8(secret), utf8(text), digestmod=hashlib.sha256).hexdigest())
