"""Encrypting judge API keys at rest (Fernet: AES-128-CBC + HMAC-SHA256).
No Django import: callers pass the secrets (SECRET_KEY first, then
SECRET_KEY_FALLBACKS).

The Fernet key is derived from the server secret with HMAC-SHA256 under a
purpose label, so a database dump alone does not reveal the keys, and the
derived key is useless for anything else Django signs with SECRET_KEY.
Rotation follows Django's: the newest secret encrypts, every listed one
decrypts, and re-saving the endpoint re-encrypts under the newest.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Sequence

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

PURPOSE = b"triplet-studio/curation.JudgeEndpoint.api_key/v1"


class UndecryptableKey(Exception):
    """The stored key was encrypted under a secret that is no longer configured."""


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
