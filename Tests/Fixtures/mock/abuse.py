"""Abuse for Herald's mock from raw sockets and Python's h2: each attack on its own connection,
then a normal request on a fresh one to show the server still serves. Prints one JSON object.

    python3 abuse.py PORT JWT TOKEN
"""
import json
import os
import socket
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings

PORT = int(sys.argv[1])
JWT = sys.argv[2]
TOKEN = sys.argv[3]
HEADERS = [(":method", "POST"), (":scheme", "http"), (":authority", "localhost"), (":path", "/3/device/" + TOKEN),
           ("authorization", "bearer " + JWT), ("apns-topic", "com.example.app"), ("apns-push-type", "alert")]
BODY = b'{"aps":{"alert":"hi"}}'


def connect():
    sock = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    return sock, conn


def closed_within(sock, seconds):
    """Reads until the server closes; True if it did within `seconds`."""
    sock.settimeout(0.5)
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            data = sock.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            return True
        if not data:
            return True
    return False


def events_until(sock, conn, predicate, seconds):
    """Feeds received data to h2 until `predicate(events)` or timeout; returns all events."""
    sock.settimeout(0.5)
    seen = []
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            data = sock.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            break
        if not data:
            break
        try:
            seen += conn.receive_data(data)
        except h2.exceptions.ProtocolError:
            break
        out = conn.data_to_send()
        if out:
            try:
                sock.sendall(out)
            except OSError:
                break
        if predicate(seen):
            break
    return seen


def ignore_limit(conn, code, value):
    """Makes the client ignore a limit the server advertised (an attacker would)."""
    conn.remote_settings.update({code: value})
    conn.remote_settings.acknowledge()


def push(sock, conn):
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, HEADERS)
    conn.send_data(stream, BODY, end_stream=True)
    sock.sendall(conn.data_to_send())
    return stream


def healthy():
    sock, conn = connect()
    stream = push(sock, conn)
    # 30 s: a debug build on a busy two-core machine may still be answering the attack's requests.
    seen = events_until(sock, conn, lambda e: any(isinstance(x, h2.events.StreamEnded) and x.stream_id == stream for x in e), 30)
    status = [dict(x.headers).get(":status") for x in seen if isinstance(x, h2.events.ResponseReceived)]
    sock.close()
    return status[:1] == ["200"]


results = {}

# 1. Garbage instead of the connection preface.
sock = socket.create_connection(("127.0.0.1", PORT), timeout=10)
sock.sendall(os.urandom(4096))
results["garbage"] = {"closed": closed_within(sock, 10), "healthyAfter": healthy()}
sock.close()

# 2. A header block over SETTINGS_MAX_HEADER_LIST_SIZE (about 200 KB of headers).
sock, conn = connect()
events_until(sock, conn, lambda e: any(isinstance(x, h2.events.RemoteSettingsChanged) for x in e), 5)
ignore_limit(conn, h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE, 2 ** 24)
stream = conn.get_next_available_stream_id()
try:
    conn.send_headers(stream, HEADERS + [("x-big-%d" % i, "v" * 4000) for i in range(50)], end_stream=True)
    sock.sendall(conn.data_to_send())
    seen = events_until(sock, conn, lambda e: any(isinstance(x, (h2.events.StreamReset, h2.events.ConnectionTerminated, h2.events.ResponseReceived)) for x in e), 10)
    answered_200 = any(isinstance(x, h2.events.ResponseReceived) and dict(x.headers).get(":status") == "200" for x in seen)
    results["oversizedHeaders"] = {"refused": not answered_200, "healthyAfter": healthy()}
except (OSError, h2.exceptions.ProtocolError) as error:
    results["oversizedHeaders"] = {"refused": True, "healthyAfter": healthy(), "note": type(error).__name__}
sock.close()

# 3. A flood of streams: authenticate, then open 3000 streams that never finish.
sock, conn = connect()
first = push(sock, conn)
events_until(sock, conn, lambda e: any(isinstance(x, h2.events.StreamEnded) for x in e), 10)
ignore_limit(conn, h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS, 100000)
for _ in range(3000):
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, HEADERS, end_stream=False)
try:
    sock.sendall(conn.data_to_send())
except OSError:
    pass
seen = events_until(sock, conn, lambda e: sum(isinstance(x, h2.events.StreamReset) for x in e) >= 1900, 10)
refused = sum(isinstance(x, h2.events.StreamReset) for x in seen)
terminated = any(isinstance(x, h2.events.ConnectionTerminated) for x in seen)
results["streamFlood"] = {"refusedStreams": refused, "connectionTerminated": terminated, "healthyAfter": healthy()}
sock.close()

