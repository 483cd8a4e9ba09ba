"""Opens the gateway's console over HTTPS in headless Chromium, twice: with HOME holding an NSS
database that trusts the test's CA (as `certutil -A -t C,,` made it), and with an empty one.

    tls.py CHROMIUM URL TRUSTING_HOME EMPTY_HOME OUT_FILE

Writes OUT_FILE as JSON: {"trusted": {"protocol", "alpn", "banner", "ready"}, "untrusted":
{"error"}}. Exits non-zero with a message on any timeout.
"""
import asyncio, json, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from devtools import Browser  # noqa: E402


async def main():
    chromium, url, trusting, empty, out = sys.argv[1:6]
    result = {}
    async with Browser(chromium, environment=dict(os.environ, HOME=trusting)) as page:
        navigation = await page.call("Page.navigate", url=url)
        result["navigationError"] = navigation.get("errorText")
        await page.wait_for("!!document.body && document.body.dataset.ready === 'signin'", "the sign-in form over HTTPS", 30)
        result["trusted"] = {
            "protocol": await page.js("location.protocol"),
            "alpn": await page.js("performance.getEntriesByType('navigation')[0].nextHopProtocol"),
            "banner": not await page.js("document.getElementById('insecure').hidden"),
        }
        result["errors"] = page.errors
    async with Browser(chromium, environment=dict(os.environ, HOME=empty)) as page:
        navigation = await page.call("Page.navigate", url=url)
        result["untrusted"] = {"error": navigation.get("errorText")}
    with open(out, "w") as handle:
        json.dump(result, handle, indent=1)


asyncio.run(main())
