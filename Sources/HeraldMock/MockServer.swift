import Foundation
import HeraldAuth
import HeraldHTTPAPI
import HeraldJSON
import HeraldProtocol
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization

/// A local APNs server: validates requests as Apple does, injects faults on demand, delivers
/// accepted pushes to simulated devices, and records everything for its inspection API.
///
/// Start one in a test, send to it, and await what arrives:
///
/// ```swift
/// var configuration = MockConfiguration()
/// configuration.port = 0                 // a free port
/// configuration.transport = .plaintext   // or the default generated TLS
/// let mock = try MockAPNsServer(configuration: configuration)
/// try await mock.start()
/// // … send to 127.0.0.1:\(mock.port) …
/// let record = try await mock.nextNotification(timeout: .seconds(5)) { $0.deviceToken == token }
/// #expect(record.status == 200 && record.rendered?.title == "Hello")
/// await mock.stop()
/// ```
///
/// As a `Service` (swift-service-lifecycle), ``run()`` starts it, waits for graceful shutdown
/// and stops it.
public final class MockAPNsServer: Service, Sendable {
    /// The configuration it was made with.
    public let configuration: MockConfiguration
    let core: MockCore
    /// The development CA made for ``MockConfiguration/Transport/generatedTLS``.
    public let certificateAuthority: DevelopmentCertificateAuthority?
    /// Sends to the release target, when one is configured.
    let releaser: Releaser?
    private let running = Mutex<Running?>(nil)
    private let ownGroup: MultiThreadedEventLoopGroup?
    private let logger: Logger

    private struct Running: Sendable {
        var apns: any Channel
        var channels: (any Channel)?
        var api: APIServer?
        var database: DatabaseStore?
        var retention: Task<Void, Never>?
    }

    /// Makes a server (it does not listen until ``start()``). With the default transport a
    /// development CA and server certificate are made here.
    ///
    /// - Throws: ``MockConfiguration/Problem`` for a setting that cannot work (see
    ///   ``MockConfiguration/validate()``), or why the CA or release client could not be made.
    public init(configuration: MockConfiguration = MockConfiguration(), logger: Logger = Logger(label: "herald.mock")) throws {
        try configuration.validate()
        self.configuration = configuration
        self.logger = logger
        core = MockCore(configuration: configuration)
        releaser = try configuration.releaseTarget.map(Releaser.init)
        ownGroup = configuration.ownEventLoopThreads.map { MultiThreadedEventLoopGroup(numberOfThreads: $0) }
        if case .generatedTLS = configuration.transport {
            var names = ["localhost", "127.0.0.1", "::1"]
            if !names.contains(configuration.host), !["0.0.0.0", "::"].contains(configuration.host) { names.append(configuration.host) }
            certificateAuthority = try DevelopmentCertificateAuthority(serverNames: names)
        } else {
            certificateAuthority = nil
        }
    }

    /// The CA certificate clients must trust (PEM), for the generated TLS transport.
    public var trustRootPEM: String? { certificateAuthority?.certificatePEM }

    /// What the inbox's commands to paste are made of (`herald send`, `curl`): how to run
    /// herald and where the files they need are. The `herald` command line sets them; an
    /// embedder may, or leave the placeholders.
    public var pasteHints: MockPasteHints {
        get { hints.withLock { $0 } }
        set { hints.withLock { $0 = newValue } }
    }
    private let hints = Mutex(MockPasteHints())

