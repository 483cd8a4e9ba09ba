import Foundation
import NIOCore
import HeraldAuth
import HeraldDevice
import HeraldJSON
import HeraldLint
import HeraldPayload
import HeraldProtocol
import Synchronization

/// A request as the HTTP/2 layer hands it over: every header field in order, the body, and
/// where it arrived.
struct IncomingRequest: Sendable {
    enum Listener: Sendable { case apns, channels }

    var fields: APNsHeaderFields
    var body: [UInt8]
    /// The body's size as sent (``body`` holds at most the configured maximum).
    var bodyByteCount: Int
    var listener: Listener
}

/// An HTTP/2 answer.
struct MockResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]
}

/// What the connection does with one request: answer it (or not), and what else happens.
struct Plan: Sendable {
    var delay: Duration?
    var response: MockResponse?
    var resetCode: UInt32?
    var closeConnection = false
    var goAway: (reason: APNsReason, beforeAnswering: Bool)?
    var lowerStreams: Int?
    /// The connection's first valid provider token: raise `SETTINGS_MAX_CONCURRENT_STREAMS`.
    var raiseStreams = false
    /// With a database: completes when the request's row is committed (the answer waits).
    var stored: EventLoopFuture<Void>?
    /// The id of the request's record.
    var recordID: Int?
}

/// One connection's authentication state. Owned by the connection (its event loop).
struct ConnectionState: Sendable {
    let id: Int
    /// The client certificate's topics and environments, on a certificate-based connection.
    var certificate: APNsCertificateInfo?
    /// The provider token last accepted, its `iat`, and when it replaced the one before.
    var token: String?
    var tokenIssuedAt: Int64 = 0
    var tokenChangedAt: Date?
    /// The team bound by the first accepted push.
    var team: String?
    var streamsRaised = false
    /// A push the mock sends itself (the inbox's Resend): its sender was authenticated when
    /// it first came, and its record keeps no signature to check again.
    var resent = false

    init(id: Int, certificate: APNsCertificateInfo? = nil) {
        self.id = id
        self.certificate = certificate
    }
}

/// The mock's shared state and the one place requests are judged, in the order the article
/// "Running the mock" (HeraldMock.docc/RunningTheMock.md, "What it answers") documents: faults,
/// headers, authentication, topic, payload, device. Change one, change the other.
final class MockCore: Sendable {
    let configuration: MockConfiguration
    let verifier: ProviderTokenVerifier
    let linter = Linter()
    /// The newest records in memory: what the embedding API reads, whatever else keeps them.
    let store: MemoryRecordStore
    let devices: DeviceRegistry
    let channels = ChannelRegistry()
    let faults = FaultTable()
    let events = EventHub()
    let metrics = MockMetrics()
    /// What happened below the requests (GOAWAYs, resets, protocol errors, closes).
    let connectionLog = ConnectionLog()
    /// The persistent store, when the server was started with a database.
    let database = Mutex<DatabaseStore?>(nil)
    /// What renders pushes: the app's strings in the mock's languages.
    let renderer: NotificationRenderer
    private let renderers = Mutex<[String: NotificationRenderer]>([:])
    /// The last record id given. Ids are given and records stored under this lock, so the
    /// stores receive them in id order (a reader paging by id misses none).
    private let requestSequence = Mutex<Int>(0)
    private let connectionSequence = Atomic<Int>(0)

    /// The reason a token rotation within this time gives `TooManyProviderTokenUpdates`.
    static let tokenUpdateInterval: TimeInterval = 20 * 60

    init(configuration: MockConfiguration) {
        self.configuration = configuration
        verifier = ProviderTokenVerifier(
            keys: configuration.keys,
            options: .init(
                acceptsStringIssuedAt: configuration.leniency.acceptsStringIssuedAt,
                acceptsFractionalIssuedAt: configuration.leniency.acceptsFractionalIssuedAt))
        store = MemoryRecordStore(retention: RecordRetention(count: configuration.storeCapacity))
        renderer = NotificationRenderer(bundle: configuration.localization, preferredLanguages: configuration.languages)
        devices = DeviceRegistry(capacity: 10_000, renderer: renderer)
        for token in configuration.unregisteredTokens {
            _ = devices.register(token, topic: nil, environment: configuration.environment)
            devices.entry(token)?.state.withLock { $0.unregisteredAt = configuration.now() }
        }
        for rule in configuration.faults { faults.add(rule) }
    }

    func nextConnectionID() -> Int { connectionSequence.add(1, ordering: .relaxed).newValue }

