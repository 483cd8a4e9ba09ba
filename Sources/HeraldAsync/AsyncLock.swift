import Synchronization

/// Lets one body run at a time, in the order they asked: a mutex that may be held across
/// suspension points. The SQLite store holds it around each statement and each transaction, so
/// one task's statements never land inside another's transaction on the shared connection.
package final class AsyncLock: Sendable {
    private struct State {
        var held = false
        var waiters: [UnsafeContinuation<Void, Never>] = []
        var head = 0
    }

    private let state = Mutex(State())

    /// An unheld lock.
    package init() {}

    /// Runs `body` holding the lock, after those that asked before.
    package func withLock<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        let acquired = state.withLock { state -> Bool in
            if state.held { return false }
            state.held = true
            return true
        }
        if acquired { return }
        await withUnsafeContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if !state.held {
                    state.held = true
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            guard state.head < state.waiters.count else {
                state.waiters.removeAll(keepingCapacity: true)
                state.head = 0
                state.held = false
                return nil
            }
            // Handed over: the lock stays held by the next waiter.
            let next = state.waiters[state.head]
            state.head += 1
            if state.head > 64, state.head * 2 > state.waiters.count {
                state.waiters.removeFirst(state.head)
                state.head = 0
            }
            return next
        }
        next?.resume()
    }
}
