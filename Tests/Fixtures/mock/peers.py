"""Real APNs clients, and strict HTTP/2 peers, against a Herald mock: each sends COUNT pushes to
distinct device tokens and prints, as JSON, what it believes happened to each, so the test can
hold the mock's records against it.

    python3 peers.py MODE HOST PORT COUNT [CA_PEM KEY_P8 KEY_ID TEAM_ID]

MODE:
  aioapns         aioapns (PyPI), as an app server uses it: TLS, its own connection pool.
  apns2           apns2-up (PyPI, the maintained fork of PyAPNs2) on hyper-up: TLS, a batch.
  reset-answered  python-h2 over plaintext HTTP/2, resetting (CANCEL) each stream once it is
                  answered, as AsyncHTTPClient does for a body it does not read.
  strict          python-h2 over plaintext HTTP/2, as strict as python-h2 is: any h2 exception
                  is an error; at a GOAWAY, streams above its last-stream-id are sent again on a
                  new connection, those below must already be answered.
  rapid-reset     python-h2 over plaintext HTTP/2: one push answered, then COUNT pushes each
                  reset (CANCEL) as soon as sent (CVE-2023-44487's pattern). Prints the GOAWAY's
                  code and last-stream-id in "goaway".

Output: {"client": ..., "accepted": [token...], "rejected": [[token, status, reason]...],
         "errors": [text...], "resent": n, "goaways": n}
Only the mock's provider CA and key are read; nothing leaves loopback.
"""
import asyncio
import json
import socket
import ssl
import sys
import time
import uuid

import jwt  # PyJWT, as both clients use


def tokens(count, salt):
    return [salt + format(i, "062x") for i in range(count)]


def sign(key_path, key_id, team_id, fractional):
    claims = {"iss": team_id, "iat": time.time() if fractional else int(time.time())}
    return jwt.encode(claims, open(key_path).read(), algorithm="ES256", headers={"kid": key_id})


def result(client, accepted, rejected, errors, resent=0, goaways=0):
    print(json.dumps({"client": client, "accepted": accepted, "rejected": rejected, "errors": errors,
                      "resent": resent, "goaways": goaways}))


# --- aioapns -----------------------------------------------------------------------------------

def run_aioapns(host, port, count, ca, key, key_id, team_id):
    from aioapns import APNs, NotificationRequest
    from aioapns import connection

    connection.APNsDevelopmentClientProtocol.APNS_SERVER = host
    connection.APNsDevelopmentClientProtocol.APNS_PORT = port

    async def main():
        context = ssl.create_default_context(cafile=ca)
        context.set_alpn_protocols(["h2"])
        client = APNs(key=open(key).read(), key_id=key_id, team_id=team_id, topic="com.example.app",
                      use_sandbox=True, ssl_context=context, max_connections=2)
        accepted, rejected, errors = [], [], []

        async def one(token):
            request = NotificationRequest(device_token=token, message={"aps": {"alert": "aioapns"}},
                                          notification_id=str(uuid.uuid4()))
            try:
                response = await asyncio.wait_for(client.send_notification(request), timeout=60)
            except Exception as error:  # noqa: BLE001 - every failure is reported
                errors.append(f"{token[:8]}: {type(error).__name__}: {error}")
                return
            if response.is_successful:
                accepted.append(token)
            else:
                rejected.append([token, int(response.status), response.description])

        sem = asyncio.Semaphore(200)

        async def bounded(token):
            async with sem:
                await one(token)

        await asyncio.gather(*[bounded(token) for token in tokens(count, "a1")])
        result("aioapns", accepted, rejected, errors)

    asyncio.run(main())


# --- apns2-up ----------------------------------------------------------------------------------

