#!/usr/bin/python3
"""Heap in use of `potop serve` by request kind (docs/serve.md, Memory), against 127.0.0.1 only.

  /usr/bin/python3 bench/serve_heap_by_kind.py POTOP MODEL_DIR health|bad|plain|stream|disconnect

Starts the server (--threads 1), sends 400 requests of one kind from 8 clients, then 1600, then
1600 more, reading /metrics' potop_heap_in_use_bytes after each batch: a kind whose heap keeps
growing by the same amount per request holds memory it should not.
"""
import http.client, json, re, subprocess, sys, threading, time, socket
potop, model, kind = sys.argv[1], sys.argv[2], sys.argv[3]
p = subprocess.Popen([potop, "serve", "--model", model, "--port", "0", "--threads", "1", "--queue", "64"], stderr=subprocess.PIPE, text=True)
for line in p.stderr:
    m = re.search(r"127.0.0.1:(\d+)", line)
    if m: port = int(m.group(1)); break
threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
def heap():
    c = http.client.HTTPConnection("127.0.0.1", port); c.request("GET", "/metrics"); t = c.getresponse().read().decode(); c.close()
    return float(re.search(r"^potop_heap_in_use_bytes (\S+)$", t, re.M).group(1)) / 1024
def one(k):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    if kind == "plain": c.request("POST", "/v1/completions", json.dumps({"prompt": "Pan ", "max_tokens": 8}), {"Content-Type": "application/json"}); c.getresponse().read()
    elif kind == "stream": c.request("POST", "/v1/completions", json.dumps({"prompt": "Pan ", "max_tokens": 8, "stream": True}), {"Content-Type": "application/json"}); c.getresponse().read()
    elif kind == "bad": c.request("POST", "/v1/completions", b'{"prompt": 5}', {"Content-Type": "application/json"}); c.getresponse().read()
    elif kind == "health": c.request("GET", "/health"); c.getresponse().read()
    elif kind == "disconnect":
        c.request("POST", "/v1/completions", json.dumps({"prompt": "Pan ", "max_tokens": 2000, "stream": True}), {"Content-Type": "application/json"}); r = c.getresponse(); r.readline(); c.sock.shutdown(socket.SHUT_RDWR)
    c.close()
def run(n):
    ts = [threading.Thread(target=lambda: [one(i) for i in range(n // 8)]) for _ in range(8)]
    [t.start() for t in ts]; [t.join() for t in ts]
run(400); time.sleep(1.5); a = heap()
run(1600); time.sleep(1.5); b = heap()
run(1600); time.sleep(1.5); c = heap()
print(f"{kind}: heap KiB after 400: {a:.0f}, +1600: {b:.0f}, +1600: {c:.0f}  -> {(c-b)*1024/1600:.0f} bytes/request in the last 1600")
p.terminate(); p.wait()
