#!/usr/bin/python3
"""A potop server safe to expose: the request guard and a bounded attack.

usage: serve_guard.py guard BASE_URL KEY     the server runs with --api-key-file (KEY) and
                                             --cors-origin https://app.example
       serve_guard.py deadlines BASE_URL    the server runs with --header-timeout 2 --body-timeout 2
                                             --max-client-connections 4
       serve_guard.py attack BASE_URL PID MB the server runs with default flags; PID is its process,
                                             MB the bound on its RSS
guard: the API key (401 without or with a wrong one; /health and the studio open), the Host check
(DNS rebinding), origins (403, CORS headers, preflights), JSON-only POSTs (415) and chunked bodies
(411). deadlines: trickled headers and a stalled body get 408 at their deadlines, and a client
address past its connection cap 429 while others are served. attack: from 127.0.0.2, 40
connections trickling a header line every 2 s, 200 idle connections, a chunked flood, bodies with
numbers beyond a double's range and cross-origin no-cors POSTs, all at once, while a normal
request from 127.0.0.1 must be answered within 1 s and the server's RSS stay under 200 MB; the
trickling connections must be ended by the server (408 at the header deadline, or 429).
Prints "ok ..." per check; exits 1 if any failed.
"""
import json
import os
import socket
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

MODE, BASE = sys.argv[1], sys.argv[2]
HOST, PORT = urllib.parse.urlparse(BASE).hostname, urllib.parse.urlparse(BASE).port


def connect(source=None, timeout=10):
    """A connection to the server, from the loopback address `source` when given: the attacks
    come from 127.0.0.2 and the normal requests from 127.0.0.1, two clients to the server."""
    return socket.create_connection((HOST, PORT), timeout=timeout,
                                    source_address=(source, 0) if source else None)


def raw(request, timeout=10, source=None):
    """Sends bytes, returns (status, headers dict, body bytes) of the answer."""
    with connect(source, timeout) as s:
        s.sendall(request)
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            headers = dict(line.split(": ", 1) for line in head.decode("latin-1").split("\r\n")[1:] if ": " in line)
            if "Content-Length" in headers and len(body) >= int(headers["Content-Length"]):
                break
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and lines[0].startswith("HTTP/") else 0
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return status, headers, body


def http(method, path, body=None, headers=None, host=None, timeout=10, source=None):
    payload = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    h = {"Host": host or f"127.0.0.1:{PORT}", "Connection": "close"}
    if body is not None:
        h["Content-Type"] = "application/json"
        h["Content-Length"] = str(len(payload))
    h.update(headers or {})
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items() if v is not None) + "\r\n"
    return raw(head.encode() + payload, timeout, source)


def error_code(body):
    try:
        return json.loads(body)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return None


