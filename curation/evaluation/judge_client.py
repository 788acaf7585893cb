"""Asking an OpenAI-compatible chat-completions endpoint to judge one pair.
No Django import: the runner (curation/evaluation/judge_runs.py) feeds it release
records and stores what comes back.

The prompt, the message layout (text part first, then the image as a base64
data URL) and ``max_tokens=1024`` as the default follow the benchmark's own
judge script, facebookresearch/multimodal_rewardbench
``scripts/1_run_model_as_judge_gpt4o.py`` (``judge_prompt`` and
``prepare_judge_example``): assistant A is ``Output1``, assistant B is
``Output2``, and the verdict is ``[[A]]`` / ``[[B]]``, which
``curation.benchmarks.mrb.scoring`` reads exactly as ``scripts/2_get_accuracy.py`` does.
The swapped pass fills A with ``Output2`` and B with ``Output1``.

The API key only ever goes into the ``Authorization`` header. Error texts
that leave this module pass through ``redact`` first, because some servers
echo the key they refused, and never quote a body that is not a JSON error.

Outbound requests cannot be turned inward (server-side request forgery): the
host is resolved here, every address it resolves to must be globally
routable (not loopback, private, link-local, shared, multicast, reserved,
documentation or a cloud metadata address, in IPv4 or IPv6, IPv4-mapped and
6to4/Teredo/NAT64-embedded forms included) unless it lies in one of the
endpoint's ``allowed_networks`` (the ``JUDGE_ALLOWED_NETWORKS`` setting, for
a vLLM server on the LAN), and the socket connects to exactly the address
that was checked, which is checked again once connected, so a DNS answer that
changes between the check and the connection cannot slip through. Redirects
are never followed, no proxy is used, and response bodies are capped.
"""

from __future__ import annotations

import base64
import email.utils
import http.client
import ipaddress
import json
import mimetypes
import random
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

# What the official script writes when every attempt failed: a text without a
# verdict, so the scorer gives the line its random fallback.
OFFICIAL_FAILURE_OUTPUT = "None"

# Statuses worth another attempt: rate limiting, request timeout, server errors.
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
# Statuses that say the endpoint itself is misconfigured (wrong key, URL or
# model): every item would fail the same way, so the whole run stops.
# Redirects are not followed (urllib would forward the Authorization header to
# wherever they point) and count as a wrong base URL.
FATAL_STATUSES = frozenset({301, 302, 303, 307, 308, 401, 403, 404, 405})
MAX_ERROR_CHARS = 500
# The longest answer read: a completion of max_tokens=131072 is well under
# this; anything longer is refused unread rather than held in memory.
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
# Of an error answer, only this much is read, and only a JSON error's
# message from it is ever shown.
MAX_ERROR_BODY_BYTES = 64 * 1024


class FatalEndpointError(Exception):
    """The endpoint refuses every request (bad key, URL or model)."""


class RefusedAddress(FatalEndpointError):
    """The endpoint's host resolves to an address outbound requests may not reach."""

    kind = ""  # why: "private", "link-local", "cloud metadata", ...


class Stopped(Exception):
    """The run was cancelled while this request waited to be retried."""


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str
    api_key: str = ""
    temperature: float | None = None  # None: not sent (the benchmark's script sends none)
    max_tokens: int = 1024
    timeout: float = 60.0
    # CIDR networks that may be reached although not globally routable.
    allowed_networks: tuple[str, ...] = ()

    def __repr__(self) -> str:  # never let the key reach a log line or traceback
        return f"Endpoint(base_url={self.base_url!r}, model={self.model!r}, api_key=<hidden>)"

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 5  # attempts after the first
    backoff_base: float = 1.0  # seconds before the first retry; doubles each time
    backoff_max: float = 60.0
    retry_after_max: float = 120.0  # longest Retry-After honoured

    def backoff(self, retry: int, rng: random.Random) -> float:
        """Exponential backoff with jitter (50-100% of the doubled delay), so
        parallel requests that failed together do not retry together."""
        delay = min(self.backoff_max, self.backoff_base * (2**retry))
        return delay * rng.uniform(0.5, 1.0)


@dataclass(frozen=True)
class JudgeResult:
    output: str  # the judge's text (stripped); OFFICIAL_FAILURE_OUTPUT after an error
    error: str  # "" on success
    attempts: int
    seconds: float


