import Synchronization

/// Lets one body run at a time, in the order they asked: a mutex that may be held across
/// suspension points. The SQLite store holds it around each statement and each transaction, so
/// one task's statements never land inside another's transaction on the shared connection.
package final class AsyncLock: Sendable {
    private struct Waiter {
        var id: UInt64
        /// `nil` once its task was cancelled and it left the queue.
        var continuation: UnsafeContinuation<Bool, Never>?
    }

    private struct State {
        var held = false
        var waiters: [Waiter] = []
        var head = 0
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// An unheld lock.
    package init() {}

    /// Runs `body` holding the lock, after those that asked before. A body whose task is
    /// cancelled while it waits still runs, in its turn.
    package func withLock<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await acquire(cancellable: false)
        defer { release() }
        return try await body()
    }

    /// Runs `body` holding the lock, after those that asked before, for as long as its task is
    /// not cancelled: a task cancelled while it waits leaves the queue and throws
    /// `CancellationError`, and one cancelled while its body runs gives the lock up at once to
    /// the next in line, though its body may still be running. For bodies whose exclusion is a
    /// courtesy, not a safety (a database transaction that would otherwise risk a deadlock the
    /// server resolves): one body that hangs past its deadline does not hold back every other.
    package func withCancellableLock<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        guard await acquire(cancellable: true) else { throw CancellationError() }
        let turn = Turn(lock: self)
        return try await withTaskCancellationHandler {
            defer { turn.end() }
            try Task.checkCancellation()
            return try await body()
        } onCancel: {
            turn.end()
        }
    }

    /// One holder's turn, ended once: by its body's end or by its task's cancellation.
    private final class Turn: Sendable {
        let lock: AsyncLock
        let ended = Atomic(false)
        init(lock: AsyncLock) { self.lock = lock }
        func end() {
            if !ended.exchange(true, ordering: .acquiringAndReleasing) { lock.release() }
        }
    }

    /// How many wait in the queue now.
    package var waiting: Int {
        state.withLock { state in state.waiters[state.head...].count { $0.continuation != nil } }
    }

    /// Waits for the lock; `false` when `cancellable` and the task was cancelled first.
    private func acquire(cancellable: Bool) async -> Bool {
        let id = state.withLock { state -> UInt64? in
            if !state.held {
                state.held = true
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return true }
        let wait = {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Bool, Never>) in
                let now = self.state.withLock { state -> Bool? in
                    if !state.held {
                        state.held = true
                        return true
                    }
                    // Checked under the lock: a cancellation after this finds the waiter queued.
                    if cancellable, Task.isCancelled { return false }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        }
        guard cancellable else { return await wait() }
        return await withTaskCancellationHandler(operation: wait) {
            let waiting = self.state.withLock { state -> UnsafeContinuation<Bool, Never>? in
                guard let index = state.waiters[state.head...].firstIndex(where: { $0.id == id }) else { return nil }
                defer { state.waiters[index].continuation = nil }
                return state.waiters[index].continuation
            }
            waiting?.resume(returning: false)
        }
    }

    private func release() {
        let next = state.withLock { state -> UnsafeContinuation<Bool, Never>? in
            while state.head < state.waiters.count {
                // Handed over: the lock stays held by the next waiter still waiting.
                let next = state.waiters[state.head].continuation
                state.head += 1
                if state.head > 64, state.head * 2 > state.waiters.count {
                    state.waiters.removeFirst(state.head)
                    state.head = 0
                }
                if let next { return next }
            }
            state.waiters.removeAll(keepingCapacity: true)
            state.head = 0
            state.held = false
            return nil
        }
        next?.resume(returning: true)
    }
}