    /// Binds the APNs, channel-management and API ports.
    public func start() async throws {
        guard running.withLock({ $0 == nil }) else { return }
        var database: DatabaseStore?
        var retention: Task<Void, Never>?
        if let path = configuration.databasePath {
            let store = try await DatabaseStore.open(
                path: path,
                retention: RecordRetention(count: max(1, configuration.databaseKeepCount), age: configuration.databaseMaximumAge),
                writeDelay: configuration.databaseWriteDelay, logger: logger)
            do {
                core.continueIDs(after: try await store.highestID())
                try await restore(from: store)
            } catch {
                await store.close()
                throw MockDatabaseError(path: path, problem: "cannot read it back: \(error)")
            }
            core.database.withLock { $0 = store }
            database = store
            // Retention, applied continuously (once a second); fault rules' counts saved as they change.
            let now = configuration.now
            let logger = logger
            let faults = core.faults
            retention = Task {
                var savedFaults = faults.version
                while !Task.isCancelled {
                    do {
                        try await store.applyRetention(now: now())
                        let version = faults.version
                        if version != savedFaults {
                            try await store.saveFaults(faults.entries).get()
                            savedFaults = version
                        }
                    } catch {
                        logger.warning("keeping the database failed", metadata: ["error": "\(error)"])
                    }
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
        do {
            let (apns, channelListener, api) = try await bindListeners()
            running.withLock { $0 = Running(apns: apns, channels: channelListener, api: api, database: database, retention: retention) }
        } catch {
            retention?.cancel()
            core.database.withLock { $0 = nil }
            await database?.close()
            throw error
        }
    }

    /// Puts back what a database kept: devices (their Notification Centers rebuilt from their
    /// requests), broadcast channels and their subscribers, and fault rules. Rules and
    /// unregistered tokens given in the configuration are added when the database lacks them.
    private func restore(from store: DatabaseStore) async throws {
        let rows = try await store.devices()
        for row in rows { core.devices.restore(row.device(renderer: core.renderer)) }
        for channel in try await store.channels() { core.channels.restore(channel) }
        for row in rows {
            for channel in row.channels { core.channels.subscribe(row.token, to: channel) }
        }
        let stored = try await store.faults()
        core.faults.removeAll()
        core.faults.restore(stored)
        for rule in configuration.faults where !stored.contains(where: { $0.rule.description == rule.description }) {
            core.faults.add(rule)
        }
        try await store.saveFaults(core.faults.entries).get()
        for token in configuration.unregisteredTokens {
            let entry = core.devices.entry(token) ?? {
                _ = core.devices.register(token, topic: nil, environment: configuration.environment)
                return core.devices.entry(token)!
            }()
            entry.state.withLock { if $0.unregisteredAt == nil { $0.unregisteredAt = configuration.now() } }
            try await store.save(DatabaseStore.DeviceRow(entry.state.withLock { $0 })).get()
        }
        for device in core.devices.all {
            let rebuilt = try await DeviceReplay.rebuild(device, from: store, renderer: core.renderer)
            core.devices.entry(device.token)?.state.withLock { $0 = rebuilt }
        }
    }

    private func bindListeners() async throws -> (any Channel, (any Channel)?, APIServer?) {
        let group = ownGroup ?? MultiThreadedEventLoopGroup.singleton
        let sslContext = try makeSSLContext()
        var acceptsAny = false
        var certificateAuth = false
        if case .certificate(_, let any) = configuration.authentication {
            certificateAuth = true
            acceptsAny = any
        }
        let host = configuration.host
        func bind<T>(_ listener: MockBindError.Listener, _ port: Int, _ body: () async throws -> T) async throws -> T {
            do {
                return try await body()
            } catch {
                throw MockBindError(listener: listener, host: host, port: port, underlying: "\(error)")
            }
        }
        let apns = try await bind(.apns, configuration.port) {
            try await HTTP2Listener(
                core: core, listener: .apns, sslContext: sslContext, acceptsAnyClientCertificate: acceptsAny, requiresClientCertificate: certificateAuth
            ).bind(host: host, port: configuration.port, group: group)
        }
        var channelListener: (any Channel)?
        do {
            if let channelPort = configuration.channelPort {
                channelListener = try await bind(.channels, channelPort) {
                    try await HTTP2Listener(
                        core: core, listener: .channels, sslContext: sslContext, acceptsAnyClientCertificate: acceptsAny, requiresClientCertificate: certificateAuth
                    ).bind(host: host, port: channelPort, group: group)
                }
            }
            var api: APIServer?
            if let apiPort = configuration.apiPort {
                api = try await bind(.api, apiPort) { try await InspectionAPI(server: self).start(host: host, port: apiPort, logger: logger) }
            }
            return (apns, channelListener, api)
        } catch {
            // Nothing stays bound when one port cannot be.
            try? await channelListener?.close()
            try? await apns.close()
            throw error
        }
    }

    private func makeSSLContext() throws -> NIOSSLContext? {
        let chain: [NIOSSLCertificate]
        let key: NIOSSLPrivateKey
        switch configuration.transport {
        case .plaintext:
            return nil
        case .generatedTLS:
            guard let authority = certificateAuthority else { return nil }
            chain = try authority.serverCertificateChain()
            key = try authority.serverPrivateKey()
        case .tls(let certificateChain, let privateKey):
            chain = certificateChain
            key = privateKey
        }
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = ["h2"]
        if case .certificate(var roots, let acceptsAny) = configuration.authentication {
            if let authority = certificateAuthority { roots.append(try authority.trustRoot()) }
            tls.certificateVerification = .noHostnameVerification
            tls.trustRoots = .certificates(roots)
            if acceptsAny { tls.trustRoots = .certificates(roots.isEmpty ? chain : roots) }
        }
        return try NIOSSLContext(configuration: tls)
    }

    /// Stops listening and closes every connection; event-stream readers see the stream end.
    public func stop() async {
        guard let current = running.withLock({ state -> Running? in defer { state = nil }; return state }) else { return }
        try? await current.apns.close()
        try? await current.channels?.close()
        // Event-stream readers first, so the API's graceful shutdown has no stream to wait for.
        core.events.finishAll()
        await current.api?.stop()
        current.retention?.cancel()
        await current.retention?.value
        if let database = current.database {
            // The fault rules' last counts.
            try? await database.saveFaults(core.faults.entries).get()
        }
        core.database.withLock { $0 = nil }
        await current.database?.close()
        await releaser?.shutdown()
        try? await ownGroup?.shutdownGracefully()
    }

    /// Starts, waits for graceful shutdown (SIGINT/SIGTERM under a `ServiceGroup`), and stops.
    public func run() async throws {
        try await start()
        try? await gracefulShutdown()
        await stop()
    }

    private func localPort(_ channel: (any Channel)?) -> Int? { channel?.localAddress?.port }

    /// The APNs port (after ``start()``).
    public var port: Int { running.withLock { localPort($0?.apns) } ?? configuration.port }
    /// The channel-management port, if enabled.
    public var channelPort: Int? { running.withLock { localPort($0?.channels) } }
    /// The inspection API port, if enabled.
    public var apiPort: Int? { running.withLock { $0?.api?.port } }

    /// `https://127.0.0.1:PORT` (or `http://` for plaintext): where providers send.
    public var providerURL: String {
        let scheme = if case .plaintext = configuration.transport { "http" } else { "https" }
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "\(scheme)://\(host):\(port)"
    }

    // MARK: Inspection

    /// Recorded requests matching `query`, newest first: from the database when the mock keeps
    /// one (``MockConfiguration/databasePath``), as the API reads them, so what a restarted mock
    /// kept is here too.
    public func notifications(_ query: NotificationQuery = NotificationQuery()) async throws -> [NotificationRecord] {
        try await core.recordStore.page(query).records
    }

    /// What happened below the requests, newest first (at most the newest 1,000): GOAWAYs sent
    /// and received, resets of streams not yet answered, resets sent, protocol errors with the
    /// peer's address, and each closed connection with its requests and resets.
    public func connectionEvents(limit: Int = 1_000) -> [ConnectionEvent] { core.connectionLog.events(limit: limit) }

    /// The recorded request with this `apns-id` (or record id), from the same source as
    /// ``notifications(_:)``.
    public func notification(id: String) async throws -> NotificationRecord? { try await core.recordStore.find(id: id) }

    /// A live stream of what happens (bounded: a slow reader loses the oldest events).
    public func events() -> AsyncStream<MockEvent> { core.events.subscribe() }

    /// Waits for the first request recorded from now on that satisfies `predicate`, or throws
    /// ``MockTimeoutError`` after `timeout`.
    public func nextNotification(
        timeout: Duration = .seconds(10), where predicate: @escaping @Sendable (NotificationRecord) -> Bool = { _ in true }
    ) async throws -> NotificationRecord {
        let stream = core.events.subscribe()
        return try await withThrowingTaskGroup(of: NotificationRecord?.self) { group in
            group.addTask {
                for await event in stream {
                    if case .received(let record) = event, predicate(record) { return record }
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let record = first else {
                throw MockTimeoutError(timeout: timeout)
            }
            return record
        }
    }

    /// Every simulated device.
    public var devices: [MockDevice] { core.devices.all }

    /// The languages the app's strings are in (none without ``MockConfiguration/localization``):
    /// what devices can be shown in.
    public var languages: [String] {
        (configuration.localization?.localizations ?? []).filter { $0 != "*" }.sorted()
    }

    /// One simulated device.
    public func device(_ token: DeviceToken) -> MockDevice? { core.devices.entry(token)?.state.withLock { $0 } }

    /// Registers a device for a topic in an environment (default: the mock's), or re-binds it.
    @discardableResult
    public func registerDevice(_ token: DeviceToken, topic: String? = nil, environment: APNsEnvironment? = nil) -> MockDevice {
        let device = core.devices.register(token, topic: topic, environment: environment ?? configuration.environment)
        core.persistDevice(token)
        return device
    }

    /// Marks a token unregistered at `date`: pushes to it answer 410 `Unregistered` with that
    /// time.
    public func unregister(_ token: DeviceToken, at date: Date = Date()) {
        let entry = core.devices.entry(token) ?? {
            _ = core.devices.register(token, topic: nil, environment: configuration.environment)
            return core.devices.entry(token)!
        }()
        entry.state.withLock { $0.unregisteredAt = date }
        core.persistDevice(token)
    }

    /// Makes an unregistered token active again.
    public func reactivate(_ token: DeviceToken) {
        core.devices.entry(token)?.state.withLock { $0.unregisteredAt = nil }
        core.persistDevice(token)
    }

    /// Forgets a device.
    @discardableResult
    public func removeDevice(_ token: DeviceToken) -> Bool {
        let removed = core.devices.remove(token)
        core.persistDevice(token)
        return removed
    }

    /// Sets up one plaintext provider connection's handlers on `channel`, exactly as the
    /// listener does for each connection it accepts: for the connection fuzzer, which drives
    /// them through an `EmbeddedChannel` (the server need not be started).
    package func configureProviderConnection(on channel: any Channel) throws {
        try HTTP2Listener(core: core, listener: .apns, sslContext: nil, acceptsAnyClientCertificate: false, requiresClientCertificate: false)
            .configure(channel)
    }

    /// Checks provider tokens against `keys` from now on, as when a key is revoked or added in
    /// Apple's developer account: a token verified on a connection before stays accepted on
    /// that connection (APNs verifies a token once per connection), a new token or connection
    /// meets the new keys. An empty list accepts any well-formed token unverified.
    public func replaceProviderKeys(_ keys: [ProviderPublicKey]) {
        core.replaceKeys(keys)
    }

    /// Adds a fault rule; returns its id.
    @discardableResult
    public func addFault(_ rule: FaultRule) -> Int {
        let id = core.faults.add(rule)
        persistFaults()
        return id
    }

    /// Removes a fault rule.
    @discardableResult
    public func removeFault(id: Int) -> Bool {
        let removed = core.faults.remove(id: id)
        persistFaults()
        return removed
    }

    /// Removes every fault rule.
    public func removeAllFaults() {
        core.faults.removeAll()
        persistFaults()
    }

    private func persistFaults() {
        core.database.withLock { $0 }?.saveFaults(core.faults.entries)
    }

    /// The fault rules in force, with their ids.
    public var faults: [(id: Int, rule: FaultRule)] { core.faults.entries.map { ($0.id, $0.rule) } }

    /// Creates a broadcast channel (as `POST /1/apps/<bundle>/channels` does).
    public func createChannel(bundleID: String, storagePolicy: Int = 0) -> MockChannel? {
        core.channels.create(bundleID: bundleID, storagePolicy: storagePolicy, now: configuration.now())
    }

    /// Every broadcast channel.
    public var channels: [MockChannel] { core.channels.all }

    /// Posts each new Live Activity update token to `report` from now on (`nil`: stops), as
    /// ``MockConfiguration/activityTokenReport`` does from the start.
    public func reportActivityTokens(to report: ActivityTokenReport?) {
        core.activityTokenReport.withLock { $0 = report }
    }

    /// The Live Activities a device shows (``activities(of:)`` of the API): an update token's
    /// own, or those a push-to-start token started; `nil` when no device has the token.
    public func activities(of token: DeviceToken) -> [JSONValue]? {
        core.activities(of: token, at: configuration.now())
    }

    /// Subscribes a device to a channel (as a Live Activity started with the channel does).
    public func subscribe(_ token: DeviceToken, toChannel id: String) {
        if core.devices.entry(token) == nil { registerDevice(token) }
        core.channels.subscribe(token, to: id)
        core.devices.entry(token)?.state.withLock { _ = $0.channels.insert(id) }
        core.persistDevice(token)
    }

    /// Forgets recorded requests (devices, faults and channels stay), in memory and in the
    /// database, before returning.
    public func clearNotifications() async throws {
        core.store.clear()
        try await core.database.withLock({ $0 })?.removeAll()
        core.events.publish(.cleared)
    }

    /// Forgets requests, devices, channels and faults, in memory and in the database, before
    /// returning.
    public func reset() async throws {
        try await clearNotifications()
        core.devices.removeAll()
        core.channels.removeAll()
        core.faults.removeAll()
        try await core.database.withLock({ $0 })?.removeState()
    }
}

/// No matching request arrived in time.
public struct MockTimeoutError: Error, Sendable, CustomStringConvertible {
    /// How long was waited.
    public var timeout: Duration
    /// `no matching request within …`.
    public var description: String { "no matching request arrived within \(timeout)" }
}

/// A port the mock could not listen on: which of its three listeners, the address, and why.
public struct MockBindError: Error, CustomStringConvertible, Sendable {
    /// The mock's listeners.
    public enum Listener: String, Sendable {
        /// The APNs provider API (`MockConfiguration/port`).
        case apns
        /// Broadcast channel management (`MockConfiguration/channelPort`).
        case channels
        /// The inbox, inspection API, events and metrics (`MockConfiguration/apiPort`).
        case api
    }

    /// Which listener.
    public var listener: Listener
    /// The address it was to bind.
    public var host: String
    /// The port it was to bind.
    public var port: Int
    /// The system's reason.
    public var underlying: String

    /// Whether the port is taken by another process.
    public var portInUse: Bool { underlying.contains("Address already in use") || underlying.contains("errno: 98") }

    /// `the APNs port 127.0.0.1:2197 is in use …`.
    public var description: String {
        let what: String
        switch listener {
        case .apns: what = "the APNs port"
        case .channels: what = "the channel-management port"
        case .api: what = "the inbox and API port"
        }
        return "\(what) \(host):\(port) \(portInUse ? "is in use by another process" : "cannot be bound: \(underlying)")"
    }
}

/// What the inbox puts in the commands it offers to paste, so that they work as pasted in
/// any folder.
public struct MockPasteHints: Sendable, Hashable {
    /// How to run herald: `herald` when installed on the `PATH`, or `swift run --package-path
    /// /path/to/herald herald`.
    public var herald: String
    /// The absolute path of the CA certificate clients trust (the generated TLS transport), or
    /// `nil` for a placeholder.
    public var trustFile: String?
    /// Absolute paths of provider keys (.p8), by key ID, for `herald token` and `herald send`.
    public var keyFiles: [String: String]

    /// Hints; the defaults give `herald` and placeholders for the files.
    public init(herald: String = "herald", trustFile: String? = nil, keyFiles: [String: String] = [:]) {
        self.herald = herald
        self.trustFile = trustFile
        self.keyFiles = keyFiles
    }
}
