import HeraldHTTPAPI
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

    /// The record's sequence number (1 for the first request since start-up): the order in
    /// which records were stored, so paging by id misses none.
    public internal(set) var id: Int
    /// The connection it came on (1 for the first connection).
    public let connection: Int
    /// When the request was complete.
    public let receivedAt: Date
    /// What it addressed.
    public let kind: Kind
    /// The body's size as sent.
    public let bodyByteCount: Int
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
    /// The lint findings for the payload and headers: the first ``maximumFindings``, each
    /// message and pointer at most ``maximumFindingTextBytes`` long.
    public let findings: [Finding]
    /// How many findings the linter reported beyond ``findings`` (not kept).
    public let omittedFindingCount: Int
    /// The most findings a record keeps (the rest are counted in ``omittedFindingCount``): a
    /// payload that provokes thousands of findings costs the store no more than one with a
    /// hundred.
    public static let maximumFindings = 100
    /// The longest message or pointer a kept finding carries, in UTF-8 bytes; longer ones are
    /// cut at a character boundary and end with "…".
    public static let maximumFindingTextBytes = 1024
    /// The topic a certificate supplied when the request named none.
    let defaultedTopic: String?
    /// The header fields, the body and the identifiers, packed into one buffer: a store of
    /// 10,000 records then frees one block per record it drops, not a dozen strings.
    private let packed: Packed

    init(
        id: Int, connection: Int, receivedAt: Date, kind: Kind, fields: APNsHeaderFields, body: [UInt8], bodyByteCount: Int,
        apnsID: String?, uniqueID: String?, status: Int?, reason: APNsReason?, timestamp: Int64?, explanation: String?,
        fault: String?, findings: [Finding], omittedFindings: Int = 0, delivered: Bool, defaultedTopic: String?
    ) {
        self.id = id
        self.connection = connection
        self.receivedAt = receivedAt
        self.kind = kind
        self.bodyByteCount = bodyByteCount
        self.status = status
        self.reason = reason
        self.timestamp = timestamp
        self.explanation = explanation
        self.fault = fault
        self.findings = findings
        omittedFindingCount = omittedFindings
        self.delivered = delivered
        self.defaultedTopic = defaultedTopic
        packed = Packed(fields: fields, body: body, apnsID: apnsID, uniqueID: uniqueID)
    }

    /// `[field count][name, value]…[apns-id][unique-id][body]`, each string as a 32-bit
    /// length and its UTF-8 bytes (length 0xFFFFFFFF for an absent identifier).
    private struct Packed: Sendable {
        let bytes: [UInt8]
        let bodyStart: Int

        init(fields: APNsHeaderFields, body: [UInt8], apnsID: String?, uniqueID: String?) {
            var size = 4 + body.count + 8 + (apnsID?.utf8.count ?? 0) + (uniqueID?.utf8.count ?? 0)
            fields.fields.withUnsafeBufferPointer { list in
                for index in list.indices { size += list[index].name.utf8.count + list[index].value.utf8.count + 8 }
            }
            // Written in place, once: appending byte by byte checked the capacity at every byte.
            var start = 0
            bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
                var at = 0
                Self.put(UInt32(fields.count), into: buffer, at: &at)
                // Read in place: a copy of each field retained and released both its strings.
                fields.fields.withUnsafeBufferPointer { list in
                    for index in list.indices {
                        Self.put(list[index].name, into: buffer, at: &at)
                        Self.put(list[index].value, into: buffer, at: &at)
                    }
                }
                Self.put(apnsID, into: buffer, at: &at)
                Self.put(uniqueID, into: buffer, at: &at)
                start = at
                body.withUnsafeBufferPointer { Self.put($0, into: buffer, at: &at) }
                count = at
            }
            bodyStart = start
        }

        private static func put(_ value: UInt32, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: inout Int) {
            precondition(offset + 4 <= buffer.count, "a record's packed field past the size computed for it")
            for shift in 0..<4 { buffer[offset + shift] = UInt8(truncatingIfNeeded: value >> (8 * shift)) }
            offset += 4
        }

        private static func put(_ bytes: UnsafeBufferPointer<UInt8>, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: inout Int) {
            guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
            precondition(offset + bytes.count <= buffer.count, "a record's packed field past the size computed for it")
            (buffer.baseAddress! + offset).initialize(from: source, count: bytes.count)
            offset += bytes.count
        }

        @inline(__always)
        private static func put(_ text: String, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: inout Int) {
            // Read where the string keeps it (a `var` copy for `withUTF8` retained each string
            // and released it); a string with no contiguous UTF-8 (bridged) is copied first.
            func write(_ utf8: UnsafeBufferPointer<UInt8>) {
                put(UInt32(utf8.count), into: buffer, at: &offset)
                put(utf8, into: buffer, at: &offset)
            }
            if text.utf8.withContiguousStorageIfAvailable(write) == nil { Array(text.utf8).withUnsafeBufferPointer(write) }
        }

        private static func put(_ text: String?, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: inout Int) {
            guard let text else { return put(UInt32.max, into: buffer, at: &offset) }
            put(text, into: buffer, at: &offset)
        }

        /// The strings in order: the field names and values, then the two identifiers.
        var strings: [String?] {
            var strings: [String?] = []
            var offset = 0
            func word() -> UInt32 {
                var value: UInt32 = 0
                for shift in 0..<4 { value |= UInt32(bytes[offset + shift]) << (8 * shift) }
                offset += 4
                return value
            }
            func string() -> String? {
                let length = word()
                guard length != UInt32.max else { return nil }
                defer { offset += Int(length) }
                return String(decoding: bytes[offset..<offset + Int(length)], as: UTF8.self)
            }
            let count = Int(word())
            for _ in 0..<(count * 2 + 2) { strings.append(string()) }
            return strings
        }
    }

    /// The request's header fields as received.
    var fields: APNsHeaderFields {
        let strings = packed.strings
        let count = (strings.count - 2) / 2
        return APNsHeaderFields((0..<count).map { APNsHeaderFields.Field(name: strings[2 * $0] ?? "", value: strings[2 * $0 + 1] ?? "") })
    }

    /// `:method`.
    public var method: String { fields[":method"] ?? "" }
    /// `:path`.
    public var path: String { fields[":path"] ?? "" }
    /// The request body (at most the first ``MockConfiguration/maximumBodyBytes``).
    public var body: [UInt8] { Array(packed.bytes[packed.bodyStart...]) }
    /// The `apns-id` answered (echoed or generated), or the `apns-request-id` of a broadcast or
    /// channel request.
    public var apnsID: String? { packed.strings.dropLast().last ?? nil }
    /// The `apns-unique-id` answered (sandbox only).
    public var uniqueID: String? { packed.strings.last ?? nil }

    /// The typed headers: every header that parses, whatever the answer (with the topic a
    /// certificate supplied). Never `nil`; optional for the API it keeps.
    public var request: APNsRequestHeaders? {
        // Whatever the answer: a refused request keeps every header that parses.
        var headers = APNsRequestHeaders(parsingLeniently: fields)
        if let defaultedTopic, headers.topic == nil { headers.topic = defaultedTopic }
        return headers
    }

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

    /// Whether the push was delivered (an accepted device push or broadcast whose payload is
    /// a JSON object).
    let delivered: Bool

    /// What the device shows, for an accepted push: rendered when asked for (with the mock's
    /// app strings and language, or English without them), so that recording stays cheap.
    public var rendered: RenderedNotification? {
        guard delivered, let document = try? JSONDocument(parsing: body) else { return nil }
        return try? renderer.render(document: document, headers: request ?? APNsRequestHeaders())
    }

    /// Renders ``rendered``: the mock's renderer (its app strings, its default language), or
    /// another language's for the API's `lang`.
    var renderer: NotificationRenderer {
        get { rendererBox.renderer }
        set { rendererBox = RendererBox(newValue) }
    }

    /// ``renderer``, shared: a record holds one reference, where a renderer of its own was a
    /// retain of each of the localizer's strings and arrays for every copy of the record.
    var rendererBox = RendererBox.english

    /// A renderer held by reference.
    final class RendererBox: Sendable {
        let renderer: NotificationRenderer
        init(_ renderer: NotificationRenderer) { self.renderer = renderer }
        static let english = RendererBox(NotificationRenderer(bundle: nil, preferredLanguages: ["en"]))
    }

    /// The `apns-id` answered, for `Identifiable`.
    public var identifier: String { apnsID ?? String(id) }

    /// The device token of a device push (lowercase hex; as written in the path when it is
    /// malformed).
    public var deviceToken: String? {
        let fields = self.fields
        guard let path = fields[":path"], path.hasPrefix(APNsPath.devicePrefix) else { return nil }
        let text = String(path.dropFirst(APNsPath.devicePrefix.count))
        guard !text.isEmpty else { return nil }
        return (try? DeviceToken(hex: text))?.hex ?? text
    }
    /// `apns-topic`, or the bundle ID of a broadcast.
    public var topic: String? {
        let fields = self.fields
        if let path = fields[":path"], path.hasPrefix(APNsPath.broadcastPrefix) { return String(path.dropFirst(APNsPath.broadcastPrefix.count)) }
        return fields[APNsHeader.topic] ?? defaultedTopic
    }
    /// Whether the request was accepted (2xx).
    public var isAccepted: Bool { (status ?? 0) / 100 == 2 }
    /// The payload as text.
    public var payloadText: String { String(decoding: body, as: UTF8.self) }

    /// The record as JSON: `id`, `apnsId`, `uniqueId`, `connection`, `receivedAt` (ISO 8601),
    /// `kind`, `method`, `path`, `deviceToken`, `topic`, `pushType`, `priority`, `collapseId`,
    /// `expiration`, `channelId`, `status`, `reason`, `timestamp`, `explanation`, `fault`,
    /// `headers` (array of `{name, value}`), `payload` (the JSON value, or the text when it is
    /// not JSON), `payloadSize`, `payloadLimit`, `findings` (at most ``maximumFindings``),
    /// `findingsOmitted` (how many more the linter reported) and `rendered`.
    public var jsonValue: JSONValue {
        var object = JSONObject()
        func add(_ key: String, _ value: JSONValue) { object.members.append(.init(key: key, value: value)) }
        func text(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
        let request = self.request
        let fields = self.fields
        let body = self.body
        add("id", .number(JSONNumber(id)))
        add("apnsId", text(apnsID))
        add("uniqueId", text(uniqueID))
        add("connection", .number(JSONNumber(connection)))
        add("receivedAt", .string(Self.iso8601(receivedAt)))
        add("kind", .string(kind.rawValue))
        add("method", .string(fields[":method"] ?? ""))
        add("path", .string(fields[":path"] ?? ""))
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
        add("headers", .array(fields.map { field in
            ["name": .string(field.name), "value": .string(field.name == APNsHeader.authorization ? Self.redacted(field.value) : field.value)]
        }))
        if body.isEmpty {
            add("payload", .null)
        } else if let document = try? JSONDocument(parsing: body) {
            add("payload", document.root.value)
        } else {
            add("payload", .string(String(decoding: body, as: UTF8.self)))
        }
        add("payloadSize", .number(JSONNumber(bodyByteCount)))
        add("payloadLimit", .number(JSONNumber(PayloadLimit.limit(for: request?.pushType, endpoint: kind == .broadcast ? .broadcast : .device))))
        add("findings", .array(findings.map { finding in
            [
                "rule": .string(finding.rule), "severity": .string(finding.severity), "message": .string(finding.message),
                "pointer": text(finding.pointer), "header": text(finding.header),
                "line": finding.line.map { .number(JSONNumber($0)) } ?? .null,
                "column": finding.column.map { .number(JSONNumber($0)) } ?? .null,
            ]
        }))
        add("findingsOmitted", .number(JSONNumber(omittedFindingCount)))
        add("rendered", rendered?.jsonValue ?? .null)
        return .object(object)
    }

    /// `date` as both APIs write times (``APITime``): RFC 3339, UTC, milliseconds.
    static func iso8601(_ date: Date) -> String {
        APITime.format(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }
}

extension NotificationRecord {
    /// A record rebuilt from its JSON (``jsonValue``) and its body, as a database keeps them.
    /// `body` is `nil` for rows written before bodies were kept: the payload in the JSON is
    /// written out again (compact; the original spacing is lost).
    init?(json document: JSONDocument, body: [UInt8]?, receivedAt: Date) {
        let root = document.root
        guard let id = root["id"]?.int64Value, let kindText = root["kind"]?.stringValue, let kind = Kind(rawValue: kindText) else { return nil }
        var fields = APNsHeaderFields()
        for header in root["headers"].map({ Array($0.elements) }) ?? [] {
            fields.append(name: header["name"]?.stringValue ?? "", value: header["value"]?.stringValue ?? "")
        }
        let bytes: [UInt8]
        if let body {
            bytes = body
        } else if let payload = root["payload"], payload.kind != .null {
            if let text = payload.stringValue {
                bytes = Array(text.utf8)
            } else {
                var writer = JSONWriter(output: JSONBytes())
                writer.value(payload.value)
                bytes = writer.output.bytes
            }
        } else {
            bytes = []
        }
        var findings: [Finding] = []
        for finding in root["findings"].map({ Array($0.elements) }) ?? [] {
            let line: Int? = finding["line"]?.int64Value.map { Int($0) }
            let column: Int? = finding["column"]?.int64Value.map { Int($0) }
            findings.append(Finding(
                rule: finding["rule"]?.stringValue ?? "", severity: finding["severity"]?.stringValue ?? "",
                message: finding["message"]?.stringValue ?? "", pointer: finding["pointer"]?.stringValue,
                header: finding["header"]?.stringValue, line: line, column: column))
        }
        let topic = root["topic"]?.stringValue
        let defaultedTopic = kind == .device && fields[APNsHeader.topic] == nil ? topic : nil
        let connection = Int(root["connection"]?.int64Value ?? 0)
        let size = Int(root["payloadSize"]?.int64Value ?? Int64(bytes.count))
        let status: Int? = root["status"]?.int64Value.map { Int($0) }
        let reason: APNsReason? = root["reason"]?.stringValue.map { APNsReason(rawValue: $0) }
        let delivered = (root["rendered"]?.kind ?? .null) != .null
        self.init(
            id: Int(id), connection: connection, receivedAt: receivedAt, kind: kind, fields: fields,
            body: bytes, bodyByteCount: size,
            apnsID: root["apnsId"]?.stringValue, uniqueID: root["uniqueId"]?.stringValue,
            status: status, reason: reason,
            timestamp: root["timestamp"]?.int64Value, explanation: root["explanation"]?.stringValue, fault: root["fault"]?.stringValue,
            findings: findings, omittedFindings: Int(root["findingsOmitted"]?.int64Value ?? 0), delivered: delivered,
            defaultedTopic: defaultedTopic)
    }
}

extension NotificationRecord.Finding {
    init(_ diagnostic: LintDiagnostic) {
        rule = diagnostic.rule.rawValue
        severity = diagnostic.severity.rawValue
        message = Self.bounded(diagnostic.message)
        pointer = diagnostic.pointer.map { Self.bounded($0.description) }
        header = diagnostic.header
        line = diagnostic.location?.line
        column = diagnostic.location?.column
    }

    /// `text`, or its first ``NotificationRecord/maximumFindingTextBytes`` bytes (whole
    /// characters) and "…".
    static func bounded(_ text: String) -> String {
        let limit = NotificationRecord.maximumFindingTextBytes
        guard text.utf8.count > limit else { return text }
        var kept = String.UnicodeScalarView()
        var size = 0
        for scalar in text.unicodeScalars {
            size += UTF8.width(scalar)
            guard size <= limit - 3 else { break }
            kept.append(scalar)
        }
        return String(kept) + "…"
    }
}
