"""Headless Chromium over the DevTools protocol, for the browser tests (needs the `websockets`
package from PyPI):

    async with Browser(chromium) as page:
        await page.call("Page.navigate", url=...)
        value = await page.js("document.title")
        await page.wait_for("!!document.body", "the page", 10)

The page's errors are collected in `page.errors`: uncaught exceptions, console.error calls, and
the browser's own error log (Content-Security-Policy violations, failed loads).
"""
import asyncio, json, re, subprocess, tempfile, threading, time, urllib.request

import websockets


class Browser:
    def __init__(self, chromium, width=1280, height=1000, arguments=(), environment=None):
        self.chromium, self.width, self.height, self.arguments, self.environment = chromium, width, height, list(arguments), environment
        self.errors, self.requests = [], []
        self._counter, self._pending = 0, {}

    async def __aenter__(self):
        profile = tempfile.mkdtemp(prefix="herald-browser-")
        self.process = subprocess.Popen(
            [self.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
             "--remote-debugging-port=0", "--user-data-dir=" + profile, f"--window-size={self.width},{self.height}", *self.arguments, "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=self.environment)
        found = {}

        def read_stderr():  # keeps the pipe drained, and picks out the DevTools port
            for line in self.process.stderr:
                match = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
                if match:
                    found["port"] = int(match.group(1))
        threading.Thread(target=read_stderr, daemon=True).start()
        end = time.time() + 30
        while "port" not in found:
            if time.time() > end or self.process.poll() is not None:
                self.process.kill()
                raise SystemExit("chromium did not start its DevTools endpoint")
            await asyncio.sleep(0.05)
        pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{found['port']}/json/list", timeout=10))
        address = next(page["webSocketDebuggerUrl"] for page in pages if page["type"] == "page")
        self.socket = await websockets.connect(address, max_size=None)
        self.reader = asyncio.create_task(self._read())
        for domain in ("Page", "Runtime", "Log", "Network"):
            await self.call(domain + ".enable")
        return self

    async def __aexit__(self, *exc):
        self.reader.cancel()
        await self.socket.close()
        self.process.kill()
        self.process.wait(timeout=10)

    async def _read(self):
        async for raw in self.socket:
            message = json.loads(raw)
            if "id" in message and message["id"] in self._pending:
                self._pending.pop(message["id"]).set_result(message)
                continue
            method, params = message.get("method"), message.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                self.errors.append("exception: " + (details.get("exception", {}).get("description") or details.get("text", "")))
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                self.errors.append("console.error: " + " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                self.errors.append(f"{params['entry']['source']}: {params['entry']['text']} {params['entry'].get('url', '')}".strip())
            elif method == "Network.requestWillBeSent":
                self.requests.append({"url": params["request"]["url"], "method": params["request"]["method"],
                                      "headers": params["request"].get("headers", {})})

    async def call(self, method, **params):
        self._counter += 1
        ident = self._counter
        future = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        await self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        message = await asyncio.wait_for(future, 60)
        if "error" in message:
            raise SystemExit(f"{method}: {message['error']}")
        return message["result"]

    async def js(self, expression):
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise SystemExit(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def wait_for(self, expression, what, seconds, describe="document.body ? document.body.innerText.slice(0, 400) : ''"):
        end = time.time() + seconds
        while time.time() < end:
            if await self.js(expression):
                return
            await asyncio.sleep(0.05)
        raise SystemExit(f"timed out waiting for {what}; the page says: {await self.js(describe)!r}")

    async def axe(self, source):
        """Runs axe-core's WCAG 2.1 A and AA rules on the page: {violations, passes}."""
        if not await self.js("typeof axe !== 'undefined'"):
            await self.js(source + "; true")
        return json.loads(await self.js(
            "axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})"
            ".then((r) => JSON.stringify({violations: r.violations.map((v) => ({id: v.id, impact: v.impact,"
            " help: v.help, nodes: v.nodes.map((n) => n.target.join(' '))})), passes: r.passes.length}))"))