    /// Records a connection event (at the real time: the network's, not the mock's clock) in the
    /// log, the metrics and the event stream.
    func log(
        connection: Int, peer: String?, _ kind: ConnectionEvent.Kind, stream: Int? = nil, code: String? = nil, lastStreamID: Int? = nil,
        detail: String? = nil
    ) {
        let event = connectionLog.add(
            connection: connection, peer: peer, kind: kind, stream: stream, code: code, lastStreamID: lastStreamID, detail: detail)
        metrics.count(event)
        if events.hasSubscribers { events.publish(.connection(event)) }
    }

    /// Where the API reads records: the database when there is one, else memory.
    var recordStore: any RecordStore { database.withLock { $0 } ?? store }

    /// The renderer for `language` (the mock's own when `nil`): the app's strings looked up as
    /// on a device whose first language is `language`.
    func renderer(for language: String?) -> NotificationRenderer {
        guard let language, !language.isEmpty else { return renderer }
        return renderers.withLock { cache in
            if let cached = cache[language] { return cached }
            let made = NotificationRenderer(bundle: configuration.localization, preferredLanguages: [language] + configuration.languages)
            if cache.count < 64 { cache[language] = made }
            return made
        }
    }

    // MARK: Persistence of devices and channels

    /// Writes a device's row when there is a database (ordered before later records' rows).
    func persistDevice(_ token: DeviceToken) {
        guard let database = database.withLock({ $0 }) else { return }
        if let device = devices.entry(token)?.state.withLock({ $0 }) {
            database.save(DatabaseStore.DeviceRow(device))
        } else {
            database.deleteDevice(token)
        }
    }

    func persistChannel(_ channel: MockChannel?, deleted id: String? = nil) {
        guard let database = database.withLock({ $0 }) else { return }
        if let channel { database.save(channel) }
        if let id { database.deleteChannel(id: id) }
    }

    // MARK: Entry point

    /// Judges one request, records it, delivers it, and says what the connection does.
    func handle(_ request: IncomingRequest, connection: inout ConnectionState) -> Plan {
        let now = configuration.now()
        let fields = request.fields
        let path = fields[":path"] ?? ""
        var plan = Plan()
        var faultText: String?
        if !faults.isEmpty {
            let kind: FaultRule.PathKind = request.listener == .channels ? .channels : path.hasPrefix(APNsPath.broadcastPrefix) ? .broadcast : .device
            let token = path.hasPrefix(APNsPath.devicePrefix) ? try? DeviceToken(hex: String(path.dropFirst(APNsPath.devicePrefix.count))) : nil
            let topic = kind == .broadcast ? String(path.dropFirst(APNsPath.broadcastPrefix.count)) : fields[APNsHeader.topic]
            if let rule = faults.match(token: token, topic: topic, pushType: fields[APNsHeader.pushType].flatMap(PushType.init(rawValue:)), path: kind) {
                faultText = rule.description
                plan.delay = rule.delay
                var outcome = Outcome(fields: fields, request: request, now: now, environment: configuration.environment)
                outcome.fault = faultText
                switch rule.action {
                case .respond(let status, let reason)?:
                    outcome.fail(status: status, reason: reason, "fault rule \(rule)")
                    plan.response = outcome.response
                    record(outcome, connection: connection, into: &plan)
                    return plan
                case .goAway(let reason, true)?:
                    plan.goAway = (reason, true)
                    outcome.explanation = "fault rule \(rule): GOAWAY before answering"
                    record(outcome, connection: connection, into: &plan)
                    return plan
                case .resetStream(let code)?:
                    plan.resetCode = code
                    outcome.explanation = "fault rule \(rule): stream reset"
                    record(outcome, connection: connection, into: &plan)
                    return plan
                case .closeConnection?:
                    plan.closeConnection = true
                    outcome.explanation = "fault rule \(rule): connection closed"
                    record(outcome, connection: connection, into: &plan)
                    return plan
                case .noAnswer?:
                    outcome.explanation = "fault rule \(rule): no answer"
                    record(outcome, connection: connection, into: &plan)
                    return plan
                case .goAway(let reason, false)?:
                    plan.goAway = (reason, false)
                case .lowerMaximumStreams(let count)?:
                    plan.lowerStreams = count
                case nil:
                    break
                }
            }
        }
        var outcome = Outcome(fields: fields, request: request, now: now, environment: configuration.environment)
        outcome.fault = faultText
        switch request.listener {
        case .apns: judge(&outcome, connection: &connection, plan: &plan)
        case .channels: manageChannel(&outcome, connection: &connection, plan: &plan)
        }
        plan.response = outcome.response
        record(outcome, connection: connection, into: &plan)
        return plan
    }

