#!/usr/bin/python3
"""Load and soak benchmark of `potop serve` (docs/serve.md), against 127.0.0.1 only.

  /usr/bin/python3 bench/serve_load.py --potop build/release/src/potop --model DIR [--name small]
      [--clients 1,4,16] [--seconds 10] [--max-tokens 32] [--slots 16] [--soak 180]

For each client count: that many clients send streamed completions back to back for --seconds;
prints requests/s, p50/p99 latency, p50/p99 time to the first token, and the aggregate generated
tokens/s next to a single `potop sample` stream on the same model (the ratio). With --soak: mixed
valid, malformed and disconnecting clients for that many seconds, the server's RSS sampled every
5 s with the heap in use (/metrics' potop_heap_in_use_bytes: RSS growing while the heap stays
flat is the allocator keeping freed memory, both growing a leak); every valid request must be
answered 200 and the server must not fail.
"""
import argparse
import http.client
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import threading
import time

PROMPT = "Pan Kmicic "


def percentile(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def start_server(potop, model, slots, queue, threads):
    proc = subprocess.Popen([potop, "serve", "--model", model, "--port", "0", "--slots", str(slots), "--queue",
                             str(queue), "--threads", str(threads)], stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        m = re.search(r"listening on http://127.0.0.1:(\d+)", line)
        if m:
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            return proc, int(m.group(1))
    raise SystemExit("potop serve did not start")


def streamed(port, body, timeout=120):
    """(status, seconds to the first token, seconds in all, completion tokens) of one streamed request."""
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request("POST", "/v1/completions", json.dumps(dict(body, stream=True)), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    if resp.status != 200:
        resp.read()
        conn.close()
        return resp.status, None, time.perf_counter() - start, 0
    first, tokens = None, 0
    for line in resp:
        if line.startswith(b"data: {"):
            if first is None:
                first = time.perf_counter() - start
            event = json.loads(line[6:])
            if "usage" in event:
                tokens = event["usage"]["completion_tokens"]
    conn.close()
    return 200, first, time.perf_counter() - start, tokens


def load(port, clients, seconds, max_tokens):
    results, lock = [], threading.Lock()
    end = time.perf_counter() + seconds

    def client(k):
        n = 0
        while time.perf_counter() < end:
            r = streamed(port, {"prompt": PROMPT, "max_tokens": max_tokens, "seed": k * 100000 + n})
            n += 1
            with lock:
                results.append(r)

    start = time.perf_counter()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    ok = [r for r in results if r[0] == 200]
    return {"clients": clients, "requests": len(results), "ok": len(ok), "rps": len(ok) / wall,
            "p50": percentile([r[2] for r in ok], 50), "p99": percentile([r[2] for r in ok], 99),
            "first_p50": percentile([r[1] for r in ok], 50), "first_p99": percentile([r[1] for r in ok], 99),
            "tokens_per_s": sum(r[3] for r in ok) / wall}


def single_stream(potop, model, threads, max_tokens):
    """tokens/s of `potop sample` doing the clients' work, one completion after another: the same
    prompt, max_tokens each (model loading excluded)."""
    samples = max(10, 3000 // max_tokens)
    out = subprocess.run([potop, "sample", "--model", model, "--prompt", PROMPT, "--tokens", str(max_tokens),
                          "--num-samples", str(samples), "--threads", str(threads), "--json", "--seed", "1"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["tokens_per_s"]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def heap_kib(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    m = re.search(r"^potop_heap_in_use_bytes (\S+)$", text, re.M)
    return round(float(m.group(1)) / 1024) if m else -1


def soak(port, pid, seconds, clients):
    counts = {"valid": 0, "valid_ok": 0, "malformed": 0, "malformed_4xx": 0, "disconnect": 0, "other": 0}
    lock = threading.Lock()
    end = time.perf_counter() + seconds
    bad_bodies = [b'{"prompt": "Pan', b'{"prompt": 5}', b'{"prompt": "a", "temperature": -1}', b'[]',
                  b'{"prompt": "\xff"}', b'{"prompt": "a", "max_tokens": "x"}', b'{"prompt": "a", "n": 3}']

    def client(k):
        rng = random.Random(k)
        while time.perf_counter() < end:
            kind = rng.choices(["valid", "stream", "malformed", "disconnect"], [4, 4, 3, 2])[0]
            try:
                if kind in ("valid", "stream"):
                    body = {"prompt": PROMPT, "max_tokens": rng.randint(1, 64), "logprobs": rng.choice([None, 3])}
                    if kind == "stream":
                        status = streamed(port, body)[0]
                    else:
                        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                        conn.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
                        resp = conn.getresponse()
                        json.loads(resp.read())
                        status = resp.status
                        conn.close()
                    with lock:
                        counts["valid"] += 1
                        counts["valid_ok"] += status == 200
                elif kind == "malformed":
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                    conn.request("POST", "/v1/completions", rng.choice(bad_bodies), {"Content-Type": "application/json"})
                    resp = conn.getresponse()
                    resp.read()
                    conn.close()
                    with lock:
                        counts["malformed"] += 1
                        counts["malformed_4xx"] += 400 <= resp.status < 500
                else:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                    conn.request("POST", "/v1/completions", json.dumps({"prompt": PROMPT, "max_tokens": 2000, "stream": True}),
                                 {"Content-Type": "application/json"})
                    resp = conn.getresponse()
                    resp.readline()
                    conn.sock.shutdown(socket.SHUT_RDWR)
                    conn.close()
                    with lock:
                        counts["disconnect"] += 1
            except Exception as e:  # a failure of the server shows here
                with lock:
                    counts["other"] += 1
                print(f"soak: client {k}: {e!r}", file=sys.stderr)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    rss = []
    while any(t.is_alive() for t in threads):
        rss.append((round(time.perf_counter() - (end - seconds)), rss_kib(pid), heap_kib(port)))
        time.sleep(5)
    for t in threads:
        t.join()
    return counts, rss


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--potop", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--name", default="model")
    ap.add_argument("--clients", default="1,4,16")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--slots", type=int, default=16, help="the server's --slots (generations batched together)")
    ap.add_argument("--threads", type=int, default=2, help="the server's --threads")
    ap.add_argument("--soak", type=float, default=0)
    args = ap.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f} (other work on the machine slows every figure)")
    single = single_stream(args.potop, args.model, 1, args.max_tokens)
    print(f"single stream, potop sample --threads 1, {args.max_tokens} tokens per sample: {single:.0f} tokens/s")
    proc, port = start_server(args.potop, args.model, args.slots, 64, args.threads)
    try:
        streamed(port, {"prompt": PROMPT, "max_tokens": 8})  # warm up
        print(f"\n| model | clients | requests/s | latency p50 | latency p99 | first token p50 | first token p99 | tokens/s | vs sample |")
        print("|---|---|---|---|---|---|---|---|---|")
        for c in [int(x) for x in args.clients.split(",")]:
            r = load(port, c, args.seconds, args.max_tokens)
            failed = r["requests"] - r["ok"]
            print(f"| {args.name} | {c} | {r['rps']:.1f} | {1000 * r['p50']:.0f} ms | {1000 * r['p99']:.0f} ms | "
                  f"{1000 * r['first_p50']:.0f} ms | {1000 * r['first_p99']:.0f} ms | {r['tokens_per_s']:.0f} | "
                  f"{r['tokens_per_s'] / single:.2f}× |" + (f" ({failed} failed)" if failed else ""), flush=True)
        if args.soak > 0:
            counts, rss = soak(port, proc.pid, args.soak, 16)
            print(f"\nsoak {args.soak:.0f} s, 16 clients: {counts}")
            print("RSS and heap in use (s: KiB/KiB): " + ", ".join(f"{t}:{k}/{h}" for t, k, h in rss))
            alive = proc.poll() is None
            print(f"server alive: {alive}; every valid request answered 200: {counts['valid'] == counts['valid_ok']}; "
                  f"every malformed one 4xx: {counts['malformed'] == counts['malformed_4xx']}")
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
