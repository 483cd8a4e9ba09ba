"""A webhook receiver that checks the gateway's signature with Python's hmac, as a receiver
would: Herald-Signature is "t=<unix seconds>,v1=<hex HMAC-SHA256 of '<t>.<body>'>".

    python3 webhook_receiver.py SECRET FAIL_FIRST OUT_FILE

Prints "port N" once listening on 127.0.0.1, then appends one JSON line per request to OUT_FILE:
the event's body, whether the signature verified, whether it would still verify with one byte of
the body changed, and the status answered. The first FAIL_FIRST requests are answered 500 with a JSON body (to test the
gateway's retries, and what it keeps of an answer); the rest 204. Stops after 120 s.
"""
import hashlib
import hmac
import http.server
import json
import sys
import threading

secret = sys.argv[1].encode()
fail_first = int(sys.argv[2])
out = sys.argv[3]
count = 0
lock = threading.Lock()


def verifies(header, body):
    fields = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    if "t" not in fields or "v1" not in fields:
        return False
    expected = hmac.new(secret, fields["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, fields["v1"])


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global count
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        signature = self.headers.get("Herald-Signature", "")
        with lock:
            count += 1
            status = 500 if count <= fail_first else 204
        tampered = bytearray(body)
        if tampered:
            tampered[-2] ^= 1
        line = json.dumps({
            "event": json.loads(body or b"null"), "verified": verifies(signature, body),
            "tamperedVerifies": verifies(signature, bytes(tampered)), "status": status,
            "contentType": self.headers.get("Content-Type"),
        })
        with lock, open(out, "a") as handle:
            handle.write(line + "\n")
        answer = b'{"error":"busy <b>try later</b>"}' if status == 500 else b""
        self.send_response(status)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"port {server.server_address[1]}", flush=True)
threading.Timer(120, server.shutdown).start()
server.serve_forever()
