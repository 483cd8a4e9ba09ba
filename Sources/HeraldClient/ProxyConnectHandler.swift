import Foundation
import NIOCore

/// Opens a tunnel through an HTTP proxy with `CONNECT host:port`, then hands the connection to
/// the TLS and HTTP/2 handlers (and the bytes that followed the proxy's answer, if any).
final class ProxyConnectHandler: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let target: ConnectionPool.Endpoint
    private let credentials: String?
    private let next: [any ChannelHandler]
    private let ready: EventLoopPromise<Void>
    private var received: ByteBuffer?

    /// The longest proxy answer read.
    static let maximumHeaderBytes = 16 * 1024

    init(target: ConnectionPool.Endpoint, credentials: String?, then next: [any ChannelHandler], failing ready: EventLoopPromise<Void>) {
        self.target = target
        self.credentials = credentials
        self.next = next
        self.ready = ready
    }

    func channelActive(context: ChannelHandlerContext) {
        let authority = target.host.contains(":") ? "[\(target.host)]:\(target.port)" : "\(target.host):\(target.port)"
        var request = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let credentials {
            request += "Proxy-Authorization: Basic \(Data(credentials.utf8).base64EncodedString())\r\n"
        }
        request += "\r\n"
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: request)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        if received == nil { received = buffer } else { received!.writeBuffer(&buffer) }
        guard let all = received else { return }
        let bytes = all.readableBytesView
        guard let end = bytes.firstRange(of: [13, 10, 13, 10]) else {
            if all.readableBytes > Self.maximumHeaderBytes { fail(context, "the proxy's answer has no end") }
            return
        }
        let head = String(decoding: bytes[bytes.startIndex..<end.lowerBound], as: UTF8.self)
        let statusLine = head.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1] == "200" else {
            fail(context, "the proxy refused CONNECT \(target.host):\(target.port): \(statusLine)")
            return
        }
        var rest = all
        rest.moveReaderIndex(to: all.readerIndex + (end.upperBound - bytes.startIndex))
        received = nil
        do {
            // One after the other: TLS first, then HTTP/2, then the connection handler.
            let sync = context.pipeline.syncOperations
            var anchor: any ChannelHandler = self
            for handler in next {
                try sync.addHandler(handler, position: .after(anchor))
                anchor = handler
            }
        } catch {
            fail(context, "cannot set up the tunnel: \(error)")
            return
        }
        // The handlers added see an active channel and start (TLS handshake, HTTP/2 preface).
        if rest.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(rest)) }
        context.pipeline.syncOperations.removeHandler(self, promise: nil)
    }

    private func fail(_ context: ChannelHandlerContext, _ why: String) {
        ready.fail(AttemptFailure.connectFailed(ConnectionFailure(cause: .proxy, endpoint: "\(target.host):\(target.port)", detail: why)))
        context.close(promise: nil)
    }
}
