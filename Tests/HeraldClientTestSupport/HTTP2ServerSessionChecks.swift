import HeraldHTTP2
import NIOCore

/// Properties of the server's HTTP/2 session under any bytes from a client, shared by the
/// fuzzer (`FuzzHTTP2Server`) and the tests that replay its findings.
public enum HTTP2ServerSessionChecks {
    /// The first byte picks the server's limits (streams, and whether it answers with a body);
    /// the second splits the rest into two reads, after the client's preface and an empty
    /// SETTINGS; the rest is what the client sends. Every request is answered as soon as it
    /// ends; every eighth byte of the first one decides to reset instead.
    ///
    /// Checked: nothing crashes; each request is reported once, and nothing of a stream after
    /// its reset or end; after a connection error the last frame out is a GOAWAY with the
    /// error's code and nothing more is read; every frame the server writes is well formed, no
    /// larger than 16,384 bytes, and each answer's DATA adds up to its body.
    public static func check(_ bytes: [UInt8]) -> [String] {
        guard bytes.count >= 2 else { return [] }
        var violations: [String] = []
        var configuration = HTTP2ServerSession.Configuration()
        configuration.maximumConcurrentStreams = Int(bytes[0] & 0x7) + 1
        let body = bytes[0] & 0x8 != 0 ? [UInt8](repeating: 0x7B, count: 20_000) : []
        var session = HTTP2ServerSession(configuration: configuration)
        session.start()
        var written = session.takeOutput()
        var requested = Set<Int32>()
        var ended = Set<Int32>()
        var failure: HTTP2ConnectionError?

        func read(_ piece: [UInt8], now: UInt64) {
            var buffer = ByteBuffer(bytes: piece)
            session.receive(&buffer, now: now)
            while failure == nil {
                do {
                    guard let event = try session.nextEvent() else { break }
                    switch event {
                    case .request(let id, _, let endStream):
                        if requested.contains(id) { violations.append("stream \(id) requested twice") }
                        requested.insert(id)
                        if endStream { answer(id) }
                    case .data(let id, _, let endStream):
                        if !requested.contains(id) || ended.contains(id) { violations.append("DATA for stream \(id), not open") }
                        if endStream { answer(id) }
                    case .reset(let id, _, _), .streamError(let id, _, _):
                        ended.insert(id)
                    case .goAway, .notProcessed:
                        break
                    }
                } catch {
                    failure = error
                }
            }
            written.writeImmutableBuffer(session.takeOutput())
        }
        func answer(_ id: Int32) {
            ended.insert(id)
            if bytes.count > 2, bytes[2 + Int(id) % (bytes.count - 2)] % 8 == 0 {
                session.reset(stream: id, code: .cancel)
            } else {
                session.respond(stream: id, status: 200, fields: [("apns-id", "ID-\(id)")], body: body)
            }
        }

        read(Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + [0, 0, 0, 4, 0, 0, 0, 0, 0], now: 0)
        let rest = Array(bytes.dropFirst(2))
        let split = rest.isEmpty ? 0 : Int(bytes[1]) % (rest.count + 1)
        read(Array(rest[..<split]), now: 1_000_000_000)
        read(Array(rest[split...]), now: 2_000_000_000)
        if failure != nil {
            let before = written.readableBytes
            read([0, 0, 8, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], now: 3_000_000_000)
            if written.readableBytes != before { violations.append("output after a connection error") }
        }

        // The server's own frames.
        var lastType: UInt8?, lastCode: UInt32?
        var sent: [UInt32: Int] = [:]
        var finished = Set<UInt32>()
        while written.readableBytes > 0 {
            guard written.readableBytes >= 9 else {
                violations.append("a partial frame header in the server's output")
                break
            }
            let length = Int(written.readInteger(as: UInt16.self)!) << 8 | Int(written.readInteger(as: UInt8.self)!)
            let type = written.readInteger(as: UInt8.self)!, flags = written.readInteger(as: UInt8.self)!
            let stream = written.readInteger(as: UInt32.self)! & 0x7FFF_FFFF
            guard let payload = written.readSlice(length: length) else {
                violations.append("a frame longer than the server's output")
                break
            }
            if length > 16_384 { violations.append("a frame of \(length) bytes") }
            lastType = type
            lastCode = type == 0x7 && length >= 8 ? payload.getInteger(at: payload.readerIndex + 4, as: UInt32.self) : nil
            if type == 0x1, flags & 0x1 != 0 { finished.insert(stream) }
            if type == 0x0 {
                if finished.contains(stream) { violations.append("DATA on stream \(stream) after its end") }
                sent[stream, default: 0] += length
                if flags & 0x1 != 0 {
                    finished.insert(stream)
                    if sent[stream] != body.count { violations.append("stream \(stream) ended after \(sent[stream]!) of \(body.count) bytes") }
                }
            }
        }
        if let failure, lastType != 0x7 || lastCode != failure.code.rawValue {
            violations.append("a connection error (\(failure)) without its GOAWAY last")
        }
        return violations
    }
}
