import HeraldAuth
import NIOCore
import NIOHPACK
import NIOHTTP2

/// One attempt of a request on one connection.
struct Attempt {
    /// Pseudo-headers and APNs headers, without `authorization` (the connection adds its token).
    var headers: HPACKHeaders
    var body: ByteBuffer
    var deadline: NIODeadline
    var continuation: UnsafeContinuation<AttemptOutcome, Never>
}

/// What the server said, or why it said nothing.
enum AttemptOutcome: Sendable {
    /// An answer; `token` is the provider token the request carried.
    case answered(Answer, token: ProviderToken?)
    case failed(AttemptFailure)
}

struct Answer: Sendable {
    var status: Int
    var apnsID: String?
    var uniqueID: String?
    var requestID: String?
    var channelID: String?
    var body: [UInt8]
}

/// Why an attempt got no answer.
enum AttemptFailure: Error, Sendable, CustomStringConvertible {
    /// The server did not process the request (a GOAWAY above it, REFUSED_STREAM, the
    /// connection retired or closed before it was written): safe to send again at once.
    case notSent(String)
    /// Written, and the connection ended before an answer: it may have been processed.
    case connectionLost(String)
    /// The server reset the stream.
    case reset(HTTP2ErrorCode)
    /// The deadline passed.
    case deadline
    /// No connection could be opened.
    case connectFailed(String)

    var description: String {
        switch self {
        case .notSent(let why): "not sent: \(why)"
        case .connectionLost(let why): "connection lost before the answer: \(why)"
        case .reset(let code): "stream reset by the server (\(code))"
        case .deadline: "deadline passed"
        case .connectFailed(let why): why
        }
    }
}
