import Foundation
import HeraldLocalization
import HeraldTestSupport
import Testing

/// Herald's readers against CoreFoundation's own: on Linux, Foundation's
/// `PropertyListSerialization` runs the open-source `CFOldStylePList.c` and `CFBinaryPList.c`,
/// the code reference §8.4 describes. Both must accept the same tables and read the same strings.
@Suite(.ownThreads) struct CoreFoundationDifferentialTests {
    enum Outcome: Equatable, CustomStringConvertible {
        case table([String: String], nonStrings: Set<String>)
        case rejected(String)

        var description: String {
            switch self {
            case .table(let strings, let others): "table \(strings) + non-strings \(others.sorted())"
            case .rejected(let why): "rejected: \(why)"
            }
        }

        var isRejected: Bool { if case .rejected = self { true } else { false } }

        static func == (lhs: Outcome, rhs: Outcome) -> Bool {
            switch (lhs, rhs) {
            case (.table(let a, let b), .table(let c, let d)): a == c && b == d
            case (.rejected, .rejected): true
            default: false
            }
        }
    }

    static func foundation(_ bytes: [UInt8]) -> Outcome {
        let value: Any
        do {
            value = try PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil)
        } catch {
            return .rejected("\(error)")
        }
        guard let dictionary = value as? [String: Any] else { return .rejected("not a dictionary") }
        var strings: [String: String] = [:]
        var others: Set<String> = []
        for (key, value) in dictionary {
            if let string = value as? String { strings[key] = string } else { others.insert(key) }
        }
        return .table(strings, nonStrings: others)
    }

    static func herald(_ bytes: [UInt8]) -> Outcome {
        let result: PropertyListReader.Result
        do {
            result = try PropertyListReader.read(bytes, path: "x.strings")
        } catch {
            return .rejected(error.description)
        }
        guard case .dictionary(let dictionary) = result.value else { return .rejected("not a dictionary") }
        var strings: [String: String] = [:]
        var others: Set<String> = []
        for (key, value) in dictionary {
            if case .string(let string) = value { strings[key] = string } else { others.insert(key) }
        }
        return .table(strings, nonStrings: others)
    }

    @Test func randomTablesReadTheSameAsCoreFoundation() {
        var generator = RandomStringsFile(seed: 0x5EED_0F_5781)
        var accepted = 0, rejected = 0, mismatches: [String] = []
        for _ in 0..<3000 {
            let text = generator.file()
            let bytes = Array(text.utf8)
            guard !bytes.isEmpty else { continue }
            let expected = Self.foundation(bytes)
            let actual = Self.herald(bytes)
            if expected.isRejected { rejected += 1 } else { accepted += 1 }
            if expected != actual, mismatches.count < 5 {
                mismatches.append("\(text.debugDescription)\n  CoreFoundation: \(expected)\n  Herald: \(actual)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
        // The generator exercises both sides of the grammar.
        #expect(accepted > 800 && rejected > 500, "accepted \(accepted), rejected \(rejected)")
    }

    @Test func utf16TablesReadTheSameAsCoreFoundation() {
        var generator = RandomStringsFile(seed: 16)
        for _ in 0..<300 {
            let text = generator.file()
            let bytes: [UInt8] = [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
            let expected = Self.foundation(bytes)
            #expect(Self.herald(bytes) == expected, "\(text.debugDescription)")
        }
    }

    @Test func binaryTablesReadTheSameAsCoreFoundation() throws {
        let bytes = try ExternalTools.plistlib(json: #"{"A": "x", "B": "日本語 😀", "C": "\u0000nul", "D": ["not", "a string"], "E": "é"}"#, format: "BINARY")
        #expect(Self.herald(bytes) == Self.foundation(bytes))
        let xml = try ExternalTools.plistlib(json: #"{"A": "x &amp; <y>", "B": "日本語 😀"}"#, format: "XML")
        #expect(Self.herald(xml) == Self.foundation(xml))
    }
}
