import HeraldHTTPAPI
import Foundation
import HeraldJSON
import Synchronization

/// Something that happened below the requests on one of the mock's connections: what a user
/// needs to see why a client saw an error, without a packet capture.
public struct ConnectionEvent: Sendable, Identifiable {
    /// What happened.
    public enum Kind: String, Sendable, CaseIterable {
        /// A client connected.
        case opened
        /// The mock sent GOAWAY (a fault, the idle timeout, a client resetting streams it had
        /// not been answered on too fast), after answering every stream up to its last-stream-id.
        case goAwaySent = "goaway-sent"
        /// The client sent GOAWAY.
        case goAwayReceived = "goaway-received"
        /// The client reset a stream the mock had not answered yet (a stream it had answered is
        /// counted in ``closed``'s summary, not logged one by one).
        case resetReceived = "reset-received"
        /// The mock reset a stream (a fault, a stream over the connection's memory budget, a
        /// stream refused before a GOAWAY).
        case resetSent = "reset-sent"
        /// The connection broke the HTTP/2 rules (or TLS failed): the peer's error and address.
        case protocolError = "protocol-error"
        /// Streams the client opened above the mock's GOAWAY last-stream-id (while it drained or
        /// after): never processed, so lost unless the client sends them again. Logged once, as
        /// the connection closes, with their count and ids.
        case streamsNotProcessed = "streams-not-processed"
        /// The connection closed: who closed it, and its requests and resets.
        case closed
    }

    /// The event's sequence number (1 for the first since start-up).
    public let id: Int
    /// When it happened.
    public let at: Date
    /// The connection (as numbered in request records).
    public let connection: Int
    /// The client's address and port.
    public let peer: String?
    /// What happened.
    public let kind: Kind
    /// The stream concerned, if one.
    public let stream: Int?
    /// The HTTP/2 error code (`CANCEL`, `REFUSED_STREAM`, `ENHANCE_YOUR_CALM`, …).
    public let code: String?
    /// A GOAWAY's last-stream-id.
    public let lastStreamID: Int?
    /// A sentence: the GOAWAY's reason, the error, the summary of a closed connection.
    public let detail: String?

    /// The event as the API shows it.
    public var jsonValue: JSONValue {
        var object = JSONObject()
        func add(_ key: String, _ value: JSONValue?) { if let value { object.members.append(.init(key: key, value: value)) } }
        add("id", .number(JSONNumber(id)))
        add("at", APITime.json(Int64((at.timeIntervalSince1970 * 1000).rounded())))
        add("connection", .number(JSONNumber(connection)))
        add("peer", peer.map { .string($0) } ?? .null)
        add("kind", .string(kind.rawValue))
        add("stream", stream.map { .number(JSONNumber($0)) } ?? .null)
        add("code", code.map { .string($0) } ?? .null)
        add("lastStreamId", lastStreamID.map { .number(JSONNumber($0)) } ?? .null)
        add("detail", detail.map { .string($0) } ?? .null)
        return .object(object)
    }
}

/// The newest connection events, in a ring (the oldest dropped), told to the event stream and
/// counted in the metrics as they come.
final class ConnectionLog: Sendable {
    private struct Ring {
        var events: [ConnectionEvent] = []
        var next = 0
        var sequence = 0
    }

    let capacity: Int
    private let ring = Mutex(Ring())

    init(capacity: Int = 1_000) {
        self.capacity = max(1, capacity)
    }

    /// Records an event; returns it (with its id and time).
    @discardableResult
    func add(
        connection: Int, peer: String?, kind: ConnectionEvent.Kind, stream: Int? = nil, code: String? = nil, lastStreamID: Int? = nil,
        detail: String? = nil, at: Date = Date()
    ) -> ConnectionEvent {
        ring.withLock { ring in
            ring.sequence += 1
            let event = ConnectionEvent(
                id: ring.sequence, at: at, connection: connection, peer: peer, kind: kind, stream: stream, code: code,
                lastStreamID: lastStreamID, detail: detail)
            if ring.events.count < capacity {
                ring.events.append(event)
            } else {
                ring.events[ring.next] = event
            }
            ring.next = (ring.next + 1) % capacity
            return event
        }
    }

    /// The newest `limit` events, newest first, optionally of one connection or kind.
    func events(limit: Int, connection: Int? = nil, kind: ConnectionEvent.Kind? = nil) -> [ConnectionEvent] {
        ring.withLock { ring in
            var result: [ConnectionEvent] = []
            var index = ring.events.count < capacity ? ring.events.count : ring.next
            for _ in 0..<ring.events.count {
                index = (index - 1 + ring.events.count) % ring.events.count
                let event = ring.events[index]
                if let connection, event.connection != connection { continue }
                if let kind, event.kind != kind { continue }
                result.append(event)
                if result.count >= limit { break }
            }
            return result
        }
    }

    func removeAll() {
        ring.withLock { ring in
            ring.events = []
            ring.next = 0
        }
    }
}
