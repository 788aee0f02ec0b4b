#!/usr/bin/python3
"""A potop server safe to expose: the request guard and a bounded attack.

usage: serve_guard.py guard BASE_URL KEY     the server runs with --api-key-file (KEY) and
                                             --cors-origin https://app.example
       serve_guard.py attack BASE_URL PID MB the server runs with default flags; PID is its process,
                                             MB the bound on its RSS
guard: the API key (401 without or with a wrong one; /health and the studio open), the Host check
(DNS rebinding), origins (403, CORS headers, preflights), JSON-only POSTs (415) and chunked bodies
(411). attack: 40 connections trickling a header line every 2 s, 200 idle connections, a chunked
flood, bodies with numbers beyond a double's range and cross-origin no-cors POSTs, all at once,
while a normal request must be answered within 1 s and the server's RSS stay under 200 MB.
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


def raw(request, timeout=10):
    """Sends bytes, returns (status, headers dict, body bytes) of the answer."""
    with socket.create_connection((HOST, PORT), timeout=timeout) as s:
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


def http(method, path, body=None, headers=None, host=None, timeout=10):
    payload = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    h = {"Host": host or f"127.0.0.1:{PORT}", "Connection": "close"}
    if body is not None:
        h["Content-Type"] = "application/json"
        h["Content-Length"] = str(len(payload))
    h.update(headers or {})
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items() if v is not None) + "\r\n"
    return raw(head.encode() + payload, timeout)


def error_code(body):
    try:
        return json.loads(body)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return None


def chunked_flood(megabytes):
    """A chunked body of `megabytes`; the status it got, or 0 if the server closed first."""
    try:
        with socket.create_connection((HOST, PORT), timeout=10) as s:
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


def attack_checks(pid, rss_mb):
    stop = threading.Event()
    sockets = []

    def trickle():
        try:
            s = socket.create_connection((HOST, PORT), timeout=30)
            sockets.append(s)
            s.sendall(b"GET /health HTTP/1.1\r\n")
            n = 0
            while not stop.is_set():
                s.sendall(b"X-Slow-%d: a\r\n" % n)
                n += 1
                stop.wait(2)
        except OSError:
            pass

    threads = [threading.Thread(target=trickle, daemon=True) for _ in range(40)]
    for t in threads:
        t.start()
    for _ in range(200):
        try:
            sockets.append(socket.create_connection((HOST, PORT), timeout=30))
        except OSError:
            pass
    floods = [threading.Thread(target=chunked_flood, args=(50,), daemon=True) for _ in range(3)]
    for t in floods:
        t.start()

    def hostile():
        try:
            while not stop.is_set():
                http("POST", "/v1/completions", b'{"prompt": "pan", "temperature": 1e400}')
                http("POST", "/v1/completions", b'{"prompt": "pan"}', {"Content-Type": "text/plain", "Origin": "https://evil.example"})
                http("POST", "/v1/chat/completions", b'{"messages": [], "seed": -1e999}')
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
    print(f"attack: {len(sockets)} connections open", flush=True)
    # The trickling connections stay open: the shell sends SIGTERM now and times the exit.
    print("READY", flush=True)
    sys.stdin.readline()
    stop.set()


if MODE == "guard":
    guard_checks(sys.argv[3])
else:
    attack_checks(int(sys.argv[3]), int(sys.argv[4]))
finish()