# 4. Rapid reset (CVE-2023-44487): HEADERS then RST_STREAM, 20,000 times.
sock, conn = connect()
push(sock, conn)
events_until(sock, conn, lambda e: any(isinstance(x, h2.events.StreamEnded) for x in e), 10)
ignore_limit(conn, h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS, 100000)
sent = 0
started = time.time()
try:
    for batch in range(200):
        for _ in range(100):
            stream = conn.get_next_available_stream_id()
            conn.send_headers(stream, HEADERS, end_stream=False)
            conn.reset_stream(stream)
            sent += 1
        sock.sendall(conn.data_to_send())
except (OSError, h2.exceptions.ProtocolError):
    pass
seen = events_until(sock, conn, lambda e: any(isinstance(x, h2.events.ConnectionTerminated) for x in e), 5)
goaway = [x for x in seen if isinstance(x, h2.events.ConnectionTerminated)]
results["rapidReset"] = {
    "sent": sent, "goAway": bool(goaway), "errorCode": int(goaway[0].error_code) if goaway else None,
    "closed": closed_within(sock, 5) if not goaway else True, "healthyAfter": healthy(),
}
sock.close()

# 5. A slow reader: requests whose answers (400 PayloadEmpty, with a body) are never read, for
# up to 3 seconds. The client soon has no receive window left, so answers wait in the server;
# it must stop reading (or refuse streams, or close) rather than queue without bound.
sock, conn = connect()
push(sock, conn)
events_until(sock, conn, lambda e: any(isinstance(x, h2.events.StreamEnded) for x in e), 10)
ignore_limit(conn, h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS, 10 ** 6)
sock.setblocking(False)
written = 0
pending = b""
closed = False
limit = 200000
deadline = time.time() + 3
while time.time() < deadline and written < limit:
    if not pending:
        for _ in range(100):
            conn.send_headers(conn.get_next_available_stream_id(), HEADERS, end_stream=True)
            written += 1
        pending = conn.data_to_send()
    try:
        pending = pending[sock.send(pending):]
    except BlockingIOError:
        time.sleep(0.01)
    except OSError:
        closed = True
        break
sock.setblocking(True)
results["slowReader"] = {"requestsWritten": written, "serverStoppedReading": written < limit, "closed": closed, "healthyAfter": healthy()}
sock.close()

# 6. Requests that never finish, each holding a 16 KB body (within flow control): the server
# keeps at most its per-connection budget and resets the rest (ENHANCE_YOUR_CALM).
sock, conn = connect()
push(sock, conn)
events_until(sock, conn, lambda e: any(isinstance(x, h2.events.StreamEnded) for x in e), 10)
ignore_limit(conn, h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS, 10 ** 6)
seen = []


def drain(wait):
    sock.settimeout(wait)
    try:
        data = sock.recv(65536)
    except socket.timeout:
        return True
    except OSError:
        return False
    if not data:
        return False
    try:
        seen.extend(conn.receive_data(data))
    except h2.exceptions.ProtocolError:
        return False
    out = conn.data_to_send()
    if out:
        sock.sendall(out)
    return True


held = 0
alive = True
deadline = time.time() + 20
while alive and held < 300 and time.time() < deadline:
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, HEADERS, end_stream=False)
    sent = 0
    while alive and sent < 16000 and time.time() < deadline:
        window = min(conn.local_flow_control_window(stream), 16000 - sent)
        if window <= 0:
            sock.sendall(conn.data_to_send())
            alive = drain(0.2)
            if stream in [x.stream_id for x in seen if isinstance(x, h2.events.StreamReset)]:
                break
            continue
        conn.send_data(stream, b"x" * window, end_stream=False)
        sent += window
    try:
        sock.sendall(conn.data_to_send())
    except OSError:
        alive = False
    alive = alive and drain(0.001)
    held += 1
for _ in range(5):
    if not alive or not drain(0.2):
        break
calm = sum(isinstance(x, h2.events.StreamReset) and int(x.error_code) == 11 for x in seen)
results["unfinishedBodies"] = {"sent": held, "resetEnhanceYourCalm": calm,
                               "connectionTerminated": any(isinstance(x, h2.events.ConnectionTerminated) for x in seen) or not alive,
                               "healthyAfter": healthy()}
sock.close()


