"""A TCP proxy that can cut its connections off as a dropped route does: no bytes either way,
sockets left open, no reset.

    python3 freeze_proxy.py TARGET_HOST TARGET_PORT

Prints "port N" once listening on 127.0.0.1 and forwards every connection to the target. A line
"arm" on standard input arms it: the next chunk a client sends that holds b"claimed_by = $" and
not b"SKIP LOCKED" (a statement writing rows its process holds, inside a transaction: an outcome,
a lease renewal, a give-back; not a claim) is forwarded, and then every connection, open or new,
goes silent; it prints "frozen". A line "arm one" does the same to that one connection only (a
connection that hangs while the others, and new ones, go on). Stops after 300 s, or when
standard input closes.
"""
import asyncio
import sys

target_host, target_port = sys.argv[1], int(sys.argv[2])
armed = None  # None, "all" or "one"
frozen = asyncio.Event()


async def pipe(reader, writer, from_client, connection):
    global armed
    try:
        while not (frozen.is_set() or connection.is_set()):
            data = await reader.read(65536)
            if not data:
                break
            if frozen.is_set() or connection.is_set():
                break
            writer.write(data)
            await writer.drain()
            if from_client and armed and b"claimed_by = $" in data and b"SKIP LOCKED" not in data:
                (frozen if armed == "all" else connection).set()
                armed = None
                print("frozen", flush=True)
    except (ConnectionError, OSError):
        pass
    if frozen.is_set() or connection.is_set():
        # Silent for ever: nothing read, nothing written, nothing closed.
        await asyncio.Event().wait()
    writer.close()


async def handle(client_reader, client_writer):
    if frozen.is_set():
        await asyncio.Event().wait()
    try:
        server_reader, server_writer = await asyncio.open_connection(target_host, target_port)
    except OSError:
        client_writer.close()
        return
    connection = asyncio.Event()
    await asyncio.gather(pipe(client_reader, server_writer, True, connection), pipe(server_reader, client_writer, False, connection))


async def commands():
    global armed
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            return
        if line.strip() in ("arm", "arm one"):
            armed = "one" if line.strip() == "arm one" else "all"
            print("armed", flush=True)


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print("port", server.sockets[0].getsockname()[1], flush=True)
    stdin_closed = asyncio.ensure_future(commands())
    await asyncio.wait([stdin_closed, asyncio.ensure_future(asyncio.sleep(300))], return_when=asyncio.FIRST_COMPLETED)


asyncio.run(main())
