import Hummingbird
import Logging

/// The gateway's spans, finished and handed to the exporter: the API's requests
/// (``TraceRequests``), a submission's commit, and each delivery attempt. Spans of a trace its
/// caller does not sample are carried (their ids reach the job and the log lines) but not
/// exported.
struct GatewayTracer: Sendable {
    let exporter: TraceExporter

    /// Ends `span` now and exports it.
    func finish(_ span: Span) {
        guard span.context.sampled else { return }
        var span = span
        span.end = Span.now()
        exporter.record(span)
    }

    /// `trace_id` and `span_id` on every log line written inside a span.
    static let logMetadata = Logger.MetadataProvider {
        guard let context = TraceContext.current else { return [:] }
        return ["trace_id": "\(context.traceID.hex)", "span_id": "\(context.spanID.hex)"]
    }

    /// `logger` with the trace's ids on its lines, beside its own metadata provider's.
    static func tracing(_ logger: Logger) -> Logger {
        var logger = logger
        logger.handler.metadataProvider = logger.metadataProvider.map { .multiplex([$0, logMetadata]) } ?? logMetadata
        return logger
    }
}

/// A `server` span for each API request, named by its documented route (`POST
/// /v1/apps/{app}/notifications`), under the caller's `traceparent` when it sends a valid one;
/// the handler runs in it (``TraceContext/current``). Health probes, metrics scrapes and the
/// console's statistics polls are not traced.
struct TraceRequests: RouterMiddleware {
    typealias Context = BasicRequestContext
    let tracer: GatewayTracer
    let template: @Sendable (String) -> String?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if AccessLog.probePaths.contains(path) { return try await next(request, context) }
        let parent = request.headers[.init("traceparent")!].flatMap { TraceContext(traceparent: $0) }
        let method = request.method.rawValue
        let route = template(path)
        var span = Span(route.map { "\(method) \($0)" } ?? method, kind: .server, parent: parent)
        span.set("http.request.method", method)
        span.set("url.path", path)
        if let route { span.set("http.route", route) }
        do {
            let response = try await TraceContext.$current.withValue(span.context) { try await next(request, context) }
            let code = response.status.code
            span.set("http.response.status_code", code)
            if code >= 500 { span.status = .error("HTTP \(code)") }
            tracer.finish(span)
            return response
        } catch {
            let code = (error as? any HTTPResponseError)?.status.code ?? 500
            span.set("http.response.status_code", code)
            if code >= 500 { span.status = .error("\(error)") }
            tracer.finish(span)
            throw error
        }
    }
}
