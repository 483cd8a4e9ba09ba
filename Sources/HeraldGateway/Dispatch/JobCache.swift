import HeraldClient
import Synchronization

/// Jobs' requests (headers and payload, immutable), fetched once and kept for the newest
/// thousand jobs. A fetch the database could not answer throws and is not kept.
final class JobCache: Sendable {
    struct Content: Sendable {
        var request: APNsRequest
        var expiresAt: Int64
        /// The sender's metadata (a JSON object's text), for webhooks.
        var metadata: String?
        /// The request in each language the job was given in, by variant (1, 2, …).
        var variants: [Int: APNsRequest] = [:]
        /// The submission's span: each attempt's span goes under it.
        var trace: TraceContext? = nil

        /// The request a delivery of `variant` sends.
        func request(variant: Int) -> APNsRequest { variants[variant] ?? request }
    }

    private let store: any GatewayStore
    private let entries = Mutex<(tasks: [String: Task<Content?, any Error>], order: [String])>(([:], []))

    init(store: any GatewayStore) { self.store = store }

    /// The job's request, or `nil` when the database has no such job (deleted with its app).
    func content(_ id: String) async throws -> Content? {
        let task = entries.withLock { entries in
            if let task = entries.tasks[id] { return task }
            let task = Task { [store] () throws -> Content? in
                guard let job = try await store.jobContent(id: id) else { return nil }
                let headers = Submission.headers(fromJSON: job.headers)
                return Content(
                    request: APNsRequest(headers: headers, body: job.payload), expiresAt: job.expiresAt, metadata: job.metadata,
                    variants: job.variants.mapValues { APNsRequest(headers: headers, body: $0) },
                    trace: job.traceParent.flatMap { TraceContext(traceparent: $0) })
            }
            entries.tasks[id] = task
            entries.order.append(id)
            if entries.order.count > 1_000 { entries.tasks[entries.order.removeFirst()] = nil }
            return task
        }
        do {
            return try await task.value
        } catch {
            entries.withLock { entries in
                if entries.tasks[id] == task {
                    entries.tasks[id] = nil
                    entries.order.removeAll { $0 == id }
                }
            }
            throw error
        }
    }
}
