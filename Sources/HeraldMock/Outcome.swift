import Foundation
import HeraldJSON
import HeraldLint
import HeraldProtocol

/// Why a stage stops a request: the reason APNs answers with, the explanation the record keeps,
/// and for 410 the time the token stopped being valid.
struct Rejection: Error {
    var reason: APNsReason
    var message: String
    var timestamp: Int64?

    init(_ reason: APNsReason, _ message: String, timestamp: Int64? = nil) {
        self.reason = reason
        self.message = message
        self.timestamp = timestamp
    }
}

/// What is being decided about one request: filled in as checks run, then turned into the
/// answer and the record.
struct Outcome {
    let fields: APNsHeaderFields
    let body: [UInt8]
    let bodyByteCount: Int
    let now: Date
    let method: String
    let path: String
    let environment: APNsEnvironment
    var kind: NotificationRecord.Kind
    /// `apns-id` (device pushes) or `apns-request-id` (broadcast and channel requests); empty
    /// when the request's own value is invalid.
    var apnsID: String
    var idHeader = APNsHeader.id
    var status = 200
    var reason: APNsReason?
    var timestamp: Int64?
    var explanation: String?
    var fault: String?
    var findings: [NotificationRecord.Finding] = []
    /// What the request got through only by the mock's leniency, listed before the findings.
    var leniencies: [NotificationRecord.Finding] = []
    /// Findings beyond ``NotificationRecord/maximumFindings``, counted and not kept.
    var omittedFindings = 0
    var delivered = false
    var extraHeaders: [(String, String)] = []
    var responseBody: [UInt8] = []
    var uniqueID: String?
    /// The topic a single-topic certificate supplied.
    var defaultedTopic: String?
    var answered = false

    init(fields: APNsHeaderFields, request: IncomingRequest, now: Date, environment: APNsEnvironment) {
        self.fields = fields
        body = request.body
        bodyByteCount = request.bodyByteCount
        self.now = now
        method = fields[":method"] ?? ""
        path = fields[":path"] ?? ""
        self.environment = environment
        kind = path.hasPrefix(APNsPath.devicePrefix) ? .device : path.hasPrefix(APNsPath.broadcastPrefix) ? .broadcast : .other
        apnsID = Self.identifier(fields[APNsHeader.id])
    }

    /// The request's UUID lowercased, a new one when absent, empty when malformed.
    static func identifier(_ value: String?) -> String {
        guard let value else { return RandomIdentifier.uuid() }
        return (try? APNsID(parsing: value))?.uuidString.lowercased() ?? ""
    }

    /// Broadcast and channel requests carry `apns-request-id` instead of `apns-id`.
    mutating func useRequestID() {
        idHeader = APNsHeader.requestID
        apnsID = Self.identifier(fields[APNsHeader.requestID])
    }

    /// Keeps the first ``NotificationRecord/maximumFindings`` findings (each bounded in size)
    /// and counts the rest, with those the linter counted past its per-rule cap and never
    /// listed: a record's size does not grow with what a payload provokes.
    mutating func keepFindings(_ diagnostics: [LintDiagnostic], unlisted: Int) {
        findings = diagnostics.prefix(NotificationRecord.maximumFindings).map(NotificationRecord.Finding.init)
        omittedFindings = diagnostics.count - findings.count + unlisted
    }

    /// Answers with a stage's rejection.
    mutating func fail(_ rejection: Rejection) {
        if let timestamp = rejection.timestamp { self.timestamp = timestamp }
        fail(reason: rejection.reason, rejection.message)
    }

    mutating func fail(status: Int? = nil, reason: APNsReason, _ explanation: String) {
        self.status = status ?? reason.status ?? 400
        self.reason = reason
        self.explanation = explanation
        var writer = JSONWriter(output: JSONBytes())
        writer.beginObject()
        writer.key("reason")
        writer.string(reason.rawValue)
        if self.status == 410, let timestamp {
            writer.key("timestamp")
            writer.integer(timestamp)
        }
        writer.endObject()
        responseBody = writer.output.bytes
        answered = true
    }

    mutating func succeed(status: Int = 200, body: JSONValue? = nil, explanation: String? = nil) {
        self.status = status
        self.explanation = explanation
        // Development responses carry apns-unique-id, the Delivery Log's lookup key.
        if environment.sendsUniqueID && kind == .device { uniqueID = RandomIdentifier.uuid() }
        if let body {
            var writer = JSONWriter(output: JSONBytes())
            writer.value(body)
            responseBody = writer.output.bytes
        }
        answered = true
    }

    mutating func succeed(explanation: String?) { succeed(status: 200, body: nil, explanation: explanation) }

    var response: MockResponse? {
        guard answered else { return nil }
        var headers: [(String, String)] = []
        headers.reserveCapacity(3 + extraHeaders.count)
        if apnsID.isEmpty {
            headers.append((idHeader, RandomIdentifier.uuid()))
        } else {
            headers.append((idHeader, apnsID))
        }
        if let uniqueID { headers.append((APNsHeader.uniqueID, uniqueID)) }
        headers += extraHeaders
        if !responseBody.isEmpty { headers.append((APNsHeader.contentType, "application/json")) }
        return MockResponse(status: status, headers: headers, body: responseBody)
    }

    func record(id: Int, connection: Int) -> NotificationRecord {
        // The leniency notes first; the record still keeps at most its maximum, counting the rest.
        let all = leniencies.isEmpty ? findings : leniencies + findings
        let listed = all.count > NotificationRecord.maximumFindings ? Array(all.prefix(NotificationRecord.maximumFindings)) : all
        return NotificationRecord(
            id: id, connection: connection, receivedAt: now, kind: kind, fields: fields, body: body, bodyByteCount: bodyByteCount,
            apnsID: apnsID.isEmpty ? nil : apnsID, uniqueID: uniqueID, status: answered ? status : nil, reason: answered ? reason : nil,
            timestamp: status == 410 ? timestamp : nil, explanation: explanation, fault: fault, findings: listed,
            omittedFindings: omittedFindings + all.count - listed.count,
            delivered: delivered, defaultedTopic: defaultedTopic)
    }

}

extension Date {
    /// Unix milliseconds, kept within `Int64` (a date given in code may lie beyond it).
    var unixMilliseconds: Int64 {
        let value = (timeIntervalSince1970 * 1000).rounded()
        guard value.isFinite else { return 0 }
        return Int64(max(-9.2e18, min(9.2e18, value)))
    }
}
