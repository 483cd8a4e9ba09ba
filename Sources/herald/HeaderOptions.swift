import ArgumentParser
import HeraldProtocol

/// A request's `apns-*` headers as flags, shared by `herald lint` (which checks them as given,
/// malformed ones included) and `herald send` (which sends them, and refuses malformed ones).
struct HeaderOptions: ParsableArguments {
    @Option(name: .customLong("push-type"), help: ArgumentHelp("apns-push-type: alert (what herald send sends by default), background, liveactivity, voip, …", valueName: "TYPE"))
    var pushType: String?

    @Option(help: ArgumentHelp("apns-priority: 10, 5 or 1 (APNs' default: 10).", valueName: "P"))
    var priority: String?

    @Option(help: ArgumentHelp("apns-topic: the bundle ID, plus the push type's suffix (.voip, .push-type.liveactivity, …).", valueName: "TOPIC"))
    var topic: String?

    @Option(name: .customLong("collapse-id"), help: ArgumentHelp("apns-collapse-id (at most 64 bytes).", valueName: "ID"))
    var collapseID: String?

    @Option(help: ArgumentHelp("apns-expiration: UNIX seconds, or 0 (deliver now or never).", valueName: "E"))
    var expiration: String?

    @Option(name: .customLong("apns-id"), help: ArgumentHelp("apns-id: a lowercase UUID (herald send: one token only; each token gets a new one by default).", valueName: "UUID"))
    var apnsID: String?

    /// The headers to send to `topic`, each checked as APNs would (`--push-type` defaults to
    /// alert); a malformed one is a usage error naming its flag.
    func request(topic: String) throws(UsageError) -> APNsRequestHeaders {
        let pushType = self.pushType ?? PushType.alert.rawValue
        guard let type = PushType(rawValue: pushType) else {
            throw UsageError(message: "--push-type \(pushType) is not one of \(PushType.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var headers = APNsRequestHeaders(pushType: type, topic: topic)
        if let priority {
            guard let value = Int(priority).flatMap(PushPriority.init(rawValue:)) else {
                throw UsageError(message: "--priority is \(PushPriority.validValues), not \(priority)")
            }
            headers.priority = value
        }
        do {
            if let collapseID { headers.collapseID = try CollapseID(collapseID) }
            if let expiration { headers.expiration = try Expiration(headerValue: expiration) }
            if let apnsID { headers.apnsID = try APNsID(parsing: apnsID) }
        } catch {
            throw UsageError(message: "\(error)")
        }
        return headers
    }
}
