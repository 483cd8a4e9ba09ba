import Foundation
import HeraldJSON
import HeraldPayload
import HeraldTestSupport
import Testing

@Suite("Payload encoding and decoding", .ownThreads)
struct PayloadCodingTests {
    @Test("the builder writes the seed's Listing 1 byte for byte")
    func builderMatchesListing1() throws {
        let payload = try Payload.alert(title: "Game Request", subtitle: "Five Card Draw", body: "Bob wants to play poker")
            .category("GAME_INVITATION")
            .custom("gameID", "12345678")
        let listing = try JSONDocument(parsing: Fixtures.bytes("seeds/listing-1-alert.json"))
        #expect(try payload.encode() == listing.compactBytes())
        #expect(try payload.encodedString() == #"{"aps":{"alert":{"title":"Game Request","subtitle":"Five Card Draw","body":"Bob wants to play poker"},"category":"GAME_INVITATION"},"gameID":"12345678"}"#)
    }

    @Test("the builder writes the older guide's examples byte for byte")
    func builderMatchesLegacyExamples() throws {
        let example2 = try Payload(aps: APS(
            alert: .content(AlertContent(title: "Game Request", body: "Bob wants to play poker", actionLocKey: "PLAY")),
            badge: 5))
            .custom("acme1", "bar")
            .custom("acme2", ["bang", "whiz"])
        #expect(try example2.encode() == JSONDocument(parsing: Fixtures.bytes("seeds/legacy-example-2.json")).compactBytes())

        let example4 = try Payload.localizedAlert(key: "GAME_PLAY_REQUEST_FORMAT", arguments: ["Jenna", "Frank"])
            .sound("chime.aiff")
            .custom("acme", "foo")
        #expect(try example4.encode() == JSONDocument(parsing: Fixtures.bytes("seeds/legacy-example-4.json")).compactBytes())
    }

    @Test("every seed example decodes, and encodes back to the same JSON", arguments: Fixtures.seedPayloads)
    func seedRoundTrip(_ path: String) throws {
        let document = try JSONDocument(parsing: Fixtures.bytes(path))
        let payload = try Payload(document: document)
        let encoded = try payload.encode()
        let reparsed = try JSONDocument(parsing: encoded)
        #expect(reparsed.root.value.isEquivalent(to: document.root.value))
        #expect(try Payload(decoding: encoded) == payload)
        #expect(try payload.encodedSize() == encoded.count)
    }

    @Test("typed values from a seed example")
    func typedValues() throws {
        let payload = try Payload(decoding: Fixtures.bytes("seeds/legacy-example-2.json"))
        guard case .content(let alert)? = payload.aps?.alert else {
            Issue.record("alert is not a dictionary")
            return
        }
        #expect(alert.title == .text("Game Request"))
        #expect(alert.actionLocKey == .value("PLAY"))
        #expect(payload.aps?.badge == 5)
        #expect(payload.custom["acme2"] == ["bang", "whiz"])
        #expect(payload.custom.keys == ["acme1", "acme2"])
    }

    @Test("random payloads: encode then decode gives an equal value", arguments: 0..<20)
    func encodeDecode(seed: Int) throws {
        var random = RandomJSON(seed: UInt64(seed) &+ 31)
        for _ in 0..<50 {
            let payload = random.payload()
            let bytes = try payload.encode()
            #expect(try Payload(decoding: bytes) == payload, "\(String(decoding: bytes, as: UTF8.self))")
            #expect(try payload.encodedSize() == bytes.count)
        }
    }

    @Test("random documents: decode then encode gives a JSON-equal document", arguments: 0..<20)
    func decodeEncode(seed: Int) throws {
        var random = RandomJSON(seed: UInt64(seed) &+ 77)
        for _ in 0..<50 {
            // A payload written with varied spelling, key order shuffled by the renderer's source.
            let source = random.render(.object(try JSONDocument(parsing: random.payload().encode()).root.value.objectValue!))
            let document = try JSONDocument(parsing: source)
            let payload = try Payload(document: document)
            let encoded = try JSONDocument(parsing: payload.encode())
            #expect(encoded.root.value.isEquivalent(to: document.root.value), "\(source)")
        }
    }

