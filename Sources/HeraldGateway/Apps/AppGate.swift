import Synchronization

/// Who may hand an app's deliveries to its client now: none while the app is paused, and
/// until the client's first accepted push only as many at once as it has connections (APNs
/// itself takes one stream per connection until a provider token is valid). A wrong key or an
/// untrusted endpoint is then answered for those few, and the app pauses before the rest of
/// a campaign queues behind them; once one push is accepted, everything goes.
///
/// One gate per client: a changed app (a new client) starts closed again.
final class AppGate: Sendable {
    private struct State {
        var paused: String?
        var proven = false
        var inFlight = 0
        var waiters: [CheckedContinuation<Bool, Never>] = []
    }

    private let state: Mutex<State>
    /// How many may be in flight before the first acceptance.
    let probes: Int

    init(probes: Int, paused: String?) {
        self.probes = max(1, probes)
        state = Mutex(State(paused: paused))
    }

    /// Why the app is paused, when it is.
    var pausedReason: String? { state.withLock { $0.paused } }

    /// Waits for a place; `false` when the app is (or becomes) paused: give the delivery back.
    /// Every `true` is followed by one ``leave(accepted:)``.
    func enter() async -> Bool {
        // Nearly always answered at once: without a continuation (a checked one is an
        // allocation a delivery).
        if let answer = enterNow() { return answer }
        return await withCheckedContinuation { continuation in
            let answer = state.withLock { state -> Bool? in
                if let answer = admit(&state) { return answer }
                state.waiters.append(continuation)
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// ``enter()`` without waiting: `true` (a place, to be left) or `false` (paused) at once, or
    /// `nil` when it would wait.
    func enterNow() -> Bool? {
        state.withLock { admit(&$0) }
    }

    /// `false` while paused, `true` (one more in flight) when there is a place, `nil` to wait.
    private func admit(_ state: inout State) -> Bool? {
        if state.paused != nil { return false }
        guard state.proven || state.inFlight < probes else { return nil }
        state.inFlight += 1
        return true
    }

    /// A send ended; `accepted` when APNs accepted it (the credentials work: every waiter goes).
    func leave(accepted: Bool) {
        let resumed = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.inFlight -= 1
            if accepted { state.proven = true }
            guard state.paused == nil else { return [] }
            var woken: [CheckedContinuation<Bool, Never>] = []
            while !state.waiters.isEmpty, state.proven || state.inFlight < probes {
                woken.append(state.waiters.removeFirst())
                state.inFlight += 1
            }
            return woken
        }
        for waiter in resumed { waiter.resume(returning: true) }
    }

    /// Paused (`reason`) or not (`nil`); those waiting for a place are turned away by a pause.
    func setPaused(_ reason: String?) {
        let turned = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.paused = reason
            guard reason != nil else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in turned { waiter.resume(returning: false) }
    }
}
