import HeraldHTTP2
import NIOCore

/// Properties of the client's HTTP/2 session under any bytes from a server, shared by the
/// fuzzer (`FuzzHTTP2Client`) and the tests that replay its findings.
public enum HTTP2SessionChecks {
    /// The first byte picks the server's SETTINGS (small windows, a small header table, few
    /// streams); the second splits the rest into two reads; the rest is what the server sends.
    /// Up to eight streams are opened as the session allows, with bodies of up to 2,100 bytes.
    ///
    /// Checked: nothing crashes; every stream ends at most once (a response's end, a reset, or
    /// a GOAWAY above it) and hears nothing after; after a connection error the last frame out
    /// is a GOAWAY and nothing more is read; the frames the client writes are well formed, and
    /// each stream's DATA adds up to its body, with END_STREAM exactly at its end.
    public static func check(_ bytes: [UInt8]) -> [String] {
        guard bytes.count >= 2 else { return [] }
        var violations: [String] = []
        var session = HTTP2ClientSession<Int>()
        session.start()
        var written = session.takeOutput()
        written.moveReaderIndex(forwardBy: 24)  // the preface's magic

        let mode = bytes[0]
        var settings: [UInt8] = []
        func setting(_ identifier: UInt16, _ value: UInt32) {
            settings += [UInt8(identifier >> 8), UInt8(identifier & 0xFF)] + withUnsafeBytes(of: value.bigEndian, Array.init)
        }
        if mode & 1 != 0 { setting(0x4, UInt32(mode) * 4) }
        if mode & 2 != 0 { setting(0x1, UInt32(mode) * 2) }
        if mode & 4 != 0 { setting(0x3, UInt32(mode >> 5) + 1) }
        let settingsFrame = [0, UInt8(settings.count >> 8), UInt8(settings.count & 0xFF), 0x4, 0, 0, 0, 0, 0] + settings

        var bodies: [Int32: Int] = [:]
        var ended = Set<Int>()
        var contexts = 0
        var failed = false

        func end(_ context: Int, _ why: String) {
            if ended.contains(context) { violations.append("stream \(context) ended twice (\(why))") }
            ended.insert(context)
        }
        func openStreams() {
            while !failed, session.canOpenStream, contexts < 8 {
                let size = (contexts * 300) % 2_101
                let id = session.openStream(contexts, body: ByteBuffer(repeating: 0x61, count: size)) { encoder, buffer in
                    encoder.writeStatic(HPACKBlockEncoder.Static.methodPOST, into: &buffer)
                    encoder.writePath("/3/device/", "00", into: &buffer)
                    encoder.writeIndexed(name: "apns-topic", value: "com.example.app", into: &buffer)
                }
                bodies[id] = size
                contexts += 1
            }
        }
        func read(_ piece: [UInt8]) {
            var buffer = ByteBuffer(bytes: piece)
            session.receive(&buffer)
            while !failed {
                do {
                    guard let event = try session.nextEvent() else { break }
                    switch event {
                    case .headers(_, let context, _, let endStream), .data(_, let context, _, let endStream):
                        if ended.contains(context) { violations.append("an event for stream \(context) after its end") }
                        if endStream { end(context, "response") }
                    case .reset(_, let context, _):
                        end(context, "reset")
                    case .goAway(let last, _, _):
                        for context in session.abandonStreams(above: last) { end(context, "GOAWAY") }
                    case .settings, .pingAcknowledged:
                        break
                    }
                } catch {
                    failed = true
                }
            }
            written.writeImmutableBuffer(session.takeOutput())
        }

        read(settingsFrame)
        openStreams()
        let rest = Array(bytes.dropFirst(2))
        let split = rest.isEmpty ? 0 : Int(bytes[1]) % (rest.count + 1)
        read(Array(rest[..<split]))
        openStreams()
        read(Array(rest[split...]))
        openStreams()
        written.writeImmutableBuffer(session.takeOutput())

        if failed {
            var probe = ByteBuffer(bytes: [0, 0, 8, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
            session.receive(&probe)
            if let event = try? session.nextEvent() { violations.append("an event after a connection error: \(event)") }
        }

        // The client's own frames.
        var sent: [Int32: Int] = [:]
        var finished = Set<Int32>()
        var lastType: UInt8?
        while written.readableBytes > 0 {
            guard written.readableBytes >= 9 else {
                violations.append("a partial frame header in the client's output")
                break
            }
            let length = Int(written.readInteger(as: UInt16.self)!) << 8 | Int(written.readInteger(as: UInt8.self)!)
            let type = written.readInteger(as: UInt8.self)!, flags = written.readInteger(as: UInt8.self)!
            let stream = Int32(bitPattern: written.readInteger(as: UInt32.self)!)
            guard written.readableBytes >= length else {
                violations.append("a frame longer than the client's output")
                break
            }
            written.moveReaderIndex(forwardBy: length)
            if length > 16_384 { violations.append("a frame of \(length) bytes") }
            lastType = type
            if type == 0x1, flags & 0x1 != 0 { finished.insert(stream) }
            if type == 0x0 {
                if finished.contains(stream) { violations.append("DATA on stream \(stream) after its end") }
                sent[stream, default: 0] += length
                if flags & 0x1 != 0 {
                    finished.insert(stream)
                    if sent[stream] != bodies[stream] { violations.append("stream \(stream) ended after \(sent[stream]!) of \(bodies[stream] ?? -1) bytes") }
                }
            }
        }
        for (stream, count) in sent where count > (bodies[stream] ?? 0) {
            violations.append("stream \(stream) sent \(count) bytes of a \(bodies[stream] ?? 0)-byte body")
        }
        if failed, lastType != 0x7 { violations.append("a connection error without a GOAWAY last") }
        return violations
    }
}
