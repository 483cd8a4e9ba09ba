"""Slow clients for Herald's mock, from raw sockets and Python's h2: each on its own connection,
timed against the mock's slow-client deadlines (set short by the test). Prints one JSON object.

    python3 slow_clients.py PORT JWT TOKEN

  slowPreface   the connection preface a byte every 0.2 s: when the mock closed the connection
  slowBody      a request's body a byte every 0.2 s: when its GOAWAY came, with which code
  slowFrame     a PING's payload a byte every 0.4 s: when the GOAWAY came
  stuckHeaders  HEADERS without END_HEADERS and nothing after: when the GOAWAY came
  slowButDone   a body sent in pieces over 0.6 s: its status, and whether the connection was
                still open and served a second request 2 s later
"""
import json
import socket
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions

PORT = int(sys.argv[1])
JWT = sys.argv[2]
TOKEN = sys.argv[3]
HEADERS = [(":method", "POST"), (":scheme", "http"), (":authority", "localhost"), (":path", "/3/device/" + TOKEN),
           ("authorization", "bearer " + JWT), ("apns-topic", "com.example.app"), ("apns-push-type", "alert")]
BODY = b'{"aps":{"alert":"slow"}}'
LIMIT = 8.0


def connect():
    sock = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    return sock, conn


def pump(sock, conn, seconds):
    """Reads for up to `seconds`; returns (events, closed)."""
    sock.settimeout(0.05)
    events, deadline = [], time.time() + seconds
    while time.time() < deadline:
        try:
            data = sock.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            return events, True
        if not data:
            return events, True
        try:
            events += conn.receive_data(data)
        except h2.exceptions.ProtocolError:
            return events, True
        out = conn.data_to_send()
        if out:
            try:
                sock.sendall(out)
            except OSError:
                return events, True
    return events, False


def ready(sock, conn):
    """Reads until the server's SETTINGS have come and been acknowledged, and ours too: after
    that h2 sends nothing of its own, so raw bytes written next are not interleaved. Returns
    whether they did (not if the connection closed first)."""
    seen = []
    deadline = time.time() + 20
    while time.time() < deadline:
        events, closed = pump(sock, conn, 0.1)
        seen += events
        if closed:
            return False
        if (any(isinstance(e, h2.events.RemoteSettingsChanged) for e in seen)
                and any(isinstance(e, h2.events.SettingsAcknowledged) for e in seen)):
            return True
    return False


def ready_connection():
    """A connection past its preface and SETTINGS, for the scenarios that time what comes after.
    A client stalled past the preface deadline while setting up (a loaded machine) finds the
    connection closed: that is the preface deadline working, which scenario 1 times, so it
    connects again, at most three times in all."""
    for attempt in range(3):
        try:
            sock, conn = connect()
        except OSError:
            continue
        if ready(sock, conn):
            return sock, conn
        sock.close()
    raise SystemExit("no connection got past its preface and SETTINGS in three attempts")


def goaway(events):
    for event in events:
        if isinstance(event, h2.events.ConnectionTerminated):
            return event
    return None


def drip(sock, conn, started, send, interval):
    """Calls send() every `interval` seconds until a GOAWAY or the connection's end."""
    while time.time() - started < LIMIT:
        try:
            send()
        except OSError:
            return {"closedAfter": round(time.time() - started, 2)}
        events, closed = pump(sock, conn, interval)
        terminated = goaway(events)
        if terminated:
            return {"goAwayAfter": round(time.time() - started, 2), "code": int(terminated.error_code),
                    "lastStreamId": terminated.last_stream_id}
        if closed:
            return {"closedAfter": round(time.time() - started, 2)}
    return {"still open": True}


results = {}

# 1. The preface, a byte every 0.2 s.
sock = socket.create_connection(("127.0.0.1", PORT), timeout=10)
sock.settimeout(0.2)
preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
started, closed_after, index = time.time(), None, 0
while time.time() - started < LIMIT and closed_after is None:
    try:
        if index < len(preface):
            sock.send(preface[index:index + 1])
            index += 1
        data = sock.recv(65536)
        if not data:
            closed_after = time.time() - started
    except socket.timeout:
        pass
    except OSError:
        closed_after = time.time() - started
results["slowPreface"] = {"closedAfter": None if closed_after is None else round(closed_after, 2), "prefaceBytesSent": index}
sock.close()

# 2. A body a byte every 0.2 s.
sock, conn = ready_connection()
stream = conn.get_next_available_stream_id()
conn.send_headers(stream, HEADERS)
sock.sendall(conn.data_to_send())
started = time.time()


def one_byte():
    conn.send_data(stream, b" ")
    sock.sendall(conn.data_to_send())


results["slowBody"] = drip(sock, conn, started, one_byte, 0.2)
sock.close()

# 3. A PING's payload a byte every 0.4 s.
sock, conn = ready_connection()
frame = bytes([0, 0, 8, 6, 0, 0, 0, 0, 0])
sock.sendall(frame)
started, sent = time.time(), [0]


def ping_byte():
    if sent[0] < 7:  # never the eighth
        sock.sendall(b"\x01")
        sent[0] += 1


results["slowFrame"] = drip(sock, conn, started, ping_byte, 0.4)
sock.close()

# 4. HEADERS without END_HEADERS, then silence.
sock, conn = ready_connection()
sock.sendall(bytes([0, 0, 1, 1, 0, 0, 0, 0, 1, 0x83]))
started = time.time()
results["stuckHeaders"] = drip(sock, conn, started, lambda: None, 0.2)
sock.close()

# 5. A slow body that finishes in time, then a second request on the same connection.
sock, conn = ready_connection()
stream = conn.get_next_available_stream_id()
conn.send_headers(stream, HEADERS)
sock.sendall(conn.data_to_send())
for index, piece in enumerate([BODY[:8], BODY[8:16], BODY[16:]]):
    time.sleep(0.2)
    conn.send_data(stream, piece, end_stream=index == 2)
    sock.sendall(conn.data_to_send())
events, closed = pump(sock, conn, 2.0)
status = [dict(e.headers).get(":status") for e in events if isinstance(e, h2.events.ResponseReceived)]
events2, closed2 = pump(sock, conn, 2.0)
second = None
if not closed and not closed2 and not goaway(events + events2):
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, HEADERS)
    conn.send_data(stream, BODY, end_stream=True)
    sock.sendall(conn.data_to_send())
    events3, _ = pump(sock, conn, 3.0)
    second = [dict(e.headers).get(":status") for e in events3 if isinstance(e, h2.events.ResponseReceived)]
results["slowButDone"] = {"status": status, "goAway": goaway(events + events2) is not None, "closed": closed or closed2,
                          "second": second}
sock.close()

print(json.dumps(results))
