#!/usr/bin/python3
"""A potop server safe to expose: the request guard and a bounded attack.

usage: serve_guard.py guard BASE_URL KEY     the server runs with --api-key-file (KEY) and
                                             --cors-origin https://app.example
       serve_guard.py deadlines BASE_URL    the server runs with --header-timeout 2 --body-timeout 2
                                             --max-client-connections 4
       serve_guard.py attack BASE_URL PID MB MS BACK  the server runs with default flags; PID is
                                             its process, MB the bound on its RSS, MS on the probes'
                                             p99, BACK on its RSS's growth after (0: not checked)
guard: the API key (401 without or with a wrong one; /health and the studio open), the Host check
(DNS rebinding), origins (403, CORS headers, preflights), JSON-only POSTs (415) and chunked bodies
(411). deadlines: trickled headers and a stalled body get 408 at their deadlines, and the
per-address cap makes room by closing the address's oldest idle connection. attack, all at once from several loopback addresses: 300 connections trickling a header line a
second (50 an address, under the per-address cap), 300 idle ones, 64 idle ones from the probes'
own address (its cap), requests smuggled in the bodies of refused ones (a foreign Host, a text/plain
or cross-origin POST, a GET and an OPTIONS with a body), endless header lines, chunked bodies,
huge Content-Lengths, numbers beyond a double's range, 200 /v1/attention requests at once, 64 bodies of
just under 1 MiB held from one address, 32 chats at once through a template that builds texts of 8
MiB; meanwhile probes from 127.0.0.1 every
quarter second for 20 s must all be answered with p99 under 100 ms, RSS stay under the bound, no smuggled
request reach a handler (/metrics), the trickling connections be ended with 408 at the deadline,
and the memory be handed back after the attack.
Prints "ok ..." per check; exits 1 if any failed.
"""
import json
import multiprocessing
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
    status, headers, body = http("GET", "/")
    check("the studio's page needs no key (it asks for one)", status == 200 and b"potop studio" in body)
    check("the studio may not be framed by another site (it holds the API key)",
          headers.get("X-Frame-Options") == "DENY"
          and headers.get("Content-Security-Policy") == "frame-ancestors 'none'", headers)
    for icon in ("/favicon.svg", "/favicon.ico"):
        status, headers, body = http("GET", icon)
        check(f"{icon}: the studio's icon", status == 200 and headers.get("Content-Type") == "image/svg+xml"
              and body.startswith(b"<svg"), (status, headers))
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
    # Another page's <img src=".../v1/attention?text=..."> sends no Origin: its Sec-Fetch-Site and
    # Referer say where it comes from, and it is refused before the model runs.
    attention = "/v1/attention?text=pan"
    for name, extra in (("Sec-Fetch-Site: cross-site", {"Sec-Fetch-Site": "cross-site"}),
                        ("a Referer of another site", {"Referer": "https://evil.example/page.html"}),
                        ("both", {"Sec-Fetch-Site": "cross-site", "Referer": "https://evil.example/"})):
        status, _, body = http("GET", attention, headers=dict(bearer, **extra))
        check(f"another page's GET /v1/attention without Origin ({name}): 403 origin_not_allowed",
              status == 403 and error_code(body) == "origin_not_allowed", (status, body[:200]))
    for name, extra in (("the studio's own page", {"Sec-Fetch-Site": "same-origin", "Referer": f"http://127.0.0.1:{PORT}/"}),
                        ("an allowed origin's page", {"Sec-Fetch-Site": "cross-site", "Referer": "https://app.example/x"}),
                        ("no page (curl)", {})):
        status, _, body = http("GET", attention, headers=dict(bearer, **extra))
        check(f"GET /v1/attention from {name}: served", status == 200, (status, body[:200]))
    status, _, _ = http("GET", "/", headers={"Sec-Fetch-Site": "cross-site", "Referer": "https://evil.example/"})
    check("a link from another site to the studio: served", status == 200, status)

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
    status, _, _ = http("GET", "/health", source="127.0.0.3", timeout=5)
    check("a fifth connection from that address is served: it takes the oldest idle one's place", status == 200, status)
    held[0].settimeout(2)
    try:
        evicted = held[0].recv(100) == b""
    except OSError:
        evicted = True
    check("... and the oldest one is closed without a word", evicted)
    for s in held:
        s.close()
    status, _, body = http("GET", "/metrics")
    check("/metrics counts the refusals, once each", b'path="connection",code="408"} 2' in body
          and b'code="400"' not in body, body[:800])


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p / 100))] if values else 0.0


