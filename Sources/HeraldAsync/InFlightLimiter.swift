import NIOCore
import Synchronization

/// A bound on requests in flight: `acquire` suspends while the bound is reached, so a caller
/// that sends faster than APNs answers waits instead of queueing without limit. The wait is
/// part of the request's deadline: a request that finds no place in time is not sent.
package final class InFlightLimiter: Sendable {
    private struct Waiter {
        let continuation: UnsafeContinuation<Bool, Never>
        var timer: Task<Void, Never>?
    }

    private struct State {
        var available: Int
        var inFlight = 0
        /// Waiting requests in arrival order; an id whose waiter is gone (its deadline came)
        /// is skipped.
        var order = CircularBuffer<Int>()
        var waiters: [Int: Waiter] = [:]
        var nextID = 0
        var idleWaiters: [UnsafeContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    package init(limit: Int) {
        state = Mutex(State(available: max(1, limit)))
    }

    /// Takes a place if one is free now (never ahead of a waiter: a place released while
    /// someone waits goes to them).
    package func acquireNow() -> Bool {
        state.withLock { state -> Bool in
            guard state.available > 0 else { return false }
            state.available -= 1
            state.inFlight += 1
            return true
        }
    }

    /// Takes a place; `false` when none came free before `deadline`.
    package func acquire(before deadline: NIODeadline) async -> Bool {
        if acquireNow() { return true }
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

    package func release() {
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

    package var inFlight: Int { state.withLock { $0.inFlight } }

    /// Returns once nothing is in flight.
    package func waitUntilIdle() async {
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
