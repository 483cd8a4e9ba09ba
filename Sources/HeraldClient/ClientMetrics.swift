import Dispatch
import HeraldProtocol
import Metrics
import NIOCore
import Synchronization

/// The client's swift-metrics instruments: requests sent, accepted, rejected by reason,
/// retries, latency, open connections, connection attempts and failures, and requests in flight.
final class ClientMetrics: Sendable {
    let sent: Counter
    let accepted: Counter
    let retries: Counter
    let failed: Counter
    let latency: Metrics.Timer
    let connections: Gauge
    /// Connections tried, and those that could not be opened (refused, TLS, no settings).
    let connectionAttempts: Counter
    let connectionFailures: Counter
    let inFlight: Gauge
    private let prefix: String
    private let factory: any MetricsFactory
    private let rejectedByReason = Mutex<[String: Counter]>([:])
    private let openConnections = Atomic<Int>(0)
    private let requestsInFlight = Atomic<Int>(0)

    init(prefix: String, factory: any MetricsFactory) {
        self.prefix = prefix
        self.factory = factory
        sent = Counter(label: "\(prefix)_sent_total", factory: factory)
        accepted = Counter(label: "\(prefix)_accepted_total", factory: factory)
        retries = Counter(label: "\(prefix)_retries_total", factory: factory)
        failed = Counter(label: "\(prefix)_failed_total", factory: factory)
        latency = Metrics.Timer(label: "\(prefix)_latency_seconds", factory: factory)
        connections = Gauge(label: "\(prefix)_connections", factory: factory)
        connectionAttempts = Counter(label: "\(prefix)_connection_attempts_total", factory: factory)
        connectionFailures = Counter(label: "\(prefix)_connection_failures_total", factory: factory)
        inFlight = Gauge(label: "\(prefix)_requests_in_flight", factory: factory)
    }

    func rejected(_ reason: APNsReason) {
        let counter = rejectedByReason.withLock { counters in
            if let counter = counters[reason.rawValue] { return counter }
            let counter = Counter(label: "\(prefix)_rejected_total", dimensions: [("reason", reason.rawValue)], factory: factory)
            counters[reason.rawValue] = counter
            return counter
        }
        counter.increment()
    }

    /// A request takes (or gives back) its place among those in flight.
    func requestStarted() { inFlight.record(requestsInFlight.add(1, ordering: .relaxed).newValue) }
    func requestEnded() { inFlight.record(requestsInFlight.subtract(1, ordering: .relaxed).newValue) }

    func connectionOpened() { connections.record(openConnections.add(1, ordering: .relaxed).newValue) }
    func connectionClosed() { connections.record(openConnections.subtract(1, ordering: .relaxed).newValue) }
}

/// A bound on requests in flight: `acquire` suspends while the bound is reached, so a caller
/// that sends faster than APNs answers waits instead of queueing without limit. The wait is
/// part of the request's deadline: a request that finds no place in time is not sent.
final class InFlightLimiter: Sendable {
    private struct Waiter {
        let continuation: UnsafeContinuation<Bool, Never>
        var timer: Task<Void, Never>?
    }

    private struct State {
        var available: Int
        var inFlight = 0
        /// Waiting requests in arrival order; an id whose waiter is gone (its deadline came)
        /// is skipped.
        var order = CircularBufferLite<Int>()
        var waiters: [Int: Waiter] = [:]
        var nextID = 0
        var idleWaiters: [UnsafeContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    init(limit: Int) {
        state = Mutex(State(available: max(1, limit)))
    }

    /// Takes a place; `false` when none came free before `deadline`.
    func acquire(before deadline: NIODeadline) async -> Bool {
        let acquired = state.withLock { state -> Bool in
            if state.available > 0 {
                state.available -= 1
                state.inFlight += 1
                return true
            }
            return false
        }
        if acquired { return true }
        return await withUnsafeContinuation { continuation in
            let id = state.withLock { state -> Int? in
                // Released meanwhile?
                if state.available > 0 {
                    state.available -= 1
                    state.inFlight += 1
                    return nil
                }
                state.nextID &+= 1
                state.order.append(state.nextID)
                state.waiters[state.nextID] = Waiter(continuation: continuation)
                return state.nextID
            }
            guard let id else { return continuation.resume(returning: true) }
            let timer = Task { [weak self] in
                try? await Task.sleep(for: .nanoseconds(max(0, (deadline - NIODeadline.now()).nanoseconds)))
                guard !Task.isCancelled else { return }
                self?.expire(id)
            }
            let orphan = state.withLock { state -> Bool in
                guard state.waiters[id] != nil else { return true }
                state.waiters[id]?.timer = timer
                return false
            }
            if orphan { timer.cancel() }
        }
    }

    private func expire(_ id: Int) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.continuation.resume(returning: false)
    }

    func release() {
        let (next, idle) = state.withLock { state -> (Waiter?, [UnsafeContinuation<Void, Never>]) in
            while let id = state.order.popFirst() {
                // Handed over: inFlight unchanged.
                if let waiter = state.waiters.removeValue(forKey: id) { return (waiter, []) }
            }
            state.available += 1
            state.inFlight -= 1
            if state.inFlight == 0, !state.idleWaiters.isEmpty {
                defer { state.idleWaiters = [] }
                return (nil, state.idleWaiters)
            }
            return (nil, [])
        }
        next?.timer?.cancel()
        next?.continuation.resume(returning: true)
        for waiter in idle { waiter.resume() }
    }

    var inFlight: Int { state.withLock { $0.inFlight } }

    /// Returns once nothing is in flight.
    func waitUntilIdle() async {
        await withUnsafeContinuation { continuation in
            let idle = state.withLock { state -> Bool in
                if state.inFlight == 0 { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}

/// A first-in, first-out queue without NIO (array with a moving head).
struct CircularBufferLite<Element> {
    private var items: [Element] = []
    private var head = 0

    mutating func append(_ item: Element) { items.append(item) }

    mutating func popFirst() -> Element? {
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024, head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }
}
