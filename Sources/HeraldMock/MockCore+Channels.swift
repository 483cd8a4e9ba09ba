import Foundation
import HeraldJSON
import HeraldProtocol

// Channel management (`/1/apps/<bundle id>/channels` on the channel port): create, read, delete
// and list broadcast channels, as "Sending channel management requests to APNs" describes.

extension MockCore {
    /// A channel-management request (the channel port): the headers, authentication (stage 3),
    /// the path and the certificate's topics, then the method's own checks.
    func manageChannel(_ outcome: inout Outcome, connection: inout ConnectionState, plan: inout Plan) {
        outcome.kind = .channel
        outcome.useRequestID()
        let fields = outcome.fields
        if let repeated = fields.repeatedNames.first {
            return outcome.fail(reason: .duplicateHeaders, "\(repeated) is given more than once")
        }
        if outcome.apnsID.isEmpty {
            return outcome.fail(reason: .badMessageID, "apns-request-id is not a UUID")
        }
        var headers = APNsRequestHeaders()
        if let value = fields[APNsHeader.authorization] {
            headers.providerToken = APNsHeader.providerToken(inAuthorization: value)
        }
        do throws(Rejection) {
            try authenticate(headers.providerToken, outcome: &outcome, connection: &connection, plan: &plan)
        } catch {
            return outcome.fail(error)
        }
        let path = outcome.path
        let method = outcome.method
        guard path.hasPrefix(APNsPath.channelManagementPrefix) else {
            return outcome.fail(reason: .badPath, "channel management paths are /1/apps/<bundle id>/channels and /1/apps/<bundle id>/all-channels")
        }
        let rest = path.dropFirst(APNsPath.channelManagementPrefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard rest.count == 2, !rest[0].isEmpty, rest[1] == "channels" || rest[1] == "all-channels" else {
            return outcome.fail(reason: .badPath, "\(path) is not /1/apps/<bundle id>/channels or /1/apps/<bundle id>/all-channels")
        }
        let bundleID = String(rest[0])
        if let certificate = connection.authentication.certificate, !certificate.allows(topic: bundleID) {
            return outcome.fail(reason: .topicMismatch, "the client certificate allows \(certificate.topicNames.joined(separator: ", ")), not \(bundleID)")
        }
        if rest[1] == "all-channels" {
            guard method == "GET" else { return outcome.fail(reason: .methodNotAllowed, "\(path) answers GET only") }
            let ids = channels.list(bundleID: bundleID).map { JSONValue.string($0.id) }
            return outcome.succeed(status: 200, body: JSONValue.object(["channels": .array(ids)]))
        }
        switch method {
        case "POST":
            guard !outcome.body.isEmpty else { return outcome.fail(reason: .payloadEmpty, "the body is empty; send {\"message-storage-policy\":0,\"push-type\":\"LiveActivity\"}") }
            guard let document = try? JSONDocument(parsing: outcome.body), let object = document.root.value.objectValue else {
                return outcome.fail(reason: .badRequestPayload, "the body is not a JSON object")
            }
            if let unknown = object.keys.first(where: { $0 != "message-storage-policy" && $0 != "push-type" }) {
                return outcome.fail(reason: .badRequestParams, "unknown attribute \"\(unknown)\"; the body takes message-storage-policy and push-type")
            }
            guard let policy = object["message-storage-policy"]?.numberValue.flatMap({ Int($0.text) }), policy == 0 || policy == 1 else {
                return outcome.fail(reason: .badRequestParams, "message-storage-policy must be 0 (no message stored) or 1 (the most recent stored)")
            }
            guard object["push-type"]?.stringValue == "LiveActivity" else {
                return outcome.fail(reason: .invalidPushType, "push-type must be \"LiveActivity\"")
            }
            guard let channel = channels.create(bundleID: bundleID, storagePolicy: policy, now: outcome.now) else {
                return outcome.fail(reason: .cannotCreateChannelConfig, "\(bundleID) has \(ChannelRegistry.limitPerApp) channels, Apple's limit per app and environment")
            }
            persistChannel(channel)
            outcome.extraHeaders.append((APNsHeader.channelID, channel.id))
            outcome.succeed(status: 201, body: nil)
        case "GET", "DELETE":
            guard let id = fields[APNsHeader.channelID] else {
                return outcome.fail(reason: .missingChannelID, "no apns-channel-id header")
            }
            guard Data(base64Encoded: id) != nil else { return outcome.fail(reason: .badChannelID, "apns-channel-id \(id) is not base64") }
            guard let channel = channels.channel(bundleID: bundleID, id: id) else {
                return outcome.fail(reason: .channelNotRegistered, "no channel \(id) exists for \(bundleID)")
            }
            if method == "GET" {
                outcome.succeed(status: 200, body: ["message-storage-policy": .number(JSONNumber(channel.storagePolicy)), "push-type": "LiveActivity"])
            } else {
                _ = channels.delete(bundleID: bundleID, id: id)
                persistChannel(nil, deleted: id)
                outcome.succeed(status: 204, body: nil)
            }
        default:
            outcome.fail(reason: .methodNotAllowed, "\(method) is not a channel-management method (POST, GET, DELETE)")
        }
    }
}
