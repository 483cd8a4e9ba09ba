import Foundation
import HeraldClientTestSupport
import HeraldHTTP2
import HeraldTestSupport
import NIOCore
import NIOHPACK
import Testing

/// The server session fed frames written by hand from RFC 9113, its requests' header blocks
/// written by NIOHPACK's encoder and its answers read back by NIOHPACK's decoder and Python's
/// hpack: every defence the mock relies on, each with the frames that attack it.
@Suite struct HTTP2ServerSessionTests {
    typealias Session = HTTP2ServerSession
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    static let second: UInt64 = 1_000_000_000

    /// One frame: the 9-byte header (RFC 9113 §4.1) and the payload.
    static func frame(_ type: UInt8, flags: UInt8 = 0, stream: UInt32 = 0, _ payload: [UInt8] = []) -> [UInt8] {
        [UInt8(payload.count >> 16 & 0xFF), UInt8(payload.count >> 8 & 0xFF), UInt8(payload.count & 0xFF), type, flags]
            + u32(stream) + payload
    }

    static func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }

    static func settings(_ values: [(UInt16, UInt32)] = []) -> [UInt8] {
        frame(0x4, values.flatMap { withUnsafeBytes(of: $0.0.bigEndian, Array.init) + u32($0.1) })
    }

    static let settingsAck = frame(0x4, flags: 0x1)
    static let request: [(String, String)] = [
        (":method", "POST"), (":scheme", "https"), (":path", "/3/device/740f4707"), (":authority", "api.push.apple.com"),
        ("apns-topic", "com.example.app"),
    ]

    /// A header block for `fields`, written by NIOHPACK's encoder (`encoder` keeps its table
    /// from block to block, as a client's does).
    static func block(_ fields: [(String, String)], encoder: inout HPACKEncoder) -> [UInt8] {
        var buffer = ByteBuffer()
        try! encoder.beginEncoding(allocator: ByteBufferAllocator())
        for (name, value) in fields { try! encoder.append(header: name, value: value) }
        var encoded = try! encoder.endEncoding()
        buffer.writeBuffer(&encoded)
        return Array(buffer.readableBytesView)
    }

    /// HEADERS, and CONTINUATION frames for a block larger than 16,384 bytes.
    static func headers(_ stream: UInt32, _ fields: [(String, String)] = request, endStream: Bool = true, encoder: inout HPACKEncoder) -> [UInt8] {
        let encoded = block(fields, encoder: &encoder)
        let pieces = stride(from: 0, to: max(encoded.count, 1), by: 16_384).map { Array(encoded[$0..<min(encoded.count, $0 + 16_384)]) }
        return pieces.enumerated().flatMap { index, piece in
            frame(index == 0 ? 0x1 : 0x9, flags: (index == pieces.count - 1 ? 0x4 : 0) | (index == 0 && endStream ? 0x1 : 0), stream: stream, piece)
        }
    }

    /// A client connection: the session started, the client's preface, SETTINGS and the
    /// acknowledgement of the server's SETTINGS read, the server's output taken.
    struct Client {
        var session: Session
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator(), useHuffmanEncoding: true)
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        var now: UInt64 = 1_000 * HTTP2ServerSessionTests.second

        init(configuration: Session.Configuration = Session.Configuration(), settings: [(UInt16, UInt32)] = [], acknowledge: Bool = true) throws {
            session = Session(configuration: configuration)
            session.start()
            _ = session.takeOutput()
            try feed(HTTP2ServerSessionTests.preface + HTTP2ServerSessionTests.settings(settings) + (acknowledge ? HTTP2ServerSessionTests.settingsAck : []))
            _ = session.takeOutput()
        }

        @discardableResult
        mutating func feed(_ bytes: [UInt8]) throws(HTTP2ConnectionError) -> [Session.Event] {
            var buffer = ByteBuffer(bytes: bytes)
            session.receive(&buffer, now: now)
            var events: [Session.Event] = []
            while let event = try session.nextEvent() { events.append(event) }
            return events
        }

        mutating func headers(_ stream: UInt32, _ fields: [(String, String)] = HTTP2ServerSessionTests.request, endStream: Bool = true) -> [UInt8] {
            HTTP2ServerSessionTests.headers(stream, fields, endStream: endStream, encoder: &encoder)
        }

        /// The frames written since the last call, each header block decoded.
        mutating func output() -> [Frame] {
            var buffer = session.takeOutput()
            var frames: [Frame] = []
            while buffer.readableBytes >= 9 {
                let length = Int(buffer.readInteger(as: UInt16.self)!) << 8 | Int(buffer.readInteger(as: UInt8.self)!)
                let type = buffer.readInteger(as: UInt8.self)!, flags = buffer.readInteger(as: UInt8.self)!
                let stream = buffer.readInteger(as: UInt32.self)! & 0x7FFF_FFFF
                var payload = buffer.readSlice(length: length)!
                var fields: [(String, String)] = []
                if type == 0x1 {
                    let decoded = try! decoder.decodeHeaders(from: &payload)
                    fields = decoded.map { ($0.name, $0.value) }
                }
                frames.append(Frame(type: type, flags: flags, stream: stream, payload: Array(payload.readableBytesView), fields: fields))
            }
            #expect(buffer.readableBytes == 0, "a partial frame in the output")
            return frames
        }
    }

    struct Frame {
        var type: UInt8
        var flags: UInt8
        var stream: UInt32
        var payload: [UInt8]
        var fields: [(String, String)]

        var errorCode: UInt32? {
            switch type {
            case 0x3: payload.reduce(0) { $0 << 8 | UInt32($1) }
            case 0x7: payload[4..<8].reduce(0) { $0 << 8 | UInt32($1) }
            default: nil
            }
        }
    }

    /// The connection error the bytes cause, with the GOAWAY the session queued.
    static func connectionError(_ client: inout Client, _ bytes: [UInt8]) -> (code: H2ErrorCode, message: String, goAway: UInt32?)? {
        do {
            try client.feed(bytes)
            return nil
        } catch {
            let last = client.output().last
            return (error.code, error.message, last?.type == 0x7 ? last?.errorCode : nil)
        }
    }

    // MARK: The preface

    @Test func theServersSettingsComeFirst() throws {
        var configuration = Session.Configuration()
        configuration.maximumConcurrentStreams = 1
        var session = Session(configuration: configuration)
        session.start()
        let bytes = Array(session.takeOutput().readableBytesView)
        #expect(bytes == Self.settings([(0x3, 1), (0x4, 65_535), (0x6, 16_384)]),
                "MAX_CONCURRENT_STREAMS 1, INITIAL_WINDOW_SIZE 65,535, MAX_HEADER_LIST_SIZE 16 KiB")
    }

    @Test func aClientMustStartWithThePrefaceAndSettings() throws {
        for (name, bytes) in [
            ("HTTP/1.1", Array("POST /3/device/x HTTP/1.1\r\nHost: a\r\n\r\n".utf8)),
            ("a TLS ClientHello", [0x16, 0x03, 0x01, 0x00, 0xA5, 0x01]),
            ("a PING before SETTINGS", Self.preface + Self.frame(0x6, Array(repeating: 0, count: 8))),
            ("a SETTINGS acknowledgement first", Self.preface + Self.settingsAck),
        ] {
            var session = Session()
            session.start()
            var buffer = ByteBuffer(bytes: bytes)
            session.receive(&buffer, now: 0)
            #expect(throws: HTTP2ConnectionError.self, "\(name)") { while try session.nextEvent() != nil {} }
        }
        // The preface split anywhere is still the preface.
        var session = Session()
        session.start()
        let whole = Self.preface + Self.settings()
        for byte in whole {
            var buffer = ByteBuffer(bytes: [byte])
            session.receive(&buffer, now: 0)
            #expect(try session.nextEvent() == nil)
        }
        #expect(session.hasReceivedSettings)
    }

    // MARK: Requests and answers

    @Test func aRequestIsReadAndAnswered() throws {
        var client = try Client()
        var events = try client.feed(client.headers(1, endStream: false) + Self.frame(0x0, stream: 1, Array("{\"aps\":{}}".utf8)))
        events += try client.feed(Self.frame(0x0, flags: 0x1, stream: 1, []))
        guard events.count == 3, case .request(1, let fields, false) = events[0], case .data(1, let body, false) = events[1],
              case .data(1, let end, true) = events[2]
        else { Issue.record("\(events)"); return }
        #expect(fields.map { "\($0.name): \($0.value)" } == Self.request.map { "\($0.0): \($0.1)" })
        #expect(String(buffer: body) == "{\"aps\":{}}" && end.readableBytes == 0)
        #expect(client.session.isOpen(1))
        let done = client.session.respond(stream: 1, status: 200, fields: [("apns-id", "E1"), ("apns-unique-id", "U1")], body: [])
        #expect(done)
        let frames = client.output()
        #expect(frames.count == 1 && frames[0].type == 0x1 && frames[0].flags == 0x5 && frames[0].stream == 1)
        #expect(frames[0].fields.map { "\($0.0): \($0.1)" } == [":status: 200", "apns-id: E1", "apns-unique-id: U1"])
        #expect(!client.session.isOpen(1) && !client.session.hasOpenStream(atOrBelow: 100))
        let again = client.session.respond(stream: 1, status: 200, fields: [], body: [])
        #expect(!again, "a stream is answered once")
    }

    @Test func answersWithBodiesAndEveryStatus() throws {
        var client = try Client()
        var expected: [String] = []
        for (index, status) in [200, 400, 403, 404, 405, 410, 413, 429, 500, 503].enumerated() {
            let id = UInt32(index * 2 + 1)
            try client.feed(client.headers(id))
            let body = Array("{\"reason\":\"R\(status)\"}".utf8)
            client.session.respond(stream: Int32(id), status: status, fields: [("content-type", "application/json"), ("apns-id", "E\(id)")], body: body)
            expected.append("\(id) \(status) \(String(decoding: body, as: UTF8.self))")
        }
        var seen: [String] = []
        var statusOf: [UInt32: String] = [:]
        for frame in client.output() {
            if frame.type == 0x1 {
                #expect(frame.flags & 0x1 == 0)
                statusOf[frame.stream] = frame.fields.first { $0.0 == ":status" }?.1
                #expect(frame.fields.contains { $0 == ("content-type", "application/json") })
            } else if frame.type == 0x0 {
                #expect(frame.flags & 0x1 == 1)
                seen.append("\(frame.stream) \(statusOf[frame.stream] ?? "?") \(String(decoding: frame.payload, as: UTF8.self))")
            }
        }
        #expect(seen == expected)
    }

    /// The answers' header blocks as Python's hpack decodes them: statuses from the static table
    /// and as literals, `content-type` kept in the table and named by index the second time.
    @Test(.ownThreads) func pythonHPACKReadsTheAnswers() throws {
        try ExternalTools.requirePython(modules: "hpack", package: "h2")
        var client = try Client(settings: [(0x1, 256)])
        var blocks: [String] = []
        for (index, status) in [200, 410, 500, 429].enumerated() {
            let id = Int32(index * 2 + 1)
            try client.feed(client.headers(UInt32(id)))
            client.session.respond(stream: id, status: status, fields: [("content-type", "application/json"), ("apns-id", "ID-\(index)")], body: [0x7B, 0x7D])
            var output = client.session.takeOutput()
            let length = Int(output.getInteger(at: output.readerIndex, as: UInt16.self)!) << 8 | Int(output.getInteger(at: output.readerIndex + 2, as: UInt8.self)!)
            output.moveReaderIndex(forwardBy: 9)
            blocks.append(output.readBytes(length: length)!.map { String(format: "%02x", $0) }.joined())
        }
        let script = """
            import sys, hpack
            decoder = hpack.Decoder()
            decoder.header_table_size = 256
            for line in sys.stdin.read().split():
                print(" ".join("%s=%s" % (n, v) for n, v in decoder.decode(bytes.fromhex(line), raw=False)))
            """
        let lines = String(decoding: try ExternalTools.python(script, stdin: Array(blocks.joined(separator: "\n").utf8)), as: UTF8.self)
            .split(separator: "\n").map(String.init)
        #expect(lines == (0..<4).map { ":status=\([200, 410, 500, 429][$0]) content-type=application/json apns-id=ID-\($0)" })
        #expect(blocks[1].count < blocks[0].count + 8, "content-type named by one index byte after the first answer: \(blocks)")
    }

    @Test func anAnswerBeforeTheRequestEndsStopsTheRest() throws {
        var client = try Client()
        try client.feed(client.headers(1, endStream: false))
        client.session.respond(stream: 1, status: 413, fields: [], body: [])
        let frames = client.output()
        #expect(frames.map(\.type) == [0x1, 0x3] && frames[1].errorCode == 0, "HEADERS, then RST_STREAM NO_ERROR (RFC 9113 §8.1)")
        // What the client sent before it read the reset is ignored.
        let events = try client.feed(Self.frame(0x0, flags: 0x1, stream: 1, [1, 2, 3]))
        #expect(events.isEmpty && client.output().filter { $0.type != 0x8 }.isEmpty)
    }

    @Test func trailersEndTheRequest() throws {
        var client = try Client()
        try client.feed(client.headers(1, endStream: false) + Self.frame(0x0, stream: 1, [0x7B, 0x7D]))
        let events = try client.feed(client.headers(1, [("x-checksum", "abc")], endStream: true))
        guard events.count == 1, case .data(1, let end, true) = events[0] else { Issue.record("\(events)"); return }
        #expect(end.readableBytes == 0)
    }

    @Test func resetsAreReportedWithWhetherTheStreamWasOpen() throws {
        var client = try Client()
        try client.feed(client.headers(1) + client.headers(3))
        client.session.respond(stream: 1, status: 200, fields: [], body: [])
        let events = try client.feed(Self.frame(0x3, stream: 1, Self.u32(8)) + Self.frame(0x3, stream: 3, Self.u32(8)))
        guard events.count == 2, case .reset(1, let first, false) = events[0], case .reset(3, let second, true) = events[1] else {
            Issue.record("\(events)")
            return
        }
        #expect(first == .cancel && second == .cancel)
        #expect(!client.session.isOpen(3))
    }

    // MARK: Connection errors

    /// Frames the protocol forbids a client, each with the connection error RFC 9113 gives it.
    static let connectionErrors: [(String, [UInt8], H2ErrorCode)] = [
        ("DATA on stream 0", frame(0x0, stream: 0, [1]), .protocolError),
        ("DATA on a stream never opened", frame(0x0, stream: 9, [1]), .protocolError),
        ("HEADERS on stream 0", frame(0x1, flags: 0x5, stream: 0, [0x82]), .protocolError),
        ("HEADERS on an even stream", frame(0x1, flags: 0x5, stream: 2, [0x82]), .protocolError),
        ("a frame larger than 16,384 bytes (refused from its header)", Array(frame(0x0, stream: 1, Array(repeating: 0, count: 16_385)).prefix(9)), .frameSizeError),
        ("PUSH_PROMISE", frame(0x5, flags: 0x4, stream: 1, u32(2) + [0x88]), .protocolError),
        ("CONTINUATION without HEADERS", frame(0x9, flags: 0x4, stream: 1, [0x82]), .protocolError),
        ("a header block interrupted", frame(0x1, stream: 5, [0x82]) + frame(0x6, u32(0) + u32(0)), .protocolError),
        ("a header block interrupted by an extension frame", frame(0x1, stream: 5, [0x82]) + frame(0xA, stream: 5, [1, 2]), .protocolError),
        ("CONTINUATION on another stream", frame(0x1, stream: 5, [0x82]) + frame(0x9, flags: 0x4, stream: 7, []), .protocolError),
        ("padding longer than the payload", frame(0x0, flags: 0x8, stream: 1, [5, 1, 2]), .protocolError),
        ("an undecodable header block", frame(0x1, flags: 0x5, stream: 5, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]), .compressionError),
        ("a table size above 4,096", frame(0x1, flags: 0x5, stream: 5, [0x3F, 0xE1, 0x3F, 0x82]), .compressionError),
        ("HEADERS on a stream answered and closed", frame(0x1, flags: 0x5, stream: 3, [0x82, 0x87, 0x84]), .streamClosed),
        ("SETTINGS on a stream", frame(0x4, stream: 1, []), .protocolError),
        ("SETTINGS of 5 bytes", frame(0x4, [0, 3, 0, 0, 1]), .frameSizeError),
        ("a SETTINGS acknowledgement with a payload", frame(0x4, flags: 0x1, [0, 3, 0, 0, 0, 1]), .frameSizeError),
        ("a SETTINGS acknowledgement for no SETTINGS", settingsAck, .protocolError),
        ("SETTINGS_ENABLE_PUSH 2", settings([(0x2, 2)]), .protocolError),
        ("SETTINGS_MAX_FRAME_SIZE below 16,384", settings([(0x5, 100)]), .protocolError),
        ("SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1", settings([(0x4, 0x8000_0000)]), .flowControlError),
        ("PING of 7 bytes", frame(0x6, [1, 2, 3, 4, 5, 6, 7]), .frameSizeError),
        ("PING on a stream", frame(0x6, stream: 1, u32(0) + u32(0)), .protocolError),
        ("GOAWAY of 4 bytes", frame(0x7, u32(0)), .frameSizeError),
        ("RST_STREAM on stream 0", frame(0x3, u32(8)), .protocolError),
        ("RST_STREAM of 3 bytes", frame(0x3, stream: 1, [0, 0, 8]), .frameSizeError),
        ("RST_STREAM on a stream never opened", frame(0x3, stream: 9, u32(8)), .protocolError),
        ("PRIORITY on stream 0", frame(0x2, [0, 0, 0, 1, 16]), .protocolError),
        ("WINDOW_UPDATE of 0 for the connection", frame(0x8, u32(0)), .protocolError),
        ("the connection's send window above 2^31-1", frame(0x8, u32(0x7FFF_FFFF)), .flowControlError),
        ("WINDOW_UPDATE of 5 bytes", frame(0x8, [0, 0, 0, 0, 1]), .frameSizeError),
        ("WINDOW_UPDATE on a stream never opened", frame(0x8, stream: 11, u32(1)), .protocolError),
    ]

    @Test(arguments: connectionErrors.indices)
    func forbiddenFramesEndTheConnection(_ index: Int) throws {
        let (name, bytes, code) = Self.connectionErrors[index]
        var client = try Client()
        // Stream 1 open (its body to come), stream 3 answered and closed.
        try client.feed(client.headers(1, endStream: false) + client.headers(3))
        client.session.respond(stream: 3, status: 200, fields: [], body: [])
        _ = client.output()
        guard let error = Self.connectionError(&client, bytes) else {
            Issue.record("\(name): no error")
            return
        }
        #expect(error.code == code, "\(name): \(error.message)")
        #expect(error.goAway == code.rawValue, "\(name): the last frame out is a GOAWAY with the code")
        // Nothing more is read or written.
        #expect(try client.feed(client.headers(21)).isEmpty && !client.session.hasOutput)
        let done = client.session.respond(stream: 1, status: 200, fields: [], body: [])
        #expect(!done)
    }

    // MARK: Stream errors

    /// Requests RFC 9113 §8 calls malformed, and other stream errors: each resets its stream
    /// only, with a reason, and the connection goes on.
    static let streamErrors: [(String, [(String, String)]?, H2ErrorCode)] = [
        ("an uppercase field name", request + [("Apns-Priority", "10")], .protocolError),
        ("a field name with a space", request + [("apns priority", "10")], .protocolError),
        ("connection", request + [("connection", "keep-alive")], .protocolError),
        ("transfer-encoding", request + [("transfer-encoding", "chunked")], .protocolError),
        ("upgrade", request + [("upgrade", "h2c")], .protocolError),
        ("keep-alive", request + [("keep-alive", "timeout=5")], .protocolError),
        ("proxy-connection", request + [("proxy-connection", "close")], .protocolError),
        ("te other than trailers", request + [("te", "gzip")], .protocolError),
        ("no :path", request.filter { $0.0 != ":path" }, .protocolError),
        ("no :method", request.filter { $0.0 != ":method" }, .protocolError),
        ("no :scheme", request.filter { $0.0 != ":scheme" }, .protocolError),
        ("an empty :path", request.map { $0.0 == ":path" ? (":path", "") : $0 }, .protocolError),
        ("a pseudo-header after a regular field", request + [(":authority", "x")], .protocolError),
        ("a response pseudo-header", [(":status", "200")] + request, .protocolError),
        ("an unknown pseudo-header", [(":protocol", "websocket")] + request, .protocolError),
        (":method twice", [(":method", "GET")] + request, .protocolError),
        ("CONNECT with a :path", [(":method", "CONNECT"), (":authority", "a:443"), (":path", "/")], .protocolError),
        ("a value with a line feed", request + [("apns-topic", "com.example\nx: y")], .protocolError),
        ("a value with NUL", request + [("x-custom", "a\u{0}b")], .protocolError),
        ("content-length not a number", request + [("content-length", "12a")], .protocolError),
        ("two content-length values", request + [("content-length", "3"), ("content-length", "4")], .protocolError),
        ("no body, though content-length says 3", request + [("content-length", "3")], .protocolError),
    ]

    @Test(arguments: streamErrors.indices)
    func malformedRequestsResetOnlyTheirStream(_ index: Int) throws {
        let (name, fields, code) = Self.streamErrors[index]
        var client = try Client()
        let events = try client.feed(client.headers(1, fields!))
        guard events.count == 1, case .streamError(1, let reported, let reason) = events[0] else {
            Issue.record("\(name): \(events)")
            return
        }
        #expect(reported == code, "\(name): \(reason)")
        let frames = client.output()
        #expect(frames.count == 1 && frames[0].type == 0x3 && frames[0].errorCode == code.rawValue, "\(name)")
        // The next request on the connection is read.
        let next = try client.feed(client.headers(3))
        #expect(next.count == 1 && { if case .request(3, _, true) = next[0] { true } else { false } }(), "\(name): \(next)")
    }

    @Test func bodiesAreHeldToTheirContentLength() throws {
        var client = try Client()
        let withLength = Self.request + [("content-length", "4")]
        // Too long, too short at END_STREAM, then just right.
        var events = try client.feed(client.headers(1, withLength, endStream: false) + Self.frame(0x0, stream: 1, [1, 2, 3, 4, 5]))
        #expect(events.count == 2 && { if case .streamError(1, .protocolError, _) = events[1] { true } else { false } }(), "\(events)")
        events = try client.feed(client.headers(3, withLength, endStream: false) + Self.frame(0x0, flags: 0x1, stream: 3, [1, 2, 3]))
        #expect(events.count == 2 && { if case .streamError(3, .protocolError, _) = events[1] { true } else { false } }(), "\(events)")
        events = try client.feed(client.headers(5, withLength, endStream: false) + Self.frame(0x0, flags: 0x1, stream: 5, [1, 2, 3, 4]))
        #expect(events.count == 2 && { if case .data(5, _, true) = events[1] { true } else { false } }(), "\(events)")
        // DATA after END_STREAM.
        events = try client.feed(client.headers(7) + Self.frame(0x0, stream: 7, [1]))
        #expect(events.count == 2 && { if case .streamError(7, .streamClosed, _) = events[1] { true } else { false } }(), "\(events)")
        // A stream depending on itself.
        events = try client.feed(Self.frame(0x1, flags: 0x25, stream: 9, Self.u32(9) + [16] + Self.block(Self.request, encoder: &client.encoder)))
        #expect(events.count == 1 && { if case .streamError(9, .protocolError, _) = events[0] { true } else { false } }(), "\(events)")
    }

    /// The session returns what it reads once half a window is used, for the stream and the
    /// connection, so a client streaming a large body is never held up (the mock keeps only the
    /// first 64 KB of a body; the connection's budget bounds the rest).
    @Test func theReceiveWindowsAreReturnedAsTheyAreRead() throws {
        var client = try Client()
        try client.feed(client.headers(1, endStream: false))
        for _ in 0..<2 { try client.feed(Self.frame(0x0, stream: 1, Array(repeating: 0x61, count: 16_384))) }
        let updates = client.output().filter { $0.type == 0x8 }
        #expect(updates.map(\.stream).sorted() == [0, 1], "\(updates.map(\.stream))")
        #expect(updates.allSatisfy { $0.payload == Self.u32(32_768) })
        // A megabyte on one stream: every frame read, the windows returned as they go.
        try client.feed(client.headers(3, endStream: false))
        var received = 0
        for index in 0..<64 {
            for event in try client.feed(Self.frame(0x0, flags: index == 63 ? 1 : 0, stream: 3, Array(repeating: 0x62, count: 16_384))) {
                if case .data(3, let data, _) = event { received += data.readableBytes }
            }
        }
        let returned = client.output().filter { $0.type == 0x8 }
        let toConnection = returned.filter { $0.stream == 0 }.reduce(0) { $0 + Int($1.payload.reduce(0) { $0 << 8 | UInt32($1) }) }
        #expect(received == 1 << 20)
        #expect(toConnection > (1 << 20) - 32_768 && toConnection <= 1 << 20, "\(toConnection)")
    }

    // MARK: Defences

    @Test func aContinuationFloodEndsTheConnection() throws {
        var client = try Client()
        let block = Self.block(Self.request, encoder: &client.encoder)
        // Five CONTINUATION frames are a header block; a sixth is a flood, even an empty one.
        let five = Self.frame(0x1, stream: 1, Array(block.prefix(1))) + (0..<4).flatMap { _ in Self.frame(0x9, stream: 1, []) }
            + Self.frame(0x9, flags: 0x5, stream: 1, Array(block.dropFirst()))
        let events = try client.feed(five)
        #expect(events.count == 1)
        let flood = Self.frame(0x1, stream: 3, []) + (0..<6).flatMap { _ in Self.frame(0x9, stream: 3, []) }
        #expect(Self.connectionError(&client, flood)?.code == .enhanceYourCalm)
    }

    @Test func headerBlocksAreBoundedInBytesAndInTheirDecodedSize() throws {
        // Over 64 KB across CONTINUATION frames of 16 KB.
        var large = try Client()
        let pieces = Self.frame(0x1, stream: 1, Array(repeating: 0, count: 16_384))
            + (0..<4).flatMap { _ in Self.frame(0x9, stream: 1, Array(repeating: 0, count: 16_384)) }
        #expect(Self.connectionError(&large, pieces)?.code == .enhanceYourCalm)

        // Literal fields adding up to more than SETTINGS_MAX_HEADER_LIST_SIZE (16 KB).
        var literal = try Client()
        let big = Self.request + (0..<5).map { ("x-big-\($0)", String(repeating: "v", count: 4_000)) }
        #expect(Self.connectionError(&literal, literal.headers(1, big))?.code == .enhanceYourCalm)

        // An HPACK bomb: a 4,000-byte entry put in the table once, then named by one byte five
        // times in a block of a few bytes (requests written by hand, so that no other entry
        // enters the table).
        var bomb = try Client()
        let request: [UInt8] = [0x83, 0x87, 0x04, 0x0B] + Array("/3/device/x".utf8)
        let entry: [UInt8] = [0x40, 0x05] + Array("x-big".utf8) + [0x7F, 0xA1, 0x1E] + Array(repeating: 0x61, count: 4_000)
        let events = try bomb.feed(Self.frame(0x1, flags: 0x5, stream: 1, request + entry))
        guard events.count == 1, case .request(1, let fields, true) = events[0] else { Issue.record("\(events)"); return }
        #expect(fields.last?.name == "x-big" && fields.last?.value.utf8.count == 4_000, "the entry itself is within bounds")
        let tiny = request + Array(repeating: 0xBE, count: 5)
        #expect(tiny.count < 32)
        #expect(Self.connectionError(&bomb, Self.frame(0x1, flags: 0x5, stream: 3, tiny))?.code == .enhanceYourCalm)
        // Named three times it is within bounds (12 KB): the table holds it.
        var three = try Client()
        try three.feed(Self.frame(0x1, flags: 0x5, stream: 1, request + entry))
        let within = try three.feed(Self.frame(0x1, flags: 0x5, stream: 3, request + Array(repeating: 0xBE, count: 3)))
        #expect(within.count == 1, "\(within)")
    }

    @Test func pingAndSettingsFloodsEndTheConnectionButAPaceDoesNot() throws {
        for flood in [Self.frame(0x6, Array(repeating: 1, count: 8)), Self.settings(), Self.frame(0x2, stream: 1, [0, 0, 0, 0, 16])] {
            var client = try Client()
            // 200 in 30 seconds are allowed (the client's first SETTINGS and its acknowledgement
            // of the server's are two).
            let error = Self.connectionError(&client, (0..<198).flatMap { _ in flood })
            #expect(error == nil)
            #expect(Self.connectionError(&client, flood)?.code == .enhanceYourCalm)
        }
        // One a second for ten minutes is not a flood.
        var paced = try Client()
        for _ in 0..<600 {
            paced.now += Self.second
            try paced.feed(Self.frame(0x6, Array(repeating: 2, count: 8)))
        }
        #expect(paced.output().filter { $0.type == 0x6 && $0.flags == 0x1 }.count == 600, "each PING answered")
    }

    @Test func emptyDataFramesInARowEndTheConnection() throws {
        var client = try Client()
        try client.feed(client.headers(1, endStream: false))
        try client.feed(Self.frame(0x0, stream: 1, []))
        #expect(Self.connectionError(&client, Self.frame(0x0, stream: 1, []))?.code == .enhanceYourCalm)
        // An empty DATA with END_STREAM after data is a normal end.
        var normal = try Client()
        let events = try normal.feed(normal.headers(1, endStream: false) + Self.frame(0x0, stream: 1, [1]) + Self.frame(0x0, stream: 1, [])
            + Self.frame(0x0, flags: 0x1, stream: 1, []))
        #expect(events.count == 4)
    }

    @Test func streamsBeyondTheLimitAreRefusedOnceTheClientKnowsIt() throws {
        var configuration = Session.Configuration()
        configuration.maximumConcurrentStreams = 2
        // Before the client acknowledges the SETTINGS, 100 streams (it may not have read them).
        var early = try Client(configuration: configuration, acknowledge: false)
        let opened = try early.feed((0..<3).flatMap { early.headers(UInt32($0 * 2 + 1), endStream: false) })
        #expect(opened.count == 3 && opened.allSatisfy { if case .request = $0 { true } else { false } })
        // Acknowledged: two at a time; the third is refused (not processed: safe to send again).
        var client = try Client(configuration: configuration)
        var events = try client.feed((0..<3).flatMap { client.headers(UInt32($0 * 2 + 1), endStream: false) })
        #expect(events.count == 3 && { if case .streamError(5, .refusedStream, _) = events[2] { true } else { false } }(), "\(events)")
        // A raise applies at once; a lower limit once acknowledged.
        client.session.announceMaximumConcurrentStreams(3)
        events = try client.feed(client.headers(7, endStream: false))
        #expect(events.count == 1 && { if case .request(7, _, false) = events[0] { true } else { false } }())
        client.session.announceMaximumConcurrentStreams(1)
        events = try client.feed(client.headers(9, endStream: false) + Self.settingsAck)
        #expect(events.count == 1 && { if case .streamError(9, .refusedStream, _) = events[0] { true } else { false } }(), "3 open, limit 3: \(events)")
        #expect(client.session.streamLimit == 3, "not acknowledged yet")
        try client.feed(Self.settingsAck)
        #expect(client.session.streamLimit == 1)
    }

    @Test func refusedStreamsInAFloodEndTheConnection() throws {
        var configuration = Session.Configuration()
        configuration.maximumConcurrentStreams = 1
        var client = try Client(configuration: configuration)
        try client.feed(client.headers(1, endStream: false))
        var refused = 0
        var failure: H2ErrorCode?
        for index in 1...300 {
            do {
                for event in try client.feed(client.headers(UInt32(index * 2 + 1))) {
                    if case .streamError(_, .refusedStream, _) = event { refused += 1 }
                }
            } catch {
                failure = error.code
                break
            }
        }
        #expect(refused == 200 && failure == .enhanceYourCalm, "\(refused) refused, then \(String(describing: failure))")
    }

    @Test func anAnswerHeldByAZeroWindowWaitsForAWindowUpdate() throws {
        // The client allows no response body until it says so.
        var client = try Client(settings: [(0x4, 0)])
        try client.feed(client.headers(1) + client.headers(3))
        let body = Array(repeating: UInt8(0x41), count: 1_000)
        client.session.respond(stream: 1, status: 400, fields: [], body: body)
        client.session.respond(stream: 3, status: 400, fields: [], body: body)
        #expect(client.output().map(\.type) == [0x1, 0x1], "headers only")
        #expect(client.session.hasOpenStream(atOrBelow: 1) && client.session.openStreamCount == 2)
        let done = client.session.respond(stream: 1, status: 200, fields: [], body: [])
        #expect(!done, "answered already")
        // 600 bytes for stream 3, then the rest with a larger initial window.
        try client.feed(Self.frame(0x8, stream: 3, Self.u32(600)))
        var data = client.output()
        #expect(data.map(\.stream) == [3] && data[0].payload.count == 600 && data[0].flags == 0)
        try client.feed(Self.settings([(0x4, 10_000)]))
        data = client.output().filter { $0.type == 0x0 }
        #expect(data.map(\.stream) == [1, 3] && data.map(\.payload.count) == [1_000, 400] && data.allSatisfy { $0.flags == 1 })
        #expect(client.session.openStreamCount == 0)
    }

    @Test func theConnectionWindowHoldsEveryAnswer() throws {
        var client = try Client()
        let body = Array(repeating: UInt8(0x42), count: 16_384)
        for index in 0..<5 {
            try client.feed(client.headers(UInt32(index * 2 + 1)))
            client.session.respond(stream: Int32(index * 2 + 1), status: 200, fields: [], body: body)
        }
        var sent = client.output().filter { $0.type == 0x0 }.reduce(0) { $0 + $1.payload.count }
        #expect(sent == 65_535, "the connection's initial window")
        try client.feed(Self.frame(0x8, Self.u32(100_000)))
        sent += client.output().filter { $0.type == 0x0 }.reduce(0) { $0 + $1.payload.count }
        #expect(sent == 5 * 16_384 && client.session.openStreamCount == 0)
    }

    // MARK: Going away

    @Test func afterTheGoAwayStreamsAboveItAreCountedAndNothingIsAnswered() throws {
        var client = try Client()
        try client.feed(client.headers(1) + client.headers(3, endStream: false))
        client.session.goAway(lastStreamID: 1, code: .noError, debugData: Array("{\"reason\":\"Shutdown\"}".utf8))
        let goAway = client.output()
        #expect(goAway.count == 1 && goAway[0].type == 0x7 && goAway[0].payload.prefix(4) == Self.u32(1)[...])
        #expect(String(decoding: goAway[0].payload.dropFirst(8), as: UTF8.self) == "{\"reason\":\"Shutdown\"}")
        // Streams opened after it, their frames split across reads, are reported once each;
        // everything else is dropped without an answer.
        let after = client.headers(5) + Self.frame(0x0, stream: 3, Array(repeating: 0, count: 3_000)) + Self.frame(0x6, Array(repeating: 0, count: 8))
            + client.headers(7, endStream: false) + Self.frame(0x0, flags: 1, stream: 7, [1, 2])
        var events: [Session.Event] = []
        var index = 0
        while index < after.count {
            let end = min(after.count, index + 7)
            events += try client.feed(Array(after[index..<end]))
            index = end
        }
        let streams = events.compactMap { if case .notProcessed(let id) = $0 { id } else { nil } }
        #expect(streams == [5, 7], "\(events)")
        #expect(!client.session.hasOutput && !client.session.respond(stream: 1, status: 200, fields: [], body: []))
    }

    @Test func framesForAStreamTheServerResetAreIgnored() throws {
        var client = try Client()
        try client.feed(client.headers(1, endStream: false))
        let done = client.session.reset(stream: 1, code: .enhanceYourCalm)
        #expect(done)
        _ = client.output()
        let events = try client.feed(Self.frame(0x0, stream: 1, [1, 2]) + client.headers(1, [("x-trailer", "t")]) + Self.frame(0x8, stream: 1, Self.u32(5)))
        #expect(events.isEmpty && client.output().isEmpty)
    }
}

