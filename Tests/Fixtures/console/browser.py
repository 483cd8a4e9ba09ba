"""Drives headless Chromium over the DevTools protocol through the gateway's console.

    browser.py CHROMIUM BASE_URL OUT_FILE PLAN_JSON

PLAN_JSON: {"adminKey", "scopedKey", "app", "token", "hostile", "axe": path to axe.min.js}
(the app has a token that died, which the devices page finds among those dead this week). It signs in, opens every
page (timing each until it is drawn, running axe-core in the light and the dark appearance,
checking a 400-pixel window), composes and sends a notification to the mock and watches it
reach done, schedules one and cancels it, sends a test push, makes a key, then signs in again
with the scoped key. Everything it saw goes to OUT_FILE as JSON; it exits non-zero with a
message on any timeout.
"""
import asyncio, json, os, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from devtools import Browser  # noqa: E402

PAGES = ["apps", "apps/APP", "compose", "notifications", "devices", "keys", "webhooks", "health"]


async def main():
    chromium, base, out, plan = sys.argv[1], sys.argv[2].rstrip("/"), sys.argv[3], json.loads(sys.argv[4])
    with open(plan["axe"]) as handle:
        axe = handle.read()
    result = {"loads": {}, "axe": {}, "narrow": {}, "texts": {}}
    async with Browser(chromium) as page:
        async def show(route, seconds=20):
            name = route.split("/")[0]
            started = time.monotonic()
            # The same address again draws the page again, as a reload of it would.
            await page.js(f"document.body.dataset.ready = ''; if (location.hash === '#/{route}') window.dispatchEvent(new HashChangeEvent('hashchange'));"
                          f" else location.hash = '#/{route}'; true")
            await page.wait_for(f"document.body.dataset.ready === '{name}'", f"the {route} page", seconds)
            return round((time.monotonic() - started) * 1000, 1)

        # The first load, to the sign-in form.
        started = time.monotonic()
        await page.call("Page.navigate", url=base + "/console/")
        await page.wait_for("!!document.body && document.body.dataset.ready === 'signin'", "the sign-in form", 30)
        result["loads"]["signin"] = round((time.monotonic() - started) * 1000, 1)
        result["bannerOnLoopback"] = not await page.js("document.getElementById('insecure').hidden")
        result["sessionBefore"] = await page.js("JSON.stringify(Object.assign({}, sessionStorage))")

        async def sign_in(key):
            await page.js("document.getElementById('key').value = %s; document.querySelector('#signin-form button').click(); true" % json.dumps(key))
            # Signing in draws the page the address names (the apps at first).
            await page.wait_for("!['', 'signin'].includes(document.body.dataset.ready || '')", "a page after signing in", 20)

        await sign_in(plan["adminKey"])
        result["cookies"] = (await page.call("Network.getCookies"))["cookies"]
        result["sessionKeys"] = await page.js("Object.keys(sessionStorage)")
        result["localKeys"] = await page.js("Object.keys(localStorage)")

        for route in PAGES:
            route = route.replace("APP", plan["app"])
            result["loads"][route] = await show(route)
            result["texts"][route] = await page.js("document.getElementById('page').innerText")
            result["axe"][route + " light"] = await page.axe(axe)
            await page.js("document.getElementById('theme').click(), true")
            await asyncio.sleep(0.1)
            result["axe"][route + " dark"] = await page.axe(axe)
            await page.js("document.getElementById('theme').click(), true")

        # A narrow window: nothing wider than it on any page.
        await page.call("Emulation.setDeviceMetricsOverride", width=400, height=800, deviceScaleFactor=1, mobile=False)
        for route in PAGES:
            route = route.replace("APP", plan["app"])
            await show(route)
            result["narrow"][route] = await page.js("document.documentElement.scrollWidth - window.innerWidth")
        await page.call("Emulation.clearDeviceMetricsOverride")

        # Compose: a payload holding markup, linted as typed, previewed as text, sent; the job
        # reaches done.
        await show("compose")
        payload = {"aps": {"alert": {"title": plan["hostile"], "body": "Body " + plan["hostile"]}, "sound": "default"}}
        checked = await page.js("document.body.dataset.checked || '0'")
        await page.js("""(() => {
            const p = document.getElementById('payload'); p.value = %s; p.dispatchEvent(new Event('input'));
            const r = document.getElementById('recipients'); r.value = %s; r.dispatchEvent(new Event('input')); return true; })()"""
                      % (json.dumps(json.dumps(payload)), json.dumps(plan["token"])))
        await page.wait_for("document.body.dataset.checked !== %s && document.getElementById('verdict').textContent.startsWith('Ready')" % json.dumps(checked),
                            "the composer's check", 20, "document.getElementById('verdict').textContent")
        result["preview"] = await page.js("document.getElementById('previews').innerText")
        result["curl"] = await page.js("document.getElementById('curl').textContent")
        # A lint error as typed: a badge that is not a number.
        checked = await page.js("document.body.dataset.checked")
        await page.js("""(() => { const p = document.getElementById('payload'); p.value = '{"aps":{"alert":"Hi","badge":"three"}}';
            p.dispatchEvent(new Event('input')); return true; })()""")
        await page.wait_for("document.body.dataset.checked !== %s" % json.dumps(checked), "the check of a bad payload", 20)
        result["badVerdict"] = await page.js("document.getElementById('verdict').textContent")
        result["badFindings"] = await page.js("document.getElementById('findings').innerText")
        result["sendDisabled"] = await page.js("document.querySelector('#compose-form button[type=submit]').disabled")
        checked = await page.js("document.body.dataset.checked")
        await page.js("""(() => { const p = document.getElementById('payload'); p.value = %s; p.dispatchEvent(new Event('input')); return true; })()"""
                      % json.dumps(json.dumps(payload)))
        await page.wait_for("document.body.dataset.checked !== %s && !document.querySelector('#compose-form button[type=submit]').disabled" % json.dumps(checked),
                            "the check after fixing the payload", 20)
        started = time.monotonic()
        await page.js("document.querySelector('#compose-form button[type=submit]').click(), true")
        await page.wait_for("location.hash.startsWith('#/notifications/') && document.body.dataset.jobStatus === 'done'",
                            "the sent notification to reach done", 60, "location.hash + ' ' + (document.body.dataset.jobStatus || '')")
        result["sendToDoneMs"] = round((time.monotonic() - started) * 1000, 1)
        result["sentJob"] = await page.js("document.getElementById('page').innerText")

        # Schedule one for an hour from now, then cancel it from its page.
        await show("compose")
        checked = await page.js("document.body.dataset.checked || '0'")
        await page.js("""(() => {
            const r = document.getElementById('recipients'); r.value = %s;
            const w = document.getElementById('when'); w.value = 'at';
            const at = new Date(Date.now() + 3600e3); const pad = (n) => String(n).padStart(2, '0');
            document.getElementById('send-at').value = `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
            r.dispatchEvent(new Event('input')); return true; })()""" % json.dumps(plan["token"]))
        await page.wait_for("document.body.dataset.checked !== %s && document.getElementById('verdict').textContent.startsWith('Ready')" % json.dumps(checked),
                            "the scheduled notification's check", 20)
        await page.js("document.querySelector('#compose-form button[type=submit]').click(), true")
        await page.wait_for("document.body.dataset.jobStatus === 'scheduled'", "the scheduled notification's page", 20)
        await page.js("[...document.querySelectorAll('#job button')].find((b) => b.textContent === 'Cancel').click(), true")
        await page.wait_for("document.body.dataset.jobStatus === 'cancelled'", "the notification to be cancelled", 20)
        result["cancelMessage"] = await page.js("document.getElementById('message').textContent")

        # The notifications list, the devices (with the hostile user id) and the webhook list.
        await show("notifications")
        result["texts"]["notifications after"] = await page.js("document.getElementById('page').innerText")
        await show("devices")
        result["texts"]["devices after"] = await page.js("document.getElementById('page').innerText")
        # Which tokens died this week.
        await page.js("""(() => { document.getElementById('d-state').value = 'dead'; document.getElementById('d-died').value = '7';
            document.body.dataset.devices = ''; document.querySelector('#device-search button').click(); return true; })()""")
        await page.wait_for("document.body.dataset.devices !== ''", "the dead tokens of the week", 20)
        result["texts"]["dead this week"] = await page.js("document.getElementById('devices').innerText")

        # A test push from the app's page: Apple's answer (the mock's) shows.
        await show("apps/" + plan["app"])
        await page.js("document.getElementById('test-target').value = %s; document.querySelector('#test-form button').click(); true" % json.dumps(plan["token"]))
        await page.wait_for("document.getElementById('test-result').dataset.done === 'true'", "the test push's answer", 30)
        result["testPush"] = await page.js("document.getElementById('test-result').innerText")

        # A new key named with markup: shown once, listed as text.
        await show("keys")
        await page.js("""(() => { document.getElementById('key-name').value = %s; document.getElementById('key-apps').value = %s;
            document.querySelector('#key-form button').click(); return true; })()""" % (json.dumps(plan["hostile"]), json.dumps(plan["app"])))
        await page.wait_for("!!document.getElementById('new-key-secret')", "the new key", 20)
        result["newKey"] = await page.js("document.getElementById('new-key-secret').textContent")
        await show("keys")
        result["texts"]["keys after"] = await page.js("document.getElementById('page').innerText")

        # Signed out, then in with a key for one app: only that app, in the page and the calls.
        await page.js("document.getElementById('signout').click(), true")
        await page.wait_for("document.body.dataset.ready === 'signin'", "the sign-in form after signing out", 10)
        result["sessionAfterSignOut"] = await page.js("Object.keys(sessionStorage)")
        first = len(page.requests)
        await sign_in(plan["scopedKey"])
        result["scoped"] = {"who": await page.js("document.getElementById('who').textContent"), "texts": {}}
        for route in ["apps", "notifications", "devices", "keys", "health"]:
            await show(route)
            result["scoped"]["texts"][route] = await page.js("document.getElementById('page').innerText")
        result["scoped"]["requests"] = [r["url"] for r in page.requests[first:]]

        result["xss"] = await page.js("window.__herald_xss === undefined ? 0 : window.__herald_xss")
        result["images"] = await page.js("document.querySelectorAll('img').length")
        result["requestsWithKey"] = sum(1 for r in page.requests if "Authorization" in r["headers"] and not r["url"].startswith(base))
        result["errors"] = page.errors

    # The same console reached over plain HTTP by a name that is not loopback (Chromium maps
    # the name to 127.0.0.1 itself): the banner shows before a key is typed.
    port = base.rsplit(":", 1)[1]
    async with Browser(chromium, arguments=["--host-resolver-rules=MAP gateway.example 127.0.0.1"]) as page:
        await page.call("Page.navigate", url=f"http://gateway.example:{port}/console/")
        await page.wait_for("!!document.body && document.body.dataset.ready === 'signin'", "the sign-in form (not loopback)", 30)
        result["bannerElsewhere"] = await page.js("document.getElementById('insecure').hidden ? '' : document.getElementById('insecure').textContent")
    with open(out, "w") as handle:
        json.dump(result, handle, indent=1)


asyncio.run(main())