def image_data_url(data: bytes, name: str) -> str:
    """The image as a data URL, its MIME type guessed from the file name as
    the official script does."""
    mime, _ = mimetypes.guess_type(name)
    encoded = base64.b64encode(data).decode("ascii")
    return f"data:{mime or 'application/octet-stream'};base64,{encoded}"


def redact(text: str, secret: str) -> str:
    return text.replace(secret, "[redacted]") if secret else text


def retry_after_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: a number of seconds or an
    HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def content_of(payload: Any) -> str:
    """The assistant's text from a chat-completions response body."""
    try:
        content = payload["choices"][0]["message"].get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ValueError("no choices[0].message in the response") from None
    if content is None:
        return ""
    if isinstance(content, list):  # some servers answer with content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        raise ValueError("choices[0].message.content is not text")
    return content


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# Globally routable by the registries' tables yet never a judge: cloud
# metadata and host services that sit outside the link-local and private
# ranges (ipaddress calls 168.63.129.16 global: it is Microsoft's public
# space, but inside Azure it is each host's wire server, answering VM
# agents, DHCP, DNS and health probes).
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "168.63.129.16",  # Azure wire server (issue 29)
        "100.100.100.200",  # Alibaba Cloud (also in 100.64.0.0/10, shared)
        "fd00:ec2::254",  # AWS IMDS over IPv6 (also unique-local)
    )
)
NAT64 = ipaddress.ip_network("64:ff9b::/96")

# The resolver; tests replace it with a stub so they never reach another host.
getaddrinfo = socket.getaddrinfo


def parse_networks(values: Iterable[str]) -> tuple[IPNetwork, ...]:
    """CIDR networks (a bare address is a /32 or /128); ValueError names a bad one."""
    networks = []
    for value in values:
        try:
            networks.append(ipaddress.ip_network(value.strip(), strict=False))
        except ValueError:
            raise ValueError(f"{value!r} is not an IP network (e.g. 10.0.0.0/8)") from None
    return tuple(networks)


def _embedded(ip: IPAddress) -> list[IPAddress]:
    """The address and any IPv4 address an IPv6 one carries (mapped, 6to4,
    Teredo, NAT64), each of which must pass on its own."""
    found: list[IPAddress] = []
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            found.append(ip.ipv4_mapped)
        if ip.sixtofour is not None:
            found.append(ip.sixtofour)
        if ip.teredo is not None:
            found.extend(ip.teredo)
        if ip in NAT64:
            found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return [*found, ip]


def _kind(ip: IPAddress) -> str | None:
    """Why `ip` may not be reached, or None for a public address."""
    if ip in METADATA_ADDRESSES:
        return "cloud metadata"
    for kind, test in (
        ("unspecified", ip.is_unspecified),
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),  # 169.254.169.254, the common metadata address
        ("multicast", ip.is_multicast),
        ("private", ip.is_private),
        ("reserved", ip.is_reserved),
        # fec0::/10, deprecated site-local: ipaddress (3.11) calls it global.
        ("site-local", isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local),
    ):
        if test:
            return kind
    if not ip.is_global:  # shared (100.64/10), documentation, benchmarking, ...
        return "non-public"
    return None


def address_refusal(address: str, allowed: Sequence[IPNetwork] = ()) -> str | None:
    """Why outbound requests may not go to `address` (an IP literal, a
    scope suffix allowed), or None when they may."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if any(ip in net for net in allowed if net.version == ip.version):
        return None
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    if mapped is not None and any(mapped in net for net in allowed if net.version == 4):
        return None
    for part in _embedded(ip):
        kind = _kind(part)
        if kind is not None:
            return kind
    return None


def _refused(host: str, kind: str) -> RefusedAddress:
    refused = RefusedAddress(
        f"refused: {host} is or resolves to a {kind} address; outbound requests go only to "
        "public addresses unless JUDGE_ALLOWED_NETWORKS lists the network"
    )
    refused.kind = kind
    return refused


def _open_socket(family: int, sockaddr: tuple, timeout: float) -> socket.socket:
    """A TCP socket connected to exactly `sockaddr` (no further resolving)."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(sockaddr)
    except BaseException:
        sock.close()
        raise
    return sock


