import Foundation
@testable import HeraldClient
import HeraldClientTestSupport
import HeraldHTTP2
import HeraldJSON
import HeraldTestSupport
import NIOCore
import Testing

/// The HTTP/2 session fed with frames written by hand from RFC 9113, and its header blocks read
/// by Python's hpack.
@Suite struct HTTP2SessionTests {
    typealias Session = HTTP2ClientSession<Int>

    /// One frame: the 9-byte header (RFC 9113 §4.1) and the payload.
    static func frame(_ type: UInt8, flags: UInt8 = 0, stream: UInt32 = 0, _ payload: [UInt8] = []) -> [UInt8] {
        [UInt8(payload.count >> 16 & 0xFF), UInt8(payload.count >> 8 & 0xFF), UInt8(payload.count & 0xFF), type, flags]
            + withUnsafeBytes(of: stream.bigEndian, Array.init) + payload
    }

    static func settings(_ values: [(UInt16, UInt32)]) -> [UInt8] {
        frame(0x4, values.flatMap { withUnsafeBytes(of: $0.0.bigEndian, Array.init) + withUnsafeBytes(of: $0.1.bigEndian, Array.init) })
    }

    static func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }

    /// A session past the server's SETTINGS, with its own preface taken.
    static func openSession(_ serverSettings: [(UInt16, UInt32)] = []) throws -> Session {
        var session = Session()
        session.start()
        _ = session.takeOutput()
        try feed(&session, settings(serverSettings))
        _ = session.takeOutput()
        return session
    }

    @discardableResult
    static func feed(_ session: inout Session, _ bytes: [UInt8]) throws(HTTP2ConnectionError) -> [Session.Event] {
        var buffer = ByteBuffer(bytes: bytes)
        session.receive(&buffer)
        var events: [Session.Event] = []
        while let event = try session.nextEvent() { events.append(event) }
        return events
    }

    /// The frames in `bytes`, as (type, flags, stream, payload).
    static func frames(_ bytes: ByteBuffer) -> [(type: UInt8, flags: UInt8, stream: UInt32, payload: [UInt8])] {
        var buffer = bytes
        var result: [(UInt8, UInt8, UInt32, [UInt8])] = []
        while buffer.readableBytes >= 9 {
            let length = Int(buffer.readInteger(as: UInt16.self)!) << 8 | Int(buffer.readInteger(as: UInt8.self)!)
            let type = buffer.readInteger(as: UInt8.self)!, flags = buffer.readInteger(as: UInt8.self)!
            let stream = buffer.readInteger(as: UInt32.self)! & 0x7FFF_FFFF
            result.append((type, flags, stream, buffer.readBytes(length: length)!))
        }
        return result
    }

    static func open(_ session: inout Session, _ context: Int, body: Int = 0) -> Int32 {
        session.openStream(context, body: ByteBuffer(repeating: 0x61, count: body)) { encoder, buffer in
            encoder.writeStatic(HPACKBlockEncoder.Static.methodPOST, into: &buffer)
        }
    }

    @Test func prefaceIsTheMagicSettingsAndAWindowUpdate() {
        var session = Session()
        session.start()
        var output = session.takeOutput()
        #expect(output.readString(length: 24) == "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        let frames = Self.frames(output)
        #expect(frames.map(\.type) == [0x4, 0x8])
        #expect(frames[0].payload == [0, 2] + Self.u32(0) + [0, 3] + Self.u32(0) + [0, 4] + Self.u32(1 << 20) + [0, 6] + Self.u32(16_384),
                "ENABLE_PUSH 0, MAX_CONCURRENT_STREAMS 0, INITIAL_WINDOW_SIZE 1 MiB, MAX_HEADER_LIST_SIZE 16 KiB")
        #expect(frames[1].stream == 0 && frames[1].payload == Self.u32(UInt32((1 << 20) - 65_535)))
    }

    /// Frames the protocol forbids, each with the connection error RFC 9113 gives it.
    static let connectionErrors: [(String, [UInt8], H2ErrorCode)] = [
        ("DATA on stream 0", frame(0x0, stream: 0, [1]), .protocolError),
        ("HEADERS on stream 0", frame(0x1, flags: 0x4, stream: 0, [0x88]), .protocolError),
        ("HEADERS on an even stream", frame(0x1, flags: 0x4, stream: 2, [0x88]), .protocolError),
        ("HEADERS on a stream never opened", frame(0x1, flags: 0x4, stream: 7, [0x88]), .protocolError),
        ("a frame larger than 16,384 bytes", frame(0x0, stream: 1, Array(repeating: 0, count: 16_385)), .frameSizeError),
        ("PUSH_PROMISE", frame(0x5, flags: 0x4, stream: 1, u32(2) + [0x88]), .protocolError),
        ("CONTINUATION without HEADERS", frame(0x9, flags: 0x4, stream: 1, [0x88]), .protocolError),
        ("a header block interrupted", frame(0x1, stream: 1, [0x88]) + frame(0x6, u32(0) + u32(0)), .protocolError),
        ("a header block interrupted by an extension frame", frame(0x1, stream: 1, [0x88]) + frame(0xA, stream: 1, [1, 2]), .protocolError),
        ("CONTINUATION on another stream", frame(0x1, stream: 1, [0x88]) + frame(0x9, flags: 0x4, stream: 3, []), .protocolError),
        ("padding longer than the payload", frame(0x0, flags: 0x8, stream: 1, [5, 1, 2]), .protocolError),
        ("an undecodable header block", frame(0x1, flags: 0x4, stream: 1, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]), .compressionError),
        ("SETTINGS on a stream", frame(0x4, stream: 1, []), .protocolError),
        ("SETTINGS of 5 bytes", frame(0x4, [0, 3, 0, 0, 1]), .frameSizeError),
        ("a SETTINGS acknowledgement with a payload", frame(0x4, flags: 0x1, [0, 3, 0, 0, 0, 1]), .frameSizeError),
        ("SETTINGS_ENABLE_PUSH 2", settings([(0x2, 2)]), .protocolError),
        ("SETTINGS_MAX_FRAME_SIZE below 16,384", settings([(0x5, 100)]), .protocolError),
        ("SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1", settings([(0x4, 0x8000_0000)]), .flowControlError),
        ("PING of 7 bytes", frame(0x6, [1, 2, 3, 4, 5, 6, 7]), .frameSizeError),
        ("PING on a stream", frame(0x6, stream: 1, u32(0) + u32(0)), .protocolError),
        ("GOAWAY of 4 bytes", frame(0x7, u32(0)), .frameSizeError),
        ("RST_STREAM on stream 0", frame(0x3, u32(8)), .protocolError),
        ("RST_STREAM of 3 bytes", frame(0x3, stream: 1, [0, 0, 8]), .frameSizeError),
        ("RST_STREAM on a stream never opened", frame(0x3, stream: 9, u32(8)), .protocolError),
        ("WINDOW_UPDATE of 0 for the connection", frame(0x8, u32(0)), .protocolError),
        ("the connection's send window above 2^31-1", frame(0x8, u32(0x7FFF_FFFF)), .flowControlError),
        ("WINDOW_UPDATE of 5 bytes", frame(0x8, [0, 0, 0, 0, 1]), .frameSizeError),
    ]

    @Test(arguments: connectionErrors.indices)
    func forbiddenFramesEndTheConnection(_ index: Int) throws {
        let (name, bytes, code) = Self.connectionErrors[index]
        var session = try Self.openSession()
        _ = Self.open(&session, 1, body: 0)
        _ = session.takeOutput()
        do {
            try Self.feed(&session, bytes)
            Issue.record("\(name): no error")
        } catch {
            #expect(error.code == code, "\(name): \(error)")
        }
        let sent = Self.frames(session.takeOutput())
        #expect(sent.last?.type == 0x7, "\(name): a GOAWAY is queued")
        #expect(sent.last.map { Array($0.payload[4..<8]) } == Self.u32(code.rawValue), "\(name): with the error's code")
        #expect(try Self.feed(&session, Self.frame(0x6, Self.u32(0) + Self.u32(0))).isEmpty, "\(name): nothing more is read")
    }

    @Test func theFirstFrameMustBeSettings() {
        var session = Session()
        session.start()
        #expect(throws: HTTP2ConnectionError.self) { try Self.feed(&session, Self.frame(0x6, Self.u32(0) + Self.u32(1))) }
    }

    /// RFC 9113 §5.5: frames of types the session does not know (0xA and up: ALTSVC, ORIGIN,
    /// PRIORITY_UPDATE, or any extension) are read over, on the connection or on a stream.
    @Test func framesOfUnknownTypesAreIgnored() throws {
        var session = try Self.openSession()
        _ = Self.open(&session, 1, body: 0)
        _ = session.takeOutput()
        let unknown = [0xA, 0xC, 0x10, 0xFF].flatMap { Self.frame($0, flags: 0xFF, stream: $0 == 0xC ? 0 : 1, [1, 2, 3]) }
        let events = try Self.feed(&session, unknown + Self.frame(0x6, [1, 2, 3, 4, 5, 6, 7, 8]))
        #expect(events.isEmpty)
        let sent = Self.frames(session.takeOutput())
        #expect(sent.map(\.type) == [0x6], "only the PING is answered")
        var fresh = Session()
        fresh.start()
        #expect(throws: HTTP2ConnectionError.self, "before SETTINGS, an unknown frame is still a protocol error") {
            try Self.feed(&fresh, Self.frame(0xA, []))
        }
    }

    @Test func pingsAreAnsweredWithTheirData() throws {
        var session = try Self.openSession()
        let events = try Self.feed(&session, Self.frame(0x6, [1, 2, 3, 4, 5, 6, 7, 8]) + Self.frame(0x6, flags: 0x1, Self.u32(0) + Self.u32(1)))
        #expect(events.count == 1)
        if case .pingAcknowledged = events.first {} else { Issue.record("the acknowledgement is an event") }
        let sent = Self.frames(session.takeOutput())
        #expect(sent.count == 1 && sent[0].type == 0x6 && sent[0].flags == 0x1 && sent[0].payload == [1, 2, 3, 4, 5, 6, 7, 8])
    }

    @Test func settingsAreAcknowledgedAndApplied() throws {
        var session = Session()
        session.start()
        _ = session.takeOutput()
        let events = try Self.feed(&session, Self.settings([(0x3, 2), (0x6, 8_000), (0x99, 7)]))
        guard case .settings(first: true) = events.first else {
            Issue.record("settings event")
            return
        }
        #expect(session.peerMaximumStreams == 2 && session.peerMaximumHeaderListSize == 8_000, "unknown settings are ignored")
        #expect(Self.frames(session.takeOutput()).map { [$0.type, $0.flags] } == [[0x4, 0x1]])
        _ = Self.open(&session, 1)
        _ = Self.open(&session, 2)
        #expect(!session.canOpenStream, "two streams are the limit")
    }

    @Test func bodiesWaitForTheServersWindows() throws {
        var session = try Self.openSession([(0x4, 10)])
        let id = Self.open(&session, 7, body: 25)
        var sent = Self.frames(session.takeOutput())
        #expect(sent.map(\.type) == [0x1, 0x0])
        #expect(sent[0].flags == 0x4, "END_HEADERS without END_STREAM: a body follows")
        #expect(sent[1].payload.count == 10 && sent[1].flags == 0, "10 bytes: the stream's window")

        try Self.feed(&session, Self.frame(0x8, stream: UInt32(id), Self.u32(10)))
        sent = Self.frames(session.takeOutput())
        #expect(sent.map(\.payload.count) == [10] && sent[0].flags == 0)

        // A larger initial window applies to open streams (RFC 9113 §6.9.2).
        try Self.feed(&session, Self.settings([(0x4, 100)]))
        sent = Self.frames(session.takeOutput())
        #expect(sent.map(\.type) == [0x4, 0x0], "the acknowledgement, then the rest")
        #expect(sent[1].payload.count == 5 && sent[1].flags == 0x1, "the last 5 bytes end the stream")
    }

    @Test func theConnectionWindowHoldsEveryStream() throws {
        var session = try Self.openSession([(0x4, 1_000_000)])
        // Four bodies of 16,384 bytes against the connection's 65,535: the fourth waits for one
        // byte, and a fifth stream's body waits whole.
        for context in 0..<4 { _ = Self.open(&session, context, body: 16_384) }
        let fifth = Self.open(&session, 4, body: 300)
        var sent = Self.frames(session.takeOutput()).filter { $0.type == 0x0 }
        #expect(sent.map(\.payload.count) == [16_384, 16_384, 16_384, 16_383])
        #expect(sent.map(\.flags) == [0x1, 0x1, 0x1, 0x0], "the fourth body is one byte short of its end")
        try Self.feed(&session, Self.frame(0x8, Self.u32(1_000)))
        sent = Self.frames(session.takeOutput())
        #expect(sent.map(\.stream) == [7, UInt32(fifth)], "the oldest waiting stream first")
        #expect(sent.map(\.payload.count) == [1, 300] && sent.allSatisfy { $0.flags == 0x1 })
    }

    @Test func responsesArriveAsEventsAndEndTheirStreams() throws {
        var session = try Self.openSession()
        let id = UInt32(Self.open(&session, 42))
        // :status 200 (static index 8), padded HEADERS with priority fields, continued.
        let headers = Self.frame(0x1, flags: 0x8 | 0x20, stream: id, [3] + Self.u32(0) + [16] + [0x88] + [0, 0, 0])
            + Self.frame(0x9, flags: 0x4, stream: id, [0x0F, 0x00, 0x01, 0x61])  // literal, name index 15 (accept-charset), "a"
        let data = Self.frame(0x0, flags: 0x8, stream: id, [2, 0x7B, 0x7D, 0, 0]) + Self.frame(0x0, flags: 0x1, stream: id, [])
        let events = try Self.feed(&session, headers + data)
        #expect(events.count == 3)
        if case .headers(let stream, let context, let fields, let end) = events[0] {
            #expect(stream == Int32(id) && context == 42 && !end)
            #expect(fields[":status"] == ["200"] && fields["accept-charset"] == ["a"])
        } else { Issue.record("headers first") }
        if case .data(_, _, let body, let end) = events[1] {
            #expect(Array(body.readableBytesView) == Array("{}".utf8) && !end, "padding removed")
        } else { Issue.record("then the body") }
        if case .data(_, _, _, true) = events[2] {} else { Issue.record("then the end") }
        #expect(session.openStreamCount == 0)
        #expect(try Self.feed(&session, Self.frame(0x0, stream: id, [1])).isEmpty, "frames of a finished stream are dropped")
    }

    @Test func streamErrorsResetOnlyTheirStream() throws {
        var session = try Self.openSession()
        let first = UInt32(Self.open(&session, 1))
        let second = UInt32(Self.open(&session, 2))
        _ = session.takeOutput()
        let events = try Self.feed(&session, Self.frame(0x8, stream: first, Self.u32(0)) + Self.frame(0x2, stream: second, [0, 0]))
        #expect(events.count == 2)
        if case .reset(_, 1, .protocolError) = events[0] {} else { Issue.record("WINDOW_UPDATE of 0 on a stream: PROTOCOL_ERROR") }
        if case .reset(_, 2, .frameSizeError) = events[1] {} else { Issue.record("PRIORITY of 2 bytes: FRAME_SIZE_ERROR") }
        #expect(Self.frames(session.takeOutput()).map(\.type) == [0x3, 0x3])
        #expect(session.openStreamCount == 0)
    }

    @Test func goAwayNamesTheStreamsNotProcessed() throws {
        var session = try Self.openSession()
        for context in 1...4 { _ = Self.open(&session, context) }
        let events = try Self.feed(&session, Self.frame(0x7, Self.u32(3) + Self.u32(0) + Array(#"{"reason":"Shutdown"}"#.utf8)))
        guard case .goAway(let last, .noError, let debug) = events.first else {
            Issue.record("a GOAWAY event")
            return
        }
        #expect(last == 3 && String(buffer: debug) == #"{"reason":"Shutdown"}"#)
        #expect(!session.canOpenStream)
        #expect(session.abandonStreams(above: last) == [3, 4], "streams 5 and 7 were not processed")
        try Self.feed(&session, Self.frame(0x7, Self.u32(5) + Self.u32(0)))
        #expect(session.goAwayLastStreamID == 3, "a later GOAWAY cannot raise the last stream")
    }

    @Test func aLargeHeaderBlockIsContinued() throws {
        var session = try Self.openSession()
        let topic = String(repeating: "t", count: 40_000)
        _ = session.openStream(1, body: ByteBuffer()) { encoder, buffer in
            encoder.writeLiteral(name: "apns-topic", value: topic, into: &buffer)
        }
        let sent = Self.frames(session.takeOutput())
        #expect(sent.map(\.type) == [0x1, 0x9, 0x9])
        #expect(sent.map(\.flags) == [0x1, 0x0, 0x4], "END_STREAM on HEADERS, END_HEADERS on the last CONTINUATION")
        #expect(sent.dropLast().allSatisfy { $0.payload.count == 16_384 })
    }

    @Test func responseWindowsAreReopened() throws {
        var session = try Self.openSession()
        let id = UInt32(Self.open(&session, 1))
        _ = session.takeOutput()
        let chunk = Array(repeating: UInt8(0), count: 16_384)
        // 33 frames of 16 KiB: at the 32nd, half of both 1 MiB windows is used.
        var bytes: [UInt8] = []
        for _ in 0..<33 { bytes += Self.frame(0x0, stream: id, chunk) }
        try Self.feed(&session, bytes)
        let updates = Self.frames(session.takeOutput()).filter { $0.type == 0x8 }
        #expect(Set(updates.map(\.stream)) == [0, id], "the connection's window and the stream's")
        #expect(updates.count == 2 && updates.allSatisfy { $0.payload == Self.u32(UInt32(32 * 16_384)) })
    }

    @Test("saved fuzz inputs", arguments: Fixtures.fuzzInputs("FuzzHTTP2Client"))
    func savedFuzzInputs(_ path: String) throws {
        #expect(HTTP2SessionChecks.check(try Fixtures.bytes(path)) == [])
    }

    /// Header blocks written by the encoder, read back by Python's hpack decoder: the static
    /// table, the dynamic table's indexes and evictions, and table size updates must all agree.
    @Test(.ownThreads) func pythonHPACKReadsEveryBlock() throws {
        try ExternalTools.requirePython(modules: "hpack", package: "h2")
        var encoder = HPACKBlockEncoder()
        var blocks: [(size: Int, block: [UInt8], expected: [[String]])] = []
        let bearer = "bearer " + String(repeating: "j", count: 180)
        for round in 0..<40 {
            // The server's table size changes now and then, as SETTINGS_HEADER_TABLE_SIZE may.
            let size = [4_096, 4_096, 256, 0, 128, 4_096, 300, 4_096][round / 5]
            if round % 5 == 0 { encoder.peerAllows(tableSize: size) }
            var buffer = ByteBuffer()
            encoder.startBlock(into: &buffer)
            var expected: [[String]] = []
            encoder.writeStatic(HPACKBlockEncoder.Static.methodPOST, into: &buffer)
            expected.append([":method", "POST"])
            encoder.writeStatic(HPACKBlockEncoder.Static.schemeHTTPS, into: &buffer)
            expected.append([":scheme", "https"])
            encoder.writePath("/3/device/", String(format: "%064x", round), into: &buffer)
            expected.append([":path", "/3/device/" + String(format: "%064x", round)])
            encoder.writeIndexed(name: ":authority", staticName: HPACKBlockEncoder.Static.authority, value: "api.push.apple.com", into: &buffer)
            expected.append([":authority", "api.push.apple.com"])
            encoder.writeIndexed(name: "authorization", staticName: HPACKBlockEncoder.Static.authorization, value: bearer + "\(round / 7)", into: &buffer)
            expected.append(["authorization", bearer + "\(round / 7)"])
            encoder.writeIndexed(name: "apns-topic", value: "com.example.app\(round % 3)", into: &buffer)
            expected.append(["apns-topic", "com.example.app\(round % 3)"])
            encoder.writeIndexed(name: "apns-push-type", value: round % 2 == 0 ? "alert" : "background", into: &buffer)
            expected.append(["apns-push-type", round % 2 == 0 ? "alert" : "background"])
            encoder.writeLiteral(name: "apns-id", value: "id-\(round)", into: &buffer)
            expected.append(["apns-id", "id-\(round)"])
            blocks.append((size, Array(buffer.readableBytesView), expected))
        }
        let script = """
            import json, sys, hpack
            decoder = hpack.Decoder()
            for line in sys.stdin:
                size, block = json.loads(line)
                decoder.max_allowed_table_size = size
                print(json.dumps([[n, v] for n, v in decoder.decode(bytes(block), raw=False)]))
            """
        let input = blocks.map { "[\($0.size), [\($0.block.map(String.init).joined(separator: ","))]]\n" }.joined()
        let output = String(decoding: try ExternalTools.python(script, stdin: Array(input.utf8)), as: UTF8.self)
        let decoded = output.split(separator: "\n").map { line -> [[String]] in
            let document = try! JSONDocument(parsing: Array(line.utf8))
            return document.root.elements.map { pair in pair.elements.map { $0.stringValue ?? "" } }
        }
        #expect(decoded.count == blocks.count)
        for (index, pair) in zip(decoded, blocks).enumerated() {
            #expect(pair.0 == pair.1.expected, "block \(index)")
        }
        // Round 6 repeats round 3's topic, round 4's push type and round 0's token: with the path
        // (76 bytes) and the apns-id (14), the other six fields take a byte each.
        #expect(blocks[6].block.count == 76 + 14 + 6, "repeated fields are one index byte each")
    }
}
