import Foundation
import HeraldAuth
import HeraldProtocol
import NIOCore
import NIOPosix
import NIOSSL

/// Sets up the HTTP/2 server pipeline for one listener (APNs or channel management).
struct HTTP2Listener: Sendable {
    let core: MockCore
    let listener: IncomingRequest.Listener
    let sslContext: NIOSSLContext?
    let acceptsAnyClientCertificate: Bool
    let requiresClientCertificate: Bool

    /// Binds and returns the server channel.
    func bind(host: String, port: Int, group: any EventLoopGroup) async throws -> any Channel {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try self.configure(channel) }
            }
        return try await bootstrap.bind(host: host, port: port).get()
    }

    /// Adds one connection's handlers to `channel`'s pipeline (on its event loop).
    func configure(_ channel: any Channel) throws {
        let sync = channel.pipeline.syncOperations
        // A client that does not read its answers stops being read from, so
        // answers cannot pile up in memory.
        try sync.addHandler(BackPressureHandler())
        if let sslContext {
            let handler = acceptsAnyClientCertificate
                ? NIOSSLServerHandler(context: sslContext, customVerificationCallback: { _, promise in promise.succeed(.certificateVerified) })
                : NIOSSLServerHandler(context: sslContext)
            try sync.addHandler(handler)
        }
        if let idleTimeout = core.configuration.idleTimeout {
            try sync.addHandler(IdleStateHandler(readTimeout: TimeAmount(idleTimeout)))
        }
        var state = ConnectionState(id: core.nextConnectionID())
        // Token auth: one stream until a valid provider token is seen (Apple's
        // "Sending notification requests to APNs").
        let initialStreams = requiresClientCertificate || listener == .channels ? core.configuration.maximumConcurrentStreams : 1
        if listener == .channels || requiresClientCertificate { state.streamsRaised = true }
        // HTTP/2 itself is the connection handler's session (HeraldHTTP2), fed the socket's bytes:
        // no stream channels, no frame objects.
        try sync.addHandler(APNsConnectionHandler(
            core: core, listener: listener, state: state, resolvesCertificate: requiresClientCertificate, initialStreams: initialStreams))
    }
}

/// Streams counted with their lowest and highest ids: what a log line needs, in constant space
/// whatever a client sends.
struct StreamTally: Sendable {
    private(set) var count = 0
    private(set) var lowest = Int.max
    private(set) var highest = 0

    mutating func add(_ stream: Int) {
        count += 1
        lowest = min(lowest, stream)
        highest = max(highest, stream)
    }

    mutating func add(_ other: StreamTally) {
        guard other.count > 0 else { return }
        count += other.count
        lowest = min(lowest, other.lowest)
        highest = max(highest, other.highest)
    }

    /// "ids 1003-1113", "id 1003".
    var ids: String { count == 1 ? "id \(lowest)" : "ids \(lowest)-\(highest)" }
}
