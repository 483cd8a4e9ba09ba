"""Writes seed inputs for the FuzzHTTP2Client fuzzer (Tests/Fixtures/fuzz/FuzzHTTP2Client/):
server frames made with Python's hyperframe and hpack, so the fuzzer starts from well-formed
conversations. Each file is: a mode byte (which SETTINGS the fuzzed server sends first), a split
byte (where the rest is cut into two reads), then the server's frames. See HTTP2SessionChecks.

And for FuzzHTTP2Server (Tests/Fixtures/fuzz/FuzzHTTP2Server/): a mode byte (the server's
stream limit and whether it answers with a body), a split byte, then a client's frames after
its preface. See HTTP2ServerSessionChecks.

    python3 Scripts/generate-http2-fuzz-seeds.py
"""
import os

import hpack
from hyperframe.frame import (ContinuationFrame, DataFrame, GoAwayFrame, HeadersFrame, PingFrame,
                              RstStreamFrame, SettingsFrame, WindowUpdateFrame)

out = os.path.join(os.path.dirname(__file__), "..", "Tests", "Fixtures", "fuzz", "FuzzHTTP2Client")
encoder = hpack.Encoder()


def headers(stream, fields, end=True, split=False, pad=None, priority=False):
    block = encoder.encode(fields)
    if not split:
        frame = HeadersFrame(stream, block)
        frame.flags.add("END_HEADERS")
        if end:
            frame.flags.add("END_STREAM")
        if pad is not None:
            frame.flags.add("PADDED")
            frame.pad_length = pad
        if priority:
            frame.flags.add("PRIORITY")
            frame.depends_on, frame.stream_weight = 0, 16
        return frame.serialize()
    half = len(block) // 2
    first = HeadersFrame(stream, block[:half])
    if end:
        first.flags.add("END_STREAM")
    last = ContinuationFrame(stream, block[half:])
    last.flags.add("END_HEADERS")
    return first.serialize() + last.serialize()


def data(stream, body, end=True, pad=None):
    frame = DataFrame(stream, body)
    if end:
        frame.flags.add("END_STREAM")
    if pad is not None:
        frame.flags.add("PADDED")
        frame.pad_length = pad
    return frame.serialize()


def window(stream, increment):
    return WindowUpdateFrame(stream, increment).serialize()


ok = [(":status", "200"), ("apns-id", "123e4567-e89b-12d3-a456-4266554400a0")]
bad = [(":status", "400"), ("content-type", "application/json")]
# Each seed is a new connection: its header blocks start from an empty table.
seeds = {
    "answers": lambda: (0, 40, headers(1, ok) + headers(3, bad, end=False) + data(3, b'{"reason":"BadDeviceToken"}')
                + headers(5, ok, split=True) + headers(7, ok, pad=4, priority=True)),
    "windows": lambda: (0x07, 20, window(0, 5000) + window(1, 1000) + window(3, 2000)
                + SettingsFrame(0, {SettingsFrame.INITIAL_WINDOW_SIZE: 3000}).serialize()
                + headers(1, ok) + window(5, 100) + headers(3, bad, end=False) + data(3, b'{"reason"', end=False, pad=3)
                + data(3, b':"Unregistered","timestamp":1700000000000}')),
    "goaway": lambda: (0x04, 10, PingFrame(0, b"12345678").serialize() + headers(1, ok)
               + RstStreamFrame(3, 7).serialize() + GoAwayFrame(0, 5, 0, b'{"reason":"Shutdown"}').serialize()
               + headers(5, ok) + headers(7, ok)),
    "settings": lambda: (0x02, 3, SettingsFrame(0, {SettingsFrame.HEADER_TABLE_SIZE: 0, SettingsFrame.MAX_CONCURRENT_STREAMS: 1}).serialize()
                 + SettingsFrame(0, flags=["ACK"]).serialize() + headers(1, [(":status", "100")], end=False)
                 + headers(1, ok, end=False) + data(1, b"", end=False) + headers(1, [("x-trailer", "1")])),
}
request = [(":method", "POST"), (":scheme", "https"), (":path", "/3/device/740f4707"), (":authority", "api.push.apple.com"),
           ("authorization", "bearer eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyM0RFRkcifQ.e30.c2ln"), ("apns-topic", "com.example.app")]
body = b'{"aps":{"alert":"Hello"}}'
server_seeds = {
    "requests": lambda: (0x07, 30, headers(1, request, end=False) + data(1, body) + headers(3, request, end=False, split=True)
                  + data(3, body[:5], end=False, pad=2) + data(3, body[5:]) + headers(5, request, pad=3, priority=True)),
    "windows": lambda: (0x0F, 12, SettingsFrame(0, {SettingsFrame.INITIAL_WINDOW_SIZE: 100}).serialize()
                 + headers(1, request) + window(1, 5000) + window(0, 30000) + headers(3, request) + window(3, 20000)),
    "resets": lambda: (0x01, 8, headers(1, request, end=False) + RstStreamFrame(1, 8).serialize() + headers(3, request)
                + headers(5, request) + PingFrame(0, b"abcdefgh").serialize() + GoAwayFrame(0, 0, 0).serialize()),
    "trailers": lambda: (0x03, 50, headers(1, request + [("content-length", str(len(body)))], end=False) + data(1, body, end=False)
                  + headers(1, [("x-checksum", "abc")]) + SettingsFrame(0, {SettingsFrame.HEADER_TABLE_SIZE: 0}).serialize()
                  + SettingsFrame(0, flags=["ACK"]).serialize() + headers(3, request)),
}
written = 0
for directory, table in [(out, seeds), (os.path.join(os.path.dirname(out), "FuzzHTTP2Server"), server_seeds)]:
    os.makedirs(directory, exist_ok=True)
    for name, make in table.items():
        encoder = hpack.Encoder()
        mode, split, frames = make()
        with open(os.path.join(directory, f"seed-{name}"), "wb") as file:
            file.write(bytes([mode, split]) + frames)
        written += 1
print(f"wrote {written} seeds to {os.path.normpath(out)} and FuzzHTTP2Server")
