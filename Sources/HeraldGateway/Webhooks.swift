import Crypto
import Foundation
import HeraldJSON
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The signature on every webhook, for receivers to check: `Herald-Signature: t=<unix seconds>,
/// v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with the app's webhook secret>` (the time inside
/// the signed text lets a receiver refuse old replays).
enum WebhookSignature {
    static let header = "Herald-Signature"

    static func value(body: [UInt8], secret: String, timestamp: Int64) -> String {
        var message = Array(String(timestamp).utf8)
        message.append(UInt8(ascii: "."))
        message += body
        let code = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Array(secret.utf8)))
        return "t=\(timestamp),v1=" + code.map { String(format: "%02x", $0) }.joined()
    }
}

/// The events a delivery's outcome raises for its app's webhook.
enum WebhookEvents {
    static func bodies(for outcome: DeliveryOutcome.Result, delivery: ClaimedDelivery, webhook: GatewayApp.Webhook?, now: Int64) -> [String] {
        guard let webhook else { return [] }
        var events: [(GatewayApp.Webhook.Event, [String: JSONValue])] = []
        switch outcome {
        case .accepted(let status):
            events.append((.accepted, ["status": .number(JSONNumber(status))]))
        case .rejected(let status, let reason, let unregisteredAt, let dead):
            let details: [String: JSONValue] = [
                "status": status.map { .number(JSONNumber($0)) } ?? .null, "reason": reason.map { .string($0) } ?? .null,
                "unregisteredAt": unregisteredAt.map { .number(JSONNumber($0)) } ?? .null,
            ]
            events.append((.rejected, details))
            if dead { events.append((.tokenDead, details)) }
        case .expired(let reason):
            events.append((.expired, ["reason": reason.map { .string($0) } ?? .null]))
        case .retry:
            break
        }
        return events.filter { webhook.events.contains($0.0) }.map { event, details in
            var object = JSONObject()
            func add(_ key: String, _ value: JSONValue) { object.members.append(.init(key: key, value: value)) }
            add("id", .string(UUID().uuidString.lowercased()))
            add("type", .string(event.rawValue))
            add("app", .string(delivery.app))
            add("job", .string(delivery.job))
            add("token", .string(delivery.token))
            add("apnsId", .string(delivery.apnsID))
            add("at", .number(JSONNumber(now)))
            for key in details.keys.sorted() { add(key, details[key]!) }
            var writer = JSONWriter(output: JSONBytes())
            writer.value(.object(object))
            return String(decoding: writer.output.bytes, as: UTF8.self)
        }
    }
}

/// Posts one webhook over HTTP/1.1 (TLS for `https`) and returns the status, or why there is
/// none. Redirects are not followed: a receiver gives its final address.
struct WebhookPoster: Sendable {
    let group: any EventLoopGroup
    let sslContext: NIOSSLContext

    init(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws {
        self.group = group
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        sslContext = try NIOSSLContext(configuration: tls)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    func post(_ urlText: String, body: [UInt8], headers: [(String, String)], timeout: Duration) async throws -> Int {
        guard let url = URL(string: urlText), let host = url.host, let scheme = url.scheme else {
            throw Failure(description: "'\(urlText)' is not a URL")
        }
        let https = scheme == "https"
        let port = url.port ?? (https ? 443 : 80)
        var path = url.path.isEmpty ? "/" : url.path
        if let query = url.query { path += "?" + query }
        let nanoseconds = Int64(timeout.milliseconds) * 1_000_000
        let sslContext = self.sslContext
        let eventLoop = group.next()
        let answered = eventLoop.makePromise(of: Int.self)
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(.nanoseconds(nanoseconds))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if https {
                        let name = (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
                        try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: name))
                    }
                    try sync.addHTTPClientHandlers()
                    try sync.addHandler(StatusHandler(answered: answered))
                }
            }
        let timer = eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) {
            answered.fail(Failure(description: "no answer within \(timeout)"))
        }
        defer { timer.cancel() }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: port).get()
        } catch {
            answered.fail(error)
            throw Failure(description: "cannot connect to \(host):\(port): \(error)")
        }
        var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: path)
        head.headers.add(name: "Host", value: url.port.map { "\(host):\($0)" } ?? host)
        head.headers.add(name: "Content-Type", value: "application/json")
        head.headers.add(name: "Content-Length", value: String(body.count))
        head.headers.add(name: "Connection", value: "close")
        head.headers.add(name: "User-Agent", value: "herald-gateway")
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        defer { channel.close(promise: nil) }
        do {
            return try await answered.futureResult.get()
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    /// Completes with the response's status, or fails if the connection ends first.
    private final class StatusHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTPClientResponsePart
        let answered: EventLoopPromise<Int>

        init(answered: EventLoopPromise<Int>) { self.answered = answered }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .head(let head) = unwrapInboundIn(data) { answered.succeed(Int(head.status.code)) }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            answered.fail(error)
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            answered.fail(Failure(description: "the connection closed before an answer"))
            context.fireChannelInactive()
        }
    }
}
