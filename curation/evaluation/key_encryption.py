"""Encrypting judge API keys at rest (Fernet: AES-128-CBC + HMAC-SHA256).
No Django import: callers pass the secrets (SECRET_KEY first, then
SECRET_KEY_FALLBACKS).

The Fernet key is derived from the server secret with HMAC-SHA256 under a
purpose label, so a database dump alone does not reveal the keys, and the
derived key is useless for anything else Django signs with SECRET_KEY.
Rotation follows Django's: the newest secret encrypts, every listed one
decrypts, and re-saving the endpoint re-encrypts under the newest.

A key is sealed together with the origin (scheme, host, port) of the base URL
it was entered for, and opens only for that origin: whoever changes where
requests go, by the form, the shell or the database, cannot make the server
send a key someone else entered to a host of their choosing. Keys stored
before this binding (no origin inside) open for any origin until the
endpoint is saved again.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import urllib.parse
from collections.abc import Sequence

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

PURPOSE = b"triplet-studio/curation.JudgeEndpoint.api_key/v1"
ORIGIN_MARK = "origin:"
DEFAULT_PORTS = {"http": 80, "https": 443}


class UndecryptableKey(Exception):
    """The stored key was encrypted under a secret that is no longer configured."""


class KeyForAnotherOrigin(UndecryptableKey):
    """The stored key was entered for another scheme, host or port."""


def origin_of(url: str) -> str:
    """scheme://host:port of `url`, lower-cased, the default port spelled out
    (so https://API.example.com and https://api.example.com:443/v1 agree)."""
    parts = urllib.parse.urlsplit(url.strip())
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    port = port or DEFAULT_PORTS.get(scheme, 0)
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


def _fernet(secret: str) -> Fernet:
    digest = hmac.new(secret.encode(), PURPOSE, hashlib.sha256).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def encrypt(plaintext: str, secrets: Sequence[str]) -> str:
    return _fernet(secrets[0]).encrypt(plaintext.encode()).decode("ascii")


def decrypt(token: str, secrets: Sequence[str]) -> str:
    try:
        return MultiFernet([_fernet(s) for s in secrets]).decrypt(token.encode()).decode()
    except InvalidToken:
        raise UndecryptableKey(
            "The stored API key cannot be decrypted with the current SECRET_KEY "
            "(or SECRET_KEY_FALLBACKS); enter it again."
        ) from None


def seal(key: str, origin: str, secrets: Sequence[str]) -> str:
    """`key` encrypted together with the origin it may be sent to."""
    return encrypt(f"{ORIGIN_MARK}{origin}\n{key}", secrets)


def unseal(token: str, origin: str, secrets: Sequence[str]) -> str:
    """The key sealed in `token`, if it was sealed for `origin`."""
    plain = decrypt(token, secrets)
    if not plain.startswith(ORIGIN_MARK):
        return plain  # stored before keys were bound to their origin
    bound, _, key = plain[len(ORIGIN_MARK) :].partition("\n")
    if bound != origin:
        raise KeyForAnotherOrigin(
            "The stored API key was entered for another address (scheme, host or port) "
            "than the endpoint's base URL; enter it again."
        )
    return key
