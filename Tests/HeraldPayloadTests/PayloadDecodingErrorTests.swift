import Foundation
import HeraldJSON
import HeraldPayload
import HeraldTestSupport
import Testing

@Suite("Payload decoding errors", .ownThreads)
struct PayloadDecodingErrorTests {
    struct Case: Sendable, CustomStringConvertible {
        var text: String
        var pointer: String
        var location: String
        var message: String
        var description: String { text }
    }

    static let cases: [Case] = [
        Case(text: #"{"aps":{"badge":"5"}}"#, pointer: "/aps/badge", location: "1:17", message: "expected a whole number, found a string"),
        Case(text: #"{"aps":{"badge":1.5}}"#, pointer: "/aps/badge", location: "1:17", message: "expected a whole number, found 1.5"),
        Case(text: "{\n  \"aps\": {\n    \"alert\": 7\n  }\n}", pointer: "/aps/alert", location: "3:14", message: "expected a string or a dictionary, found a number"),
        Case(text: #"{"aps":{"alert":{"loc-args":["a",5]}}}"#, pointer: "/aps/alert/loc-args/1", location: "1:34", message: "expected a string (format arguments are strings), found a number"),
        Case(text: #"{"aps":{"sound":true}}"#, pointer: "/aps/sound", location: "1:17", message: "expected a sound name or a critical-alert dictionary, found a boolean"),
        Case(text: #"{"aps":{"sound":{"volume":"loud"}}}"#, pointer: "/aps/sound/volume", location: "1:27", message: "expected a number, found a string"),
        Case(text: #"{"aps":{"content-changed":1}}"#, pointer: "/aps/content-changed", location: "1:27", message: "expected true or false, found a number"),
        Case(text: #"{"aps":{"content-state":[]}}"#, pointer: "/aps/content-state", location: "1:25", message: "expected an object, found an array"),
        Case(text: #"{"aps":{"badge":1,"badge":2}}"#, pointer: "/aps/badge", location: "1:19", message: "duplicate key \"badge\"; a payload may give each key once"),
        Case(text: #"{"aps":{},"aps":{}}"#, pointer: "/aps", location: "1:11", message: "duplicate key \"aps\"; a payload may give each key once"),
        Case(text: #"{"aps":[]}"#, pointer: "/aps", location: "1:8", message: "expected an object (the aps dictionary), found an array"),
        Case(text: "[1]", pointer: "", location: "1:1", message: "expected an object (a payload is a JSON dictionary), found an array"),
        Case(text: #"{"aps":{"timestamp":1e400}}"#, pointer: "/aps/timestamp", location: "1:21", message: "expected a number within the range of a Double, found 1e400"),
        Case(text: #"{"aps":{"alert":{"title":{"loc-key":"k","x":1}}}}"#, pointer: "/aps/alert/title/x", location: "1:41", message: "unexpected key \"x\"; expected \"loc-key\" and \"loc-args\" in a localized text"),
    ]

    @Test("type errors name the pointer and line:column", arguments: cases)
    func typeErrors(_ testCase: Case) {
        do {
            _ = try Payload(decoding: testCase.text)
            Issue.record("decoded \(testCase.text)")
        } catch {
            #expect(error.pointer.description == testCase.pointer)
            #expect(error.location.description == testCase.location)
            #expect(error.message == testCase.message)
        }
    }

    @Test("the malformed seed examples give syntax errors with line:column")
    func malformedSeeds() throws {
        let bytes = try Fixtures.bytes("seeds/legacy-example-5-malformed.json")
        do {
            _ = try Payload(decoding: bytes)
            Issue.record("decoded a malformed example")
        } catch {
            guard case .syntax = error.kind else {
                Issue.record("not a syntax error: \(error)")
                return
            }
            #expect(error.description == "4:5: expected ',' or '}' after an object member, found '\"' (is a ',' missing before this key?)")
        }
    }

    @Test("Foundation's coders agree with Herald's on every seed example", arguments: Fixtures.seedPayloads)
    func codableAgrees(_ path: String) throws {
        let bytes = try Fixtures.bytes(path)
        let herald = try Payload(decoding: bytes)
        let foundation = try JSONDecoder().decode(Payload.self, from: Data(bytes))
        // JSONDecoder does not promise key order, so compare as JSON.
        let heraldJSON = try JSONDocument(parsing: herald.encode()).root.value
        let foundationJSON = try JSONDocument(parsing: foundation.encode()).root.value
        #expect(heraldJSON.isEquivalent(to: foundationJSON))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let viaEncoder = try JSONDocument(parsing: Array(encoder.encode(herald))).root.value
        #expect(viaEncoder.isEquivalent(to: heraldJSON))
    }

    @Test("Foundation's coders agree on random payloads", arguments: 0..<5)
    func codableRandom(seed: Int) throws {
        var random = RandomJSON(seed: UInt64(seed) &+ 4242)
        for _ in 0..<40 {
            let payload = random.payload()
            // Foundation's keyed containers are dictionaries: duplicate keys cannot pass through.
            guard try !JSONDocument(parsing: payload.encode()).root.value.containsDuplicateKeys else { continue }
            let viaEncoder = try JSONDocument(parsing: Array(JSONEncoder().encode(payload))).root.value
            let herald = try JSONDocument(parsing: payload.encode()).root.value
            #expect(viaEncoder.isEquivalent(to: herald))
            let decoded = try JSONDecoder().decode(Payload.self, from: Data(payload.encode()))
            #expect(try JSONDocument(parsing: decoded.encode()).root.value.isEquivalent(to: herald))
        }
    }
}
