import HeraldJSON
import Foundation
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle

/// A Hummingbird application serving a router on a port, started and stopped as one value: the
/// mock's inspection API and the gateway's REST API both run through it.
package struct APIServer: Sendable {
    /// The port bound (the one asked for, or the one the system picked for 0).
    package let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    private init(port: Int, isTLS: Bool, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.isTLS = isTLS
        self.group = group
        self.task = task
    }

    /// Whether it serves HTTPS.
    package let isTLS: Bool

    /// Binds `host:port` and serves `router` (over HTTPS with `tls`, HTTP/1.1 and HTTP/2 chosen
    /// by ALPN; plain HTTP/1.1 otherwise); returns once the port is bound, or throws what
    /// binding threw (a port in use). Hummingbird's own log stays at `.warning` and above.
    package static func start(
        _ router: Router<BasicRequestContext>, host: String, port: Int, serverName: String, tls: APITLS? = nil, logger: Logger
    ) async throws -> APIServer {
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .warning)
        let (ready, continuation) = AsyncStream<Result<Int, any Error>>.makeStream()
        let configuration = ApplicationConfiguration(address: .hostname(host, port: port), serverName: serverName)
        let app = Application(
            router: router, server: try tls.map { try .http2Upgrade(tlsConfiguration: $0.configuration) } ?? .http1(),
            configuration: configuration,
            onServerRunning: { channel in continuation.yield(.success(channel.localAddress?.port ?? port)) },
            logger: quiet)
        let group = ServiceGroup(configuration: .init(services: [app], logger: quiet))
        let task = Task {
            // The stream ends with the group, so a server that stops before it runs (without
            // an error) ends the wait below instead of leaving it waiting for ever.
            defer { continuation.finish() }
            do {
                try await group.run()
            } catch {
                continuation.yield(.failure(error))
                throw error
            }
        }
        for await result in ready {
            switch result {
            case .success(let bound): return APIServer(port: bound, isTLS: tls != nil, group: group, task: task)
            case .failure(let error): throw error
            }
        }
        throw CancellationError()
    }

    /// Graceful: the listener closes, requests in progress finish, idle connections close.
    package func stop() async {
        await group.triggerGracefulShutdown()
        _ = await task.result
    }
}

/// A certificate chain and its private key, read from PEM files, that an API serves HTTPS with.
package struct APITLS: Sendable {
    /// The server's TLS configuration: the chain and the key.
    let configuration: TLSConfiguration

    /// Reads and checks the files: each exists and is PEM, and the key is the certificate's.
    /// - Throws: ``APITLSError`` naming the file and what is wrong with it.
    package init(certificateFile: String, keyFile: String) throws(APITLSError) {
        func read(_ path: String, _ what: String) throws(APITLSError) -> [UInt8] {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw APITLSError(message: "\(path): cannot read the \(what) (no such file, or not readable)")
            }
            return Array(data)
        }
        let chainBytes = try read(certificateFile, "certificate")
        let keyBytes = try read(keyFile, "private key")
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(chainBytes)
        } catch {
            throw APITLSError(message: "\(certificateFile): not a PEM certificate chain (BEGIN CERTIFICATE blocks expected): \(error)")
        }
        guard !chain.isEmpty else { throw APITLSError(message: "\(certificateFile): no certificate in it (BEGIN CERTIFICATE blocks expected)") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(bytes: keyBytes, format: .pem)
        } catch {
            throw APITLSError(message: "\(keyFile): not a PEM private key (an unencrypted BEGIN PRIVATE KEY block expected): \(error)")
        }
        // Hummingbird's HTTP/2 channel offers `h2` and `http/1.1` by ALPN itself.
        let configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        do {
            // Building a context checks that the key matches the leaf certificate.
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw APITLSError(message: "\(keyFile) is not the private key of the first certificate in \(certificateFile): \(error)")
        }
        self.configuration = configuration
    }
}

/// A certificate or key file that cannot serve HTTPS, and why.
package struct APITLSError: Error, CustomStringConvertible {
    package let message: String
    package var description: String { message }
}

extension Response {
    /// `value` as a compact JSON body with `Content-Type: application/json`.
    package static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var writer = JSONWriter(output: JSONBytes())
        writer.value(value)
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: writer.output.bytes)))
    }
}

/// Pieces of an OpenAPI 3.1 document, as both APIs describe themselves.
package enum OpenAPI {
    /// A reference to a schema under `components/schemas`.
    package static func ref(_ name: String) -> JSONValue { ["$ref": .string("#/components/schemas/\(name)")] }

    /// A response with a JSON body of `schema`.
    package static func jsonResponse(_ description: String, _ schema: JSONValue) -> JSONValue {
        ["description": .string(description), "content": ["application/json": ["schema": schema]]]
    }

    /// A required JSON request body of `schema`.
    package static func body(_ schema: JSONValue) -> JSONValue {
        ["required": true, "content": ["application/json": ["schema": schema]]]
    }

    /// An operation: its summary, then its parameters and request body when it has them, then
    /// its responses.
    package static func operation(_ summary: String, parameters: [JSONValue] = [], body: JSONValue? = nil, responses: JSONValue) -> JSONValue {
        var operation: JSONObject = ["summary": .string(summary)]
        if !parameters.isEmpty { operation.members.append(.init(key: "parameters", value: .array(parameters))) }
        if let body { operation.members.append(.init(key: "requestBody", value: body)) }
        operation.members.append(.init(key: "responses", value: responses))
        return .object(operation)
    }

    /// A parameter in the query (or the path, where it is required).
    package static func parameter(_ name: String, in location: String = "query", _ schema: JSONValue, _ description: String) -> JSONValue {
        ["name": .string(name), "in": .string(location), "required": .bool(location == "path"), "schema": schema, "description": .string(description)]
    }
}

/// The paths an OpenAPI document gives and their methods: what tells a path asked with the
/// wrong method (405) from one that does not exist (404).
package struct DocumentedRoutes: Sendable {
    /// Each path's template, its segments (`nil` for a `{parameter}`) and its methods, upper case.
    private let routes: [(template: String, segments: [Substring?], methods: [String])]

    /// The routes of `document`'s `paths`.
    package init(_ document: JSONValue) {
        let paths = document["paths"]?.objectValue ?? JSONObject()
        routes = paths.members.map { member in
            let segments = member.key.split(separator: "/").map { $0.hasPrefix("{") ? nil : $0 }
            let methods = (member.value.objectValue?.members.map { $0.key.uppercased() } ?? []).sorted()
            return (member.key, segments, methods)
        }
    }

    /// The methods the document gives `path`, if it documents the path.
    package func methods(forPath path: String) -> [String]? { match(path)?.methods }

    /// The documented template `path` matches (`/v1/apps/{app}/notifications/{id}`): the one
    /// with the most fixed segments when several do.
    package func template(forPath path: String) -> String? { match(path)?.template }

    private func match(_ path: String) -> (template: String, segments: [Substring?], methods: [String])? {
        let parts = path.split(separator: "/")
        return routes.filter { route in
            route.segments.count == parts.count && zip(route.segments, parts).allSatisfy { $0 == nil || $0 == $1 }
        }.max { $0.segments.count(where: { $0 != nil }) < $1.segments.count(where: { $0 != nil }) }
    }
}
