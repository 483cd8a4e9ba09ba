"""An independent APNs provider for Herald's mock tests: Python's h2 over ssl/socket, with
provider tokens signed by `cryptography`.

Reads a JSON script on stdin and prints a JSON result:

  {"host", "port", "tls": bool, "cafile", "cert", "key",
   "keys": {NAME: {"pem", "kid", "iss"}},
   "steps": [STEP, ...]}

A STEP sends one request on a named connection (opened on first use) and waits for its answer:

  {"connection": "a", "method": "POST", "path": "/3/device/…", "headers": [[name, value], …],
   "body": "text" | "bodyRepeat": [prefix, fill, total, suffix],
   "jwt": {"key": NAME, "age": seconds, "alg": "ES256", "der": false, "kid": …, "iss": …,
           "iatString": false, "flipSignature": false},
   "timeout": 30}   (seconds to wait for the answer: a loaded machine needs room)

or acts on a connection: {"connection": "a", "action": "close" | "sleep", "seconds": …}, or sends
several requests at once: {"connection": "a", "parallel": [STEP, …]}.

Each answer is {"status", "headers": [[k, v]…], "body", "error"} where error is null, "reset:N"
(the stream was reset with code N), "goaway", "closed" or "timeout". Per connection the result
lists the SETTINGS_MAX_CONCURRENT_STREAMS values received and any GOAWAY.
"""
import base64
import json
import socket
import ssl
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


_tokens = {}


def make_jwt(spec, keys):
    """Signs a token, reusing the one made for the same spec (as real providers cache theirs:
    a new token per request would trip TooManyProviderTokenUpdates)."""
    cache_key = json.dumps(spec, sort_keys=True)
    if cache_key not in _tokens or spec.get("fresh"):
        _tokens[cache_key] = sign_jwt(spec, keys)
    return _tokens[cache_key]


def sign_jwt(spec, keys):
    key = keys[spec["key"]]
    private = serialization.load_pem_private_key(key["pem"].encode(), None)
    header = {"alg": spec.get("alg", "ES256"), "kid": spec.get("kid", key["kid"])}
    iat = int(time.time()) - int(spec.get("age", 0))
    claims = {"iss": spec.get("iss", key["iss"]), "iat": str(iat) if spec.get("iatString") else iat}
    signing_input = b64(json.dumps(header, separators=(",", ":")).encode()) + "." + b64(
        json.dumps(claims, separators=(",", ":")).encode())
    if header["alg"] == "none":
        return signing_input + "."
    der = private.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256()))
    if spec.get("der"):
        signature = der
    else:
        r, s = decode_dss_signature(der)
        signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    if spec.get("flipSignature"):
        signature = bytes([signature[0] ^ 1]) + signature[1:]
    return signing_input + "." + b64(signature)