def resolve_checked(host: str, port: int, allowed: Sequence[IPNetwork]) -> list[tuple[int, tuple]]:
    """Resolve `host` once and check every address it resolves to: the
    (family, sockaddr) pairs to connect to. Raises RefusedAddress if any is
    not allowed (one bad answer refuses the name: DNS rebinding), OSError if
    the name does not resolve. The judge form calls it too, for early
    feedback; each request calls it again when it connects."""
    try:
        infos = getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise OSError(f"cannot resolve {host}: {getattr(exc, 'strerror', exc)}") from None
    candidates = []
    for family, _type, _proto, _name, sockaddr in infos:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        kind = address_refusal(sockaddr[0], allowed)
        if kind is not None:
            raise _refused(host, kind)
        candidates.append((family, sockaddr))
    if not candidates:
        raise OSError(f"cannot resolve {host}: no IPv4 or IPv6 address")
    return candidates


def guarded_socket(
    host: str, port: int, timeout: float, allowed: Sequence[IPNetwork]
) -> socket.socket:
    """Resolve `host` once, refuse it if any address it resolves to is not
    allowed, and connect to the checked addresses in turn; the peer of the
    connected socket is checked again. Raises RefusedAddress or OSError."""
    candidates = resolve_checked(host, port, allowed)
    error: OSError | None = None
    for family, sockaddr in candidates:
        try:
            sock = _open_socket(family, sockaddr, timeout)
        except OSError as exc:
            error = exc
            continue
        kind = address_refusal(sock.getpeername()[0], allowed)
        if kind is not None:
            sock.close()
            raise _refused(host, kind)
        return sock
    assert error is not None
    raise error


class _GuardedHTTP(http.client.HTTPConnection):
    def __init__(self, host, port, *, timeout, allowed):
        super().__init__(host, port, timeout=timeout)
        self.allowed = allowed

    def connect(self):
        self.sock = guarded_socket(self.host, self.port, self.timeout, self.allowed)


class _GuardedHTTPS(http.client.HTTPSConnection):
    def __init__(self, host, port, *, timeout, allowed):
        self.tls = ssl.create_default_context()
        super().__init__(host, port, timeout=timeout, context=self.tls)
        self.allowed = allowed

    def connect(self):
        sock = guarded_socket(self.host, self.port, self.timeout, self.allowed)
        self.sock = self.tls.wrap_socket(sock, server_hostname=self.host)


def _connection(endpoint: Endpoint) -> tuple[http.client.HTTPConnection, str]:
    """A connection to the endpoint's host and the request path."""
    parts = urllib.parse.urlsplit(endpoint.url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FatalEndpointError("the base URL is not an http(s) URL with a host")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        allowed = parse_networks(endpoint.allowed_networks)
    except ValueError as exc:
        raise FatalEndpointError(str(exc)) from None
    cls = _GuardedHTTPS if parts.scheme == "https" else _GuardedHTTP
    return cls(parts.hostname, port, timeout=endpoint.timeout, allowed=allowed), parts.path


def _read_capped(response: http.client.HTTPResponse, cap: int) -> bytes | None:
    """The body, or None when it is (or says it will be) longer than `cap`."""
    length = response.getheader("Content-Length")
    if length and length.strip().isdigit() and int(length) > cap:
        return None
    raw = response.read(cap + 1)
    return None if len(raw) > cap else raw


def error_detail(raw: bytes | None) -> str:
    """What an error answer may show: the message of an OpenAI-style JSON
    error ({"error": {"message": ...}} or {"error": "..."} or {"message": ...}),
    never other body text (it could be an internal page)."""
    if not raw:
        return ""
    try:
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return "(a non-JSON body, not shown)"
    message = None
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict):
            message = error.get("message")
        elif isinstance(error, str):
            message = error
        elif isinstance(payload.get("message"), str):
            message = payload["message"]
    if not isinstance(message, str):
        return "(a JSON body without an error message)"
    return message[:MAX_ERROR_CHARS]


