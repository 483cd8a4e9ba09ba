#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A blocking HTTP/1.1 request to a server on this machine (`herald demo --gateway` calling the
/// gateway's REST API the way a backend does): one connection per request, `Connection: close`,
/// the answer read to its end. Not a general client: no TLS, no redirects, IPv4 only.
enum LoopbackHTTP {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Sends `method path` with a JSON `body` and the `Authorization: Bearer` key; returns the
    /// status and the body.
    static func request(
        _ method: String, host: String, port: Int, path: String, key: String, body: [UInt8]? = nil
    ) throws(Failure) -> (status: Int, body: [UInt8]) {
        #if canImport(Glibc)
        let stream = Int32(SOCK_STREAM.rawValue)
        #else
        let stream = SOCK_STREAM
        #endif
        let fd = socket(AF_INET, stream, 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw Failure(description: "\(host) is not an IPv4 address") }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "cannot connect to \(host):\(port) (errno \(errno))") }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nAuthorization: Bearer \(key)\r\nConnection: close\r\n"
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        let message = Array((head + "\r\n").utf8) + (body ?? [])
        var sent = 0
        while sent < message.count {
            let written = message[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            guard written > 0 else { throw Failure(description: "the connection to \(host):\(port) closed while sending") }
            sent += written
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 { throw Failure(description: "no answer from \(host):\(port) within 30 s") }
            if count == 0 { break }
            answer += buffer[..<count]
        }
        // `HTTP/1.1 200 OK\r\n…\r\n\r\nbody` (the API answers with Content-Length, not chunks).
        guard let end = answer.indices.first(where: { answer[$0...].starts(with: [13, 10, 13, 10]) }),
              let status = Int(String(decoding: answer.prefix(12).dropFirst(9), as: UTF8.self)) else {
            throw Failure(description: "\(host):\(port) did not answer with HTTP/1.1")
        }
        return (status, Array(answer[(end + 4)...]))
    }
}