def smuggled(outer_head):
    """`outer_head` (a request the server refuses or answers without reading its body) with a
    body that is itself a whole completion request: no handler may ever see that one."""
    inner = json.dumps({"prompt": "smuggled", "max_tokens": 1}).encode()
    inner = (f"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\nContent-Type: application/json\r\n"
             f"Content-Length: {len(inner)}\r\n\r\n").encode() + inner
    return outer_head.replace(b"LENGTH", str(len(inner)).encode()) + inner


SMUGGLERS = [
    b"POST /v1/completions HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nContent-Length: LENGTH\r\n\r\n",
    b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: LENGTH\r\n\r\n",
    b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://evil.example\r\nContent-Type: text/plain\r\n"
    b"Content-Length: LENGTH\r\n\r\n",
    b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: LENGTH\r\n\r\n",
    b"OPTIONS /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: LENGTH\r\n\r\n",
]


class Crowd:
    """`count` connections from `addresses`, reopened as the server closes them; with `trickle`,
    each sends a request line, then a header line every second and never ends its head."""

    def __init__(self, count, addresses, trickle):
        self.count, self.addresses, self.trickle = count, addresses, trickle
        self.open, self.answers, self.opened = [], [], 0

    def top_up(self):
        while len(self.open) < self.count:
            try:
                s = connect(self.addresses[self.opened % len(self.addresses)], 5)
            except OSError:
                return
            self.opened += 1
            s.setblocking(False)
            if self.trickle:
                s.send(b"GET /health HTTP/1.1\r\n")
            self.open.append([s, time.time(), 0])

    def tick(self):
        for entry in list(self.open):
            s, started, n = entry
            try:
                data = s.recv(4096)
                closed = True  # an answer (408) or the end
                if data:
                    self.answers.append((int(data.split()[1]), time.time() - started))
            except BlockingIOError:
                closed = False
            except (OSError, IndexError, ValueError):
                closed = True
            if not closed and self.trickle and time.time() - started > n + 1:
                try:
                    s.send(b"X-Slow-%d: a\r\n" % n)
                    entry[2] += 1
                except OSError:
                    closed = True
            if closed:
                s.close()
                self.open.remove(entry)

    def close(self):
        for s, _, _ in self.open:
            s.close()
        self.open = []


