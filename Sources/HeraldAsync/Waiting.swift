import Synchronization

// Waiting primitives for the gateway's loops: each small, each with one owner.

/// A bound on deliveries held: room is taken by claims and given back by commits.
package final class CapacityGate: Sendable {
    private struct State {
        var available: Int
        var waiters: [(need: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    }

    private let state: Mutex<State>

    package init(limit: Int) { state = Mutex(State(available: limit)) }

    package var available: Int { state.withLock { $0.available } }

    package func take(_ count: Int) { state.withLock { $0.available -= count } }

    package func give(_ count: Int) {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.available += count
            var ready: [CheckedContinuation<Bool, Never>] = []
            state.waiters.removeAll { waiter in
                guard state.available >= waiter.need else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// Waits until `count` is free; `false` when cancelled by ``cancelWaiters()``.
    package func waitForRoom(atLeast count: Int) async -> Bool {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.available >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if now { continuation.resume(returning: true) }
        }
    }

    package func cancelWaiters() {
        let waiters = state.withLock { state in
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: false) }
    }
}

/// A wake-up call a loop waits for, with a timeout.
package final class Signal: Sendable {
    private let state = Mutex<(signalled: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    /// A signal not yet given.
    package init() {}

    package func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.signalled = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns at the signal (or at once if one came since the last wait), or after `timeout`.
    package func wait(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let ready = self.state.withLock { state -> Bool in
                        if state.signalled {
                            state.signalled = false
                            return true
                        }
                        state.waiter?.resume()
                        state.waiter = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                self.signal()
            }
            await group.next()
            group.cancelAll()
        }
        // The timer's own signal, if it came second, is dropped.
        state.withLock { $0.signalled = false }
    }
}

/// Sends per second, for an app's `rateLimit`: a token bucket holding at most a second's worth.
package final class RateLimiter: Sendable {
    private let rate: Double
    private let state: Mutex<(tokens: Double, last: ContinuousClock.Instant)>

    package init(_ rate: Int) {
        self.rate = Double(rate)
        state = Mutex((Double(rate), ContinuousClock.now))
    }

    /// Waits for a send's place; `false` (at once, or within a tick) when `proceeding` turns
    /// false (the gateway is stopping).
    package func acquire(while proceeding: @Sendable () -> Bool) async -> Bool {
        while true {
            guard proceeding() else { return false }
            let wait: Double? = state.withLock { state in
                let now = ContinuousClock.now
                let elapsed = now - state.last
                state.tokens = min(rate, state.tokens + rate * (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
                state.last = now
                if state.tokens >= 1 {
                    state.tokens -= 1
                    return nil
                }
                return (1 - state.tokens) / rate
            }
            guard let wait else { return true }
            // In slices of at most a quarter of a second, so a stop is seen soon.
            try? await Task.sleep(for: .milliseconds(min(250, max(1, Int64(wait * 1000)))))
        }
    }
}
