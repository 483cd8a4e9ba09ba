import Foundation
import HeraldAuth
import HeraldMock
import HeraldProtocol
import NIOCore
import NIOEmbedded
import NIOHPACK

/// Properties of the mock's provider connection under any client behaviour, shared by the
/// fuzzer (`FuzzMockConnection`) and the tests that replay its findings.
///
/// The input is read as a script of client actions, each chosen by one byte and shaped by the
/// bytes after it: requests (HEADERS, optionally split into CONTINUATION, with pseudo-headers,
/// APNs headers and a provider token taken from a vocabulary or from the input), DATA (real
/// payloads, broken JSON, oversized bodies or input bytes), RST_STREAM, WINDOW_UPDATE,
/// SETTINGS, PING, PRIORITY, GOAWAY, raw bytes, fault rules, a client that stops reading (the
/// mock's writes are then buffered), and the passing of time (which fires delays, GOAWAY grace
/// periods and the idle timeout). The bytes go through the very
/// pipeline a real connection gets (without TLS) in an `EmbeddedChannel`.
///
/// Checked: nothing crashes; what the mock writes parses as HTTP/2 frames whose header blocks
/// decode; each stream is answered at most once, and every answer starts with a `:status`;
/// after the mock's GOAWAY, no stream above its last-stream-id is answered.
public enum MockConnectionChecks {
    static let keyID = try! KeyID("FUZZ123456")
    static let teamID = try! TeamID("TEAM123456")
    static let signingKey = ProviderSigningKey.generate(keyID: keyID, teamID: teamID)
    static let now = Date(timeIntervalSince1970: 1_790_000_000)
    static let validToken = ProviderTokenSigner(key: signingKey, now: { now }).token().rawValue
    static let tokens = [
        "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad",
        "0000000000000000000000000000000000000000000000000000000000000001",
        String(repeating: "ab", count: 100),
    ]
    static let faults = [
        "delay=300ms", "goaway=Shutdown", "goaway=Shutdown/before", "reset", "reset=refused-stream", "close", "hang",
        "max-streams=2", "status=500", "status=429,every=2", "status=410/Unregistered", "delay=2s,times=1",
    ]
    static let values = [
        "", "com.example.app", "com.example.app.voip", "com.example.app.push-type.liveactivity", "alert", "background",
        "liveactivity", "voip", "10", "5", "1", "0", "4102444800", "-1", "collapse", "0a4b1f3e-2c5d-4e6f-8a9b-0c1d2e3f4a5b",
        "0A4B1F3E-2C5D-4E6F-8A9B-0C1D2E3F4A5B", "not-a-uuid", "bearer junk", "application/json", "5", "65536",
    ]
    static let headerNames = [
        "apns-topic", "apns-push-type", "apns-priority", "apns-expiration", "apns-collapse-id", "apns-id",
        "authorization", "content-type", "content-length", "apns-channel-id", "te", "connection", "x-custom",
    ]
    static let bodies: [[UInt8]] = [
        Array(#"{"aps":{"alert":{"title":"Hello","body":"World"},"badge":3,"sound":"default","thread-id":"t"}}"#.utf8),
        Array(#"{"aps":{"content-available":1}}"#.utf8),
        Array(#"{"aps":{"timestamp":1790000000,"event":"update","content-state":{"score":1}}}"#.utf8),
        Array(#"{"aps":{"alert":"hi""#.utf8),
        Array(#"{"aps":{"alert":{"loc-key":"INVITE","loc-args":["A","B"]}},"custom":[1,2,{"x":null}]}"#.utf8),
        Array(repeating: UInt8(ascii: " "), count: 5_000),
        Array(repeating: UInt8(ascii: "a"), count: 70_000),
    ]

    /// A script that mostly follows the protocol, so that it reaches the mock's judgement
    /// rather than NIOHTTP2's refusals: requests (HEADERS then DATA) with the odd flag, field or
    /// body changed, time passing, fault rules, resets, window updates, pings, and now and then
    /// something a client should not send.
    public static func randomScript<G: RandomNumberGenerator>(using generator: inout G) -> [UInt8] {
        func random(_ range: ClosedRange<UInt8>) -> UInt8 { UInt8.random(in: range, using: &generator) }
        func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &generator) < percent }
        var script: [UInt8] = []
        for _ in 0..<Int.random(in: 1...40, using: &generator) {
            switch Int.random(in: 0..<100, using: &generator) {
            case 0..<50:  // a request
                let flags: UInt8 = chance(80) ? 0 : [2 | random(0...15) << 4, 4, 8, 1][Int(random(0...3))]
                let shape: UInt8 = chance(75) ? 0 : chance(50) ? random(1...2) << 4 : random(0...255)
                script += [0, 0, flags, shape]
                if shape & 4 == 0 { script.append(random(0...3)) }
                if chance(70) {  // apns-topic: com.example.app, and maybe apns-push-type: alert and apns-priority: 10
                    let extra = random(0...2)
                    script += [1 + extra, 0, 1] + [[1, 4], [2, 8]].prefix(Int(extra)).flatMap { $0 }
                } else {
                    let fields = random(0...5)
                    script.append(fields)
                    for _ in 0..<fields {
                        script += [random(0...UInt8(headerNames.count - 1)), chance(90) ? random(0...UInt8(values.count - 1)) : random(200...230)]
                        if let last = script.last, last >= 200 { script += (200..<last).map { _ in random(32...126) } }
                    }
                }
                if flags & 4 != 0 { script += [random(0...7), random(0...255)] }
                if flags & 1 == 0 {
                    let body: UInt8 = chance(90) ? random(0...UInt8(bodies.count - 1)) : random(200...210)
                    script += [3, 160, chance(90) ? 1 : 3 | random(0...15) << 4, body]
                    if body >= 200 { script += (0..<(Int(body) - 200) * 4).map { _ in random(0...255) } }
                }
            case 50..<62: script += [12, random(0...80)]  // time passes
            case 62..<68: script += [14, random(0...255)]  // a fault rule
            case 68..<70: script += [13, random(0...1)]  // the client stops or starts reading
            case 70..<75: script += [5, random(160...170), random(0...13)]  // RST_STREAM
            case 75..<80: script += [6, chance(50) ? random(0...127) : random(160...170), 0, 0, random(0...255), random(1...255)]  // WINDOW_UPDATE
            case 80..<85: script += [8, random(0...1)] + (0..<8).map { _ in random(0...255) }  // PING
            case 85..<89: script += [7, 1, random(0...7), 0, 0, random(0...255), random(0...255)]  // SETTINGS
            case 89..<92: script += [9, random(160...170), 0, 0, 0, random(0...9), random(0...255)]  // PRIORITY
            case 92..<95: script += [4, random(160...170), random(0...1), random(0...6)]  // DATA on a stream seen before
            case 95..<97: script += [10, 0, 0, 0, random(0...9), random(0...2)]  // the client's GOAWAY
            default:  // stray bytes
                let count = random(1...12)
                script += [11, count] + (0..<count).map { _ in random(0...255) }
            }
        }
        return script
    }

    /// What one script did.
    public struct Report: Sendable {
        /// What was violated (empty when all holds).
        public var violations: [String]
        /// The `:status` of each answered stream.
        public var statuses: [UInt32: String]
        /// Whether the mock sent GOAWAY.
        public var sawGoAway: Bool
        /// How many of the script's actions ran before the connection closed or the script ended.
        public var steps = 0
    }

    /// Runs the script in `bytes`; returns what was violated (empty when all holds).
    public static func check(_ bytes: [UInt8]) -> [String] { run(bytes).violations }

    /// Runs the script in `bytes`, at most `maximumSteps` of its actions.
    public static func run(_ bytes: [UInt8], maximumSteps: Int = 300) -> Report {
        var configuration = MockConfiguration()
        configuration.transport = .plaintext
        configuration.apiPort = nil
        configuration.channelPort = nil
        configuration.keys = [signingKey.publicKey]
        configuration.now = { now }
        configuration.idleTimeout = .seconds(30)
        configuration.maximumConcurrentStreams = 8
        guard let server = try? MockAPNsServer(configuration: configuration) else {
            return Report(violations: ["the mock could not be made"], statuses: [:], sawGoAway: false)
        }
        let channel = EmbeddedChannel()
        do {
            try server.configureProviderConnection(on: channel)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        } catch {
            return Report(violations: ["the connection could not be set up: \(error)"], statuses: [:], sawGoAway: false)
        }
        var script = Script(bytes: bytes, server: server)
        var output = OutputChecker()
        var out = ByteBuffer()
        out.writeString("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        script.settings(into: &out, count: 0)
        var steps = 0
        while channel.isActive, steps < maximumSteps, let op = script.next() {
            steps += 1
            script.perform(op, into: &out, channel: channel)
            if out.readableBytes > 0 {
                _ = try? channel.writeInbound(out)
                out.clear()
            }
            output.decoder.maxDynamicTableLength = script.largestHeaderTable
            output.read(channel)
        }
        // The client goes away; whatever was scheduled runs.
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        output.read(channel)
        _ = try? channel.finish(acceptAlreadyClosed: true)
        return Report(violations: output.violations, statuses: output.statuses, sawGoAway: output.goAwayLastStream != nil, steps: steps)
    }

    /// The client side: reads the input as actions and writes their frames.
    struct Script {
        var bytes: [UInt8]
        var index = 0
        let server: MockAPNsServer
        var nextStream: UInt32 = 1
        var opened: [UInt32] = []
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        /// The largest SETTINGS_HEADER_TABLE_SIZE sent.
        var largestHeaderTable = 4_096

        init(bytes: [UInt8], server: MockAPNsServer) {
            self.bytes = bytes
            self.server = server
        }

        mutating func next() -> UInt8? {
            guard index < bytes.count else { return nil }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func byte() -> UInt8 { next() ?? 0 }

        mutating func take(_ count: Int) -> [UInt8] {
            let end = min(bytes.count, index + count)
            defer { index = end }
            return Array(bytes[index..<end])
        }

        mutating func word() -> UInt32 {
            take(4).reduce(0) { $0 << 8 | UInt32($1) }
        }

        /// A new stream mostly, else one opened before, the connection, or an even (server) id.
        mutating func stream() -> UInt32 { stream(choice: byte()) }

        mutating func stream(choice: UInt8) -> UInt32 {
            if choice < 160 || opened.isEmpty {
                let id = nextStream
                nextStream += 2
                opened.append(id)
                return id
            }
            switch choice {
            case 250: return 0
            case 251...255: return UInt32(choice - 248) * 2
            default: return opened[opened.count - 1 - Int(choice - 160) % opened.count]  // 160: the newest
            }
        }

        mutating func perform(_ op: UInt8, into out: inout ByteBuffer, channel: EmbeddedChannel) {
            switch op % 15 {
            case 0, 1, 2: headers(into: &out)
            case 3, 4: data(into: &out)
            case 5: frame(3, flags: 0, stream: stream(), payload: Self.be32(UInt32(byte() % 14)), into: &out)
            case 6:
                let choice = byte()
                frame(8, flags: 0, stream: choice < 128 ? 0 : stream(choice: choice), payload: Self.be32(word() & 0x7fff_ffff), into: &out)
            case 7: settings(into: &out, count: Int(byte() % 4))
            case 8: frame(6, flags: byte() & 1, stream: 0, payload: take(8), into: &out)
            case 9: frame(2, flags: 0, stream: stream(), payload: Self.be32(word() & 0x7fff_ffff) + [byte()], into: &out)
            case 10: frame(7, flags: 0, stream: 0, payload: Self.be32(word() & 0x7fff_ffff) + Self.be32(UInt32(byte() % 3)), into: &out)
            case 11: out.writeBytes(take(Int(byte() % 64)))
            case 12: channel.embeddedEventLoop.advanceTime(by: .milliseconds(Int64(byte()) * 50))
            case 13:
                // The client stops reading (or starts again): the mock's writes are buffered.
                channel.isWritable = byte() & 1 == 1
                channel.pipeline.fireChannelWritabilityChanged()
            default:
                if let rule = try? FaultRule(parsing: MockConnectionChecks.faults[Int(byte()) % MockConnectionChecks.faults.count]) {
                    server.addFault(rule)
                }
            }
        }

        mutating func settings(into out: inout ByteBuffer, count: Int) {
            var payload: [UInt8] = []
            for _ in 0..<count {
                let (identifier, value) = (byte() % 8, word())
                payload += [0, identifier] + Self.be32(value)
                // The mock's encoder may then use a table this large.
                if identifier == 1 { largestHeaderTable = max(largestHeaderTable, Int(value)) }
            }
            frame(4, flags: count == 0 && index > 0 && byte() & 1 == 1 ? 1 : 0, stream: 0, payload: payload, into: &out)
        }

        mutating func headers(into out: inout ByteBuffer) {
            let id = stream()
            let flags = byte()
            var fields: [(String, String)] = []
            let shape = byte()
            if shape & 1 == 0 { fields.append((":method", shape & 0x80 == 0 ? "POST" : "GET")) }
            if shape & 2 == 0 { fields.append((":scheme", "https")) }
            if shape & 4 == 0 {
                let token = MockConnectionChecks.tokens[Int(byte()) % MockConnectionChecks.tokens.count]
                let paths = ["/3/device/\(token)", "/4/broadcast/apps/com.example.app", "/1/apps/com.example.app/channels", "/", "/3/device/"]
                fields.append((":path", paths[Int(shape >> 4) % paths.count]))
            }
            if shape & 8 == 0 { fields.append(("authorization", "bearer \(MockConnectionChecks.validToken)")) }
            for _ in 0..<Int(byte() % 6) {
                let name = MockConnectionChecks.headerNames[Int(byte()) % MockConnectionChecks.headerNames.count]
                let pick = byte()
                let value = pick < 200
                    ? MockConnectionChecks.values[Int(pick) % MockConnectionChecks.values.count]
                    : String(decoding: take(Int(pick - 200)), as: UTF8.self)
                fields.append((name, value))
            }
            if shape & 0x40 != 0, !fields.isEmpty { fields.swapAt(0, fields.count - 1) }
            var block = ByteBuffer()
            do {
                try encoder.beginEncoding(allocator: ByteBufferAllocator())
                try encoder.append(headers: fields.map { (name: $0.0, value: $0.1) })
                block = try encoder.endEncoding()
            } catch {
                return
            }
            var bytes = Array(block.readableBytesView)
            var headerFlags: UInt8 = flags & 1  // END_STREAM
            var prefix: [UInt8] = []
            if flags & 2 != 0 {  // PADDED
                let padding = flags >> 4
                headerFlags |= 0x8
                prefix.append(padding)
                bytes += Array(repeating: 0, count: Int(padding))
            }
            if flags & 4 != 0 {  // PRIORITY
                headerFlags |= 0x20
                prefix += Self.be32(UInt32(byte() % 8)) + [byte()]
            }
            if flags & 8 != 0, bytes.count > 1 {  // split into HEADERS and CONTINUATION
                let half = bytes.count / 2
                frame(1, flags: headerFlags, stream: id, payload: prefix + Array(bytes[..<half]), into: &out)
                frame(9, flags: 0x4, stream: id, payload: Array(bytes[half...]), into: &out)
            } else {
                frame(1, flags: headerFlags | 0x4, stream: id, payload: prefix + bytes, into: &out)
            }
        }

        mutating func data(into out: inout ByteBuffer) {
            let id = stream()
            let flags = byte()
            let pick = byte()
            var body = pick < 200
                ? MockConnectionChecks.bodies[Int(pick) % MockConnectionChecks.bodies.count]
                : take(Int(pick - 200) * 4)
            var dataFlags: UInt8 = flags & 1
            if flags & 2 != 0 {
                dataFlags |= 0x8
                body = [flags >> 4] + body + Array(repeating: 0, count: Int(flags >> 4))
            }
            // Frames of at most 16,384 bytes (the default SETTINGS_MAX_FRAME_SIZE).
            var offset = 0
            repeat {
                let end = min(body.count, offset + 16_384)
                let last = end == body.count
                frame(0, flags: last ? dataFlags : 0, stream: id, payload: Array(body[offset..<end]), into: &out)
                offset = end
            } while offset < body.count
        }

        func frame(_ type: UInt8, flags: UInt8, stream: UInt32, payload: [UInt8], into out: inout ByteBuffer) {
            let length = payload.count
            out.writeBytes([UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff), type, flags])
            out.writeBytes(Self.be32(stream & 0x7fff_ffff))
            out.writeBytes(payload)
        }

        static func be32(_ value: UInt32) -> [UInt8] {
            [UInt8(value >> 24 & 0xff), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
        }
    }

    /// The server side: parses what the mock writes and checks it.
    struct OutputChecker {
        var pending: [UInt8] = []
        var sawPreface = false
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        var statuses: [UInt32: String] = [:]
        var goAwayLastStream: UInt32?
        var violations: [String] = []
        /// A header block being continued: its stream and bytes so far.
        var continuing: (stream: UInt32, block: [UInt8], endStream: Bool)?

        mutating func read(_ channel: EmbeddedChannel) {
            while let data = try? channel.readOutbound(as: IOData.self) {
                if case .byteBuffer(let buffer) = data { pending += buffer.readableBytesView }
            }
            while violations.isEmpty, pending.count >= 9 {
                let length = Int(pending[0]) << 16 | Int(pending[1]) << 8 | Int(pending[2])
                guard length <= 16_384 else {
                    violations.append("the mock wrote a frame of \(length) bytes, above the 16,384 allowed")
                    return
                }
                guard pending.count >= 9 + length else { return }
                let type = pending[3], flags = pending[4]
                let stream = (UInt32(pending[5]) << 24 | UInt32(pending[6]) << 16 | UInt32(pending[7]) << 8 | UInt32(pending[8])) & 0x7fff_ffff
                let payload = Array(pending[9..<(9 + length)])
                pending.removeFirst(9 + length)
                frame(type: type, flags: flags, stream: stream, payload: payload)
            }
        }

        mutating func frame(type: UInt8, flags: UInt8, stream: UInt32, payload: [UInt8]) {
            if let open = continuing, type != 9 || stream != open.stream {
                violations.append("the mock interrupted a header block on stream \(open.stream) with a frame of type \(type)")
                return
            }
            switch type {
            case 1:  // HEADERS
                var block = payload
                var start = 0
                if flags & 0x8 != 0, let padding = block.first { start = 1; block.removeLast(min(Int(padding), block.count)) }
                if flags & 0x20 != 0 { start += 5 }
                block = start <= block.count ? Array(block[start...]) : []
                if flags & 0x4 == 0 {
                    continuing = (stream, block, flags & 1 != 0)
                } else {
                    headerBlock(stream: stream, block: block)
                }
            case 9:  // CONTINUATION
                guard var open = continuing else {
                    violations.append("the mock wrote a CONTINUATION outside a header block")
                    return
                }
                open.block += payload
                continuing = flags & 0x4 == 0 ? open : nil
                if flags & 0x4 != 0 { headerBlock(stream: stream, block: open.block) }
            case 7:  // GOAWAY
                guard payload.count >= 8 else {
                    violations.append("the mock wrote a GOAWAY of \(payload.count) bytes")
                    return
                }
                let last = (UInt32(payload[0]) << 24 | UInt32(payload[1]) << 16 | UInt32(payload[2]) << 8 | UInt32(payload[3])) & 0x7fff_ffff
                if let earlier = goAwayLastStream, last > earlier {
                    violations.append("a second GOAWAY raised last-stream-id from \(earlier) to \(last)")
                }
                goAwayLastStream = min(goAwayLastStream ?? last, last)
            default:
                break
            }
        }

        mutating func headerBlock(stream: UInt32, block: [UInt8]) {
            var buffer = ByteBuffer(bytes: block)
            guard let headers = try? decoder.decodeHeaders(from: &buffer) else {
                violations.append("the mock's header block on stream \(stream) does not decode")
                return
            }
            guard let status = headers.first(name: ":status") else {
                // Trailers would come after an answer; the mock sends none.
                violations.append("the mock's header block on stream \(stream) has no :status")
                return
            }
            if statuses.updateValue(status, forKey: stream) != nil {
                violations.append("stream \(stream) was answered twice (the second: \(status))")
            }
            if let last = goAwayLastStream, stream > last {
                violations.append("stream \(stream) was answered (\(status)) after a GOAWAY with last-stream-id \(last)")
            }
        }
    }
}
