import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Posts one body (JSON unless told) over HTTP/1.1 (TLS for `https`) and returns the status with the answer's
/// first bytes, or why there is none: the gateway's webhooks, the mock's reports of Live Activity
/// tokens. Redirects are not followed: a receiver gives its final address.
package struct JSONPoster: Sendable {
    let group: any EventLoopGroup
    let sslContext: NIOSSLContext
    let userAgent: String

    package init(userAgent: String, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws {
        self.group = group
        self.userAgent = userAgent
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        sslContext = try NIOSSLContext(configuration: tls)
    }

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// A receiver's answer: its status and the first ``Answer/prefixLimit`` bytes of its body.
    package struct Answer: Sendable, Equatable {
        /// How much of the body is kept.
        package static let prefixLimit = 256
        package var status: Int
        package var prefix: [UInt8]
    }

    package func post(
        _ urlText: String, body: [UInt8], headers: [(String, String)], contentType: String = "application/json", timeout: Duration
    ) async throws -> Answer {
        guard let url = URL(string: urlText), let host = url.host, let scheme = url.scheme else {
            throw Failure(description: "'\(urlText)' is not a URL")
        }
        let https = scheme == "https"
        let port = url.port ?? (https ? 443 : 80)
        var path = url.path.isEmpty ? "/" : url.path
        if let query = url.query { path += "?" + query }
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        let sslContext = self.sslContext
        let eventLoop = group.next()
        let answered = eventLoop.makePromise(of: Answer.self)
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
                    try sync.addHandler(AnswerHandler(answered: answered))
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
        head.headers.add(name: "Content-Type", value: contentType)
        head.headers.add(name: "Content-Length", value: String(body.count))
        head.headers.add(name: "Connection", value: "close")
        head.headers.add(name: "User-Agent", value: userAgent)
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

    /// Completes with the response's status and first bytes (at its end, or once the bytes kept
    /// are read), or fails if the connection ends first.
    private final class AnswerHandler: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        let answered: EventLoopPromise<Answer>
        private var answer: Answer?

        init(answered: EventLoopPromise<Answer>) { self.answered = answered }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                answer = Answer(status: Int(head.status.code), prefix: [])
            case .body(let buffer):
                guard var kept = answer else { return }
                let room = Answer.prefixLimit - kept.prefix.count
                if room > 0 { kept.prefix += buffer.readableBytesView.prefix(room) }
                answer = kept
                if kept.prefix.count >= Answer.prefixLimit { answered.succeed(kept) }
            case .end:
                if let answer { answered.succeed(answer) }
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            answered.fail(error)
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            // A body cut short still gives its status.
            if let answer { answered.succeed(answer) } else { answered.fail(Failure(description: "the connection closed before an answer")) }
            context.fireChannelInactive()
        }
    }
}
