import Foundation
import HeraldClient
import HeraldJSON
import HeraldProtocol
import Synchronization

extension MockAPNsServer {
    /// Sends a recorded push to the mock again, as its sender did: judged, recorded and
    /// delivered anew (faults included) with a new `apns-id`. Its sender was authenticated when
    /// it first came, so it is not checked again (the record keeps no signature).
    ///
    /// - Returns: the new record.
    /// - Throws: ``MockResendError`` for a request that is not a push (channel management, a
    ///   bad path).
    public func resend(_ record: NotificationRecord) async throws -> NotificationRecord {
        guard record.kind == .device || record.kind == .broadcast else {
            throw MockResendError(message: "only pushes can be sent again; request \(record.id) is a \(record.kind.rawValue) request")
        }
        var fields = APNsHeaderFields()
        for field in record.fields where field.name != APNsHeader.authorization && field.name != APNsHeader.id && field.name != APNsHeader.requestID {
            fields.append(name: field.name, value: field.value)
        }
        var connection = ConnectionState(id: 0)
        connection.authentication.trusted = true
        let request = IncomingRequest(fields: fields, body: record.body, bodyByteCount: record.bodyByteCount, listener: .apns)
        let plan = core.handle(request, connection: &connection)
        try await plan.stored?.get()
        guard let id = plan.recordID, let resent = core.store.record(id: String(id)) else {
            throw MockResendError(message: "the resent request was not recorded")
        }
        return resent
    }

    /// Sends a recorded push to the configured ``MockConfiguration/releaseTarget`` (Apple, or
    /// another mock) through Herald's client, to `token` or the device it was sent to.
    ///
    /// - Returns: what the target answered, or why nothing was sent.
    /// - Throws: ``MockResendError`` when no target is configured or the request is not a push.
    public func release(_ record: NotificationRecord, to token: DeviceToken? = nil) async throws -> ReleaseOutcome {
        guard let releaser else {
            throw MockResendError(message: "releasing is off: start herald mock with --release-to sandbox|production|HOST:PORT and its credentials")
        }
        guard var headers = record.request, record.kind == .device || record.kind == .broadcast else {
            throw MockResendError(message: "only pushes can be released; request \(record.id) is a \(record.kind.rawValue) request")
        }
        if let token {
            guard record.kind == .device else { throw MockResendError(message: "a broadcast goes to its channel, not to a device token") }
            headers.target = .device(token)
        }
        // A new notification for the target: its own apns-id, and its own provider token.
        headers.apnsID = nil
        headers.providerToken = nil
        return await releaser.send(APNsRequest(headers: headers, body: record.body))
    }
}

/// A request that cannot be resent or released, and why.
public struct MockResendError: Error, CustomStringConvertible, Sendable {
    /// What is wrong.
    public var message: String
    /// The message.
    public var description: String { message }
}

/// What a release target answered.
public struct ReleaseOutcome: Sendable {
    /// The target's name.
    public var target: String
    /// The client's result: accepted, or rejected with its reason and advice.
    public var result: Result<APNsResponse, APNsClientError>

    /// `{target, accepted, status, apnsId, reason, message, advice}`.
    public var jsonValue: JSONValue {
        switch result {
        case .success(let response):
            return [
                "target": .string(target), "accepted": true, "status": .number(JSONNumber(response.status)),
                "apnsId": .string(response.apnsID), "reason": .null, "message": .string("accepted"), "advice": .null,
            ]
        case .failure(let error):
            return [
                "target": .string(target), "accepted": false, "status": error.status.map { .number(JSONNumber($0)) } ?? .null,
                "apnsId": error.apnsID.map { .string($0) } ?? .null, "reason": error.reason.map { .string($0.rawValue) } ?? .null,
                "message": .string(error.message), "advice": error.advice.map { .string($0) } ?? .null,
            ]
        }
    }
}

/// The client a release target is reached with, made once and shut down with the server.
final class Releaser: Sendable {
    let target: ReleaseTarget
    private let client: APNsClient

    init(target: ReleaseTarget) throws {
        self.target = target
        do {
            client = try APNsClient(configuration: target.client)
        } catch {
            throw MockResendError(message: "the release target \(target.name): \(error.message)")
        }
    }

    func send(_ request: APNsRequest) async -> ReleaseOutcome {
        ReleaseOutcome(target: target.name, result: await client.outcome(of: request))
    }

    func shutdown() async { await client.shutdown() }
}
