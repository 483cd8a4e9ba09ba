import HeraldLint
import Synchronization
import Testing
import HeraldTestSupport

/// `Linter.lintLines`: many threads, the one-thread result.
@Suite(.ownThreads) struct LintLinesTests {
    @Test func manyThreadsGiveWhatOneLineAtATimeGives() {
        // Clean, broken, blank and CRLF lines, and a last line without a break.
        var text = ""
        var expected: [String] = []
        for index in 0..<3_000 {
            switch index % 5 {
            case 0: text += #"{"aps":{"alert":"Hi \#(index)"}}"# + "\n"
            case 1: text += #"{"aps":{"alert":"Hi"},"aps":{}}"# + "\r\n"
            case 2: text += "   \n"
            case 3: text += #"{"aps":{"badge":"three"}}"# + "\n"
            default: text += "not json \(index)\n"
            }
        }
        text += #"{"aps":{"sound":1}}"#
        let linter = Linter()
        // Split by bytes: as a String, "\r\n" is one Character and would not split at "\n".
        let lines = Array(text.utf8).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        var oneByOne = LintSummary()
        for (index, line) in lines.enumerated() {
            let trimmed = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
            guard !trimmed.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) else { continue }
            let report = linter.lint(Array(trimmed), context: LintContext())
            oneByOne.add(report)
            expected.append("\(index):\(report.diagnostics.map(\.rule.rawValue).joined(separator: ","))\n")
        }
        let alongside = Atomic(0)
        for jobs in [1, 2, 8] {
            let batches = linter.lintLines(Array(text.utf8), context: LintContext(), jobs: jobs, alongside: { alongside.add(1, ordering: .relaxed) }) { index, report in
                Array("\(index):\(report.diagnostics.map(\.rule.rawValue).joined(separator: ","))\n".utf8)
            }
            #expect(String(decoding: batches.flatMap(\.output), as: UTF8.self) == expected.joined(), "jobs \(jobs)")
            var summary = LintSummary()
            for batch in batches { summary.add(batch.summary) }
            #expect(summary == oneByOne, "jobs \(jobs)")
            #expect(batches.last?.lines.upperBound == lines.count)
        }
        #expect(alongside.load(ordering: .relaxed) == 3, "once per call")
    }
}
