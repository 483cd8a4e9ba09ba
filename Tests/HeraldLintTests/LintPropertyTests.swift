import HeraldJSON
import HeraldLint
import HeraldPayload
import HeraldTestSupport
import Testing

/// For any input: the linter does not crash, every diagnostic's pointer resolves in the document,
/// and its line:column points at the value the pointer names.
@Suite("Lint properties")
struct LintPropertyTests {
    static func check(_ bytes: [UInt8], context: LintContext = .bodyOnly) -> [String] {
        let linter = Linter(configuration: LintConfiguration(enabled: Set(RuleID.allCases)))
        let report = linter.lint(bytes, context: context)
        var problems: [String] = []
        for diagnostic in report.diagnostics {
            guard let pointer = diagnostic.pointer else {
                if diagnostic.location != nil { problems.append("\(diagnostic.rule): a header finding with a location") }
                continue
            }
            guard let location = diagnostic.location else {
                problems.append("\(diagnostic.rule): no location")
                continue
            }
            if diagnostic.rule == .invalidJSON || diagnostic.rule == .payloadEmpty { continue }
            guard let document = report.document else {
                problems.append("\(diagnostic.rule): a value finding without a document")
                continue
            }
            guard let resolved = document.resolve(pointer) else {
                problems.append("\(diagnostic.rule): \(pointer) does not resolve")
                continue
            }
            // The node at the reported position has the diagnostic's pointer.
            let atLocation = document.nodeIndices.compactMap(document.node(at:)).first { $0.byteRange.lowerBound == location.offset }
            if let atLocation {
                if document.pointer(to: atLocation) != pointer && document.pointer(to: resolved) != pointer {
                    problems.append("\(diagnostic.rule): \(location) is not at \(pointer)")
                }
            } else {
                problems.append("\(diagnostic.rule): nothing starts at \(location)")
            }
            if resolved.location.line != location.line && !document.root.value.containsDuplicateKeys {
                problems.append("\(diagnostic.rule): \(pointer) is on line \(resolved.location.line), not \(location.line)")
            }
        }
        return problems
    }

    static let contexts: [LintContext] = [
        .bodyOnly,
        LintContext(pushType: "alert", priority: "10", topic: "com.x", isRequest: true),
        LintContext(pushType: "background", topic: "com.x.voip", isRequest: true),
        LintContext(pushType: "liveactivity", priority: "5", topic: "com.x.push-type.liveactivity", endpoint: .broadcast),
        LintContext(pushType: "widgets", priority: "1", collapseID: "c", expiration: "99", apnsID: "X", deviceToken: "zz"),
    ]

    @Test("random payloads, pretty and compact", arguments: 0..<20)
    func randomPayloads(seed: Int) throws {
        var random = RandomJSON(seed: UInt64(seed) &+ 777)
        for round in 0..<40 {
            let payload = random.payload()
            let compact = try payload.encode()
            let pretty = try JSONDocument(parsing: compact).prettyBytes()
            let context = Self.contexts[round % Self.contexts.count]
            #expect(Self.check(compact, context: context) == [], "\(String(decoding: compact, as: UTF8.self))")
            #expect(Self.check(pretty, context: context) == [], "\(String(decoding: pretty, as: UTF8.self))")
        }
    }

    @Test("damaged payloads", arguments: 0..<20)
    func damaged(seed: Int) throws {
        var random = RandomJSON(seed: UInt64(seed) &+ 4040)
        for round in 0..<40 {
            let bytes = random.mutate(try random.payload().encode())
            #expect(Self.check(bytes, context: Self.contexts[round % Self.contexts.count]) == [], "\(bytes)")
        }
    }

    @Test("every rule example")
    func examples() {
        for rule in LintCatalog.rules {
            for example in rule.triggering + rule.nonTriggering {
                #expect(Self.check(Array(example.body.utf8), context: example.context) == [], "\(rule.id): \(example.body.prefix(100))")
            }
        }
    }
}
