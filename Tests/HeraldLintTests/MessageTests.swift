@testable import HeraldLint
import Testing

/// Messages joined in one allocation read exactly as concatenation (the oracle), for parts that
/// are empty, ASCII, not ASCII, short enough to be stored inline and long; and the findings
/// whose messages are joined so read as they always did.
@Suite(.ownThreads) struct MessageTests {
    static let pieces = ["", "\"", "custom7", "é", "日本語のキー", "😀 and more", String(repeating: "x", count: 15), String(repeating: "long text ", count: 30)]

    @Test func joinedIsConcatenation() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let parts = (0..<7).map { _ in Self.pieces.randomElement(using: &generator)! }
            let joined = Message.joined(parts[0], parts[1], parts[2], parts[3], parts[4], parts[5], parts[6])
            #expect(joined == parts.joined(), "\(parts)")
            #expect(joined.utf8.count == parts.map(\.utf8.count).reduce(0, +))
            #expect(Message.joined(parts[0], parts[1], parts[2]) == parts[0] + parts[1] + parts[2])
        }
    }

    @Test("the messages built by joining, word for word", arguments: [
        (#"{"aps":{"alert":"x","ticket":1}}"#, RuleID.unknownAPSKey,
         #""ticket" is not an Apple key; it reaches the app inside aps, but a future Apple key of that name would change its meaning: move it beside aps"#),
        (#"{"aps":{"alert":{"body":"x","colour":1}}}"#, RuleID.unknownAlertKey, #""colour" is not a key of the alert dictionary, so it is ignored"#),
        (#"{"aps":{"alert":"x"},"gift":null}"#, RuleID.customValueNull,
         #"custom key "gift" is null; custom values are dictionaries, arrays, strings, numbers or Booleans: omit the key instead"#),
        (#"{"aps":{"alert":"x"},"apiKey":"x"}"#, RuleID.sensitiveKeyName,
         #"custom key "apiKey" is named like a secret; keep secrets out of payloads or encrypt them for a service extension"#),
        (#"{"aps":{"alert":{"loc-key":"K","loc-args":[12]}}}"#, RuleID.locArgsNotStrings, #""loc-args" elements must be strings, found a number; write "12""#),
        (#"{"aps":{"alert":{"loc-key":"K","loc-args":[true]}}}"#, RuleID.locArgsNotStrings, #""loc-args" elements must be strings, found a boolean; write a string"#),
    ])
    func messages(_ body: String, _ rule: RuleID, _ message: String) throws {
        let finding = try #require(Linter().lint(body).diagnostics.first { $0.rule == rule }, "\(body)")
        #expect(finding.message == message)
    }
}
