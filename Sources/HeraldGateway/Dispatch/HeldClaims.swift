import Synchronization

/// The deliveries this process holds, each with the lease it knows it has: the fence between
/// this process's sends and another process's takeover.
///
/// A claim in the database is a lease: another process may take the row over once `due_at`
/// passes. This process counts each lease down on its own monotonic clock, from an instant
/// taken before the statement that set it, so its count always ends no later than the
/// database's. A delivery is sent only while its lease has at least the send's longest time
/// (``Dispatcher/sendAllowance``) to run, so every send ends before anyone may take the row
/// over; a lease that could not be extended (the database unreachable) runs out here first,
/// and the delivery is then given back instead of sent. An extension the database refused for
/// some rows (taken over, or given back) marks those lost at once.
final class HeldClaims: Sendable {
    enum Phase: Sendable { case waiting, sending, finished }

    /// What the caller may do with a delivery now.
    enum Permission: Equatable, Sendable {
        /// Send it: the lease outlasts the send.
        case send
        /// Not yet: the lease is too short to start a send; wait for the next extension.
        case wait
        /// Not this process's any more (taken over, or its lease ran out here): give it back.
        case lost
    }

    private struct Entry {
        var ticket: Int
        var lease: ContinuousClock.Instant
        var phase: Phase
        var lost = false
    }

    private struct State {
        var entries: [Int64: Entry] = [:]
        var nextTicket = 0
    }

    private let state = Mutex(State())

    /// Holds `ids` until `lease`; each gets a ticket that names this hold (an id given back and
    /// claimed again is a new hold).
    func add(_ ids: [Int64], lease: ContinuousClock.Instant) -> [Int] {
        state.withLock { state in
            ids.map { id in
                state.nextTicket += 1
                state.entries[id] = Entry(ticket: state.nextTicket, lease: lease, phase: .waiting)
                return state.nextTicket
            }
        }
    }

    /// Whether the delivery may be sent now; `.send` marks it as sending.
    func permission(_ id: Int64, ticket: Int, now: ContinuousClock.Instant, needed: Duration) -> Permission {
        state.withLock { state in
            guard var entry = state.entries[id], entry.ticket == ticket, !entry.lost else { return .lost }
            if entry.lease <= now {
                entry.lost = true
                state.entries[id] = entry
                return .lost
            }
            guard entry.lease - now >= needed else { return .wait }
            entry.phase = .sending
            state.entries[id] = entry
            return .send
        }
    }

    /// Whether each delivery is still held with a lease running (for work before the send).
    func areHeld(_ holds: [(id: Int64, ticket: Int)], now: ContinuousClock.Instant) -> [Bool] {
        state.withLock { state in
            holds.map { hold in
                guard let entry = state.entries[hold.id], entry.ticket == hold.ticket else { return false }
                return !entry.lost && entry.lease > now
            }
        }
    }

    /// The send ended; its outcome waits to be recorded (the lease is still kept until then).
    func finished(_ id: Int64, ticket: Int) {
        state.withLock { state in
            if state.entries[id]?.ticket == ticket { state.entries[id]?.phase = .finished }
        }
    }

    /// No longer held: recorded or given back.
    func remove(_ holds: [(id: Int64, ticket: Int)]) {
        state.withLock { state in
            for hold in holds where state.entries[hold.id]?.ticket == hold.ticket { state.entries[hold.id] = nil }
        }
    }

    /// Every id held, for an extension.
    var ids: [Int64] { state.withLock { Array($0.entries.keys) } }

    var count: Int { state.withLock { $0.entries.count } }

    /// The database extended the leases of `kept` among `requested`, to `lease`; the others
    /// are no longer this process's. Returns those lost now.
    @discardableResult
    func extended(_ requested: [Int64], kept: Set<Int64>, lease: ContinuousClock.Instant) -> [Int64] {
        state.withLock { state in
            var lost: [Int64] = []
            for id in requested {
                guard var entry = state.entries[id] else { continue }
                if kept.contains(id) {
                    if entry.lease < lease { entry.lease = lease }
                } else if !entry.lost {
                    entry.lost = true
                    lost.append(id)
                }
                state.entries[id] = entry
            }
            return lost
        }
    }
}

/// Wakes every task waiting for the next event (a lease extension, a stop). A task reads
/// ``generation`` before it looks at the state it waits on, and waits for a later one: an event
/// between the look and the wait is not missed.
final class Broadcast: Sendable {
    private let state = Mutex<(generation: Int, waiters: [CheckedContinuation<Void, Never>])>((0, []))

    var generation: Int { state.withLock { $0.generation } }

    /// Returns once an event after `generation` has happened (at once if one has).
    func wait(since generation: Int) async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.generation != generation { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    func notifyAll() {
        let all = state.withLock { state in
            state.generation &+= 1
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in all { waiter.resume() }
    }
}
