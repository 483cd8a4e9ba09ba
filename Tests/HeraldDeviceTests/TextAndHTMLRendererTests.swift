@testable import HeraldDevice
import HeraldJSON
import Testing
import HeraldTestSupport

/// The terminal banner and the HTML page.
@Suite(.ownThreads) struct TextAndHTMLRendererTests {
    func render(_ json: String, appName: String = "Games") throws -> RenderedNotification {
        var rendered = try NotificationRenderer(bundle: nil, preferredLanguages: ["en"]).render(document: JSONDocument(parsing: json))
        rendered.appName = appName
        return rendered
    }

    @Test func displayWidths() {
        #expect(DisplayWidth.of("abc") == 3)
        #expect(DisplayWidth.of("게임 요청") == 9)
        #expect(DisplayWidth.of("日本") == 4)
        #expect(DisplayWidth.of("é") == 1)
        #expect(DisplayWidth.of("e\u{301}") == 1)
        #expect(DisplayWidth.of("👍🏽") == 2)
    }

    @Test func wrapBreaksAtSpacesAndInsideCJK() {
        #expect(DisplayWidth.wrap("one two three four", width: 9) == ["one two", "three", "four"])
        #expect(DisplayWidth.wrap("日本語の通知です", width: 6) == ["日本語", "の通知", "です"])
        #expect(DisplayWidth.wrap("supercalifragilistic", width: 8) == ["supercal", "ifragili", "stic"])
    }

    @Test func bannerFrameIsRectangularAndCutsTheBody() throws {
        let long = String(repeating: "word ", count: 60)
        let rendered = try render(#"{"aps":{"alert":{"title":"게임 요청: a very long title that does not fit on one line","body":"\#(long)"}}}"#)
        let banner = NotificationTextRenderer(width: 30).banner(rendered, appName: "Games")
        let lines = banner.split(separator: "\n").map(String.init)
        let widths = Set(lines.map { DisplayWidth.of($0) })
        #expect(widths == [34], "\(banner)")
        // Header, title, four body lines, and the two frame lines.
        #expect(lines.count == 8)
        #expect(lines[2].contains("…"))
        #expect(lines[6].contains("…"))
    }

    @Test func textViewListsTheDetails() throws {
        let rendered = try render(#"{"aps":{"alert":{"title":"T","body":"B","action-loc-key":"VIEW"},"badge":3,"sound":"chime.aiff","thread-id":"th"}}"#)
        let text = NotificationTextRenderer().render(rendered)
        #expect(text.contains("[ VIEW ]"))
        #expect(text.contains("Badge         3"))
        #expect(text.contains("Thread        th"))
        #expect(text.contains("Sound         chime.aiff"))
        #expect(!text.contains("\u{1B}["))
        #expect(NotificationTextRenderer(usesColor: true).render(rendered).contains("\u{1B}[1m"))
    }

    @Test func htmlIsSelfContainedAndEscaped() throws {
        let rendered = try render(#"{"aps":{"alert":{"title":"<script>alert(1)</script>","body":"Tom & \"Jerry\""},"badge":4}}"#, appName: "A&B")
        let html = NotificationHTMLRenderer().render(rendered)
        #expect(!html.contains("<script"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(html.contains("Tom &amp; &quot;Jerry&quot;"))
        #expect(html.contains("A&amp;B"))
        for needle in ["src=", "href=", "url(", "@import", "http:", "https:"] { #expect(!html.contains(needle), "\(needle)") }
        #expect(html.components(separatedBy: "data-field=\"title\"").count == 3)
        #expect(html.contains("data-appearance=\"light\"") && html.contains("data-appearance=\"dark\""))
        #expect(html.contains("data-field=\"badge\">4<"))
    }

    @Test(arguments: [
        (#"{"aps":{"content-available":1}}"#, "Silent"),
        (#"{"aps":{"badge":2}}"#, "sets the badge to 2"),
        (#"{"aps":{}}"#, "Nothing is shown"),
        (#"{"aps":{"event":"update","timestamp":1,"content-state":{"score":"2-1"}}}"#, "Live Activity"),
    ])
    func htmlForEveryPresentation(json: String, needle: String) throws {
        #expect(NotificationHTMLRenderer().render(try render(json)).contains(needle))
    }
}
