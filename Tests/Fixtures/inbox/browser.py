"""Drives headless Chromium over the DevTools protocol against the mock's web inbox.

    browser.py CHROMIUM URL READY_FILE EXPECTED OUT_DIR [OPTIONS_JSON]

Opens URL, waits until the page's event stream is open, writes READY_FILE (the test then sends
EXPECTED notifications; with 0, what the page loaded is the subject), waits until they have
arrived through the live stream, and writes
OUT_DIR/list.html (the whole page), OUT_DIR/detail.html (the detail view of the newest request)
and OUT_DIR/devices.png (a screenshot of the device view). OPTIONS_JSON may ask for more:

    "language": "fr", "languageText": "…"   choose fr for the first device, wait for the text,
                                             write devices-language.html
    "resend": true                           open the first accepted request, press Resend,
                                             wait for one more request, write resend.txt
    "releaseToken": "hex"                    then release it to that token, write release.txt
    "axe": "/path/axe.min.js"                run axe-core (WCAG 2 A and AA rules), write axe.json
    "narrow": true                           a 400-pixel-wide window: write narrow.json (whether
                                             anything is wider than the window) and narrow.png
    "dark": true                             dark appearance: write devices-dark.png and
                                             dark-controls.json (every form control's colours)
    "address": true                          write address.txt (the address after opening the
                                             newest request), then open the oldest request's
                                             address in a new load: write addressed.txt (the
                                             record its detail shows)

Exits non-zero with a message on any timeout. Needs the `websockets` package (PyPI).
"""
import asyncio, base64, json, os, re, subprocess, sys, tempfile, threading, time, urllib.request

import websockets


