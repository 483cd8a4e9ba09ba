import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HeraldJSON
import HeraldTestSupport

/// `herald serve` as a process, as an operator runs it: started with its flags, its banner read
/// (the port, the worker's name, the administrator key when one was made), called over HTTP,
/// measured (CPU time), and stopped with SIGTERM or killed. It dies with the test process.
struct ServeProcess {
    let program: RunningProgram
    let port: Int
    let worker: String
    /// The administrator key printed at this start, if one was made.
    let printedKey: String?
    let banner: String

    /// Starts `herald serve --port 0 --log warning` with `arguments`; `niceness` runs it at a
    /// lower priority (a load test must leave the other suites their share of two cores).
    static func start(_ arguments: [String], environment: [String: String] = [:], niceness: Int? = nil) async throws -> ServeProcess {
        var command = [Fixtures.heraldBinary, "serve", "--port", "0", "--log", "warning"] + arguments
        if let niceness { command = ["-n", String(niceness)] + command }
        let executable = niceness == nil ? command.removeFirst() : try ExternalTools.require("nice", package: "coreutils")
        let program = try RunningProgram(executable, command, environment: environment)
        let banner = await program.read(untilOutput: { $0.contains("metrics") && $0.hasSuffix("\n") }, timeout: .seconds(60))
        // The key lines follow the metrics line in the same write.
        let complete = banner.contains("admin key") ? await program.read(until: "shown once", timeout: .seconds(5)) : banner
        guard let match = complete.firstMatch(of: /API on https?:\/\/127\.0\.0\.1:(\d+)\/ \([^;]*; worker ([^,)]+)/), let port = Int(match.output.1) else {
            throw ExternalTools.Failure(description: "herald serve did not start: \(complete)")
        }
        let key = complete.firstMatch(of: /admin key  (\S+)/).map { String($0.output.1) }
        return ServeProcess(program: program, port: port, worker: String(match.output.2), printedKey: key, banner: complete)
    }

    struct Answer {
        var status: Int
        var headers: [String: String]
        var json: JSONDocument?
        /// How long the call took.
        var elapsed: Duration
    }

    /// One HTTP call (an `Authorization: Bearer` header when `key` is given).
    func call(_ method: String, _ path: String, _ body: String? = nil, key: String?, headers: [String: String] = [:], timeout: TimeInterval = 120) async throws -> Answer {
        try await Self.call(port: port, method, path, body, key: key, headers: headers, timeout: timeout)
    }

    static func call(
        port: Int, _ method: String, _ path: String, _ body: String? = nil, key: String?, headers: [String: String] = [:], timeout: TimeInterval = 120
    ) async throws -> Answer {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.timeoutInterval = timeout
        if let key { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
        if let body { request.httpBody = Data(body.utf8) }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let started = ContinuousClock.now
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        var fields: [String: String] = [:]
        for (name, value) in http?.allHeaderFields ?? [:] { fields["\(name)".lowercased()] = "\(value)" }
        return Answer(status: http?.statusCode ?? 0, headers: fields, json: try? JSONDocument(parsing: Array(data)), elapsed: ContinuousClock.now - started)
    }

    var pid: Int32 { program.process.processIdentifier }

    /// The CPU time the process has used so far (user and system, from `/proc/<pid>/stat`).
    var cpuSeconds: Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3; utime and stime are fields 14 and 15.
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// A metric's value from `/metrics`, summed over the series whose labels include `labels`
    /// (all of them when none are given), or nil when there is none.
    func metric(_ name: String, labels: [String: String] = [:]) async throws -> Double? {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/metrics")!)
        request.timeoutInterval = 30
        let (data, _) = try await URLSession.shared.data(for: request)
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").filter { line in
            (line.hasPrefix(name + " ") || line.hasPrefix(name + "{")) && labels.allSatisfy { line.contains("\($0.key)=\"\($0.value)\"") }
        }
        guard !lines.isEmpty else { return nil }
        return lines.compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
    }

    /// Sends retried because they got no answer (a deadline, a connection lost after the
    /// request went out): APNs may have them, so each may arrive twice.
    func unansweredSends() async throws -> Int {
        var count = 0
        // The reasons' kinds as the metric labels them (Dispatcher.metricReason).
        for reason in ["timeout", "connection"] {
            count += Int(try await metric("herald_gateway_deliveries_total", labels: ["state": "retry", "reason": reason]) ?? 0)
        }
        return count
    }
}