def _post(endpoint: Endpoint, body: bytes) -> str:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    connection, path = _connection(endpoint)
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        status = response.status
        if status != 200:
            # 3xx included: never followed (the key would go wherever it points).
            detail = error_detail(_read_capped(response, MAX_ERROR_BODY_BYTES))
            message = f"HTTP {status}: {detail}".strip().rstrip(":")
            if status in FATAL_STATUSES:
                raise FatalEndpointError(message)
            if status in RETRY_STATUSES:
                raise _Retryable(message, retry_after_seconds(response.getheader("Retry-After")))
            raise ValueError(message)
        raw = _read_capped(response, MAX_RESPONSE_BYTES)
    except TimeoutError:
        raise _Retryable(f"timed out after {endpoint.timeout:g} s") from None
    except ssl.SSLCertVerificationError as exc:
        raise FatalEndpointError(f"TLS certificate refused: {exc.verify_message}") from None
    except (http.client.HTTPException, OSError) as exc:
        raise _Retryable(f"connection failed: {type(exc).__name__}: {exc}") from None
    finally:
        connection.close()
    if raw is None:
        raise ValueError(f"the answer is longer than {MAX_RESPONSE_BYTES // 2**20} MiB; not read")
    try:
        return content_of(json.loads(raw))
    except (ValueError, UnicodeDecodeError) as exc:
        reason = str(exc) if not isinstance(exc, json.JSONDecodeError) else "not JSON"
        raise _Retryable(f"unreadable response: {reason}") from None


def judge(
    body: dict,
    endpoint: Endpoint,
    policy: RetryPolicy,
    *,
    stop: threading.Event | None = None,
    rng: random.Random | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> JudgeResult:
    """Send one request, retrying timeouts, dropped connections, 429 and 5xx
    with exponential backoff (at least as long as Retry-After asks, up to
    ``policy.retry_after_max``). Other 4xx answers fail the item at once;
    401/403/404/405 raise FatalEndpointError. Raises Stopped if `stop` is set
    while waiting to retry."""
    rng = rng or random.Random()
    data = json.dumps(body).encode()
    started = clock()
    attempts = 0
    while True:
        attempts += 1
        try:
            text = _post(endpoint, data)
        except FatalEndpointError as exc:
            raise type(exc)(redact(str(exc), endpoint.api_key)[:MAX_ERROR_CHARS]) from None
        except ValueError as exc:  # a 4xx that retrying will not fix
            return _failed(str(exc), endpoint, attempts, clock() - started)
        except _Retryable as exc:
            if attempts > policy.max_retries:
                return _failed(str(exc), endpoint, attempts, clock() - started)
            delay = policy.backoff(attempts - 1, rng)
            if exc.retry_after is not None:
                delay = max(delay, min(exc.retry_after, policy.retry_after_max))
            if stop is not None:
                if stop.wait(delay):
                    raise Stopped() from None
            else:
                time.sleep(delay)
            continue
        return JudgeResult(
            output=text.strip(), error="", attempts=attempts, seconds=clock() - started
        )


def _failed(message: str, endpoint: Endpoint, attempts: int, seconds: float) -> JudgeResult:
    error = redact(message, endpoint.api_key)[:MAX_ERROR_CHARS]
    return JudgeResult(
        output=OFFICIAL_FAILURE_OUTPUT,
        error=f"after {attempts} attempt{'s' if attempts != 1 else ''}: {error}",
        attempts=attempts,
        seconds=seconds,
    )


@dataclass(frozen=True)
class ConnectionCheck:
    ok: bool
    message: str  # what the admin reads; never the key
    seconds: float


CONNECTION_CHECK_PROMPT = "Reply with the single word OK."


def check_connection(endpoint: Endpoint, *, clock: Callable[[], float] = time.monotonic):
    """One small text-only request to the endpoint, through the same guarded
    client as a run (refused addresses, no redirects, capped bodies), with
    no retry: does the address answer, is the key accepted, does the model
    exist? Returns a ConnectionCheck."""
    body = {
        "model": endpoint.model,
        "messages": [{"role": "user", "content": CONNECTION_CHECK_PROMPT}],
        "max_tokens": min(endpoint.max_tokens, 16),
    }
    started = clock()
    try:
        result = judge(body, endpoint, RetryPolicy(max_retries=0), clock=clock)
    except FatalEndpointError as exc:
        return ConnectionCheck(False, str(exc), clock() - started)
    if result.error:
        return ConnectionCheck(
            False, result.error.split(": ", 1)[-1], result.seconds
        )  # "after 1 attempt: …"
    answer = result.output[:80] or "(an empty answer)"
    return ConnectionCheck(True, f"The model answered {answer!r}", result.seconds)
