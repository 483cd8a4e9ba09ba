import Foundation
import Testing

/// Threads of the tests' own, beside Swift's shared pool.
///
/// Swift runs every task on one pool with a thread per core: two here. A test whose body computes
/// for seconds (a property check over thousands of random inputs) or waits for a child process
/// holds one of those threads all that time, and two such tests at once stop every other task of
/// the process: the in-process mock's and gateway's own tasks, and the tests whose deadlines are
/// seconds. Tests marked ``Trait/ownThreads`` run on these threads instead, so they share the
/// cores with the rest through the system's scheduler and never take the shared pool from it.
/// Their unstructured tasks (`Task {}`) still run on the shared pool.
public final class TestThreads: TaskExecutor, @unchecked Sendable { // `jobs` is guarded by `condition`.
    /// The executor the ``Trait/ownThreads`` tests share: a thread per core, so that together
    /// they never want more than the machine's cores (their child processes, a `herald` command
    /// or a Python oracle, compute while they wait), and the servers' event loops and the shared
    /// pool keep their share of the processors. A test waits here for a thread, which counts
    /// against a time limit: a test with one stays on the shared pool.
    public static let shared = TestThreads(width: ProcessInfo.processInfo.activeProcessorCount)

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var next = 0

    private init(width: Int) {
        for index in 0..<max(width, 1) {
            let thread = Thread { [unowned self] in self.work() }
            thread.name = "herald-test-\(index)"
            thread.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while next == jobs.count { condition.wait() }
            let job = jobs[next]
            next += 1
            if next == jobs.count { // Drained: start the array over instead of shifting it.
                jobs.removeAll(keepingCapacity: true)
                next = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// A trait that runs a test (or each test of a suite) on ``TestThreads``.
public struct OwnThreadsTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }
        try await withTaskExecutorPreference(TestThreads.shared) { try await function() }
    }
}

extension Trait where Self == OwnThreadsTrait {
    /// Runs on the tests' own threads (``TestThreads``): for tests that compute for seconds or wait
    /// for child processes, which would otherwise hold Swift's shared pool from every other test.
    public static var ownThreads: OwnThreadsTrait { OwnThreadsTrait() }
}