extension HTTP2ServerSession.Event: CustomStringConvertible {
    public var description: String {
        switch self {
        case .request(let id, let headers, let end): "request(\(id), \(headers.count) fields, end \(end))"
        case .data(let id, let data, let end): "data(\(id), \(data.readableBytes) bytes, end \(end))"
        case .reset(let id, let code, let open): "reset(\(id), \(code), open \(open))"
        case .streamError(let id, let code, let reason): "streamError(\(id), \(code): \(reason))"
        case .goAway(let last, let code): "goAway(\(last), \(code))"
        case .notProcessed(let id): "notProcessed(\(id))"
        }
    }
}

/// The fuzzer's properties (``HTTP2ServerSessionChecks``) on its saved inputs and seeds, and on
/// random frames from a seeded generator.
@Suite struct HTTP2ServerSessionFuzzTests {
    @Test("saved fuzz inputs", arguments: Fixtures.fuzzInputs("FuzzHTTP2Server"))
    func savedFuzzInputs(_ path: String) throws {
        let bytes = try Fixtures.bytes(path)
        #expect(HTTP2ServerSessionChecks.check(bytes) == [], "\(path)")
    }

    /// Frames of every type with random flags, streams and payloads (HPACK blocks among them, as
    /// random bytes and as a valid request), after a random mode and split.
    @Test(.ownThreads) func randomFrames() {
        var generator = SeededGenerator(seed: 91_130)
        var errors = 0, answered = 0
        for _ in 0..<3_000 {
            // Each run is a new connection: its blocks start from an empty table.
            var encoder = HPACKEncoder(allocator: ByteBufferAllocator(), useHuffmanEncoding: true)
            var bytes: [UInt8] = [UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator)]
            // Half the runs open with well-formed requests, so the frames after them meet streams.
            if Bool.random(using: &generator) {
                for stream in [1, 3, 5] as [UInt32] {
                    bytes += HTTP2ServerSessionTests.frame(0x1, flags: 0x5, stream: stream, HTTP2ServerSessionTests.block(HTTP2ServerSessionTests.request, encoder: &encoder))
                }
            }
            for _ in 0..<Int.random(in: 1...12, using: &generator) {
                let type = UInt8.random(in: 0...10, using: &generator)
                let stream = [0, 1, 3, 5, 7, 9, 11, 2, UInt32.random(in: 0...99, using: &generator)].randomElement(using: &generator)!
                var payload: [UInt8]
                if type == 1, Bool.random(using: &generator) {
                    payload = HTTP2ServerSessionTests.block(HTTP2ServerSessionTests.request, encoder: &encoder)
                } else {
                    payload = (0..<Int.random(in: 0...20, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                }
                let flags = type == 1 && Bool.random(using: &generator) ? 0x5 : UInt8.random(in: 0...255, using: &generator) & 0x2D
                bytes += HTTP2ServerSessionTests.frame(type, flags: flags, stream: stream, payload)
            }
            let violations = HTTP2ServerSessionChecks.check(bytes)
            #expect(violations == [], "\(bytes)")
            var session = HTTP2ServerSession()
            session.start()
            _ = session.takeOutput()
            var buffer = ByteBuffer(bytes: HTTP2ServerSessionTests.preface + HTTP2ServerSessionTests.settings() + bytes.dropFirst(2))
            session.receive(&buffer, now: 0)
            do {
                while let event = try session.nextEvent() { if case .request = event { answered += 1 } }
            } catch {
                errors += 1
            }
        }
        // Both kinds of outcome are reached.
        #expect(errors > 500 && answered > 100, "connection errors \(errors), requests \(answered)")
    }
}
