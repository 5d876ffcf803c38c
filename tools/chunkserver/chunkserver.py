#!/usr/bin/env python3
"""A stand-alone streaming server for measuring the client's cost (test
tooling, never part of benchserve): OpenAI /v1/completions over HTTP/1.1
chunked SSE, each token its own send(), every stream stepped together each
ITL (as an engine's decode step), the first token TTFT after arrival; GET
/v1/models answers, other GETs 404. Python's standard library only
(asyncio, the event loop uvicorn runs on; TCP_NODELAY as uvicorn sets it).

Usage: chunkserver.py PORT [TTFT_MS ITL_MS]   (default 50 10)"""
import asyncio, json, socket, sys, time

PORT = int(sys.argv[1])
TTFT = float(sys.argv[2]) / 1000 if len(sys.argv) > 2 else 0.05
ITL = float(sys.argv[3]) / 1000 if len(sys.argv) > 3 else 0.01

active = []  # [transport, tokens left, sent, prompt_tokens, id]
pending = []  # (due, stream)

def chunk(payload: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(payload), payload)

def event(obj) -> bytes:
    return chunk(b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n")

class Conn(asyncio.Protocol):
    def connection_made(self, tr):
        self.tr, self.buf = tr, b""
        tr.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data):
        self.buf += data
        while True:
            head, sep, rest = self.buf.partition(b"\r\n\r\n")
            if not sep:
                return
            n = 0
            for line in head.split(b"\r\n")[1:]:
                k, _, v = line.partition(b":")
                if k.strip().lower() == b"content-length":
                    n = int(v)
            if len(rest) < n:
                return
            body, self.buf = rest[:n], rest[n:]
            if head.startswith(b"GET"):
                path = head.split(b" ")[1]
                if path == b"/v1/models":
                    b = b'{"object":"list","data":[{"id":"m","object":"model"}]}'
                    self.tr.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(b), b))
                else:
                    self.tr.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                continue
            req = json.loads(body)
            toks = int(req.get("max_tokens", 16))
            prompt = req.get("prompt")
            plen = len(prompt) if isinstance(prompt, list) else len(str(prompt).split())
            self.tr.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
            sid = "cmpl-%x" % id(self) + "-%d" % time.monotonic_ns()
            pending.append((time.monotonic() + TTFT, [self.tr, toks, 0, plen, sid]))

async def stepper():
    loop = asyncio.get_running_loop()
    nxt = loop.time()
    while True:
        now = loop.time()
        # Requests whose first token is due join this step.
        active.extend(s for due, s in pending if due <= now)
        pending[:] = [(due, s) for due, s in pending if due > now]
        still = []
        for s in active:
            tr = s[0]
            if tr.is_closing():
                continue
            s[1] -= 1
            s[2] += 1
            tr.write(event({"id": s[4], "object": "text_completion", "model": "m",
                            "choices": [{"index": 0, "text": " tok", "logprobs": None, "finish_reason": None if s[1] else "length"}]}))
            if s[1] == 0:
                tr.write(event({"id": s[4], "object": "text_completion", "model": "m", "choices": [],
                                "usage": {"prompt_tokens": s[3], "completion_tokens": s[2], "total_tokens": s[3] + s[2]}})
                         + chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")
            else:
                still.append(s)
        active[:] = still
        nxt += ITL
        await asyncio.sleep(max(0, nxt - loop.time()))

async def main():
    loop = asyncio.get_running_loop()
    srv = await loop.create_server(Conn, "127.0.0.1", PORT, backlog=4096)
    asyncio.create_task(stepper())
    async with srv:
        await srv.serve_forever()

asyncio.run(main())