    /// New request ids continue after `id` (the highest a database holds).
    func continueIDs(after id: Int) {
        requestSequence.withLock { if $0 == 0 { $0 = id } }
    }

    /// Stores the record, counts it, and tells event-stream readers; with a database, the plan's
    /// `stored` completes when its row is committed.
    private func record(_ outcome: Outcome, connection: ConnectionState, into plan: inout Plan) {
        var record = outcome.record(id: 0, connection: connection.id)
        record.renderer = renderer
        let database = self.database.withLock { $0 }
        plan.stored = requestSequence.withLock { last in
            last += 1
            record.id = last
            _ = store.append(record)
            return database?.append(record)
        }
        plan.recordID = record.id
        metrics.count(record)
        if events.hasSubscribers { events.publish(.received(record)) }
    }

    // MARK: Device and broadcast pushes

    private func judge(_ outcome: inout Outcome, connection: inout ConnectionState, plan: inout Plan) {
        let headers: APNsRequestHeaders
        do throws(APNsHeaderError) {
            headers = try APNsRequestHeaders(parsing: outcome.fields)
        } catch {
            if error.reason == .badMessageID { outcome.apnsID = RandomIdentifier.uuid() }
            return outcome.fail(reason: error.reason, error.problem)
        }
        guard let target = headers.target else {
            return outcome.fail(reason: .badPath, "the request has no :path")
        }
        if case .broadcast = target {
            outcome.kind = .broadcast
            outcome.useRequestID()
        }
        guard authenticate(&outcome, headers: headers, connection: &connection, plan: &plan) else { return }
        switch target {
        case .device(let token):
            pushToDevice(token, headers: headers, outcome: &outcome, connection: connection)
        case .broadcast(let bundleID):
            broadcast(bundleID: bundleID, headers: headers, outcome: &outcome, connection: connection)
        }
    }

    /// Token or certificate authentication; `false` when the request is refused.
    private func authenticate(_ outcome: inout Outcome, headers: APNsRequestHeaders, connection: inout ConnectionState, plan: inout Plan) -> Bool {
        if connection.resent { return true }
        if let certificate = connection.certificate {
            if certificate.notValidAfter < outcome.now || certificate.notValidBefore > outcome.now {
                outcome.fail(reason: .badCertificate, "the client certificate is not valid now (valid \(certificate.notValidBefore) to \(certificate.notValidAfter))")
                return false
            }
            guard certificate.environments.contains(configuration.environment) else {
                outcome.fail(reason: .badCertificateEnvironment, "the client certificate is for \(certificate.environments.map(\.rawValue).sorted().joined(separator: ", ")), not \(configuration.environment)")
                return false
            }
            return true
        }
        guard let jwt = headers.providerToken else {
            outcome.fail(reason: .missingProviderToken, "no authorization header: token-based connections send \"authorization: bearer <provider token>\"")
            return false
        }
        if jwt == connection.token {
            // Verified on this connection before: only its age can have changed.
            let age = outcome.now.timeIntervalSince1970 - Double(connection.tokenIssuedAt)
            if age > verifier.options.maximumAge {
                outcome.fail(reason: .expiredProviderToken, "the provider token's iat is \(Int(age)) seconds old; tokens older than one hour are refused: make a new one")
                return false
            }
            return true
        }
        let token: ProviderToken
        switch verifier.verify(jwt, at: outcome.now) {
        case .success(let verified): token = verified
        case .failure(let rejection):
            outcome.fail(reason: rejection.reason, rejection.problem)
            return false
        }
        if let team = connection.team, team != token.teamID {
            outcome.fail(reason: .invalidProviderToken, "this connection is bound to team \(team) by its first push; tokens for team \(token.teamID) need a new connection")
            return false
        }
        if connection.token != nil, let changed = connection.tokenChangedAt, outcome.now.timeIntervalSince(changed) < Self.tokenUpdateInterval {
            outcome.fail(reason: .tooManyProviderTokenUpdates, "the provider token changed \(Int(outcome.now.timeIntervalSince(changed))) seconds after the previous change on this connection; change it at most every 20 minutes")
            return false
        }
        connection.token = jwt
        connection.tokenIssuedAt = token.issuedAt
        connection.tokenChangedAt = outcome.now
        connection.team = token.teamID
        if !connection.streamsRaised {
            connection.streamsRaised = true
            plan.raiseStreams = true
        }
        return true
    }