    @Test("unknown keys survive inside aps, alert and sound, in order")
    func unknownKeysKept() throws {
        let text = #"{"aps":{"alert":{"body":"b","x-alert":1},"sound":{"critical":1,"name":"s","x-sound":[true]},"content_available":1,"zz":null},"z":1,"a":2}"#
        let payload = try Payload(decoding: text)
        #expect(payload.aps?.otherKeys.keys == ["content_available", "zz"])
        #expect(payload.aps?.alert?.asContent.otherKeys["x-alert"] == 1)
        guard case .critical(let sound)? = payload.aps?.sound else {
            Issue.record("sound is not a dictionary")
            return
        }
        #expect(sound.otherKeys["x-sound"] == [true])
        #expect(payload.custom.keys == ["z", "a"])
        #expect(try payload.encodedString() == text)
    }

    @Test("non-ASCII is written as raw UTF-8 and counted in bytes")
    func rawUTF8() throws {
        let payload = try Payload.alert(title: "게임 요청", body: "Bob님이 포커를 하고 싶어 합니다 😀").custom("url", "https://example.com/a/b")
        let text = try payload.encodedString()
        #expect(!text.contains("\\u"))
        #expect(text.contains("https://example.com/a/b"))
        #expect(try payload.encodedSize() == text.utf8.count)
        #expect(text.utf8.count > text.count)
    }

    @Test("Live Activity, background, widget and critical-sound payloads")
    func specialKinds() throws {
        let live = Payload.liveActivity(event: .update, timestamp: 1_700_000_000, contentState: ["score": 3, "team": "Pandas"])
            .staleDate(1_700_003_600)
            .relevanceScore(75)
        #expect(try live.encodedString() == #"{"aps":{"relevance-score":75,"timestamp":1700000000,"event":"update","content-state":{"score":3,"team":"Pandas"},"stale-date":1700003600}}"#)
        #expect(try Payload.background().encodedString() == #"{"aps":{"content-available":1}}"#)
        #expect(try Payload.contentChanged().encodedString() == #"{"aps":{"content-changed":true}}"#)
        let critical = Payload.alert("Fire").sound(.critical(name: "alarm.caf", volume: 0.5)).interruptionLevel(.critical)
        #expect(try critical.encodedString() == #"{"aps":{"alert":"Fire","sound":{"critical":1,"name":"alarm.caf","volume":0.5},"interruption-level":"critical"}}"#)
        let start = Payload(aps: APS(alert: .content(AlertContent(
            title: .localized(key: "%@ is on an adventure!", arguments: ["Power Panda"]),
            body: .localized(key: "Your hero is out."), sound: "chime.caf")),
            event: .start, attributesType: "AdventureAttributes", attributes: ["currentHealthLevel": 100]))
        let decoded = try Payload(decoding: start.encode())
        #expect(decoded == start)
        #expect(try start.encodedString().contains(#""title":{"loc-key":"%@ is on an adventure!","loc-args":["Power Panda"]}"#))
    }

    /// A decoded `content-state` stays in its document until it is read (a simulated device
    /// keeps the last twenty of each Live Activity): reading it builds what Foundation reads from
    /// the same bytes, writing the payload copies it from the document, and setting it replaces it.
    @Test("a decoded content-state is built from its document when read, and written from it")
    func deferredContentState() throws {
        let text = #"{"aps":{"event":"update","timestamp":1,"content-state":{"home":{"score":2,"scorers":["Ana","Bo"]},"minute":78.5,"note":"caf\u00e9 \"x\" 😀","ok":true,"none":null,"e":1E2}}}"#
        let payload = try Payload(decoding: text)
        guard case .node? = payload.aps?.contentStateStorage else {
            Issue.record("the decoded content-state was built at decoding: \(String(describing: payload.aps?.contentStateStorage))")
            return
        }
        let state = try #require(payload.aps?.contentState)
        let foundation = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let expected = try #require((foundation["aps"] as? [String: Any])?["content-state"] as? NSDictionary)
        let read = try #require(try JSONSerialization.jsonObject(with: Data(JSONValue.object(state).compactBytes())) as? NSDictionary)
        #expect(read == expected)
        #expect(state.keys == ["home", "minute", "note", "ok", "none", "e"])
        #expect(state["e"]?.numberValue?.text == "1E2")

        // The same object built as a value: equal, and written to the same bytes.
        var built = payload
        built.aps?.contentState = state
        guard case .value? = built.aps?.contentStateStorage else {
            Issue.record("setting content-state kept the document's")
            return
        }
        #expect(built == payload)
        #expect(try built.encode() == payload.encode())
        #expect(try payload.encodedString().contains(#""content-state":{"home":{"score":2,"scorers":["Ana","Bo"]},"minute":78.5,"note":"café \"x\" 😀","ok":true,"none":null,"e":1E2}"#))

        var changed = payload
        changed.aps?.contentState = ["minute": 80]
        #expect(changed != payload)
        #expect(try changed.encodedString() == #"{"aps":{"timestamp":1,"event":"update","content-state":{"minute":80}}}"#)
        changed.aps?.contentState = nil
        #expect(try changed.encodedString() == #"{"aps":{"timestamp":1,"event":"update"}}"#)
        #expect(payload.aps?.contentState?["minute"]?.numberValue?.text == "78.5")
    }

