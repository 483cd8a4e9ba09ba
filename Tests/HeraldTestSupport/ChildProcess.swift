import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A child process started with `posix_spawn`, whose pipes no other child can inherit.
///
/// Foundation's `Process` on Linux makes its pipes without close-on-exec and closes the
/// parent's other descriptors in the child by listing the ones open when it starts; a pipe
/// another thread makes in between is inherited. In a test process that starts children from
/// many threads at once, a short `psql` then had its output pipe held open by a server started
/// beside it, and its reader waited for that server's end (124 s in one CI run, for ever beside
/// a server that lives as long as the tests). Here every pipe end is made close-on-exec
/// (`pipe2`), and only the child's own ends are placed on its 0, 1 and 2, so a child holds
/// nothing of another's.
///
/// The thread that starts the child lives until the child ends and reaps it, so a child run
/// under `setpriv --pdeathsig` (``ExternalTools/tethered(_:_:)``) dies with the test process and
/// not with a pool thread. A signal is never sent to a process already reaped (whose number may
/// have been reused): the waiter sees the exit first without reaping (`waitid` with `WNOWAIT`).
public final class ChildProcess: @unchecked Sendable {  // mutable state is behind `state`
    /// What the parent keeps of one of the child's standard streams.
    public enum Stream {
        /// The child inherits this process's descriptor.
        case inherit
        /// A new pipe; the parent keeps the other end (``input``, ``output``, ``errors``).
        case pipe
        /// The same pipe as standard output (for standard error only).
        case output
    }

    /// The child's process ID.
    public let processIdentifier: pid_t
    /// The write end of the child's standard input, when it is a ``Stream/pipe``.
    public let input: FileHandle?
    /// The read end of the child's standard output, when it is a ``Stream/pipe``.
    public let output: FileHandle?
    /// The read end of the child's standard error, when it is a ``Stream/pipe``.
    public let errors: FileHandle?

    /// Whether the child has exited (set before it is reaped) and its status, and a latch
    /// opened at its end.
    private final class Exit: Sendable {
        let state = Mutex<(exited: Bool, status: Int32)>((false, 0))
        let ended = DispatchSemaphore(value: 0)
    }
    private let exit = Exit()

    /// glibc's `pipe2` (which the Glibc module does not import): both ends close-on-exec from
    /// the start, where `pipe` and then `fcntl` leave a moment for another thread's child.
    private static let pipe2: @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32 = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2") else { fatalError("this C library has no pipe2") }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32).self)
    }()

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; not imported either):
    /// the child closes every descriptor from a number on, as it starts.
    private static let addCloseFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            fatalError("this C library has no posix_spawn_file_actions_addclosefrom_np (glibc 2.34 or later has)")
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Why a child could not be started.
    public struct LaunchFailure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Starts `executable` with `arguments`; `environment` replaces this process's (nil keeps it).
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        stdin: Stream = .inherit, stdout: Stream = .inherit, stderr: Stream = .inherit
    ) throws {
        var parentEnds: [Int32] = [], childEnds: [Int32] = []
        func makePipe() throws -> (read: Int32, write: Int32) {
            var fds: [Int32] = [-1, -1]
            guard Self.pipe2(&fds, O_CLOEXEC) == 0 else {
                throw LaunchFailure(description: "pipe2: \(String(cString: strerror(errno)))")
            }
            return (fds[0], fds[1])
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var inputEnd: Int32?, outputEnd: Int32?, errorsEnd: Int32?
        var outputWrite: Int32?
        do {
            for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
                switch stream {
                case .inherit:
                    break
                case .pipe:
                    let pipe = try makePipe()
                    parentEnds.append(target == 0 ? pipe.write : pipe.read)
                    childEnds.append(target == 0 ? pipe.read : pipe.write)
                    // dup2 onto 0, 1 or 2 clears close-on-exec on the copy only.
                    posix_spawn_file_actions_adddup2(&actions, target == 0 ? pipe.read : pipe.write, target)
                    if target == 0 { inputEnd = pipe.write } else if target == 1 { outputEnd = pipe.read; outputWrite = pipe.write } else { errorsEnd = pipe.read }
                case .output:
                    precondition(target == 2 && outputWrite != nil, "standard error can share only a piped standard output")
                    posix_spawn_file_actions_adddup2(&actions, outputWrite!, 2)
                }
            }
        } catch {
            (parentEnds + childEnds).forEach { close($0) }
            throw error
        }
        // Everything else this process has open (sockets, other children's pipes, descriptors
        // a library opened without close-on-exec) stays out of the child.
        guard Self.addCloseFrom(&actions, 3) == 0 else {
            (parentEnds + childEnds).forEach { close($0) }
            throw LaunchFailure(description: "posix_spawn_file_actions_addclosefrom_np failed")
        }
        input = inputEnd.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        output = outputEnd.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        errors = errorsEnd.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            argv.forEach { free($0) }
            envp?.forEach { free($0) }
        }
        final class Launch: @unchecked Sendable {  // written by the starting thread before `started` signals
            var pid: pid_t = 0
            var error: Int32 = 0
            let started = DispatchSemaphore(value: 0)
        }
        let launch = Launch()
        let exit = self.exit
        nonisolated(unsafe) let spawnArguments = (argv, envp, actions)
        Thread {
            var (argv, envp, actions) = spawnArguments
            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))  // as Foundation's Process does
            var pid: pid_t = 0
            let result: Int32 = argv.withUnsafeMutableBufferPointer { argv in
                if envp == nil {
                    return posix_spawn(&pid, executable, &actions, &attributes, argv.baseAddress!, environ)
                }
                return envp!.withUnsafeMutableBufferPointer { posix_spawn(&pid, executable, &actions, &attributes, argv.baseAddress!, $0.baseAddress!) }
            }
            posix_spawnattr_destroy(&attributes)
            launch.pid = pid
            launch.error = result
            launch.started.signal()
            guard result == 0 else { return }
            // Seen exited, not yet reaped: a signal sent before `exited` is set cannot reach
            // another process that took the number.
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1, errno == EINTR {}
            var status: Int32 = 0
            exit.state.withLock { state in
                while waitpid(pid, &status, 0) == -1, errno == EINTR {}
                state.exited = true
                // The exit status, or the signal's number (as Foundation's Process reports it).
                state.status = (status & 0x7f) == 0 ? (status >> 8) & 0xff : status & 0x7f
            }
            exit.ended.signal()
        }.start()
        launch.started.wait()
        childEnds.forEach { close($0) }
        guard launch.error == 0 else {
            throw LaunchFailure(description: "cannot start \(executable): \(String(cString: strerror(launch.error)))")
        }
        processIdentifier = launch.pid
    }

    /// Whether the child has not yet exited.
    public var isRunning: Bool { !exit.state.withLock { $0.exited } }

    /// The exit status, or the number of the signal that ended it (0 while it runs).
    public var terminationStatus: Int32 { exit.state.withLock { $0.status } }

    /// Sends `signal` unless the child has exited.
    public func signal(_ signal: Int32) {
        exit.state.withLock { state in
            if !state.exited { kill(processIdentifier, signal) }
        }
    }

    /// Sends SIGTERM unless the child has exited.
    public func terminate() { signal(SIGTERM) }

    /// Waits until the child exits, at most `timeout`; returns whether it did.
    @discardableResult
    public func wait(timeout: Duration) -> Bool {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        guard exit.ended.wait(timeout: .now() + seconds) == .success else { return false }
        exit.ended.signal()  // for the next waiter
        return true
    }

    /// Waits until the child exits.
    public func waitUntilExit() {
        exit.ended.wait()
        exit.ended.signal()
    }
}