    private func pushToDevice(_ token: DeviceToken, headers: APNsRequestHeaders, outcome: inout Outcome, connection: ConnectionState) {
        var headers = headers
        var wireFields = outcome.fields
        if headers.topic == nil, let certificate = connection.certificate, let topic = certificate.defaultTopic {
            headers.topic = topic
            outcome.defaultedTopic = topic
            wireFields.append(name: APNsHeader.topic, value: topic)
        }
        guard let topic = headers.topic else {
            return outcome.fail(reason: .missingTopic, "no apns-topic: token-based connections must name the topic (the bundle ID plus the push type's suffix)")
        }
        if let certificate = connection.certificate, !certificate.allows(topic: topic) {
            return outcome.fail(reason: .topicDisallowed, "the client certificate allows \(certificate.topicNames.joined(separator: ", ")), not \(topic)")
        }
        if refuseOversized(&outcome, pushType: headers.pushType, endpoint: .device) { return }
        // The linter reads the headers as sent (an uppercase apns-id stays uppercase).
        let report = linter.lint(outcome.body, context: LintContext(fields: wireFields, endpoint: .device, isRequest: true))
        outcome.keepFindings(report.diagnostics)
        if let (reason, message) = rejection(report) {
            return outcome.fail(reason: reason, message)
        }
        let entry: DeviceRegistry.Entry
        var bindingChanged = false
        if let existing = devices.entry(token) {
            entry = existing
        } else if configuration.registersDevicesOnFirstPush {
            let made = devices.entry(token, creatingWith: topic, environment: configuration.environment)
            entry = made.entry
            bindingChanged = made.created
            if let evicted = made.evicted { persistDevice(evicted) }
        } else {
            return outcome.fail(reason: .badDeviceToken, "no device has token \(token.hex) (devices are registered through the API; registration on first push is off)")
        }
        // Rendered from the linter's parse, leniently, as the device reads it.
        let document = report.document
        // The record renders its own copy, custom data included, when asked; the device needs
        // only what the user sees.
        let rendered = document.flatMap { try? renderer.render(document: $0, headers: headers, includingUserInfo: false) }
        // The device shows `rendered`; the payload is not read again (decoding it twice cost
        // the mock 4% of its time).
        let payload: Payload? = rendered == nil ? nil : Payload()
        let environment = configuration.environment
        let now = outcome.now
        let problem: (APNsReason, String, Int64?)? = entry.state.withLock { device in
            device.lastSeen = now
            if device.environment != environment {
                return (.badDeviceToken, "the token belongs to the \(device.environment) environment; this mock plays \(environment) (a sandbox token sent to production, or the reverse)", nil)
            }
            if let bound = device.topic, bound != topic {
                return (.deviceTokenNotForTopic, "the token belongs to topic \(bound), not \(topic)", nil)
            }
            if device.topic == nil { bindingChanged = true }
            device.topic = topic
            if let unregistered = device.unregisteredAt {
                return (.unregistered, "the token was unregistered at \(NotificationRecord.iso8601(unregistered))", unregistered.unixMilliseconds)
            }
            device.deliveries += 1
            if let payload {
                device.device.receive(
                    SimulatedDevice.Delivery(id: outcome.apnsID, payload: payload, headers: headers, rendered: rendered),
                    at: outcome.now.timeIntervalSince1970)
            }
            return nil
        }
        // The device's row before the request's: the answer waits for the latter.
        if bindingChanged { persistDevice(token) }
        if let (reason, message, timestamp) = problem {
            outcome.timestamp = timestamp
            return outcome.fail(reason: reason, message)
        }
        outcome.delivered = rendered != nil
        outcome.succeed(explanation: rendered == nil ? "accepted; the payload is not a JSON object, so the device shows nothing" : nil)
    }

    /// The first rejection the linter's findings give, with the leniency settings applied.
    private func rejection(_ report: LintReport) -> (APNsReason, String)? {
        let leniency = configuration.leniency
        func message(_ rule: RuleID) -> String {
            report.diagnostics.first { $0.rule == rule }?.message ?? rule.rawValue
        }
        for rule in LintCatalog.rejectionPrecedence where report.diagnostics.contains(where: { $0.rule == rule }) {
            if rule == .topicMismatch && leniency.acceptsTopicSuffixMismatch { continue }
            if let reason = LintCatalog.rule(rule).apnsReason { return (reason, message(rule)) }
        }
        if !leniency.acceptsUppercaseAPNsID, report.diagnostics.contains(where: { $0.rule == .apnsIDNotLowercase }) {
            return (.badMessageID, message(.apnsIDNotLowercase) + " (strict mode)")
        }
        if !leniency.acceptsBackgroundAtPriority10, report.diagnostics.contains(where: { $0.rule == .backgroundPriority }) {
            return (.badPriority, message(.backgroundPriority) + " (strict mode)")
        }
        return nil
    }

