import Foundation
@testable import HeraldMock
import HeraldTestSupport
import Testing

/// The inbox's web sources (Sources/HeraldMock/Inbox/) and what the binary carries
/// (InboxAssets.swift, written by Scripts/embed-web) are the same, byte for byte; and the page
/// keeps to its Content-Security-Policy: no inline script, style or handler.
@Suite struct InboxAssetsTests {
    static let folder = Fixtures.repositoryRoot.appendingPathComponent("Sources/HeraldMock/Inbox")

    @Test(arguments: [("index.html", InboxAssets.indexHTML), ("inbox.css", InboxAssets.css), ("inbox.js", InboxAssets.javascript)])
    func theBinaryCarriesTheSources(file: String, embedded: String) throws {
        let source = try String(contentsOf: Self.folder.appendingPathComponent(file), encoding: .utf8)
        #expect(source == embedded, "\(file) changed: run Scripts/embed-web")
    }

    @Test func thePageHasNoInlineCode() throws {
        #expect(WebPageChecks.inlineCodeProblems(html: InboxAssets.indexHTML, script: "/inbox.js") == [])
    }
}
