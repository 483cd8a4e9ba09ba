"""The start and end shared by the client tests' Python servers."""
import asyncio


def serve(handle, seconds=60):
    """Serves `handle` on 127.0.0.1 at a free port, prints "port N" once listening, and stops
    after `seconds`."""
    async def main():
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        print(f"port {server.sockets[0].getsockname()[1]}", flush=True)
        async with server:
            await asyncio.sleep(seconds)

    asyncio.run(main())
