"""An HTTP/2 server (plaintext, prior knowledge) built on Python's h2, hpack and hyperframe: an
independent peer that checks every frame and header block Herald's client sends, and answers in
the ways the protocol allows that Herald's own mock never uses.

    python3 h2_peer_server.py

Its SETTINGS ask for small windows (300 bytes: a 1 KB body needs several WINDOW_UPDATEs), a
256-byte header table (the client's table must evict in step) and 4 streams. On the first
connection it answers, by the request's number (the last byte of its device token, modulo 5):

    0  200 with the apns-id
    1  an interim 100, then 200
    2  400 {"reason":"BadDeviceToken"} in two DATA frames (one padded), then trailers
    3  200 in a HEADERS frame with padding and priority fields, continued in two CONTINUATIONs
    4  RST_STREAM REFUSED_STREAM the first time (the client sends it again), 200 the next

After its third answer it sends a PING; after its sixth, new SETTINGS (2 streams, 1,000-byte
windows, a 128-byte header table); from its tenth on, as soon as no request below the highest
answered stream is unfinished, GOAWAY with that stream as the last, leaving the requests above it
unanswered. Later connections answer 200 to everything.

Prints "port N" once listening on 127.0.0.1, then one JSON line per event: each request with its
decoded headers and its body's length and SHA-256, "ping-acked", "settings-acked", "connection",
and "error" with the reason if the client broke the protocol. Stops after 120 s.
"""
import asyncio
import hashlib
import json

import h2.config
import h2.connection
import h2.events
import h2.settings
import hyperframe.frame

from loopback import serve

connections = 0
refused = set()


def emit(**fields):
    print(json.dumps(fields), flush=True)


def split_headers(raw):
    """Rewrites the HEADERS frame among `raw` frames as HEADERS (padded, with priority fields)
    plus two CONTINUATION frames carrying the same header block."""
    out = b""
    data = memoryview(raw)
    while data:
        frame, length = hyperframe.frame.Frame.parse_frame_header(data[:9])
        frame.parse_body(data[9:9 + length])
        data = data[9 + length:]
        if isinstance(frame, hyperframe.frame.HeadersFrame):
            block = frame.data
            a, b = max(1, len(block) // 3), max(2, 2 * len(block) // 3)
            first = hyperframe.frame.HeadersFrame(frame.stream_id, block[:a])
            first.flags.add("PADDED")
            first.pad_length = 7
            first.flags.add("PRIORITY")
            first.depends_on, first.stream_weight, first.exclusive = 0, 16, False
            if "END_STREAM" in frame.flags:
                first.flags.add("END_STREAM")
            middle = hyperframe.frame.ContinuationFrame(frame.stream_id, block[a:b])
            last = hyperframe.frame.ContinuationFrame(frame.stream_id, block[b:])
            last.flags.add("END_HEADERS")
            out += first.serialize() + middle.serialize() + last.serialize()
        else:
            out += frame.serialize()
    return out


async def handle(reader, writer):
    global connections
    connections += 1
    scripted = connections == 1
    emit(event="connection", number=connections)
    config = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
    conn = h2.connection.H2Connection(config)
    conn.local_settings = h2.settings.Settings(client=False, initial_values={
        h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 300,
        h2.settings.SettingCodes.HEADER_TABLE_SIZE: 256,
        h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 4,
    })
    conn.initiate_connection()
    writer.write(conn.data_to_send())
    requests = {}
    answered = 0
    last_answered = 0
    going_away = False

    def answer(stream_id, request):
        nonlocal answered, last_answered, going_away
        headers = dict(request["headers"])
        token = headers.get(":path", "").rsplit("/", 1)[-1]
        number = int(token[-2:], 16) if token else 0
        apns_id = headers.get("apns-id", "")
        kind = number % 5 if scripted else 0
        writer.write(conn.data_to_send())
        if kind == 4 and apns_id not in refused:
            refused.add(apns_id)
            conn.reset_stream(stream_id, error_code=7)
            writer.write(conn.data_to_send())
            return
        if kind == 1:
            conn.send_headers(stream_id, [(":status", "100")])
        if kind == 2:
            body = b'{"reason":"BadDeviceToken"}'
            conn.send_headers(stream_id, [(":status", "400"), ("apns-id", apns_id), ("content-type", "application/json")])
            conn.send_data(stream_id, body[:10], pad_length=17)
            conn.send_data(stream_id, body[10:])
            conn.send_headers(stream_id, [("x-trailer", "1")], end_stream=True)
            writer.write(conn.data_to_send())
        elif kind == 3:
            writer.write(conn.data_to_send())
            conn.send_headers(stream_id, [(":status", "200"), ("apns-id", apns_id)], end_stream=True)
            writer.write(split_headers(conn.data_to_send()))
        else:
            conn.send_headers(stream_id, [(":status", "200"), ("apns-id", apns_id)], end_stream=True)
            writer.write(conn.data_to_send())
        answered += 1
        last_answered = max(last_answered, stream_id)
        if not scripted:
            return
        if answered == 3:
            conn.ping(b"herald!!")
        elif answered == 6:
            conn.update_settings({
                h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 2,
                h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1000,
                h2.settings.SettingCodes.HEADER_TABLE_SIZE: 128,
            })
        if answered >= 10 and not going_away and all(pending > last_answered for pending in requests):
            # Every stream up to the last answered one is answered: the rest are not processed.
            conn.close_connection(last_stream_id=last_answered)
            going_away = True
        writer.write(conn.data_to_send())

    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            if going_away:
                continue  # h2 takes no frames after its GOAWAY; the client opens a new connection
            try:
                events = conn.receive_data(data)
            except Exception as error:  # the client broke the protocol
                emit(event="error", reason=f"{type(error).__name__}: {error}")
                writer.write(conn.data_to_send())
                break
            for event in events:
                if going_away:
                    break
                if isinstance(event, h2.events.RequestReceived):
                    requests[event.stream_id] = {"headers": event.headers, "body": b""}
                elif isinstance(event, h2.events.DataReceived):
                    requests[event.stream_id]["body"] += event.data
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    request = requests.pop(event.stream_id)
                    emit(event="request", connection=connections, stream=event.stream_id,
                         headers=[list(pair) for pair in request["headers"]],
                         length=len(request["body"]), sha256=hashlib.sha256(request["body"]).hexdigest())
                    answer(event.stream_id, request)
                elif isinstance(event, h2.events.PingAckReceived):
                    emit(event="ping-acked", data=event.ping_data.decode())
                elif isinstance(event, h2.events.SettingsAcknowledged):
                    emit(event="settings-acked", settings={str(int(k)): v.new_value for k, v in event.changed_settings.items()})
                elif isinstance(event, h2.events.StreamReset):
                    emit(event="reset", stream=event.stream_id, code=int(event.error_code))
                elif isinstance(event, h2.events.ConnectionTerminated):
                    emit(event="goaway-from-client", code=int(event.error_code))
            writer.write(conn.data_to_send())
            await writer.drain()
    except ConnectionError:
        pass
    writer.close()


serve(handle, seconds=120)
