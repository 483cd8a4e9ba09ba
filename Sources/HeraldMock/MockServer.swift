import Foundation
import HeraldAuth
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
/// let mock = MockAPNsServer(configuration: configuration)
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
    private let running = Mutex<Running?>(nil)
    private let logger: Logger

    private struct Running: Sendable {
        var apns: any Channel
        var channels: (any Channel)?
        var api: InspectionAPI.Handle?
        var database: DatabaseStore?
        var retention: Task<Void, Never>?
    }

    /// Makes a server (it does not listen until ``start()``). With the default transport a
    /// development CA and server certificate are made here.
    public init(configuration: MockConfiguration = MockConfiguration(), logger: Logger = Logger(label: "herald.mock")) throws {
        self.configuration = configuration
        self.logger = logger
        core = MockCore(configuration: configuration)
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

    /// Binds the APNs, channel-management and API ports.
    public func start() async throws {
        guard running.withLock({ $0 == nil }) else { return }
        var database: DatabaseStore?
        var retention: Task<Void, Never>?
        if let path = configuration.databasePath {
            let store = try await DatabaseStore.open(
                path: path,
                retention: .init(
                    count: max(1, configuration.databaseKeepCount), age: configuration.databaseMaximumAge,
                    writeDelay: configuration.databaseWriteDelay),
                logger: logger)
            core.continueIDs(after: try await store.highestID())
            core.database.withLock { $0 = store }
            database = store
            // Retention, applied continuously (once a second).
            let now = configuration.now
            let logger = logger
            retention = Task {
                while !Task.isCancelled {
                    do {
                        try await store.prune(now: now())
                    } catch {
                        logger.warning("pruning the database failed", metadata: ["error": "\(error)"])
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

    private func bindListeners() async throws -> (any Channel, (any Channel)?, InspectionAPI.Handle?) {
        let group = MultiThreadedEventLoopGroup.singleton
        let sslContext = try makeSSLContext()
        var acceptsAny = false
        var certificateAuth = false
        if case .certificate(_, let any) = configuration.authentication {
            certificateAuth = true
            acceptsAny = any
        }
        let apns = try await HTTP2Listener(
            core: core, listener: .apns, sslContext: sslContext, acceptsAnyClientCertificate: acceptsAny, requiresClientCertificate: certificateAuth
        ).bind(host: configuration.host, port: configuration.port, group: group)
        var channelListener: (any Channel)?
        if let channelPort = configuration.channelPort {
            channelListener = try await HTTP2Listener(
                core: core, listener: .channels, sslContext: sslContext, acceptsAnyClientCertificate: acceptsAny, requiresClientCertificate: certificateAuth
            ).bind(host: configuration.host, port: channelPort, group: group)
        }
        var api: InspectionAPI.Handle?
        if let apiPort = configuration.apiPort {
            api = try await InspectionAPI(server: self).start(host: configuration.host, port: apiPort, logger: logger)
        }
        return (apns, channelListener, api)
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
        core.database.withLock { $0 = nil }
        await current.database?.close()
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

    /// Recorded requests matching `query`, newest first.
    public func notifications(_ query: NotificationQuery = NotificationQuery()) -> [NotificationRecord] {
        core.store.query(query).records
    }

    /// The recorded request with this `apns-id` (or record id).
    public func notification(id: String) -> NotificationRecord? { core.store.record(id: id) }

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

    /// One simulated device.
    public func device(_ token: DeviceToken) -> MockDevice? { core.devices.entry(token)?.state.withLock { $0 } }

    /// Registers a device for a topic in an environment (default: the mock's), or re-binds it.
    @discardableResult
    public func registerDevice(_ token: DeviceToken, topic: String? = nil, environment: APNsEnvironment? = nil) -> MockDevice {
        core.devices.register(token, topic: topic, environment: environment ?? configuration.environment)
    }

    /// Marks a token unregistered at `date`: pushes to it answer 410 `Unregistered` with that
    /// time.
    public func unregister(_ token: DeviceToken, at date: Date = Date()) {
        let entry = core.devices.entry(token) ?? {
            _ = core.devices.register(token, topic: nil, environment: configuration.environment)
            return core.devices.entry(token)!
        }()
        entry.state.withLock { $0.unregisteredAt = date }
    }

    /// Makes an unregistered token active again.
    public func reactivate(_ token: DeviceToken) {
        core.devices.entry(token)?.state.withLock { $0.unregisteredAt = nil }
    }

    /// Forgets a device.
    @discardableResult
    public func removeDevice(_ token: DeviceToken) -> Bool { core.devices.remove(token) }

    /// Adds a fault rule; returns its id.
    @discardableResult
    public func addFault(_ rule: FaultRule) -> Int { core.faults.add(rule) }

    /// Removes a fault rule.
    @discardableResult
    public func removeFault(id: Int) -> Bool { core.faults.remove(id: id) }

    /// The fault rules in force, with their ids.
    public var faults: [(id: Int, rule: FaultRule)] { core.faults.entries.map { ($0.id, $0.rule) } }

    /// Creates a broadcast channel (as `POST /1/apps/<bundle>/channels` does).
    public func createChannel(bundleID: String, storagePolicy: Int = 0) -> MockChannel? {
        core.channels.create(bundleID: bundleID, storagePolicy: storagePolicy, now: configuration.now())
    }

    /// Every broadcast channel.
    public var channels: [MockChannel] { core.channels.all }

    /// Subscribes a device to a channel (as a Live Activity started with the channel does).
    public func subscribe(_ token: DeviceToken, toChannel id: String) {
        if core.devices.entry(token) == nil { registerDevice(token) }
        core.channels.subscribe(token, to: id)
        core.devices.entry(token)?.state.withLock { _ = $0.channels.insert(id) }
    }

    /// Forgets recorded requests (devices, faults and channels stay).
    /// With a database, its rows are deleted in the background.
    public func clearNotifications() {
        core.store.clear()
        if let database = core.database.withLock({ $0 }) {
            Task { try? await database.clear() }
        }
        core.events.publish(.cleared)
    }

    /// Forgets recorded requests, in memory and in the database, before returning.
    func clearNotificationsAndDatabase() async throws {
        core.store.clear()
        try await core.database.withLock({ $0 })?.clear()
        core.events.publish(.cleared)
    }

    /// Forgets requests, devices, channels and faults.
    public func reset() {
        clearNotifications()
        core.devices.removeAll()
        core.channels.removeAll()
        core.faults.removeAll()
    }
}

/// No matching request arrived in time.
public struct MockTimeoutError: Error, Sendable, CustomStringConvertible {
    /// How long was waited.
    public var timeout: Duration
    /// `no matching request within …`.
    public var description: String { "no matching request arrived within \(timeout)" }
}
