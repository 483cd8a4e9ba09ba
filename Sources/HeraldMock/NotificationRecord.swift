import Foundation
import HeraldDevice
import HeraldJSON
import HeraldLint
import HeraldProtocol

/// One request the mock received, accepted or rejected, as the inspection API shows it.
public struct NotificationRecord: Sendable, Identifiable {
    /// What the request addressed.
    public enum Kind: String, Sendable, Hashable {
        /// `POST /3/device/<token>`.
        case device
        /// `POST /4/broadcasts/apps/<bundle id>`.
        case broadcast
        /// A channel-management request (`/1/apps/…`).
        case channel
        /// Anything else (a bad path or method).
        case other
    }

    /// A lint finding, as recorded.
    public struct Finding: Sendable, Hashable {
        /// The rule's stable id (`payload-too-large`).
        public var rule: String
        /// `error`, `warning` or `info`.
        public var severity: String
        /// The message.
        public var message: String
        /// The JSON Pointer of the value or key concerned, when it is in the payload.
        public var pointer: String?
        /// The header concerned, when it is a header.
        public var header: String?
        /// 1-based line and column in the payload.
        public var line: Int?
        /// 1-based column (Unicode scalars).
        public var column: Int?
    }

    /// The record's sequence number (1 for the first request since start-up).
    public let id: Int
    /// The connection it came on (1 for the first connection).
    public let connection: Int
    /// When the request was complete.
    public let receivedAt: Date
    /// What it addressed.
    public let kind: Kind
    /// `:method`.
    public let method: String
    /// `:path`.
    public let path: String
    /// The request's header fields as received.
    let fields: APNsHeaderFields
    /// The request headers as received, in order (`authorization` with the signature removed).
    public var headers: [(name: String, value: String)] {
        fields.map { field in
            (field.name, field.name == APNsHeader.authorization ? Self.redacted(field.value) : field.value)
        }
    }

    /// `bearer <header>.<claims>.…`: the signature is left out of records.
    static func redacted(_ authorization: String) -> String {
        guard let dot = authorization.lastIndex(of: ".") else { return authorization }
        return authorization[..<dot] + ".…"
    }
    /// The typed headers, when they parsed.
    public let request: APNsRequestHeaders?
    /// The request body (at most the first ``MockConfiguration/maximumBodyBytes``).
    public let body: [UInt8]
    /// The body's size as sent.
    public let bodyByteCount: Int
    /// The `apns-id` answered (echoed or generated), or the `apns-request-id` of a broadcast or
    /// channel request.
    public let apnsID: String?
    /// The `apns-unique-id` answered (sandbox only).
    public let uniqueID: String?
    /// The status answered, or `nil` when the mock did not answer (a fault).
    public let status: Int?
    /// The reason answered with an error status.
    public let reason: APNsReason?
    /// The `timestamp` of a 410 answer (milliseconds since 1970).
    public let timestamp: Int64?
    /// Why the mock answered as it did, in a sentence (the first problem found).
    public let explanation: String?
    /// The fault rule applied, if any.
    public let fault: String?
    /// The lint findings for the payload and headers.
    public let findings: [Finding]
    /// Whether the push was delivered (an accepted device push or broadcast whose payload is
    /// a JSON object).
    let delivered: Bool

    /// What the device shows, for an accepted push: rendered when asked for (in English,
    /// without the app's strings), so that recording stays cheap.
    public var rendered: RenderedNotification? {
        guard delivered, let document = try? JSONDocument(parsing: body) else { return nil }
        return try? Self.renderer.render(document: document, headers: request ?? APNsRequestHeaders())
    }

    static let renderer = NotificationRenderer(bundle: nil, preferredLanguages: ["en"])

    /// The `apns-id` answered, for `Identifiable`.
    public var identifier: String { apnsID ?? String(id) }

    /// The device token of a device push.
    public var deviceToken: String? { request?.deviceToken?.hex }
    /// `apns-topic`, or the bundle ID of a broadcast.
    public var topic: String? {
        if case .broadcast(let bundleID)? = request?.target { return bundleID }
        return request?.topic
    }
    /// Whether the request was accepted (2xx).
    public var isAccepted: Bool { (status ?? 0) / 100 == 2 }
    /// The payload as text.
    public var payloadText: String { String(decoding: body, as: UTF8.self) }

    /// The record as JSON: `id`, `apnsId`, `uniqueId`, `connection`, `receivedAt` (ISO 8601),
    /// `kind`, `method`, `path`, `deviceToken`, `topic`, `pushType`, `priority`, `collapseId`,
    /// `expiration`, `channelId`, `status`, `reason`, `timestamp`, `explanation`, `fault`,
    /// `headers` (array of `{name, value}`), `payload` (the JSON value, or the text when it is
    /// not JSON), `payloadSize`, `findings` and `rendered`.
    public var jsonValue: JSONValue {
        var object = JSONObject()
        func add(_ key: String, _ value: JSONValue) { object.members.append(.init(key: key, value: value)) }
        func text(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
        add("id", .number(JSONNumber(id)))
        add("apnsId", text(apnsID))
        add("uniqueId", text(uniqueID))
        add("connection", .number(JSONNumber(connection)))
        add("receivedAt", .string(Self.iso8601(receivedAt)))
        add("kind", .string(kind.rawValue))
        add("method", .string(method))
        add("path", .string(path))
        add("deviceToken", text(deviceToken))
        add("topic", text(topic))
        add("pushType", text(request?.pushType?.rawValue))
        add("priority", request.map { .number(JSONNumber($0.effectivePriority.rawValue)) } ?? .null)
        add("collapseId", text(request?.collapseID?.value))
        add("expiration", text(request?.expiration?.headerValue))
        add("channelId", text(request?.channelID))
        add("status", status.map { .number(JSONNumber($0)) } ?? .null)
        add("reason", text(reason?.rawValue))
        add("timestamp", timestamp.map { .number(JSONNumber($0)) } ?? .null)
        add("explanation", text(explanation))
        add("fault", text(fault))
        add("headers", .array(headers.map { ["name": .string($0.name), "value": .string($0.value)] }))
        if body.isEmpty {
            add("payload", .null)
        } else if let document = try? JSONDocument(parsing: body) {
            add("payload", document.root.value)
        } else {
            add("payload", .string(payloadText))
        }
        add("payloadSize", .number(JSONNumber(bodyByteCount)))
        add("findings", .array(findings.map { finding in
            [
                "rule": .string(finding.rule), "severity": .string(finding.severity), "message": .string(finding.message),
                "pointer": text(finding.pointer), "header": text(finding.header),
                "line": finding.line.map { .number(JSONNumber($0)) } ?? .null,
                "column": finding.column.map { .number(JSONNumber($0)) } ?? .null,
            ]
        }))
        add("rendered", rendered?.jsonValue ?? .null)
        return .object(object)
    }

    static func iso8601(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}

extension NotificationRecord.Finding {
    init(_ diagnostic: LintDiagnostic) {
        rule = diagnostic.rule.rawValue
        severity = diagnostic.severity.rawValue
        message = diagnostic.message
        pointer = diagnostic.pointer?.description
        header = diagnostic.header
        line = diagnostic.location?.line
        column = diagnostic.location?.column
    }
}
