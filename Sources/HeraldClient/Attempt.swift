import HeraldAuth
import HeraldHTTP2
import HeraldProtocol
import NIOCore

/// What a request asks for, before a connection writes it as a header block.
struct RequestHead: Sendable {
    enum Method: Sendable {
        case post, get, delete
    }

    var method: Method
    /// The APNs headers; their target gives the `:path` of a push. The connection adds
    /// `authorization` with its own provider token.
    var headers: APNsRequestHeaders
    /// The `:path` when it is not a push's (channel management).
    var path: String?

    init(method: Method = .post, headers: APNsRequestHeaders, path: String? = nil) {
        self.method = method
        self.headers = headers
        self.path = path
    }
}

/// One attempt of a request on one connection.
struct Attempt {
    var head: RequestHead
    var body: ByteBuffer
    var deadline: NIODeadline
    var completion: AttemptCompletion
}

/// Who hears how an attempt ended, once: a task waiting for it, or a function the connection
/// calls on its event loop (no task to wake; it must not block).
enum AttemptCompletion: Sendable {
    case resume(UnsafeContinuation<AttemptOutcome, Never>)
    case call(@Sendable (AttemptOutcome) -> Void)

    func callAsFunction(_ outcome: AttemptOutcome) {
        switch self {
        case .resume(let continuation): continuation.resume(returning: outcome)
        case .call(let function): function(outcome)
        }
    }
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
    case reset(H2ErrorCode)
    /// The deadline passed.
    case deadline
    /// No connection could be opened.
    case connectFailed(ConnectionFailure)

    var description: String {
        switch self {
        case .notSent(let why): "not sent: \(why)"
        case .connectionLost(let why): "connection lost before the answer: \(why)"
        case .reset(let code): "stream reset by the server (\(code))"
        case .deadline: "deadline passed"
        case .connectFailed(let failure): failure.description
        }
    }
}