    /// A body over its push type's limit is answered 413 from its size alone, as APNs does,
    /// with that one finding (`Linter.sizeRefusal`).
    private func refuseOversized(_ outcome: inout Outcome, pushType: PushType?, endpoint: APNsEndpoint) -> Bool {
        guard let size = Linter.sizeRefusal(byteCount: outcome.bodyByteCount, pushType: pushType, endpoint: endpoint) else { return false }
        outcome.findings = [NotificationRecord.Finding(size)]
        outcome.fail(reason: .payloadTooLarge, size.message)
        return true
    }

    private func broadcast(bundleID: String, headers: APNsRequestHeaders, outcome: inout Outcome, connection: ConnectionState) {
        if let suffix = PushType.allCases.compactMap(\.topicSuffix).first(where: { !$0.isEmpty && bundleID.hasSuffix($0) }) {
            return outcome.fail(reason: .topicDisallowed, "the path names \(bundleID); send to the bare bundle ID, without the \(suffix) suffix")
        }
        if let certificate = connection.certificate, !certificate.allows(topic: bundleID) {
            return outcome.fail(reason: .topicMismatch, "the client certificate allows \(certificate.topicNames.joined(separator: ", ")), not \(bundleID)")
        }
        guard let channelID = headers.channelID else {
            return outcome.fail(reason: .missingChannelID, "no apns-channel-id header: a broadcast names its channel")
        }
        guard Data(base64Encoded: channelID) != nil else {
            return outcome.fail(reason: .badChannelID, "apns-channel-id \(channelID) is not base64")
        }
        guard let channel = channels.channel(bundleID: bundleID, id: channelID) else {
            return outcome.fail(reason: .channelNotRegistered, "no channel \(channelID) exists for \(bundleID)")
        }
        guard let pushType = headers.pushType else {
            return outcome.fail(reason: .missingPushType, "no apns-push-type: broadcasts are liveactivity pushes")
        }
        guard pushType == .liveactivity else {
            return outcome.fail(reason: .invalidPushType, "apns-push-type is \(pushType.rawValue); broadcasts accept only liveactivity")
        }
        if channel.storagePolicy == 0, let expiration = headers.expiration, expiration != .immediately {
            return outcome.fail(reason: .badExpirationDate, "channel \(channelID) stores no messages, so apns-expiration must be 0")
        }
        if refuseOversized(&outcome, pushType: pushType, endpoint: .broadcast) { return }
        let report = linter.lint(outcome.body, context: LintContext(fields: outcome.fields, endpoint: .broadcast, isRequest: true))
        outcome.keepFindings(report.diagnostics)
        if let (reason, message) = rejection(report) {
            return outcome.fail(reason: reason, message)
        }
        if let document = report.document, let rendered = try? renderer.render(document: document, headers: headers, includingUserInfo: false) {
            let payload = Payload()  // the device shows `rendered`
            outcome.delivered = true
            for token in channels.subscribers(of: channelID) {
                devices.entry(token)?.state.withLock { device in
                    device.lastSeen = outcome.now
                    device.deliveries += 1
                    device.device.receive(
                        SimulatedDevice.Delivery(id: outcome.apnsID, payload: payload, headers: headers, activityID: channelID, rendered: rendered),
                        at: outcome.now.timeIntervalSince1970)
                }
            }
        }
        outcome.succeed(explanation: nil)
    }

    // MARK: Channel management

    private func manageChannel(_ outcome: inout Outcome, connection: inout ConnectionState, plan: inout Plan) {
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
        guard authenticate(&outcome, headers: headers, connection: &connection, plan: &plan) else { return }
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
        if let certificate = connection.certificate, !certificate.allows(topic: bundleID) {
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
    /// and counts the rest: a record's size does not grow with what a payload provokes.
    mutating func keepFindings(_ diagnostics: [LintDiagnostic]) {
        findings = diagnostics.prefix(NotificationRecord.maximumFindings).map(NotificationRecord.Finding.init)
        omittedFindings = diagnostics.count - findings.count
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
        NotificationRecord(
            id: id, connection: connection, receivedAt: now, kind: kind, fields: fields, body: body, bodyByteCount: bodyByteCount,
            apnsID: apnsID.isEmpty ? nil : apnsID, uniqueID: uniqueID, status: answered ? status : nil, reason: answered ? reason : nil,
            timestamp: status == 410 ? timestamp : nil, explanation: explanation, fault: fault, findings: findings, omittedFindings: omittedFindings,
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
