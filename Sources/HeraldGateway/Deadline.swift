import Synchronization

/// Waited past its deadline: the operation may still finish, but nobody waits for it.
struct DeadlineExceeded: Error, CustomStringConvertible {
    var what: String
    var timeout: Duration
    var description: String { "\(what) did not finish within \(timeout)" }
}

/// Runs `operation` and returns its result, or throws ``DeadlineExceeded`` once `timeout` has
/// passed, whatever the operation does: it runs in a task of its own that is cancelled at the
/// deadline, and the caller does not wait for it to notice. A database driver that ignores
/// cancellation (a connection that hangs, a pool that waits for the server) cannot hold the
/// caller past the deadline. Cancelling the caller cancels the operation.
///
/// `abort`, when given, receives a function that ends the wait at once with an error (the
/// database was found unreachable meanwhile): the operation is cancelled as at the deadline.
func withDeadline<T: Sendable>(
    _ timeout: Duration, _ what: @autoclosure () -> String, abort: ((@escaping @Sendable (any Error) -> Void) -> Void)? = nil,
    operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let description = what()
    let outcome = OnceContinuation<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            let work = Task {
                let result = await Result { try await operation() }
                outcome.resume(with: result)
            }
            let timer = Task {
                try? await Task.sleep(for: timeout)
                if !Task.isCancelled, outcome.resume(with: .failure(DeadlineExceeded(what: description, timeout: timeout))) {
                    work.cancel()
                }
            }
            outcome.set(continuation, onResume: { timer.cancel() }, cancel: { work.cancel() })
            abort? { error in
                if outcome.resume(with: .failure(error)) { work.cancel() }
            }
        }
    } onCancel: {
        outcome.cancel()
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}

private enum OnceNext<T: Sendable> { case wait, resume(Result<T, any Error>), cancel }

/// A continuation resumed once, by whichever comes first: the result, the deadline or a
/// cancellation (which may come before the continuation is set).
private final class OnceContinuation<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var early: Result<T, any Error>?
        var done = false
        var onResume: (@Sendable () -> Void)?
        var cancelWork: (@Sendable () -> Void)?
        var cancelled = false
    }

    private let state = Mutex(State())

    func set(_ continuation: CheckedContinuation<T, any Error>, onResume: @escaping @Sendable () -> Void, cancel: @escaping @Sendable () -> Void) {
        let next: OnceNext<T> = state.withLock { state in
            if let early = state.early {
                state.done = true
                return .resume(early)
            }
            if state.cancelled {
                state.done = true
                return .cancel
            }
            state.continuation = continuation
            state.onResume = onResume
            state.cancelWork = cancel
            return .wait
        }
        switch next {
        case .wait: break
        case .resume(let result):
            // The work finished first (cancelling it is then a no-op), or the deadline came
            // before the continuation was set.
            cancel()
            onResume()
            continuation.resume(with: result)
        case .cancel:
            cancel()
            onResume()
            continuation.resume(throwing: CancellationError())
        }
    }

    /// `true` when this call resumed the continuation (it came first).
    @discardableResult
    func resume(with result: Result<T, any Error>) -> Bool {
        let taken = state.withLock { state -> (CheckedContinuation<T, any Error>, (@Sendable () -> Void)?)? in
            guard !state.done else { return nil }
            guard let continuation = state.continuation else {
                if state.early == nil { state.early = result }
                return nil
            }
            state.done = true
            state.continuation = nil
            return (continuation, state.onResume)
        }
        guard let (continuation, onResume) = taken else { return false }
        onResume?()
        continuation.resume(with: result)
        return true
    }

    func cancel() {
        let taken = state.withLock { state -> (CheckedContinuation<T, any Error>, (@Sendable () -> Void)?, (@Sendable () -> Void)?)? in
            guard !state.done else { return nil }
            guard let continuation = state.continuation else {
                state.cancelled = true
                return nil
            }
            state.done = true
            state.continuation = nil
            return (continuation, state.onResume, state.cancelWork)
        }
        guard let (continuation, onResume, cancelWork) = taken else { return }
        cancelWork?()
        onResume?()
        continuation.resume(throwing: CancellationError())
    }
}

extension Duration {
    /// "12.3 s": for log lines and messages.
    var secondsText: String {
        let tenths = (components.seconds * 10) + components.attoseconds / 100_000_000_000_000_000
        return "\(tenths / 10).\(abs(tenths % 10)) s"
    }
}
