import Foundation
import HeraldLint
import HeraldProtocol
import HeraldTestSupport
import Testing

/// One version, everywhere: `herald --version`, the changelog's newest release, and the commit
/// git says the checkout is at.
@Suite(.ownThreads) struct VersionTests {
    @Test func versionIsSemanticAndMatchesTheChangelog() throws {
        let parts = HeraldVersion.semantic.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCII) && Int($0) != nil }, "\(HeraldVersion.semantic)")
        let changelog = try String(contentsOf: Fixtures.repositoryRoot.appending(path: "CHANGELOG.md"), encoding: .utf8)
        // The first release heading after [Unreleased]: `## [0.5.0] - 2026-11-25`.
        let releases = changelog.split(separator: "\n").filter { $0.hasPrefix("## [") && !$0.hasPrefix("## [Unreleased]") }
        let newest = try #require(releases.first)
        #expect(newest.hasPrefix("## [\(HeraldVersion.semantic)] - "), "\(newest)")
    }

    /// What the front door and the map say agrees with the code: the version in the README's
    /// install and dependency lines, the number of lint rules in the README and ARCHITECTURE.md.
    @Test func theReadmeAndTheArchitectureSayTheCurrentVersionAndRuleCount() throws {
        let readme = try String(contentsOf: Fixtures.repositoryRoot.appending(path: "README.md"), encoding: .utf8)
        let architecture = try String(contentsOf: Fixtures.repositoryRoot.appending(path: "ARCHITECTURE.md"), encoding: .utf8)
        #expect(readme.contains("herald --version                       # \(HeraldVersion.semantic) (commit …)"), "the install block's version")
        #expect(readme.contains(#".package(url: "https://github.com/<owner>/herald.git", from: "\#(HeraldVersion.semantic)")"#), "the dependency line's version")
        let count = LintCatalog.rules.count
        #expect(readme.contains("| `HeraldLint` | \(count) rules"), "README: \(count) rules")
        #expect(architecture.contains("HeraldLint            \(count) rules"), "ARCHITECTURE.md: \(count) rules")
        // No other count of rules anywhere in either.
        for text in [readme, architecture] {
            let words = text.split(whereSeparator: \.isWhitespace)
            let counts = zip(words, words.dropFirst()).compactMap { pair in pair.1.hasPrefix("rules") ? Int(pair.0) : nil }
            #expect(counts.allSatisfy { $0 == count }, "\(counts)")
        }
    }

    @Test func heraldVersionPrintsTheVersionAndTheCommit() throws {
        let result = try HeraldProcess.run(["--version"])
        #expect(result.status == 0)
        #expect(result.output == HeraldVersion.description + "\n", "\(result.output)")
        // The commit is the one git reports for this checkout (the tests were built from it).
        let git = try? ExternalTools.require("git", package: "git")
        guard let git, FileManager.default.fileExists(atPath: Fixtures.repositoryRoot.appending(path: ".git").path) else {
            #expect(HeraldVersion.commit == nil)
            return
        }
        let head = try ExternalTools.execute(git, ["-C", Fixtures.repositoryRoot.path, "rev-parse", "--short=12", "HEAD"])
        #expect(HeraldVersion.commit == String(decoding: head.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(result.output.contains("(commit \(HeraldVersion.commit ?? "?"))"))
    }
}
