"""A minimal HTTP CONNECT proxy for the client tests.

    python3 connect_proxy.py [--refuse]

Prints "port N" once listening on 127.0.0.1, then "CONNECT host:port" (and the
Proxy-Authorization header, if any) for each tunnel. With --refuse every CONNECT is answered
407. Stops after 60 seconds.
"""
import asyncio
import sys

from loopback import serve

refuse = "--refuse" in sys.argv


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def handle(reader, writer):
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    auth = [line for line in lines[1:] if line.lower().startswith("proxy-authorization:")]
    print(f"{method} {target}" + (f" {auth[0]}" if auth else ""), flush=True)
    if method != "CONNECT" or refuse:
        writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\n\r\n")
        await writer.drain()
        writer.close()
        return
    host, port = target.rsplit(":", 1)
    upstream_reader, upstream_writer = await asyncio.open_connection(host.strip("[]"), int(port))
    writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
    await writer.drain()
    await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))


serve(handle)