def header_flood(source):
    """An endless header line: the server must answer 431 at its cap and close."""
    try:
        with connect(source, 10) as s:
            s.sendall(f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\nX-Long: ".encode())
            for _ in range(512):  # 512 MiB, if the server let it
                s.sendall(b"a" * (1 << 20))
    except OSError:
        pass


def attack(stop, results):
    """The attackers, in a process of their own (so that the probes' times are the server's, not
    Python's lock's) until `stop` is set; then puts what they saw in `results`."""
    trickling = Crowd(300, [f"127.0.0.{i}" for i in range(2, 8)], True)  # 50 an address, under its cap
    idle = Crowd(300, [f"127.0.0.{i}" for i in range(8, 14)], False)
    local = Crowd(64, ["127.0.0.1"], False)  # the probes' own address, at its cap
    smuggled_answers = []

    def crowds():
        while not stop.is_set():
            for c in (trickling, idle, local):
                c.top_up()
                c.tick()
            time.sleep(0.05)

    def smuggle():
        try:
            while not stop.is_set():
                for head in SMUGGLERS:
                    status, _, _ = raw(smuggled(head), 5, "127.0.0.14")
                    smuggled_answers.append(status)
                time.sleep(0.02)  # hundreds a second: an attack, not a contest for the 2 cores
        except OSError:  # the server stopped (SIGTERM)
            pass

    def hostile():
        try:
            while not stop.is_set():
                http("POST", "/v1/completions", b'{"prompt": "pan", "temperature": 1e400}', source=ATTACKER)
                http("POST", "/v1/chat/completions", b'{"messages": [], "seed": -1e999}', source=ATTACKER)
                raw(f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\nContent-Length: 999999999\r\n\r\n"
                    .encode(), 5, ATTACKER)
                chunked_flood(1, ATTACKER)
                time.sleep(0.02)
        except OSError:  # the server stopped (SIGTERM)
            pass

    def headers():
        while not stop.is_set():
            header_flood("127.0.0.15")
            time.sleep(0.02)

    def bursts(source, path, body, count, pause, answers):
        """`count` POSTs of `body` to `path` at once from `source`, their statuses read (0: closed
        unanswered), again and again every `pause` seconds until the attack stops."""
        payload = json.dumps(body).encode()
        request = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\nContent-Type: application/json\r\n"
                   f"Content-Length: {len(payload)}\r\n\r\n").encode() + payload
        try:
            while not stop.is_set():
                waiting = []
                for _ in range(count):
                    s = connect(source, 30)
                    s.sendall(request)
                    waiting.append(s)
                for s in waiting:
                    try:
                        answers.append(int(s.recv(64).split()[1]))
                    except (OSError, IndexError, ValueError):
                        answers.append(0)
                    s.close()
                time.sleep(pause)  # an attack, not a contest for the 2 cores
        except OSError:  # the server stopped (SIGTERM)
            pass

    # /v1/attention runs the model one request at a time: 50 at once from each of 4 addresses, again
    # and again, which once held every request thread waiting and queued /health behind them.
    attention_answers = []
    flooders = [lambda a=f"127.0.0.{i}": bursts(a, "/v1/attention", {"text": "pan zagłoba " * 20}, 50, 1.0,
                                                attention_answers) for i in range(16, 20)]

    # 32 chats at once whose rendering, by the server's --chat-template (serve_guard.sh), builds a
    # list of texts of 8 MiB: once 90 MB a request and 3 GB for 32; now each stops at 32 MiB (400),
    # and they take turns, one at a time and one per client (503 for the rest).
    template_answers = []

    def hostile_chats():
        bursts("127.0.0.21", "/v1/chat/completions", {"messages": [{"role": "user", "content": "boom"}], "max_tokens": 1},
               32, 0.5, template_answers)

    # One address, no API key: 64 bodies (its connection cap) of just under the 1 MiB cap, sent all
    # but their last byte and held, each refilled when the server closes it. They once filled the whole pool of bytes
    # still arriving (64 MiB) and every other client got 503 until the body deadline.
    declared = (1 << 20) - 64
    held = (f"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {declared}\r\n\r\n").encode() + b" " * (declared - 1)
    pool_refused = []

    def fill_pool():
        holding = []
        try:
            while not stop.is_set():
                holding = [s for s in holding if s.fileno() >= 0]
                # 4 a turn, then 1 once 16 are held: an attack, not a contest for the 2 cores
                for _ in range(min(64 - len(holding), 4 if len(holding) < 16 else 1)):
                    s = connect("127.0.0.20", 5)
                    try:
                        s.sendall(held)
                        holding.append(s)
                    except OSError:  # refused (503) and closed while sending
                        pool_refused.append(1)
                        s.close()
                for s in holding:  # the ones the server answered (503) and closed: refilled
                    s.setblocking(False)
                    try:
                        if s.recv(64) is not None:
                            pool_refused.append(1)
                            s.close()
                    except BlockingIOError:
                        pass
                    except OSError:
                        s.close()
                time.sleep(0.1)
        except OSError:  # the server stopped (SIGTERM)
            pass
        for s in holding:
            s.close()
    workers = [threading.Thread(target=f, daemon=True)
               for f in [crowds, smuggle, hostile, headers, headers, headers, fill_pool, hostile_chats] + flooders]
    for t in workers:
        t.start()
    stop.wait()
    for t in workers:
        t.join(10)
    for c in (trickling, idle, local):
        c.close()
    results.put({"trickled": trickling.answers, "opened": trickling.opened, "smuggled": smuggled_answers,
                 "attention": attention_answers, "pool_refused": len(pool_refused), "template": template_answers})


