import Testing

/// Swift Testing starts every test at once; on a two-core machine a few load tests (tens of
/// thousands of pushes, several server processes, a browser, a fuzzer) then starve the rest,
/// whose deadlines are seconds: requests time out that a quiet machine answers in
/// milliseconds. Load tests take a share of one gate of ``capacity`` units: `.heavy` one
/// unit, `.exclusive` all of them. Quick tests are not gated and run beside at most
/// ``capacity`` units of load.
public actor LoadGate {
    /// The units of load that run at once.
    public static let capacity = 2
    public static let shared = LoadGate()

    private var inUse = 0
    private var waiters: [(units: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// Waits (first come, first served) until `units` are free, then takes them.
    func acquire(_ units: Int) async {
        let units = min(max(units, 1), Self.capacity)
        if waiters.isEmpty, inUse + units <= Self.capacity {
            inUse += units
            return
        }
        await withCheckedContinuation { waiters.append((units, $0)) }
    }

    func release(_ units: Int) {
        inUse -= min(max(units, 1), Self.capacity)
        while let first = waiters.first, inUse + first.units <= Self.capacity {
            waiters.removeFirst()
            inUse += first.units
            first.continuation.resume()
        }
    }
}

/// A trait that runs a test (or each test of a suite) holding units of the ``LoadGate``.
public struct LoadTrait: TestTrait, SuiteTrait, TestScoping {
    let units: Int
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // A suite's own scope holds nothing: each of its test cases takes its share.
        guard testCase != nil else { return try await function() }
        await LoadGate.shared.acquire(units)
        do {
            try await function()
        } catch {
            await LoadGate.shared.release(units)
            throw error
        }
        await LoadGate.shared.release(units)
    }
}

extension Trait where Self == LoadTrait {
    /// A load test: one unit of the ``LoadGate``.
    public static var heavy: LoadTrait { LoadTrait(units: 1) }
    /// A load test that needs the machine to itself (several server processes, tens of
    /// thousands of requests): every unit of the ``LoadGate``.
    public static var exclusive: LoadTrait { LoadTrait(units: LoadGate.capacity) }
}