def chunked_flood(megabytes, source=None):
    """A chunked body of `megabytes`; the status it got, or 0 if the server closed first."""
    try:
        with connect(source) as s:
            s.sendall(f"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\nContent-Type: application/json\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n".encode())
            chunk = b"%x\r\n" % 65536 + b"a" * 65536 + b"\r\n"
            for _ in range(megabytes * 16):
                s.sendall(chunk)
            s.sendall(b"0\r\n\r\n")
            return int(s.recv(100).split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def guard_checks(key):
    bearer = {"Authorization": f"Bearer {key}"}
    status, _, body = http("GET", "/v1/models")
    check("no API key: 401 invalid_api_key", status == 401 and error_code(body) == "invalid_api_key", (status, body))
    status, _, body = http("GET", "/v1/models", headers={"Authorization": "Bearer wrong"})
    check("a wrong API key: 401", status == 401 and b"not valid" in body, (status, body))
    status, _, body = http("GET", "/v1/models", headers=bearer)
    check("the API key: 200", status == 200 and b'"object":"list"' in body, (status, body[:200]))
    status, _, _ = http("GET", "/health")
    check("/health needs no key", status == 200)
    status, _, body = http("GET", "/")
    check("the studio's page needs no key (it asks for one)", status == 200 and b"potop studio" in body)
    status, _, body = http("POST", "/v1/completions", {"prompt": "pan", "max_tokens": 3}, bearer)
    check("a completion with the key", status == 200 and b"text_completion" in body, (status, body[:200]))

    for host in ("evil.example", f"evil.example:{PORT}", "127.0.0.1.evil.example"):
        status, _, body = http("GET", "/v1/models", headers=bearer, host=host)
        check(f"Host {host} (DNS rebinding): 403 host_not_allowed", status == 403 and error_code(body) == "host_not_allowed",
              (status, body))
    for host in (f"localhost:{PORT}", "127.0.0.1", f"[::1]:{PORT}"):
        status, _, _ = http("GET", "/v1/models", headers=bearer, host=host)
        check(f"Host {host}: served", status == 200, status)

    status, headers, body = http("POST", "/v1/completions", {"prompt": "pan", "max_tokens": 2},
                                 dict(bearer, Origin="https://evil.example"))
    check("another origin's POST: 403 origin_not_allowed", status == 403 and error_code(body) == "origin_not_allowed"
          and "Access-Control-Allow-Origin" not in headers, (status, body))
    status, headers, body = http("POST", "/v1/completions", {"prompt": "pan", "max_tokens": 2},
                                 dict(bearer, Origin="https://app.example"))
    check("an allowed origin (--cors-origin): served with CORS headers",
          status == 200 and headers.get("Access-Control-Allow-Origin") == "https://app.example", (status, headers))
    status, headers, _ = http("OPTIONS", "/v1/chat/completions", headers={
        "Origin": "https://app.example", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type"})
    check("a preflight of an allowed origin: 204 with the methods and headers",
          status == 204 and headers.get("Access-Control-Allow-Origin") == "https://app.example"
          and "Authorization" in headers.get("Access-Control-Allow-Headers", ""), (status, headers))
    status, headers, _ = http("OPTIONS", "/v1/completions", headers={"Origin": "https://evil.example"})
    check("a preflight of another origin: 403", status == 403, status)
    status, _, body = http("POST", "/v1/models", b'{"prompt": "x"}', dict(bearer, Origin=f"http://127.0.0.1:{PORT}"))
    check("the page's own origin is not cross-origin", status == 405, (status, body))

    status, _, body = http("POST", "/v1/completions", b'{"prompt": "pan"}', dict(bearer, **{"Content-Type": "text/plain"}))
    check("a text/plain POST (a page's no-cors request): 415", status == 415 and error_code(body) == "unsupported_media_type",
          (status, body))
    status, _, body = http("POST", "/v1/completions", b"prompt=pan", dict(bearer, **{"Content-Type": "application/x-www-form-urlencoded"}))
    check("a form POST: 415", status == 415, (status, body))
    status = chunked_flood(1)
    check("a chunked body: 411 (or closed) before it is read", status in (411, 0), status)


def read_answer(s, timeout):
    """(status, seconds) of what the server sends on `s` within `timeout`: 0 if it closed
    without an answer, None if it sent nothing and kept the connection open."""
    start = time.time()
    s.settimeout(timeout)
    try:
        data = s.recv(4096)
    except socket.timeout:
        return None, time.time() - start
    except OSError:
        return 0, time.time() - start
    took = time.time() - start
    try:
        return int(data.split()[1]), took
    except (IndexError, ValueError):
        return 0, took


def deadline_checks():
    """The server runs with --header-timeout 2 --body-timeout 2 --max-client-connections 4."""
    with connect() as s:  # a header line every 0.5 s: each read is quick, the whole head is not
        start = time.time()
        s.sendall(b"GET /health HTTP/1.1\r\n")
        status, n = None, 0
        while status is None and time.time() - start < 8:
            try:
                s.sendall(b"X-Slow-%d: a\r\n" % n)
            except OSError:
                status = 0
                break
            n += 1
            status, _ = read_answer(s, 0.5)
        took = time.time() - start
    check(f"trickled headers: 408 at the header deadline (2 s; answered after {took:.1f} s)",
          status == 408 and 1.9 < took < 3.5, (status, took))
    with connect() as s:  # the head at once, then 10 of the 100 bytes of its body, then nothing
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100\r\n\r\n{\"prompt\":")
        status, took = read_answer(s, 8)
    check(f"a stalled body: 408 at the body deadline (2 s; after {took:.1f} s)", status == 408 and 1.9 < took < 3.5,
          (status, took))
    status, _, body = http("GET", "/health")
    check("after both, the server answers", status == 200, status)

    held = [connect("127.0.0.3") for _ in range(4)]  # four idle connections: the cap of one address
    time.sleep(0.5)
    status, headers, body = raw(f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\n\r\n".encode(), 5, "127.0.0.3")
    check("a fifth connection from that address: 429 too_many_connections with Retry-After",
          status == 429 and error_code(body) == "too_many_connections" and headers.get("Retry-After") == "1"
          and b"127.0.0.3" in body, (status, body))
    status, _, _ = http("GET", "/health")
    check("meanwhile another address is served", status == 200, status)
    for s in held:
        s.close()
    time.sleep(0.5)
    status, _, _ = http("GET", "/health", source="127.0.0.3")
    check("once they close, that address is served again", status == 200, status)
    status, _, body = http("GET", "/metrics")
    check("/metrics counts the refusals, once each", b'path="connection",code="408"} 2' in body
          and b'path="connection",code="429"} 1' in body and b'code="400"' not in body, body[:800])


def attack_checks(pid, rss_mb):
    stop = threading.Event()
    sockets = []

    ended = []  # (status, seconds) of each trickling connection the server ended

    def trickle():
        try:
            s = connect(ATTACKER, 30)
            sockets.append(s)
            start = time.time()
            s.sendall(b"GET /health HTTP/1.1\r\n")
            n = 0
            while not stop.is_set():
                s.sendall(b"X-Slow-%d: a\r\n" % n)
                n += 1
                status, _ = read_answer(s, 2)
                if status is not None:
                    ended.append((status, time.time() - start))
                    return
        except OSError:
            ended.append((0, time.time() - start))

    threads = [threading.Thread(target=trickle, daemon=True) for _ in range(40)]
    for t in threads:
        t.start()
    for _ in range(200):
        try:
            sockets.append(connect(ATTACKER, 30))
        except OSError:
            pass
    floods = [threading.Thread(target=chunked_flood, args=(50, ATTACKER), daemon=True) for _ in range(3)]
    for t in floods:
        t.start()

    def hostile():
        try:
            while not stop.is_set():
                http("POST", "/v1/completions", b'{"prompt": "pan", "temperature": 1e400}', source=ATTACKER)
                http("POST", "/v1/completions", b'{"prompt": "pan"}', {"Content-Type": "text/plain", "Origin": "https://evil.example"},
                     source=ATTACKER)
                http("POST", "/v1/chat/completions", b'{"messages": [], "seed": -1e999}', source=ATTACKER)
        except OSError:  # the server stopped (SIGTERM)
            pass
    hostiles = [threading.Thread(target=hostile, daemon=True) for _ in range(4)]
    for t in hostiles:
        t.start()
    time.sleep(1)

    slowest, peak_rss, answered = 0.0, 0, 0
    end = time.time() + 10
    while time.time() < end:
        for method, path, body in (("GET", "/health", None), ("POST", "/v1/completions", {"prompt": "pan", "max_tokens": 4})):
            start = time.time()
            status, _, _ = http(method, path, body, timeout=5)
            took = time.time() - start
            slowest = max(slowest, took)
            answered += status == 200
        with open(f"/proc/{pid}/status") as f:
            peak_rss = max(peak_rss, next(int(l.split()[1]) for l in f if l.startswith("VmRSS:")) // 1024)
        time.sleep(0.25)
    check(f"during the attack every normal request answered within 1 s (slowest {slowest:.3f} s, {answered} answered)",
          slowest < 1.0 and answered > 10, slowest)
    check(f"RSS under {rss_mb} MB during the attack (peak {peak_rss} MB)", peak_rss < rss_mb, peak_rss)
    late = [e for e in ended if e[0] not in (408, 429) or e[1] > 10 + 2.5]
    check(f"every trickling connection ended by the server with 408 (header deadline 10 s) or 429 (per-client cap): "
          f"{len(ended)} of 40, {sum(e[0] == 408 for e in ended)} with 408, slowest {max(e[1] for e in ended or [(0, 0)]):.1f} s",
          len(ended) == 40 and not late, (len(ended), late[:5]))
    print(f"attack: {len(sockets)} connections open", flush=True)
    # The trickling connections stay open: the shell sends SIGTERM now and times the exit.
    print("READY", flush=True)
    sys.stdin.readline()
    stop.set()


ATTACKER = "127.0.0.2"
if MODE == "guard":
    guard_checks(sys.argv[3])
elif MODE == "deadlines":
    deadline_checks()
else:
    attack_checks(int(sys.argv[3]), int(sys.argv[4]))
finish()
