#!/usr/bin/python3
"""Load and soak benchmark of `potop serve` (docs/serve.md), against 127.0.0.1 only.

  /usr/bin/python3 bench/serve_load.py --potop build/release/src/potop --model DIR [--name small]
      [--clients 1,4,16] [--seconds 10] [--max-tokens 32] [--slots 16] [--soak 180]

For each client count and mode (--modes: streamed and/or plain completions): that many clients
send completions of --max-tokens tokens back to back for --seconds; prints requests/s, p50/p99
latency, p50/p99 time to the first token (streamed), and the aggregate generated tokens/s next to
a single `potop sample` stream on the same model (the ratio). The clients are bench/serve_client
(C++, built with `ninja -C build/release serve_client`), so that the load generator costs the
cores little beside the server it measures. With --soak: mixed
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
import subprocess
import sys
import threading
import time

PROMPT = "Pan Kmicic "


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


def load(client, port, clients, seconds, max_tokens, stream):
    """One run of bench/serve_client: its JSON summary."""
    args = [client, "--port", str(port), "--clients", str(clients), "--seconds", str(seconds),
            "--max-tokens", str(max_tokens), "--prompt", PROMPT] + (["--stream"] if stream else [])
    r = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
    r["rps"] = r["ok"] / r["seconds"]
    r["tokens_per_s"] = r["tokens"] / r["seconds"]
    return r


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
    ap.add_argument("--threads", type=int, default=0, help="the server's --threads (0: its default, half the cores)")
    ap.add_argument("--modes", default="stream,plain", help="stream (server-sent events), plain (one JSON answer), or both")
    ap.add_argument("--client", help="bench/serve_client (default: beside --potop's build, build/release/bench)")
    ap.add_argument("--soak", type=float, default=0)
    args = ap.parse_args()
    client = args.client or os.path.join(os.path.dirname(os.path.abspath(args.potop)), "..", "bench", "serve_client")
    if not os.access(client, os.X_OK):
        raise SystemExit(f"serve_load.py: no load client at {client}: build it (ninja -C build/release serve_client) "
                         "or pass --client")
    if any(m not in ("stream", "plain") for m in args.modes.split(",")):
        raise SystemExit("serve_load.py: --modes takes stream, plain or stream,plain")
    print(f"load average: {os.getloadavg()[0]:.2f} (other work on the machine slows every figure)")
    single = single_stream(args.potop, args.model, 1, args.max_tokens)
    print(f"single stream, potop sample --threads 1, {args.max_tokens} tokens per sample: {single:.0f} tokens/s")
    proc, port = start_server(args.potop, args.model, args.slots, 64, args.threads)
    try:
        streamed(port, {"prompt": PROMPT, "max_tokens": 8})  # warm up
        print(f"\n| model | mode | clients | requests/s | latency p50 | latency p99 | first token p50 | first token p99 "
              "| tokens/s | vs sample |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for mode in args.modes.split(","):
            for c in [int(x) for x in args.clients.split(",")]:
                r = load(client, port, c, args.seconds, args.max_tokens, mode == "stream")
                first = (f"{r['first_p50_ms']:.0f} ms | {r['first_p99_ms']:.0f} ms" if mode == "stream" else "– | –")
                print(f"| {args.name} | {mode} | {c} | {r['rps']:.1f} | {r['latency_p50_ms']:.0f} ms | "
                      f"{r['latency_p99_ms']:.0f} ms | {first} | {r['tokens_per_s']:.0f} | "
                      f"{r['tokens_per_s'] / single:.2f}× |" + (f" ({r['failed']} failed)" if r["failed"] else ""),
                      flush=True)
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
