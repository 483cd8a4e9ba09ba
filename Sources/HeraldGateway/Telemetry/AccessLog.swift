import Foundation
import Hummingbird
import Logging

/// One line per API request at `info`: method, path (without the query), status, milliseconds,
/// and the caller's key id (`key_…`, derived from the key as the store names it; never the key
/// itself); counted in `herald_gateway_http_requests_total{method, status}`. Probes and
/// `/metrics` are logged at `debug` (a scraper every few seconds would drown the log), and so is
/// `/v1/stats`, which an open console polls.
struct AccessLog: RouterMiddleware {
    typealias Context = BasicRequestContext
    let logger: Logger
    let metrics: GatewayMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            // The error shape answers it; log what it was.
            log(request, status: (error as? HTTPResponseError)?.status.code ?? 500, started: started)
            throw error
        }
        log(request, status: response.status.code, started: started)
        return response
    }

    /// Health probes, metrics scrapes, and the console's health page polling `/v1/stats`: logged
    /// at debug, and not traced.
    static let probePaths: Set<String> = ["/healthz", "/readyz", "/metrics", "/v1/stats"]

    private func log(_ request: Request, status: Int, started: ContinuousClock.Instant) {
        let method = request.method.rawValue
        metrics.request(method: method, status: status)
        let path = request.uri.path
        let level: Logger.Level = Self.probePaths.contains(path) ? .debug : .info
        guard logger.logLevel <= level else { return }
        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        var metadata: Logger.Metadata = [
            "method": "\(method)", "path": "\(path)", "status": "\(status)", "ms": "\(String(format: "%.1f", milliseconds))",
        ]
        if let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") {
            let secret = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
            metadata["key"] = "\(APIKeys.keyID(secret: secret))"
        }
        logger.log(level: level, "api request", metadata: metadata)
    }
}