async def main():
    chromium, url, ready, expected, out = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    options = json.loads(sys.argv[6]) if len(sys.argv) > 6 else {}
    profile = tempfile.mkdtemp(prefix="herald-inbox-")
    browser = subprocess.Popen(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
         "--remote-debugging-port=0", "--user-data-dir=" + profile, "--window-size=1280,1600", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    found = {}
    def read_stderr():  # keeps the pipe drained, and picks out the DevTools port
        for line in browser.stderr:
            match = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if match:
                found["port"] = int(match.group(1))
    threading.Thread(target=read_stderr, daemon=True).start()
    try:
        end = time.time() + 30
        while "port" not in found:
            if time.time() > end or browser.poll() is not None:
                raise SystemExit("chromium did not start its DevTools endpoint")
            await asyncio.sleep(0.05)
        pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{found['port']}/json/list", timeout=10))
        address = next(page["webSocketDebuggerUrl"] for page in pages if page["type"] == "page")
        async with websockets.connect(address, max_size=None) as socket:
            counter = 0

            async def call(method, **params):
                nonlocal counter
                counter += 1
                ident = counter
                await socket.send(json.dumps({"id": ident, "method": method, "params": params}))
                while True:
                    message = json.loads(await socket.recv())
                    if message.get("id") == ident:
                        if "error" in message:
                            raise SystemExit(f"{method}: {message['error']}")
                        return message["result"]

            async def js(expression):
                result = await call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
                if "exceptionDetails" in result:
                    raise SystemExit(f"page script failed: {result['exceptionDetails']}")
                return result["result"].get("value")

            async def wait_for(expression, what, seconds):
                end = time.time() + seconds
                while time.time() < end:
                    if await js(expression):
                        return
                    await asyncio.sleep(0.1)
                text = await js("document.getElementById('server') ? document.getElementById('server').textContent : ''")
                message = await js("document.getElementById('message') ? document.getElementById('message').textContent : ''")
                where = await js("location.hash + ' showing ' + (document.getElementById('detail') ? document.getElementById('detail').dataset.record : 'nothing')")
                raise SystemExit(f"timed out waiting for {what} (page says: {text}; message: {message!r}; address: {where!r})")

            await call("Page.enable")
            await call("Page.navigate", url=url)
            await wait_for("!!document.body && document.body.dataset.stream === 'open' && document.body.dataset.count !== undefined",
                           "the page to load and open the event stream", 30)
            before = await js("Number(document.body.dataset.count)")
            with open(ready, "w") as handle:
                handle.write(str(before))
            if expected > 0:
                await wait_for(f"Number(document.body.dataset.count) >= {before + expected} && document.body.dataset.live === 'true'",
                               f"{expected} notifications through the live stream", 60)
                # The device view loads after the list (debounced): wait until it reflects them too.
                await wait_for("Number(document.body.dataset.devices ?? -1) >= Number(document.body.dataset.count)",
                               "the device view to reflect them", 30)
            else:  # what the page loaded is the subject: wait for its devices
                await wait_for("!!document.querySelector('#devices .phone')", "the devices", 30)
            await asyncio.sleep(0.3)
            with open(os.path.join(out, "list.html"), "w") as handle:
                handle.write(await js("document.documentElement.outerHTML"))
            await js("document.querySelector('#list .row').click(), true")
            with open(os.path.join(out, "detail.html"), "w") as handle:
                handle.write(await js("document.getElementById('detail').outerHTML"))
            clip = await js("(() => { const r = document.getElementById('devices').getBoundingClientRect();"
                            " return {x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height, scale: 1}; })()")
            shot = await call("Page.captureScreenshot", format="png", clip=clip, captureBeyondViewport=True)
            with open(os.path.join(out, "devices.png"), "wb") as handle:
                handle.write(base64.b64decode(shot["data"]))

            def write(name, text):
                with open(os.path.join(out, name), "w") as handle:
                    handle.write(text)

            if "language" in options:
                await js("(() => { const s = document.querySelector('#devices select'); s.value = %s;"
                         " s.dispatchEvent(new Event('change')); return true; })()" % json.dumps(options["language"]))
                await wait_for("document.getElementById('devices').textContent.includes(%s)" % json.dumps(options["languageText"]),
                               "the device in " + options["language"], 20)
                write("devices-language.html", await js("document.getElementById('devices').outerHTML"))
            if options.get("resend"):
                count = await js("Number(document.body.dataset.count)")
                chosen = await js("(() => { const b = [...document.querySelectorAll('#list .row')].find((b) => b.querySelector('.status.accepted'));"
                                  " b.click(); return b.parentElement.dataset.id; })()")
                await wait_for("document.getElementById('detail').dataset.record === %s && !!document.getElementById('resend')" % json.dumps(chosen),
                               "the accepted request's detail with its Resend button", 10)
                await js("document.getElementById('resend').click(), true")
                await wait_for("Number(document.body.dataset.count) > %d && document.getElementById('message').textContent.includes('Resent')" % count,
                               "the resent request", 20)
                write("resend.txt", await js("document.getElementById('message').textContent"))
            if "releaseToken" in options:
                await js("(() => { document.getElementById('release-token').value = %s;"
                         " document.querySelector('#release-form button').click(); return true; })()" % json.dumps(options["releaseToken"]))
                await wait_for("/accepted it|did not accept|failed/.test(document.getElementById('release-result').textContent)", "the release's answer", 20)
                write("release.txt", await js("document.getElementById('release-result').textContent"))
            if "axe" in options:
                with open(options["axe"]) as handle:
                    await js(handle.read() + "; true")
                result = await js("axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})"
                                  ".then((r) => JSON.stringify({violations: r.violations.map((v) => ({id: v.id, impact: v.impact,"
                                  " help: v.help, nodes: v.nodes.map((n) => n.target.join(' '))})), passes: r.passes.length}))")
                write("axe.json", result)
            if options.get("dark"):
                await js("document.getElementById('theme').click(), true")
                await asyncio.sleep(0.2)
                shot = await call("Page.captureScreenshot", format="png", clip=clip, captureBeyondViewport=True)
                with open(os.path.join(out, "devices-dark.png"), "wb") as handle:
                    handle.write(base64.b64decode(shot["data"]))
                write("dark-controls.json", await js(
                    "JSON.stringify([...document.querySelectorAll('input, select, textarea')].filter((e) => !e.closest('.phone') && e.type !== 'hidden')"
                    ".map((e) => ({id: e.id || e.name || e.tagName, background: getComputedStyle(e).backgroundColor, color: getComputedStyle(e).color})))"))
            if options.get("address"):
                write("address.txt", await js("location.hash"))
                oldest = await js("Math.min(...[...document.querySelectorAll('#list [data-id]')].map((e) => Number(e.dataset.id)))")
                # A fresh load of the address (a fragment-only navigate and a reload raced: the
                # reload could load the page's previous address).
                await call("Page.navigate", url="about:blank")
                await call("Page.navigate", url=url.split("#")[0] + "#/requests/%d" % oldest)
                await wait_for("!!document.getElementById('detail') && document.getElementById('detail').dataset.record === %s" % json.dumps(str(oldest)),
                               "the addressed request's detail (%d)" % oldest, 20)
                write("addressed.txt", "%d %s" % (oldest, await js("document.getElementById('detail').dataset.record")))
            if options.get("narrow"):
                await call("Emulation.setDeviceMetricsOverride", width=400, height=900, deviceScaleFactor=1, mobile=False)
                # The new width is laid out after a frame or two; on a loaded machine, later. Measure
                # until the window is 400 wide and two frames agree (at most 10 s), then keep the result.
                measure = ("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(JSON.stringify({"
                           "scrollWidth: document.documentElement.scrollWidth, width: innerWidth,"
                           " wide: [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > innerWidth + 1)"
                           ".map((e) => e.tagName + (e.id ? '#' + e.id : '')).slice(0, 10)})))))")
                previous, measured = None, None
                for _ in range(50):
                    measured = await js(measure)
                    if measured == previous and json.loads(measured)["width"] == 400:
                        break
                    previous = measured
                    await asyncio.sleep(0.2)
                write("narrow.json", measured)
                shot = await call("Page.captureScreenshot", format="png")
                with open(os.path.join(out, "narrow.png"), "wb") as handle:
                    handle.write(base64.b64decode(shot["data"]))
    finally:
        browser.kill()
        browser.wait()


asyncio.run(main())
