import HeraldJSON
import HeraldTestSupport
import Testing

@Suite("JSON round trips", .ownThreads)
struct JSONRoundTripTests {
    @Test("parse then write reproduces compact canonical text byte for byte", arguments: 0..<40)
    func compactIsFixedPoint(seed: Int) throws {
        var random = RandomJSON(seed: UInt64(seed))
        for _ in 0..<50 {
            let value = random.value()
            let compact = value.compactBytes()
            let document = try JSONDocument(parsing: compact)
            #expect(document.compactBytes() == compact)
            #expect(document.root.value == value)
        }
    }

    /// The walk over an object's key indices, the member made from one and a string's bytes
    /// read by tape index agree with the members and decoded strings of the node view, on every
    /// object and string of random documents in random spellings (escapes included).
    @Test("key indices, members by key and strings by tape index agree with the node view", arguments: 0..<10)
    func keyIndicesAgreeWithMembers(seed: Int) throws {
        var random = RandomJSON(seed: UInt64(seed) &+ 5000)
        var objects = 0, strings = 0
        for _ in 0..<300 {
            let document = try JSONDocument(parsing: random.render(random.value()))
            for index in document.nodeIndices {
                let read = document.withStringUTF8(atTapeIndex: index) { Array($0) }
                if let node = document.node(at: index) {
                    #expect(read == node.stringValue.map { Array($0.utf8) })
                    if node.kind == .string { strings += 1 }
                    guard node.kind == .object else { continue }
                    objects += 1
                    let members = Array(node.members)
                    #expect(Array(node.memberKeyIndices) == members.map(\.keyNode.index))
                    for member in members {
                        let made = document.member(atKey: member.keyNode.index)
                        #expect(made.key == member.key && made.value.index == member.value.index)
                        #expect(document.sourceLength(at: member.keyNode.index) == member.keyNode.byteRange.count)
                        #expect(document.withStringUTF8(atTapeIndex: member.keyNode.index) { Array($0) } == Array(member.key.utf8))
                    }
                } else {
                    // A key: a string read like any other.
                    #expect(read == document.keyString(at: index).map { Array($0.utf8) })
                }
            }
        }
        #expect(objects > 40 && strings > 100, "\(objects) objects, \(strings) strings")
    }

    @Test("any spelling of a value writes the same compact form", arguments: 0..<40)
    func anySpellingNormalizes(seed: Int) throws {
        var random = RandomJSON(seed: UInt64(seed) &+ 1000)
        for _ in 0..<50 {
            let value = random.value()
            let text = random.render(value)
            let document = try JSONDocument(parsing: text)
            #expect(document.root.value == value, "\(text)")
            #expect(document.compactBytes() == value.compactBytes(), "\(text)")
            // The pretty form is JSON for the same value too.
            let pretty = try JSONDocument(parsing: document.prettyBytes())
            #expect(pretty.root.value == value)
            #expect(pretty.compactBytes() == value.compactBytes())
        }
    }

    @Test("pointers: escaping, resolution and the path to every node", arguments: 0..<10)
    func pointers(seed: Int) throws {
        var random = RandomJSON(seed: UInt64(seed) &+ 5000)
        for _ in 0..<50 {
            let value = random.value()
            let document = try JSONDocument(parsing: value.compactBytes())
            // Every value's pointer resolves to it. With duplicate keys a pointer names the last
            // member, so a value under an earlier duplicate resolves to its namesake or nothing.
            let shadowing = value.containsDuplicateKeys
            for index in 0..<document.valueCount * 2 {
                guard let node = document.node(at: index) else { continue }
                let pointer = document.pointer(to: node)
                #expect(JSONPointer(parsing: pointer.description) == pointer)
                guard let resolved = document.resolve(pointer) else {
                    if !shadowing { Issue.record("pointer \(pointer) did not resolve") }
                    continue
                }
                #expect(document.pointer(to: resolved) == pointer)
                if !shadowing { #expect(resolved.index == node.index) }
            }
        }
    }

    @Test("pointer syntax")
    func pointerSyntax() throws {
        let pointer = JSONPointer(tokens: ["a/b", "m~n", "0", ""])
        #expect(pointer.description == "/a~1b/m~0n/0/")
        // Escapes beside characters outside ASCII, and tokens that need none.
        #expect(JSONPointer(tokens: ["é/~😀", "日本", "~~", "//"]).description == "/é~1~0😀/日本/~0~0/~1~1")
        #expect(JSONPointer(parsing: "/a~1b/m~0n/0/") == pointer)
        #expect(JSONPointer(parsing: "a") == nil)
        #expect(JSONPointer(parsing: "/~2") == nil)
        #expect(JSONPointer(parsing: "")?.tokens == [])
        let document = try JSONDocument(parsing: #"{"a/b":{"m~n":[{"":7}]}}"#)
        #expect(document.resolve(pointer)?.int64Value == 7)
        #expect(document.resolve("/a~1b/m~0n/01") == nil)
        #expect(document.resolve("/a~1b/m~0n/1") == nil)
    }
}
