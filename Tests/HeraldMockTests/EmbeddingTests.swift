import Foundation
import HeraldAuth
import HeraldMock
import HeraldProtocol
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import Testing

/// A minimal HTTP/2 client on SwiftNIO (plaintext, prior knowledge) for in-process tests: what a
/// test of your own provider code does with its real client.
struct TestHTTP2Client {
    typealias Stream = NIOAsyncChannel<HTTP2Frame.FramePayload, HTTP2Frame.FramePayload>
    let multiplexer: NIOHTTP2Handler.AsyncStreamMultiplexer<Void>
    let channel: any Channel

    static func connect(port: Int) async throws -> TestHTTP2Client {
        // HTTP/2 is set up before the connection is active: set up after it, the server's
        // SETTINGS could arrive first and be dropped, and NIOHTTP2 then takes the SETTINGS ACK
        // that follows for a protocol error (GOAWAY, and a request that is never answered).
        let (channel, multiplexer) = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let multiplexer = try channel.pipeline.syncOperations.configureAsyncHTTP2Pipeline(mode: .client) { stream in
                        stream.eventLoop.makeSucceededVoidFuture()
                    }
                    try channel.pipeline.syncOperations.addHandler(CloseOnError())
                    return (channel as any Channel, multiplexer)
                }
            }
        return TestHTTP2Client(multiplexer: multiplexer, channel: channel)
    }

    /// Closes the connection on an error (NIOHTTP2 sends GOAWAY and leaves closing to the
    /// pipeline): its streams end, and a request waiting for its answer fails instead of hanging.
    final class CloseOnError: ChannelInboundHandler, Sendable {
        typealias InboundIn = Any
        func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
    }

    /// Sends one request; returns the status, the headers and the body.
    func send(path: String, headers: [(String, String)], body: String) async throws -> (status: Int, headers: HPACKHeaders, body: String) {
        let stream = try await multiplexer.openStream { channel in
            channel.eventLoop.makeCompletedFuture { try Stream(wrappingChannelSynchronously: channel) }
        }
        return try await stream.executeThenClose { inbound, outbound in
            let request = HPACKHeaders([(":method", "POST"), (":scheme", "http"), (":authority", "localhost"), (":path", path)] + headers)
            try await outbound.write(.headers(.init(headers: request)))
            try await outbound.write(.data(.init(data: .byteBuffer(ByteBuffer(string: body)), endStream: true)))
            var status = 0
            var responseHeaders = HPACKHeaders()
            var text = ""
            for try await frame in inbound {
                switch frame {
                case .headers(let received):
                    responseHeaders = received.headers
                    status = Int(received.headers.first(name: ":status") ?? "") ?? 0
                    if received.endStream { return (status, responseHeaders, text) }
                case .data(let data):
                    if case .byteBuffer(let buffer) = data.data { text += String(buffer: buffer) }
                    if data.endStream { return (status, responseHeaders, text) }
                default:
                    break
                }
            }
            return (status, responseHeaders, text)
        }
    }

    func close() async { try? await channel.close() }
}

