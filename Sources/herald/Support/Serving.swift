import Foundation
import Logging
import ServiceLifecycle

/// Runs `services` until SIGTERM or SIGINT, printing `banner` first: once the group has
/// installed its signal handlers, so a signal sent as soon as the banner is read stops the
/// server gracefully (sent before, it killed the process with the default action).
func serve(_ services: [any Service], banner: String, logger: Logger) async throws {
    let group = ServiceGroup(configuration: .init(
        services: services + [Announcement(text: banner)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    try await group.run()
}

/// Prints its text when the group starts it, then waits for the shutdown.
private struct Announcement: Service {
    let text: String

    func run() async throws {
        print(text, terminator: "")
        fflush(nil)
        try? await gracefulShutdown()
    }
}
