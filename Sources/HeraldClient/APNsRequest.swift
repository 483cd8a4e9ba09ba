import HeraldPayload
import HeraldProtocol
import NIOCore

/// One request to APNs: the typed headers and the exact body bytes.
///
/// The target (`/3/device/<token>` or `/4/broadcasts/apps/<bundle-id>`) is part of
/// ``headers``. When no `apns-id` is given the client makes one before the first attempt, so
/// every attempt of a request carries the same `apns-id` and a duplicate can be recognised.
public struct APNsRequest: Sendable {
    /// The headers (the `authorization` header is the client's to set).
    public var headers: APNsRequestHeaders
    /// The body, shared without copying between the attempts and the requests of a batch.
    var buffer: ByteBuffer

    /// The body bytes.
    public var body: [UInt8] { Array(buffer.readableBytesView) }

    /// A request with a body given as bytes (sent as they are).
    public init(headers: APNsRequestHeaders, body: some Sequence<UInt8>) {
        self.headers = headers
        buffer = ByteBuffer(bytes: body)
    }

    /// A request with `payload` encoded in its exact compact form.
    public init(headers: APNsRequestHeaders, payload: Payload) throws(PayloadEncodingError) {
        self.init(headers: headers, body: try payload.encode())
    }

    /// A device push.
    public init(
        payload: Payload, to token: DeviceToken, topic: String, pushType: PushType = .alert,
        priority: PushPriority? = nil, collapseID: CollapseID? = nil, expiration: Expiration? = nil, apnsID: APNsID? = nil
    ) throws(PayloadEncodingError) {
        try self.init(
            headers: APNsRequestHeaders(
                target: .device(token), pushType: pushType, priority: priority, topic: topic,
                collapseID: collapseID, expiration: expiration, apnsID: apnsID),
            payload: payload)
    }

    /// The same request for another device.
    public func to(_ token: DeviceToken) -> APNsRequest {
        var copy = self
        copy.headers.target = .device(token)
        return copy
    }

    /// The request's payload limit (by push type and endpoint).
    var payloadLimit: Int {
        PayloadLimit.limit(for: headers.pushType, endpoint: headers.endpoint)
    }
}

/// What APNs answered to an accepted request.
public struct APNsResponse: Sendable, Hashable, CustomStringConvertible {
    /// The `apns-id`: the request's own, or the one APNs made.
    public var apnsID: String
    /// `apns-unique-id`: the sandbox's identifier for looking the notification up in Apple's
    /// delivery log (absent in production).
    public var uniqueID: String?
    /// `apns-request-id` of a broadcast.
    public var requestID: String?
    /// `apns-channel-id` of a created channel.
    public var channelID: String?
    /// The HTTP status (200; 201 for a created channel, 204 for a deleted one).
    public var status: Int
    /// The response body, for the requests that return one (channel management).
    public var body: [UInt8]
    /// How many attempts it took.
    public var attempts: Int

    /// `200 apns-id …`.
    public var description: String {
        var text = "\(status) apns-id \(apnsID)"
        if let uniqueID { text += " apns-unique-id \(uniqueID)" }
        return text
    }
}
