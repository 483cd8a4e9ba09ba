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

/// What one connection keeps between its requests. Owned by the connection (its event loop).
struct ConnectionState: Sendable {
    let id: Int
    /// Its provider authentication: a client certificate or the token last accepted.
    var authentication = ProviderAuthentication()
    /// Whether `SETTINGS_MAX_CONCURRENT_STREAMS` has been raised from 1 (a valid token seen).
    var streamsRaised = false
    /// The request counters this connection has counted in.
    var requestCounters = MockMetrics.RequestCounters()

    init(id: Int, certificate: APNsCertificateInfo? = nil) {
        self.id = id
        authentication.certificate = certificate
    }
}

/// The mock's shared state and the one place requests are judged, in the order the article
/// "Running the mock" (HeraldMock.docc/RunningTheMock.md, "What it answers") documents: faults,
/// headers, authentication, topic, payload, device. Each stage is a function that returns what
/// the next needs or throws the ``Rejection`` that answers the request (this file,
/// MockCore+Pushes.swift, MockCore+Channels.swift). Change one, change the other.
final class MockCore: Sendable {
    let configuration: MockConfiguration
    /// The provider keys signatures are checked against (replaced by
    /// ``MockAPNsServer/replaceProviderKeys(_:)``, as Apple's account revokes and adds keys).
    private let verifierState: Mutex<ProviderTokenVerifier>
    var verifier: ProviderTokenVerifier { verifierState.withLock { $0 } }
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
    /// Where new Live Activity update tokens are posted (``MockAPNsServer/reportActivityTokens(to:)`` changes it).
    let activityTokenReport: Mutex<ActivityTokenReport?>
    /// The persistent store, when the server was started with a database.
    let database = Mutex<DatabaseStore?>(nil)
    /// What renders pushes: the app's strings in the mock's languages.
    let renderer: NotificationRenderer
    /// ``renderer``, as each record holds it.
    private let recordRenderer: NotificationRecord.RendererBox
    private let renderers = Mutex<[String: NotificationRenderer]>([:])
    /// The last record id given. Ids are given and records stored under this lock, so the
    /// stores receive them in id order (a reader paging by id misses none).
    private let requestSequence = Mutex<Int>(0)
    private let connectionSequence = Atomic<Int>(0)