def run_apns2(host, port, count, ca, key, key_id, team_id):
    import hyper.tls
    from apns2.client import APNsClient, Notification
    from apns2.credentials import TokenCredentials
    from apns2.payload import Payload

    class LocalCredentials(TokenCredentials):
        """Trusts the mock's CA (TokenCredentials itself takes no TLS context)."""

        def create_connection(self, server, port_, proto, proxy_host=None, proxy_port=None):
            from hyper import HTTP20Connection
            context = hyper.tls.init_context(cert_path=ca)
            return HTTP20Connection(server, port_, ssl_context=context, force_proto=proto or "h2", secure=True)

    class LocalClient(APNsClient):
        def _init_connection(self, use_sandbox, use_alternative_port, proto, proxy_host, proxy_port):
            self._connection = self._APNsClient__credentials.create_connection(host, port, proto)

    client = LocalClient(LocalCredentials(key, key_id, team_id), use_sandbox=True)
    batch = [Notification(token=token, payload=Payload(alert="apns2-up")) for token in tokens(count, "a2")]
    accepted, rejected, errors = [], [], []
    try:
        results = client.send_notification_batch(batch, topic="com.example.app")
    except Exception as error:  # noqa: BLE001
        result("apns2-up", [], [], [f"{type(error).__name__}: {error}"])
        return
    for token, outcome in results.items():
        if outcome == "Success":
            accepted.append(token)
        else:
            reason = outcome[0] if isinstance(outcome, tuple) else outcome
            rejected.append([token, 0, str(reason)])
    result("apns2-up", accepted, rejected, errors)


# --- python-h2, strict -------------------------------------------------------------------------

class Connection:
    def __init__(self, host, port):
        import h2.config
        import h2.connection
        self.socket = socket.create_connection((host, port), timeout=30)
        self.h2 = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.h2.initiate_connection()
        self.flush()

    def flush(self):
        data = self.h2.data_to_send()
        if data:
            self.socket.sendall(data)

    def close(self):
        try:
            self.socket.close()
        except OSError:
            pass


def raw_reset(connection, stream, code):
    """RST_STREAM written by hand: python-h2 will not reset a stream it considers closed, which
    is what AsyncHTTPClient does for a body it does not read."""
    frame = (4).to_bytes(3, "big") + bytes([3, 0]) + stream.to_bytes(4, "big") + code.to_bytes(4, "big")
    connection.socket.sendall(frame)


def run_rapid_reset(host, port, count, key, key_id, team_id):
    import h2.events

    bearer = "bearer " + sign(key, key_id, team_id, fractional=False)
    connection = Connection(host, port)
    goaway = None
    answered = 0

    def request(stream, token):
        connection.h2.send_headers(stream, [
            (":method", "POST"), (":scheme", "http"), (":authority", host), (":path", "/3/device/" + token),
            ("authorization", bearer), ("apns-topic", "com.example.app"), ("apns-push-type", "alert"),
        ])
        connection.h2.send_data(stream, b'{"aps":{"alert":"flood"}}', end_stream=True)

    def read_until(condition, seconds):
        nonlocal goaway, answered
        end = time.time() + seconds
        connection.socket.settimeout(0.5)
        while time.time() < end and not condition():
            try:
                data = connection.socket.recv(65536)
            except socket.timeout:
                continue
            if not data:
                return
            for event in connection.h2.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    answered += 1
                elif isinstance(event, h2.events.ConnectionTerminated):
                    goaway = {"code": int(event.error_code), "lastStreamId": event.last_stream_id}
            connection.flush()

    request(connection.h2.get_next_available_stream_id(), "a5" + "0" * 62)
    connection.flush()
    read_until(lambda: answered >= 1, 10)
    for index in range(count):
        stream = connection.h2.get_next_available_stream_id()
        request(stream, "a5" + format(index + 1, "062x"))
        connection.h2.reset_stream(stream, error_code=8)
        connection.flush()
        if index % 50 == 0:
            read_until(lambda: goaway is not None, 0.01)
        if goaway is not None:
            break
    read_until(lambda: goaway is not None, 20)
    connection.close()
    print(json.dumps({"client": "python-h2 rapid-reset", "answered": answered, "goaway": goaway}))


