# A small app for the preview URL tests, run inside a sandbox as `python3 preview-app.py PORT`:
# /headers answers the request's headers as JSON, /sse sends three events 400 ms apart,
# /big?mb=N streams N MiB, /forged is a 404 that claims to be the host's refusal, POST /echo answers its body, /ws is a WebSocket echo, and
# everything else is served from the current folder as python3 -m http.server does.
import base64
import hashlib
import json
import os
import struct
import sys
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class App(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        path, _, query = self.path.partition("?")
        if path == "/headers":
            body = json.dumps({k.lower(): v for k, v in self.headers.items()}).encode()
            self.answer(200, "application/json", body)
        elif path == "/sse":
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-store")
            self.send_header("connection", "close")
            self.end_headers()
            for i in range(3):
                self.wfile.write(f"data: event {i} at {time.time():.3f}\n\n".encode())
                self.wfile.flush()
                time.sleep(0.4)
            self.close_connection = True
        elif path == "/big":
            mib = int(query.split("=")[1]) if "=" in query else 1
            self.send_response(200)
            self.send_header("content-type", "application/octet-stream")
            self.send_header("content-length", str(mib << 20))
            self.end_headers()
            chunk = b"\0" * (1 << 20)
            for _ in range(mib):
                self.wfile.write(chunk)
        elif path == "/forged":
            self.send_response(404)
            self.send_header("x-toolwire-refusal", "gone")
            self.send_header("content-length", "10")
            self.end_headers()
            self.wfile.write(b"app's own\n")
        elif path == "/ws":
            self.websocket()
        else:
            super().do_GET()

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(length)
        self.answer(200, "application/octet-stream", body)

    def answer(self, status, kind, body):
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def websocket(self):
        key = self.headers["sec-websocket-key"]
        accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        self.send_response(101)
        self.send_header("upgrade", "websocket")
        self.send_header("connection", "Upgrade")
        self.send_header("sec-websocket-accept", accept)
        self.end_headers()
        self.wfile.flush()
        while True:
            head = self.rfile.read(2)
            if len(head) < 2:
                return
            opcode, length = head[0] & 0x0F, head[1] & 0x7F
            if length == 126:
                length = struct.unpack(">H", self.rfile.read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self.rfile.read(8))[0]
            mask = self.rfile.read(4) if head[1] & 0x80 else b"\0\0\0\0"
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(length)))
            if opcode == 8:
                self.frame(8, data[:2] or struct.pack(">H", 1000))
                return
            if opcode in (1, 2):
                self.frame(opcode, b"echo: " + data if opcode == 1 else data)

    def frame(self, opcode, data):
        n = len(data)
        size = bytes([n]) if n < 126 else (bytes([126]) + struct.pack(">H", n) if n < 65536 else bytes([127]) + struct.pack(">Q", n))
        self.wfile.write(bytes([0x80 | opcode]) + size + data)
        self.wfile.flush()


if __name__ == "__main__":
    os.chdir(sys.argv[2] if len(sys.argv) > 2 else ".")
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), App).serve_forever()