    /// Read leniently (as a device does), a `content-state` that is not an object is left out
    /// with its error, and of two the last is the one kept.
    @Test("a lenient decode drops a content-state that is not an object, and keeps the last of two")
    func lenientContentState() throws {
        let wrong = try Payload.decodingLeniently(document: JSONDocument(parsing: Array(#"{"aps":{"content-state":[1],"event":"update"}}"#.utf8)))
        #expect(wrong.payload.aps?.contentState == nil)
        #expect(wrong.payload.aps?.event == .update)
        #expect(wrong.recovered.map(\.error.pointer.description) == ["/aps/content-state"])
        let twice = try Payload.decodingLeniently(document: JSONDocument(parsing: Array(#"{"aps":{"content-state":{"a":1},"content-state":{"b":2}}}"#.utf8)))
        #expect(twice.payload.aps?.contentState == ["b": 2])
        #expect(twice.recovered.map(\.action) == [.lastDuplicateUsed])
    }

    /// `aps` is found wherever it is among the top-level keys and however it is spelled in
    /// JSON (an escape is the same key); the other keys are the custom data, in order; of two
    /// `aps`, a strict decode refuses the second and a lenient one keeps it.
    @Test("aps among a hundred custom keys, escaped, and twice")
    func apsAmongCustomKeys() throws {
        let custom = (0..<100).map { #""k\#($0)":\#($0)"# }
        for position in [0, 1, 50, 100] {
            for spelling in ["aps", #"\u0061ps"#, #"ap\u0073"#] {
                var members = custom
                members.insert(#""\#(spelling)":{"badge":\#(position + 1)}"#, at: position)
                let payload = try Payload(decoding: "{" + members.joined(separator: ",") + "}")
                #expect(payload.aps?.badge == position + 1, "\(spelling) at \(position)")
                #expect(payload.custom.members.map(\.key) == (0..<100).map { "k\($0)" })
            }
        }
        let twice = #"{"aps":{"badge":1},"apsx":{"badge":3},"aps":{"badge":2},"ap":{}}"#
        #expect(throws: PayloadDecodingError.self) { try Payload(decoding: twice) }
        let lenient = try Payload.decodingLeniently(document: JSONDocument(parsing: Array(twice.utf8)))
        #expect(lenient.payload.aps?.badge == 2)
        #expect(lenient.recovered.map(\.action) == [.lastDuplicateUsed])
        #expect(lenient.payload.custom.members.map(\.key) == ["apsx", "ap"])
        // No aps at all: keys that only look like it are custom data.
        let none = try Payload(decoding: #"{"APS":{"badge":1},"ap":1,"apss":2}"#)
        #expect(none.aps == nil)
        #expect(none.custom.members.map(\.key) == ["APS", "ap", "apss"])
    }

    @Test("null where the seeds allow it: action-loc-key, title-loc-key, title-loc-args")
    func nullables() throws {
        let text = #"{"aps":{"alert":{"title-loc-key":null,"title-loc-args":null,"action-loc-key":null}}}"#
        let payload = try Payload(decoding: text)
        let alert = payload.aps?.alert?.asContent
        #expect(alert?.actionLocKey == .null)
        #expect(alert?.titleLocKey == .null)
        #expect(alert?.titleLocArgs == .null)
        #expect(try payload.encodedString() == text)
    }

    @Test("encoding refuses NaN and infinity, naming the value")
    func nonFinite() {
        #expect(throws: PayloadEncodingError.self) { try Payload.alert("x").relevanceScore(.nan).encode() }
        do {
            var output: [UInt8] = [1, 2, 3]
            try Payload.alert("x").sound(.critical(volume: .infinity)).encode(into: &output)
            Issue.record("encoded infinity")
        } catch {
            #expect(error.pointer.description == "/aps/sound/volume")
        }
    }

    @Test("encode(into:) appends to the caller's buffer")
    func appendsToBuffer() throws {
        var buffer = Array("prefix:".utf8)
        try Payload.alert("hi").encode(into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == #"prefix:{"aps":{"alert":"hi"}}"#)
    }

    @Test("custom data: any Encodable, in declaration order; aps and non-finite numbers are refused")
    func customEncodable() throws {
        struct Team: Encodable { var name: String; var score: Int }
        struct Match: Encodable { var id: Int; var live: Bool; var teams: [Team]; var note: String?; var odds: Double }
        let payload = try Payload.alert("Kick-off").custom("match", encoding: Match(id: 7, live: true, teams: [Team(name: "A", score: 1)], note: nil, odds: 2.5))
        #expect(try payload.encodedString() == #"{"aps":{"alert":"Kick-off"},"match":{"id":7,"live":true,"teams":[{"name":"A","score":1}],"odds":2.5}}"#)
        // The same value through Foundation's JSONEncoder, read back, is the same JSON.
        let foundation = try JSONEncoder().encode(Match(id: 7, live: true, teams: [Team(name: "A", score: 1)], note: nil, odds: 2.5))
        #expect(try JSONDocument(parsing: Array(foundation)).root.value.isEquivalent(to: #require(payload.custom["match"])))
        #expect(throws: PayloadBuildError.self) { try Payload.alert("x").custom("aps", "y") }
        #expect(throws: PayloadBuildError.self) { try Payload.alert("x").custom("n", encoding: [Double.nan]) }
        #expect(try Payload.alert("x").custom("n", encoding: ["b": 1]).custom["n"] == ["b": 1])
    }

    /// The Codable path and ``Payload/init(decoding:options:)`` agree on what is an error.
    @Test("Codable and the decoder agree on wrong types", arguments: [
        #"{"aps":{"content-state":[1,2]}}"#, #"{"aps":{"attributes":"x"}}"#, #"{"aps":{"badge":"5"}}"#,
        #"{"aps":{"alert":7}}"#, #"{"aps":{"url-args":"a"}}"#, #"{"aps":{"content-available":true}}"#,
        #"{"aps":{"content-state":{"a":1},"badge":2}}"#, #"{"aps":{"sound":{"volume":"x"}}}"#,
    ])
    func codableAgreesWithDecoder(json: String) throws {
        let decoded = Result { try Payload(decoding: json) }
        let codable = Result { try JSONDecoder().decode(Payload.self, from: Data(json.utf8)) }
        switch (decoded, codable) {
        case (.success(let herald), .success(let foundation)):
            #expect(try herald.encode() == foundation.encode())
        case (.failure, .failure):
            break
        default:
            Issue.record("Payload(decoding:) \(decoded) but JSONDecoder \(codable)")
        }
    }
}

@Suite("Format argument positions")
struct FormatArgumentPositionTests {
    /// Positions come back ascending and once each, whether the format is dense, repeats a
    /// position, mixes sequential and positional specifiers, or names a far position (the
    /// sorting path); a random format's positions equal a set of those its specifiers name.
    @Test("positions are ascending and distinct, near or far")
    func positionsAreAscendingAndDistinct() {
        #expect(LocalizedFormat("%2$@ and %1$@ have invited you").argumentPositions == [0, 1])
        #expect(LocalizedFormat("%3$@ %1$@ %3$@ %%").argumentPositions == [0, 2])
        #expect(LocalizedFormat("%@ %@ %5$@").argumentPositions == [0, 1, 4])
        #expect(LocalizedFormat("%1000000$@ %1$@ %1000000$@").argumentPositions == [0, 999_999])
        #expect(LocalizedFormat("no specifiers").argumentPositions.isEmpty)
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let named = (0..<Int.random(in: 1...40, using: &rng)).map { _ in Int.random(in: 1...(Bool.random(using: &rng) ? 30 : 5_000), using: &rng) }
            let format = named.map { "%\($0)$@" }.joined(separator: " ")
            #expect(LocalizedFormat(format).argumentPositions == Set(named.map { $0 - 1 }).sorted(), "\(format)")
        }
    }
}