def run_h2(mode, host, port, count, key, key_id, team_id):
    import h2.events
    import h2.exceptions
    import h2.settings

    bearer = "bearer " + sign(key, key_id, team_id, fractional=False)
    pending = list(tokens(count, "a3" if mode == "strict" else "a4"))
    accepted, rejected, errors = [], [], []
    resent = goaways = 0
    deadline = time.time() + 120
    while pending and time.time() < deadline:
        connection = Connection(host, port)
        streams = {}  # stream id -> token
        answers = {}  # stream id -> status
        limit = 1  # one stream until the first token is accepted, as APNs does
        gone_away_at = None
        closed = False
        try:
            while (pending or streams) and not closed:
                while pending and len(streams) < limit and gone_away_at is None:
                    token = pending.pop(0)
                    stream = connection.h2.get_next_available_stream_id()
                    body = json.dumps({"aps": {"alert": mode}}).encode()
                    connection.h2.send_headers(stream, [
                        (":method", "POST"), (":scheme", "http"), (":authority", host), (":path", "/3/device/" + token),
                        ("authorization", bearer), ("apns-topic", "com.example.app"), ("apns-push-type", "alert"),
                        ("apns-id", str(uuid.uuid4())),
                    ])
                    connection.h2.send_data(stream, body, end_stream=True)
                    streams[stream] = token
                connection.flush()
                if not streams:
                    break
                data = connection.socket.recv(65536)
                if not data:
                    closed = True
                    break
                # python-h2 raises here on what it finds wrong (a frame for a stream it closed, a
                # reset after a GOAWAY): the strict peer's complaint, recorded as an error.
                for event in connection.h2.receive_data(data):
                    if isinstance(event, h2.events.RemoteSettingsChanged):
                        setting = event.changed_settings.get(h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS)
                        if setting is not None:
                            limit = min(setting.new_value, 100)
                    elif isinstance(event, h2.events.ResponseReceived):
                        answers[event.stream_id] = int(dict(event.headers).get(":status", "0"))
                        if event.stream_ended:
                            finish(event.stream_id, streams, answers, accepted, rejected, connection, mode)
                    elif isinstance(event, h2.events.StreamEnded):
                        finish(event.stream_id, streams, answers, accepted, rejected, connection, mode)
                    elif isinstance(event, h2.events.StreamReset):
                        token = streams.pop(event.stream_id, None)
                        if token is not None:
                            if event.error_code == 7:  # REFUSED_STREAM: not processed, send again
                                pending.append(token)
                                resent += 1
                            else:
                                errors.append(f"stream {event.stream_id} reset with {event.error_code}")
                    elif isinstance(event, h2.events.ConnectionTerminated):
                        goaways += 1
                        gone_away_at = event.last_stream_id
                        for stream in sorted(streams):
                            if stream > event.last_stream_id:
                                # Not processed, as the GOAWAY says: safe to send again.
                                pending.append(streams.pop(stream))
                                resent += 1
                            else:
                                # The GOAWAY must follow the answers to every stream it covers.
                                errors.append(f"stream {stream} (<= last-stream-id {event.last_stream_id}) had no answer before the GOAWAY")
                                streams.pop(stream)
                        closed = True
                connection.flush()
        except h2.exceptions.H2Error as error:
            errors.append(f"python-h2 raised {type(error).__name__}: {error}")
            for stream, token in streams.items():
                errors.append(f"stream {stream}: lost when python-h2 raised")
        except OSError as error:
            for stream, token in streams.items():
                errors.append(f"stream {stream}: connection error {error}")
        finally:
            connection.close()
    if pending:
        errors.append(f"{len(pending)} never sent before the deadline")
    result("python-h2 " + mode, accepted, rejected, errors, resent, goaways)


def finish(stream, streams, answers, accepted, rejected, connection, mode):
    token = streams.pop(stream, None)
    if token is None:
        return
    status = answers.pop(stream, 0)
    if status == 200:
        accepted.append(token)
    else:
        rejected.append([token, status, ""])
    if mode == "reset-answered":
        # What AsyncHTTPClient does with a response body it does not read: CANCEL on a stream
        # that is already over.
        connection.flush()
        raw_reset(connection, stream, 8)


def main():
    mode, host, port, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    ca, key, key_id, team_id = (sys.argv[5:9] + [None] * 4)[:4]
    if mode == "aioapns":
        run_aioapns(host, port, count, ca, key, key_id, team_id)
    elif mode == "apns2":
        run_apns2(host, port, count, ca, key, key_id, team_id)
    elif mode in ("reset-answered", "strict"):
        run_h2(mode, host, port, count, key, key_id, team_id)
    elif mode == "rapid-reset":
        run_rapid_reset(host, port, count, key, key_id, team_id)
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