/// The mock embedded in a Swift test: started in-process on a free port, sent to, awaited, with
/// no subprocess (the DocC article "Embedding the mock in tests" shows the same).
@Suite struct EmbeddingTests {
    @Test func inProcessMockReceivesAndRenders() async throws {
        var configuration = MockConfiguration()
        configuration.port = 0
        configuration.apiPort = nil
        configuration.channelPort = nil
        configuration.transport = .plaintext
        let key = ProviderSigningKey.generate(keyID: try KeyID("ABC123DEFG"), teamID: try TeamID("DEF123GHIJ"))
        configuration.keys = [key.publicKey]
        let mock = try MockAPNsServer(configuration: configuration)
        try await mock.start()

        let token = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"
        let arrival = Task { try await mock.nextNotification(timeout: .seconds(60)) { $0.deviceToken == token } }
        try await Task.sleep(for: .milliseconds(50))  // let the waiter subscribe
        let client = try await TestHTTP2Client.connect(port: mock.port)
        let jwt = ProviderToken.sign(with: key, issuedAt: Date()).rawValue
        let answer = try await client.send(
            path: "/3/device/\(token)",
            headers: [("authorization", "bearer \(jwt)"), ("apns-topic", "com.example.app"), ("apns-push-type", "alert"), ("apns-collapse-id", "score")],
            body: #"{"aps":{"alert":{"title":"Goal!","body":"2-1"},"badge":1}}"#)
        #expect(answer.status == 200)
        let record = try await arrival.value
        #expect(record.apnsID == answer.headers.first(name: "apns-id"))
        #expect(record.rendered?.title == "Goal!" && record.rendered?.body == "2-1")
        let device = try #require(mock.device(try DeviceToken(hex: token)))
        #expect(device.device.badge == 1 && device.device.notificationCount == 1)

        // A second push with the same collapse id replaces the first on the device.
        _ = try await client.send(
            path: "/3/device/\(token)",
            headers: [("authorization", "bearer \(jwt)"), ("apns-topic", "com.example.app"), ("apns-push-type", "alert"), ("apns-collapse-id", "score")],
            body: #"{"aps":{"alert":{"title":"Goal!","body":"3-1"}}}"#)
        #expect(mock.device(try DeviceToken(hex: token))?.device.notificationCount == 1)
        #expect(mock.device(try DeviceToken(hex: token))?.device.groups.first?.notifications.first?.content.body == "3-1")

        // Waiting for something that never comes ends with a clear error.
        await #expect(throws: MockTimeoutError.self) {
            _ = try await mock.nextNotification(timeout: .milliseconds(200)) { $0.deviceToken == "nobody" }
        }
        await client.close()
        await mock.stop()
    }

    @Test func runsAsAServiceAndStopsOnGracefulShutdown() async throws {
        var configuration = MockConfiguration()
        configuration.port = 0
        configuration.apiPort = 0
        configuration.channelPort = nil
        configuration.transport = .plaintext
        let mock = try MockAPNsServer(configuration: configuration)
        let running = Task { try await mock.run() }
        var port = 0
        for _ in 0..<100 where port == 0 {
            try await Task.sleep(for: .milliseconds(20))
            port = mock.apiPort ?? 0
        }
        #expect(port != 0)
        running.cancel()
        _ = await running.result
        #expect(mock.apiPort == nil, "stopped")
    }

    /// An embedder gets the checks `herald mock` makes: each setting that cannot work is named
    /// before anything is bound or allocated.
    @Test func aConfigurationThatCannotWorkIsRefusedWithTheSettingNamed() throws {
        let cases: [(String, (inout MockConfiguration) -> Void)] = [
            ("port", { $0.port = 70_000 }),
            ("apiPort", { $0.apiPort = -1 }),
            ("channelPort", { $0.channelPort = 65_536 }),
            ("authentication", { $0.transport = .plaintext; $0.authentication = .certificate(trustRoots: [], acceptsAnyCertificate: true) }),
            ("storeCapacity", { $0.storeCapacity = 0 }),
            ("databaseKeepCount", { $0.databaseKeepCount = 0 }),
            ("databaseMaximumAge", { $0.databaseMaximumAge = .seconds(-1) }),
            ("idleTimeout", { $0.idleTimeout = .seconds(86_401) }),
            ("maximumConcurrentStreams", { $0.maximumConcurrentStreams = 1 << 31 }),
            ("languages", { $0.languages = [] }),
        ]
        for (setting, change) in cases {
            var configuration = MockConfiguration()
            configuration.transport = .plaintext
            change(&configuration)
            #expect(throws: MockConfiguration.Problem.self, "\(setting)") { try configuration.validate() }
            do {
                _ = try MockAPNsServer(configuration: configuration)
                Issue.record("\(setting): the server was made")
            } catch let problem as MockConfiguration.Problem {
                #expect(problem.setting == setting, "\(problem)")
            }
        }
        var fine = MockConfiguration()
        fine.storeCapacity = 1 << 40   // grows as records come: nothing allocated up front
        fine.transport = .plaintext
        try fine.validate()
        _ = try MockAPNsServer(configuration: fine)
    }
}
