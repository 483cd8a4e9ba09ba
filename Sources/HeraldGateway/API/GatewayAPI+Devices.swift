import HeraldHTTPAPI
import HeraldJSON
import HeraldProtocol
import Hummingbird

/// Devices: register tokens with tags, list them, forget one.
extension GatewayAPI {
    static func addDevices(to router: Router<BasicRequestContext>, server: GatewayServer) {
        // Registers tokens (a dead token registered again is active again). "tags" replaces a
        // device's tags; without it they stay, and "addTags" and "removeTags" edit them.
        router.post("/v1/apps/{app}/devices") { request, context in
            var request = request
            let app = try await server.app(request, context)
            let root = try await Self.document(&request).root
            try Self.refuseUnknown(root, allowed: ["tokens", "tags", "addTags", "removeTags"])
            guard let list = root["tokens"], list.kind == .array, list.count > 0 else {
                return Self.error(.badRequest, "required: \"tokens\", an array of hex device tokens", pointer: "/tokens")
            }
            var tokens: [DeviceToken] = []
            for (index, element) in list.elements.enumerated() {
                guard let hex = element.stringValue, let token = try? DeviceToken(hex: hex) else {
                    return Self.error(.badRequest, "not a device token: hex, 32 to 100 bytes", pointer: "/tokens/\(index)")
                }
                tokens.append(token)
            }
            var tags = DeviceTags(replace: nil)
            tags.replace = try Self.tagList(root, "tags")
            tags.add = try Self.tagList(root, "addTags") ?? []
            tags.remove = try Self.tagList(root, "removeTags") ?? []
            try await server.store.upsertDevices(app: app.id, tokens: tokens, tags: tags, now: server.nowMilliseconds)
            return Self.json(["registered": .number(JSONNumber(tokens.count))])
        }
        router.get("/v1/apps/{app}/devices") { request, context in
            let app = try await server.app(request, context)
            let query = request.uri.queryParameters
            let state = try query["state"].map { text -> DeviceState in
                guard let state = DeviceState(rawValue: String(text)) else { throw HTTPError(.badRequest, message: "state is active or dead") }
                return state
            }
            let limit = try Self.limit(query["limit"])
            let devices = try await server.store.devices(
                app: app.id, state: state, tag: query["tag"].map(String.init), after: query["after"].map(String.init), limit: limit)
            return Self.json([
                "devices": .array(devices.map { device in
                    [
                        "token": .string(device.token), "state": .string(device.state.rawValue), "tags": .array(device.tags.map { .string($0) }),
                        "reason": device.reason.map { .string($0) } ?? .null, "deadAt": APITime.json(device.deadAt),
                        "updatedAt": APITime.json(device.updatedAt),
                    ]
                }),
                "next": devices.count == limit ? devices.last.map { .string($0.token) } ?? .null : .null,
            ])
        }
        router.delete("/v1/apps/{app}/devices/{token}") { request, context in
            let app = try await server.app(request, context)
            guard let token = try? DeviceToken(hex: try context.parameters.require("token")) else {
                return Self.error(.badRequest, "not a device token")
            }
            return try await server.store.deleteDevice(app: app.id, token: token) ? Response(status: .noContent) : Self.error(.notFound, "no such device")
        }
    }

    /// The array of tags at `key`, if given: each non-empty and without commas.
    static func tagList(_ root: JSONDocument.Node, _ key: String) throws -> [String]? {
        guard let list = root[key] else { return nil }
        let tags = list.elements.compactMap(\.stringValue)
        guard list.kind == .array, tags.count == list.count, tags.allSatisfy({ !$0.isEmpty && !$0.contains(",") && $0.utf8.count <= 128 }) else {
            throw APIRefusal(status: .badRequest, message: "an array of tags (1 to 128 bytes, no commas)", pointer: "/\(key)")
        }
        return tags
    }
}
