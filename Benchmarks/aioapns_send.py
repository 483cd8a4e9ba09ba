"""Send COUNT notifications with aioapns (PyPI) to a local APNs server, CONCURRENCY at a time.

    python3 Benchmarks/aioapns_send.py HOST PORT CA_PEM KEY_P8 COUNT CONNECTIONS CONCURRENCY

aioapns only knows Apple's hosts, so its sandbox protocol class is pointed at HOST:PORT, and its
TLS context trusts CA_PEM. Prints "aioapns: N requests in S s, R req/s, E errors".
"""
import asyncio
import logging
import ssl
import sys
import time

from aioapns import APNs, NotificationRequest
from aioapns import connection


async def main():
    logging.getLogger("aioapns").setLevel(logging.ERROR)  # it logs each wait for a free stream
    host, port, ca, key, count, connections, concurrency = sys.argv[1:8]
    count, connections, concurrency = int(count), int(connections), int(concurrency)
    connection.APNsDevelopmentClientProtocol.APNS_SERVER = host
    connection.APNsDevelopmentClientProtocol.APNS_PORT = int(port)
    context = ssl.create_default_context(cafile=ca)
    context.set_alpn_protocols(["h2"])
    client = APNs(key=open(key).read(), key_id="ABC123DEFG", team_id="DEF123GHIJ", topic="com.example.app",
                  use_sandbox=True, ssl_context=context, max_connections=connections)
    body = "x" * 960
    tokens = ["b0" * 28 + format(i, "08x") for i in range(1000)]
    errors = 0
    next_index = 0

    async def worker():
        nonlocal errors, next_index
        while next_index < count:
            index = next_index
            next_index += 1
            request = NotificationRequest(device_token=tokens[index % len(tokens)],
                                          message={"aps": {"alert": {"title": "Benchmark", "body": body}}})
            result = await client.send_notification(request)
            if not result.is_successful:
                errors += 1

    # Warm-up: open the connections.
    await asyncio.gather(*[client.send_notification(NotificationRequest(device_token=tokens[0], message={"aps": {"alert": "warm"}})) for _ in range(connections)])
    start = time.perf_counter()
    await asyncio.gather(*[worker() for _ in range(concurrency)])
    elapsed = time.perf_counter() - start
    print(f"aioapns: {count} requests in {elapsed:.2f} s, {count / elapsed:.0f} req/s, {errors} errors")


asyncio.run(main())
