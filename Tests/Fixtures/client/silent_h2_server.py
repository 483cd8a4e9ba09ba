"""An HTTP/2 server (plaintext, prior knowledge) that sends its SETTINGS and then nothing: no
answers, no PING acknowledgements. For the client's health-check tests.

    python3 silent_h2_server.py

Prints "port N" once listening on 127.0.0.1, and "connection" for each client. Stops after 60 s.
"""
import asyncio

import h2.config
import h2.connection

from loopback import serve


async def handle(reader, writer):
    print("connection", flush=True)
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
    connection.initiate_connection()
    writer.write(connection.data_to_send())
    await writer.drain()
    # Read and drop everything from now on.
    try:
        while await reader.read(65536):
            pass
    except ConnectionError:
        pass


serve(handle)
