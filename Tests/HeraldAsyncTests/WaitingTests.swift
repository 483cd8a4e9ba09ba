import HeraldAsync
import NIOCore
import Synchronization
import Testing

/// The waiting primitives the client and the gateway share: each holds its promise (a bound, a
/// hand-over in order, a wake-up, a rate, mutual exclusion) under concurrent callers.
@Suite struct WaitingTests {
    /// Whether a task has finished, read without waiting for it.
    final class Flag: Sendable {
        private let value = Atomic(false)
        func set() { value.store(true, ordering: .sequentiallyConsistent) }
        var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
    }

    /// What happened, in order, from any task.
    final class Log: Sendable {
        private let entries = Mutex<[String]>([])
        func append(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    @Test func theLockKeepsBodiesApartAcrossSuspensions() async throws {
        final class Counter: @unchecked Sendable { var value = 0 }  // only touched under the lock
        let lock = AsyncLock()
        let counter = Counter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    _ = try? await lock.withLock {
                        // Read, suspend, write: without the lock, another body would interleave and
                        // an increment would be lost.
                        let seen = counter.value
                        await Task.yield()
                        counter.value = seen + 1
                        return seen
                    }
                }
            }
        }
        #expect(counter.value == 200)
    }

    /// `withCancellableLock`: a waiter cancelled in the queue leaves it (the next still gets its
    /// turn, in order); a holder cancelled mid-body hands the lock over at once although its body
    /// is still suspended; `withLock` waiters run in their turn even when cancelled.
    @Test func aCancelledHolderOrWaiterGivesItsTurnUp() async throws {
        let lock = AsyncLock()
        let order = Log()
        // A holder that hangs, deaf to cancellation, until the gate opens.
        let gate = Mutex<(open: Bool, waiting: CheckedContinuation<Void, Never>?)>((false, nil))
        let holder = Task {
            try await lock.withCancellableLock {
                order.append("holder")
                await withCheckedContinuation { continuation in
                    let open = gate.withLock { gate in
                        if !gate.open { gate.waiting = continuation }
                        return gate.open
                    }
                    if open { continuation.resume() }
                }
                order.append("holder resumed")
            }
        }
        // Each in the queue before the next asks (a loaded machine may run tasks late).
        func queued(_ count: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(60)
            while lock.waiting < count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            try #require(lock.waiting == count)
        }
        while order.all.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        let cancelledWaiter = Task { try await lock.withCancellableLock { order.append("cancelled waiter") } }
        try await queued(1)
        let nextWaiter = Task { try await lock.withCancellableLock { order.append("next waiter") } }
        try await queued(2)
        let plainWaiter = Task { try await lock.withLock { order.append("plain waiter") } }
        try await queued(3)
        #expect(order.all == ["holder"], "everyone waits for the holder")

        cancelledWaiter.cancel()
        let left = await Self.result(of: cancelledWaiter, within: .seconds(60))
        #expect(left.map { if case .failure(let error) = $0 { error is CancellationError } else { false } } == true, "the cancelled waiter throws at once: \(String(describing: left))")
        #expect(order.all == ["holder"] && lock.waiting == 2, "leaving the queue hands nothing over")

        plainWaiter.cancel()  // waits on regardless
        holder.cancel()
        let next = await Self.result(of: nextWaiter, within: .seconds(60))
        let plain = await Self.result(of: plainWaiter, within: .seconds(60))
        #expect(next != nil && plain != nil && order.all == ["holder", "next waiter", "plain waiter"], "the cancelled holder gave its turn up: \(order.all)")
        gate.withLock { gate in
            gate.open = true
            return gate.waiting
        }?.resume()
        _ = await Self.result(of: holder, within: .seconds(60))
        #expect(order.all.last == "holder resumed", "the holder's body ran on after giving the lock up")
        // Free again, and a task cancelled before asking does not get the lock.
        let late = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await lock.withCancellableLock { order.append("late") }
        }
        await #expect(throws: CancellationError.self) { try await late.value }
        try await lock.withCancellableLock { order.append("free") }
        #expect(order.all.suffix(1) == ["free"])
    }

    /// `task`'s result, or `nil` if it has not finished within `timeout` (it is left running):
    /// a broken lock fails the test instead of hanging it (the timeout is generous: CI's
    /// machine runs a hundred suites at once on two cores).
    static func result<T: Sendable>(of task: Task<T, any Error>, within timeout: Duration) async -> Result<T, any Error>? {
        let box = Mutex<Result<T, any Error>?>(nil)
        Task { let result = await task.result; box.withLock { $0 = result } }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let result = box.withLock({ $0 }) { return result }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    @Test func theInFlightBoundHandsPlacesOverInOrderAndHonoursDeadlines() async throws {
        let limiter = InFlightLimiter(limit: 2)
        let far = NIODeadline.now() + .seconds(60)
        #expect(await limiter.acquire(before: far))
        #expect(await limiter.acquire(before: far))
        // No place comes free before this deadline.
        #expect(await limiter.acquire(before: .now() + .milliseconds(50)) == false)
        #expect(limiter.inFlight == 2)

        let order = Log()
        let first = Task { if await limiter.acquire(before: far) { order.append("first") } }
        try await Task.sleep(for: .milliseconds(50))
        let second = Task { if await limiter.acquire(before: far) { order.append("second") } }
        try await Task.sleep(for: .milliseconds(50))
        limiter.release()
        await first.value
        #expect(order.all == ["first"], "the first to wait gets the first place")
        limiter.release()
        await second.value
        #expect(order.all == ["first", "second"])
        #expect(limiter.inFlight == 2, "handed over, not freed")

        let idle = Flag()
        let waiting = Task { await limiter.waitUntilIdle(); idle.set() }
        limiter.release()
        try await Task.sleep(for: .milliseconds(50))
        #expect(!idle.isSet, "one is still in flight")
        limiter.release()
        await waiting.value
        #expect(idle.isSet && limiter.inFlight == 0)
    }

    @Test func theCapacityGateWaitsForEnoughRoomAndCanBeCancelled() async throws {
        let gate = CapacityGate(limit: 3)
        gate.take(3)
        let room = Flag()
        let waiting = Task { () -> Bool in
            let got = await gate.waitForRoom(atLeast: 2)
            room.set()
            return got
        }
        try await Task.sleep(for: .milliseconds(50))
        gate.give(1)
        try await Task.sleep(for: .milliseconds(50))
        #expect(!room.isSet, "one is not enough")
        gate.give(1)
        #expect(await waiting.value)
        #expect(gate.available == 2)

        gate.take(2)
        let cancelled = Task { await gate.waitForRoom(atLeast: 1) }
        try await Task.sleep(for: .milliseconds(50))
        gate.cancelWaiters()
        #expect(await cancelled.value == false)
    }

    @Test func aSignalWakesItsWaiterAndIsKeptUntilTheNextWait() async throws {
        let signal = Signal()
        let clock = ContinuousClock()
        // Given before the wait: the wait returns at once, not after its minute.
        signal.signal()
        var elapsed = await clock.measure { await signal.wait(timeout: .seconds(60)) }
        #expect(elapsed < .seconds(30))
        // Given while waiting.
        let waker = Task {
            try await Task.sleep(for: .milliseconds(50))
            signal.signal()
        }
        elapsed = await clock.measure { await signal.wait(timeout: .seconds(60)) }
        try await waker.value
        #expect(elapsed < .seconds(30))
        // None: the timeout ends the wait.
        elapsed = await clock.measure { await signal.wait(timeout: .milliseconds(50)) }
        #expect(elapsed >= .milliseconds(50))
    }

    @Test func theRateLimiterHoldsSendsToItsRate() async throws {
        let limiter = RateLimiter(20)
        let clock = ContinuousClock()
        let elapsed = await clock.measure {
            for _ in 0..<40 { _ = await limiter.acquire { true } }
        }
        // A second's worth (20) at once, then 20 more at 20 a second: at least most of a second.
        #expect(elapsed >= .milliseconds(800), "\(elapsed)")
        #expect(await limiter.acquire { false } == false, "a stop is seen at once")
    }
}