def goaway_code(seconds):
    """Reads raw frames (the attacks bypass h2's state) until the server's GOAWAY; its error
    code, or None."""
    sock.settimeout(0.2)
    data, deadline = b"", time.time() + seconds
    while time.time() < deadline:
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            break
        if not chunk:
            break
        data += chunk
        while len(data) >= 9 and len(data) >= 9 + int.from_bytes(data[:3], "big"):
            length, kind = int.from_bytes(data[:3], "big"), data[3]
            if kind == 7:
                return int.from_bytes(data[13:17], "big")
            data = data[9 + length:]
    return None


# 7. Floods of frames that cost the server an answer or a look: 1,000 PINGs, 1,000 SETTINGS,
# and a header block of 20 CONTINUATION frames. Each ends its connection with ENHANCE_YOUR_CALM.
for name, flood in [("pingFlood", b"".join(bytes([0, 0, 8, 6, 0, 0, 0, 0, 0]) + i.to_bytes(8, "big") for i in range(1000))),
                    ("settingsFlood", bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]) * 1000),
                    ("continuationFlood", bytes([0, 0, 1, 1, 0, 0, 0, 0, 1, 0x83]) + bytes([0, 0, 0, 9, 0, 0, 0, 0, 1]) * 20)]:
    sock, conn = connect()
    events_until(sock, conn, lambda e: any(isinstance(x, h2.events.RemoteSettingsChanged) for x in e), 5)
    try:
        sock.sendall(flood)
    except OSError:
        pass
    # The raw frames bypass h2's state, which may object to the answers: a GOAWAY or a close.
    code = goaway_code(10)
    results[name] = {"goAwayCode": code, "closed": code is not None or closed_within(sock, 5), "healthyAfter": healthy()}
    sock.close()

# 8. An HPACK bomb: a 4,000-byte entry put in the table, then a block of a few bytes naming it
# ten times (40 KB decoded, over SETTINGS_MAX_HEADER_LIST_SIZE).
sock, conn = connect()
events_until(sock, conn, lambda e: any(isinstance(x, h2.events.RemoteSettingsChanged) for x in e), 5)
request = bytes([0x83, 0x86, 0x04, 0x0B]) + b"/3/device/x"
entry = bytes([0x40, 0x05]) + b"x-big" + bytes([0x7F, 0xA1, 0x1E]) + b"a" * 4000
first = request + entry
sock.sendall(len(first).to_bytes(3, "big") + bytes([1, 5, 0, 0, 0, 1]) + first)
bomb = request + bytes([0xBE]) * 10
sock.sendall(len(bomb).to_bytes(3, "big") + bytes([1, 5, 0, 0, 0, 3]) + bomb)
code = goaway_code(10)
results["hpackBomb"] = {"goAwayCode": code, "bombBytes": len(bomb), "healthyAfter": healthy()}
sock.close()

# 9. A client that opens no window for answers (SETTINGS_INITIAL_WINDOW_SIZE 0): answers with a
# body (400 PayloadEmpty) wait in the server, headers only, until a WINDOW_UPDATE.
sock = socket.create_connection(("127.0.0.1", PORT), timeout=10)
conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
conn.local_settings = h2.settings.Settings(client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
conn.initiate_connection()
sock.sendall(conn.data_to_send())
events_until(sock, conn, lambda e: any(isinstance(x, h2.events.RemoteSettingsChanged) for x in e), 5)
stream = conn.get_next_available_stream_id()
conn.send_headers(stream, HEADERS, end_stream=True)
sock.sendall(conn.data_to_send())
seen = events_until(sock, conn, lambda e: any(isinstance(x, h2.events.ResponseReceived) for x in e), 10)
headers_only = any(isinstance(x, h2.events.ResponseReceived) for x in seen) and not any(isinstance(x, h2.events.DataReceived) for x in seen)
more = events_until(sock, conn, lambda e: False, 1)
still_held = not any(isinstance(x, h2.events.DataReceived) for x in more)
conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 65535})
sock.sendall(conn.data_to_send())
later = events_until(sock, conn, lambda e: any(isinstance(x, h2.events.StreamEnded) for x in e), 10)
body = b"".join(x.data for x in later if isinstance(x, h2.events.DataReceived))
results["zeroWindow"] = {"headersOnly": headers_only, "heldWhileClosed": still_held, "bodyAfterWindow": body.decode(errors="replace"),
                         "healthyAfter": healthy()}
sock.close()

print(json.dumps(results))