def attack_checks(pid, rss_mb, p99_ms, back_mb):
    def rss():
        with open(f"/proc/{pid}/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:")) // 1024

    fork = multiprocessing.get_context("fork")
    stop, results = fork.Event(), fork.Queue()
    status, _, _ = http("GET", "/health")
    rss_before = rss()
    attacker = fork.Process(target=attack, args=(stop, results), daemon=True)
    attacker.start()
    time.sleep(2)

    # Probes every quarter second from 127.0.0.1, each on a fresh connection.
    latencies, answered, probes, peak_rss = [], 0, 0, 0
    end = time.time() + 20
    while time.time() < end:
        for path in ("/health", "/v1/models"):
            start = time.time()
            status, _, _ = http("GET", path, timeout=5)
            latencies.append(time.time() - start)
            answered += status == 200
            probes += 1
        peak_rss = max(peak_rss, rss())
        time.sleep(0.25)
    p99 = percentile(latencies, 99)
    check(f"during the attack every probe answered ({answered} of {probes}), p99 {p99 * 1000:.0f} ms "
          f"(median {percentile(latencies, 50) * 1000:.1f} ms, slowest {max(latencies) * 1000:.0f} ms)",
          answered == probes and p99 * 1000 < p99_ms, (answered, probes, p99))
    # A chat during the attack: its template's turn may go to the hostile chats' first (their
    # renderings take longer in a sanitized build), so it retries a 503 as clients do (Retry-After).
    for _ in range(5):
        status, _, body = http("POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": "pan"}],
                                                                 "max_tokens": 4})
        if status != 503:
            break
        time.sleep(1)
    check("a completion during the attack: 200 (a 503 retried, at most 5 tries)", status == 200, (status, body[:200]))
    # A body of the largest size from another address while the filler holds its 64: the pool has
    # room for it (once the filler held all but a few KiB of it, and this got 503). /v1/attention
    # reads it whole and refuses its text as too long (400): no queue or template stands between.
    big = json.dumps({"text": ""}).encode()
    big = big.replace(b'"text": ""', b'"text": "' + b"x" * ((1 << 20) - len(big) - 8) + b'"')
    statuses = []
    for _ in range(5):
        status, _, body = http("POST", "/v1/attention", big, timeout=30)
        statuses.append(status if status != 400 or b'"param":"text"' in body else -1)
        time.sleep(0.5)
    check(f"a body of just under 1 MiB from another address while one fills the pool: read whole, its text "
          f"refused as too long ({statuses})", statuses == [400] * 5, statuses)
    check(f"RSS under {rss_mb} MB during the attack (peak {peak_rss} MB, {rss_before} MB before)", peak_rss < rss_mb,
          peak_rss)
    status, _, body = http("GET", "/metrics")
    stop.set()
    seen = results.get(timeout=60)
    attacker.join(10)
    done = seen["trickled"]
    check(f"the trickling connections ended by the server with 408 at the header deadline (10 s): {len(done)}, "
          f"slowest {max([a[1] for a in done] or [0]):.1f} s; {seen['opened']} opened",
          len(done) >= 250 and all(a[0] == 408 and a[1] < 12.5 for a in done), done[:5])
    smuggled_answers = seen["smuggled"]
    check(f"the smuggling requests were answered ({len(smuggled_answers)}: "
          f"{sorted(set(smuggled_answers))})", len(smuggled_answers) >= 10 and 0 not in smuggled_answers, smuggled_answers[:10])
    attention = seen["attention"]
    # (0: closed unanswered, as an idle connection is when the connections reach their cap)
    answered = attention.count(200) + attention.count(503)
    check(f"the /v1/attention flood was answered, beyond the queue with 503 ({len(attention)}: "
          f"{ {c: attention.count(c) for c in sorted(set(attention))} })",
          len(attention) >= 200 and set(attention) <= {0, 200, 503} and answered >= 0.95 * len(attention)
          and 503 in attention, attention[:10])
    template = seen["template"]
    check(f"the hostile template's chats were refused, 400 or 503 ({len(template)}: "
          f"{ {c: template.count(c) for c in sorted(set(template))} })",
          len(template) >= 32 and set(template) <= {400, 503} and 400 in template, template[:10])
    check(f"the address filling the pool with bodies was refused past its share ({seen['pool_refused']} refusals)",
          seen["pool_refused"] > 0, seen["pool_refused"])
    check("no smuggled request reached a handler (/metrics: no /v1/completions answered 200)",
          status == 200 and b'path="/v1/completions",code="200"' not in body,
          [l for l in body.decode().splitlines() if "completions" in l])
    check("the refusals are counted (/metrics: 408, 411, 413, 431)",
          all(f'path="connection",code="{c}"'.encode() in body for c in (408, 411, 413, 431)),
          [l for l in body.decode().splitlines() if "connection" in l])
    # The memory comes back within seconds: polled, since an allocator's trim follows the frees.
    back_start, back_rss = time.monotonic(), rss()
    while back_mb > 0 and back_rss >= rss_before + back_mb and time.monotonic() - back_start < 10:
        time.sleep(0.25)
        back_rss = rss()
    if back_mb > 0:
        check(f"the memory of the floods is handed back ({back_rss} MB {time.monotonic() - back_start:.1f} s after "
              f"the attack, {rss_before} MB before)", back_rss < rss_before + back_mb, (back_rss, rss_before))
    # The attack again for the SIGTERM: the shell sends it now and times the exit.
    again, results = fork.Event(), fork.Queue()
    attacker = fork.Process(target=attack, args=(again, results), daemon=True)
    attacker.start()
    time.sleep(1)
    print("READY", flush=True)
    sys.stdin.readline()
    again.set()
    results.get(timeout=60)
    attacker.join(15)


ATTACKER = "127.0.0.2"
if MODE == "guard":
    guard_checks(sys.argv[3])
elif MODE == "deadlines":
    deadline_checks()
else:
    attack_checks(int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
finish()