class Connection:
    def __init__(self, script):
        raw = socket.create_connection((script["host"], script["port"]), timeout=10)
        if script.get("tls"):
            context = ssl.create_default_context(cafile=script.get("cafile"))
            context.set_alpn_protocols(["h2"])
            if script.get("cert"):
                context.load_cert_chain(script["cert"], script.get("key"))
            raw = context.wrap_socket(raw, server_hostname=script.get("serverName", "localhost"))
            assert raw.selected_alpn_protocol() == "h2", raw.selected_alpn_protocol()
        self.sock = raw
        self.settings = []
        self.goaway = None
        self.closed = False
        self.answers = {}
        self.h2 = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.h2.initiate_connection()
        self.flush()

    def flush(self):
        data = self.h2.data_to_send()
        if data and not self.closed:
            try:
                self.sock.sendall(data)
            except OSError:
                self.closed = True

    def start(self, step, keys):
        headers = [(":method", step.get("method", "POST")), (":scheme", "https"), (":authority", "localhost"),
                   (":path", step["path"])]
        headers += [tuple(h) for h in step.get("headers", [])]
        if "jwt" in step:
            headers.append(("authorization", "bearer " + make_jwt(step["jwt"], keys)))
        if "bodyRepeat" in step:
            prefix, fill, total, suffix = step["bodyRepeat"]
            body = (prefix + fill * (total - len(prefix.encode()) - len(suffix.encode())) + suffix).encode()
        else:
            body = step.get("body", "").encode()
        stream = self.h2.get_next_available_stream_id()
        self.h2.send_headers(stream, headers, end_stream=not body)
        if body:
            offset = 0
            while offset < len(body):
                window = self.h2.local_flow_control_window(stream)
                size = min(window, self.h2.max_outbound_frame_size, len(body) - offset)
                if size <= 0:
                    self.flush()
                    self.pump(0.5)
                    continue
                end = offset + size >= len(body)
                self.h2.send_data(stream, body[offset:offset + size], end_stream=end)
                offset += size
        self.flush()
        self.answers[stream] = {"status": None, "headers": [], "body": b"", "error": None, "done": False}
        return stream

    def pump(self, timeout):
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return
        except (ConnectionResetError, OSError):
            data = b""
        if not data:
            self.closed = True
            for answer in self.answers.values():
                if not answer["done"]:
                    answer["error"] = answer["error"] or "closed"
                    answer["done"] = True
            return
        try:
            events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError as error:
            self.closed = True
            for answer in self.answers.values():
                if not answer["done"]:
                    answer["error"] = "protocol:" + type(error).__name__
                    answer["done"] = True
            return
        for event in events:
            if isinstance(event, h2.events.ResponseReceived):
                answer = self.answers.get(event.stream_id)
                if answer is not None:
                    answer["headers"] = [[k, v] for k, v in event.headers if k != ":status"]
                    answer["status"] = int(dict(event.headers)[":status"])
            elif isinstance(event, h2.events.DataReceived):
                self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                if event.stream_id in self.answers:
                    self.answers[event.stream_id]["body"] += event.data
            elif isinstance(event, h2.events.StreamEnded):
                if event.stream_id in self.answers:
                    self.answers[event.stream_id]["done"] = True
            elif isinstance(event, h2.events.StreamReset):
                if event.stream_id in self.answers:
                    self.answers[event.stream_id]["error"] = "reset:%d" % int(event.error_code)
                    self.answers[event.stream_id]["done"] = True
            elif isinstance(event, h2.events.RemoteSettingsChanged):
                changed = event.changed_settings.get(h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS)
                if changed is not None:
                    self.settings.append(changed.new_value)
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.goaway = {"lastStreamId": event.last_stream_id, "errorCode": int(event.error_code),
                               "data": (event.additional_data or b"").decode("utf-8", "replace")}
                for stream, answer in self.answers.items():
                    if not answer["done"] and stream > event.last_stream_id:
                        answer["error"] = "goaway"
                        answer["done"] = True
        self.flush()

    def wait(self, streams, timeout):
        deadline = time.time() + timeout
        while any(not self.answers[s]["done"] for s in streams):
            if self.closed:
                break
            left = deadline - time.time()
            if left <= 0:
                for s in streams:
                    if not self.answers[s]["done"]:
                        self.answers[s]["error"] = "timeout"
                        self.answers[s]["done"] = True
                break
            self.pump(min(left, 0.5))
        results = []
        for s in streams:
            answer = self.answers[s]
            if not answer["done"] and self.closed:
                answer["error"] = answer["error"] or "closed"
            results.append({"status": answer["status"], "headers": answer["headers"],
                            "body": answer["body"].decode("utf-8", "replace"), "error": answer["error"], "stream": s})
        return results


def main():
    script = json.load(sys.stdin)
    keys = script.get("keys", {})
    connections = {}
    results = []
    for step in script["steps"]:
        name = step.get("connection", "a")
        if step.get("action") == "sleep":
            time.sleep(step["seconds"])
            continue
        if name not in connections or (step.get("action") != "close" and connections[name].closed and step.get("reconnect")):
            connections[name] = Connection(script)
        connection = connections[name]
        if step.get("action") == "close":
            connection.sock.close()
            connection.closed = True
            continue
        if step.get("action") == "pump":
            connection.pump(step.get("seconds", 0.5))
            continue
        if connection.closed:
            results.append({"status": None, "headers": [], "body": "", "error": "closed"})
            continue
        group = step.get("parallel", [step])
        try:
            streams = [connection.start(item, keys) for item in group]
        except (h2.exceptions.TooManyStreamsError, h2.exceptions.ProtocolError) as error:
            results.append({"status": None, "headers": [], "body": "", "error": "client:" + type(error).__name__})
            continue
        results += connection.wait(streams, step.get("timeout", 30))
    json.dump({"results": results, "connections": {name: {"settings": c.settings, "goaway": c.goaway, "closed": c.closed}
                                                    for name, c in connections.items()}}, sys.stdout)


main()