    init(configuration: MockConfiguration) {
        self.configuration = configuration
        activityTokenReport = Mutex(configuration.activityTokenReport)
        verifierState = Mutex(ProviderTokenVerifier(
            keys: configuration.keys,
            options: .init(
                acceptsStringIssuedAt: configuration.leniency.acceptsStringIssuedAt,
                acceptsFractionalIssuedAt: configuration.leniency.acceptsFractionalIssuedAt)))
        store = MemoryRecordStore(retention: RecordRetention(count: configuration.storeCapacity))
        renderer = NotificationRenderer(bundle: configuration.localization, preferredLanguages: configuration.languages)
        recordRenderer = NotificationRecord.RendererBox(renderer)
        devices = DeviceRegistry(capacity: 10_000, histories: configuration.deviceHistories, renderer: renderer)
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

    /// Judges one request, records it, delivers it, and says what the connection does: the
    /// stages of "What it answers" in their order. A fault rule (stage 1) may decide the request
    /// alone; otherwise the provider API (``judge(_:connection:plan:)``, MockCore+Pushes.swift)
    /// or channel management (``manageChannel(_:connection:plan:)``, MockCore+Channels.swift)
    /// does. Exactly one record is kept per request, whatever decided it.
    func handle(_ request: IncomingRequest, connection: inout ConnectionState) -> Plan {
        var plan = Plan()
        var outcome = Outcome(fields: request.fields, request: request, now: configuration.now(), environment: configuration.environment)
        if applyFault(to: request, outcome: &outcome, plan: &plan) {
            record(outcome, connection: &connection, into: &plan)
            return plan
        }
        switch request.listener {
        case .apns: judge(&outcome, connection: &connection, plan: &plan)
        case .channels: manageChannel(&outcome, connection: &connection, plan: &plan)
        }
        plan.response = outcome.response
        record(outcome, connection: &connection, into: &plan)
        return plan
    }

    /// Stage 1, a matching fault rule: `true` when it decides the request (an answer, a reset,
    /// a close, no answer, a GOAWAY before answering); otherwise it may only delay the answer,
    /// send a GOAWAY after it or lower the stream limit, and judging goes on.
    private func applyFault(to request: IncomingRequest, outcome: inout Outcome, plan: inout Plan) -> Bool {
        guard !faults.isEmpty else { return false }
        let fields = request.fields
        let path = outcome.path
        let kind: FaultRule.PathKind = request.listener == .channels ? .channels : path.hasPrefix(APNsPath.broadcastPrefix) ? .broadcast : .device
        let token = path.hasPrefix(APNsPath.devicePrefix) ? try? DeviceToken(hex: String(path.dropFirst(APNsPath.devicePrefix.count))) : nil
        let topic = kind == .broadcast ? String(path.dropFirst(APNsPath.broadcastPrefix.count)) : fields[APNsHeader.topic]
        guard let rule = faults.match(token: token, topic: topic, pushType: fields[APNsHeader.pushType].flatMap(PushType.init(rawValue:)), path: kind) else {
            return false
        }
        outcome.fault = rule.description
        plan.delay = rule.delay
        switch rule.action {
        case .respond(let status, let reason)?:
            outcome.fail(status: status, reason: reason, "fault rule \(rule)")
            plan.response = outcome.response
            return true
        case .goAway(let reason, true)?:
            plan.goAway = (reason, true)
            outcome.explanation = "fault rule \(rule): GOAWAY before answering"
            return true
        case .resetStream(let code)?:
            plan.resetCode = code
            outcome.explanation = "fault rule \(rule): stream reset"
            return true
        case .closeConnection?:
            plan.closeConnection = true
            outcome.explanation = "fault rule \(rule): connection closed"
            return true
        case .noAnswer?:
            outcome.explanation = "fault rule \(rule): no answer"
            return true
        case .goAway(let reason, false)?:
            plan.goAway = (reason, false)
        case .lowerMaximumStreams(let count)?:
            plan.lowerStreams = count
        case nil:
            break
        }
        return false
    }

    /// Stage 3, authentication, for every listener: the connection's ``ProviderAuthentication``
    /// decides; the first token it accepts raises the connection's stream limit.
    func authenticate(_ jwt: String?, outcome: inout Outcome, connection: inout ConnectionState, plan: inout Plan) throws(Rejection) {
        let accepted = try connection.authentication.authenticate(jwt, at: outcome.now, environment: configuration.environment, verifier: verifier)
        if jwt != nil, connection.authentication.certificate == nil { outcome.leniencies = connection.authentication.tokenLeniencies }
        if accepted, !connection.streamsRaised {
            connection.streamsRaised = true
            plan.raiseStreams = true
        }
    }

    /// Checks new provider tokens against `keys` from now on.
    func replaceKeys(_ keys: [ProviderPublicKey]) {
        verifierState.withLock { $0 = ProviderTokenVerifier(keys: keys, options: $0.options) }
    }

    /// New request ids continue after `id` (the highest a database holds).
    func continueIDs(after id: Int) {
        requestSequence.withLock { if $0 == 0 { $0 = id } }
    }

    /// Stores the record, counts it, and tells event-stream readers; with a database, the plan's
    /// `stored` completes when its row is committed.
    private func record(_ outcome: Outcome, connection: inout ConnectionState, into plan: inout Plan) {
        var record = outcome.record(id: 0, connection: connection.id)
        record.rendererBox = recordRenderer
        let database = self.database.withLock { $0 }
        // The record the ring pushes out is released here, after the sequence's lock too.
        var evicted: NotificationRecord?
        plan.stored = requestSequence.withLock { last in
            last += 1
            record.id = last
            evicted = store.appendHandingBack(record)
            return database?.append(record)
        }
        _ = evicted
        plan.recordID = record.id
        connection.requestCounters.count(record, in: metrics)
        if events.hasSubscribers { events.publish(.received(record)) }
    }
}
