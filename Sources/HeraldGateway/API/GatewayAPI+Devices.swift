import Foundation
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
            try Self.refuseUnknown(root, allowed: ["tokens", "tags", "addTags", "removeTags", "user", "language", "timeZone"])
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
            var registration = DeviceRegistration()
            registration.tags.replace = try Self.tagList(root, "tags")
            registration.tags.add = try Self.tagList(root, "addTags") ?? []
            registration.tags.remove = try Self.tagList(root, "removeTags") ?? []
            if let node = root["user"] {
                guard let user = node.stringValue, !user.isEmpty, user.count <= Submission.maximumUserBytes else {
                    return Self.error(.badRequest, "your own id for the user: a string of 1 to \(Submission.maximumUserBytes) bytes", pointer: "/user")
                }
                // Characters within the schema's count, bytes over: well-formed, too long to keep.
                guard user.utf8.count <= Submission.maximumUserBytes else {
                    return Self.error(.unprocessableContent, "\(user.utf8.count) bytes; a user id is at most \(Submission.maximumUserBytes) bytes of UTF-8", pointer: "/user")
                }
                registration.user = user
            }
            if let node = root["language"] {
                guard let language = node.stringValue, Submission.isLanguageTag(language) else {
                    return Self.error(.badRequest, "the device's preferred language, BCP 47 (en, fr-CA, zh-Hant-HK)", pointer: "/language")
                }
                registration.language = language.replacingOccurrences(of: "_", with: "-")
            }
            if let node = root["timeZone"] {
                guard let zone = node.stringValue, LocalTime.zone(zone) != nil else {
                    return Self.error(.badRequest, "\(node.stringValue.map { "\($0) is not a zone of the system's time-zone database" } ?? "a time zone"): an IANA name such as Europe/Paris or America/New_York", pointer: "/timeZone")
                }
                registration.timeZone = zone
            }
            try await server.store.upsertDevices(app: app.id, tokens: tokens, registration: registration, now: server.nowMilliseconds)
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
            let prefix = try query["prefix"].map { text -> String in
                guard !text.isEmpty, text.count <= 200, text.allSatisfy(\.isHexDigit) else {
                    throw APIRefusal(status: .badRequest, message: "prefix is the start of a device token: 1 to 200 hex digits")
                }
                return text.lowercased()
            }
            let deadSince = try query["deadSince"].map { text in
                guard let milliseconds = APITime.parse(String(text)) else {
                    throw APIRefusal(status: .badRequest, message: "deadSince is an RFC 3339 time, such as 2026-11-20T00:00:00Z")
                }
                return milliseconds
            }
            let filter = DeviceFilter(
                state: state, tag: query["tag"].map(String.init), user: query["user"].map(String.init), prefix: prefix, deadSince: deadSince)
            let devices = try await server.store.devices(app: app.id, filter: filter, after: query["after"].map(String.init), limit: limit)
            return Self.devicePage(devices, limit: limit)
        }
        // A user's devices, and erasing a user: its devices and every stored copy of its id and
        // tokens (what was sent keeps its outcome, without the token).
        router.get("/v1/apps/{app}/users/{user}/devices") { request, context in
            let app = try await server.app(request, context)
            let user = try context.parameters.require("user")
            let query = request.uri.queryParameters
            let limit = try Self.limit(query["limit"])
            let devices = try await server.store.devices(app: app.id, state: nil, tag: nil, user: user, after: query["after"].map(String.init), limit: limit)
            return Self.devicePage(devices, limit: limit)
        }
        router.delete("/v1/apps/{app}/users/{user}") { request, context in
            let app = try await server.app(request, context)
            let user = try context.parameters.require("user")
            guard let erased = try await server.store.eraseUser(app: app.id, user: user, now: server.nowMilliseconds) else {
                return Self.error(.notFound, "no device of that user")
            }
            return Self.json([
                "erased": [
                    "devices": .number(JSONNumber(erased.devices)), "deliveries": .number(JSONNumber(erased.deliveries)),
                    "cancelled": .number(JSONNumber(erased.cancelled)), "webhookEvents": .number(JSONNumber(erased.webhookEvents)),
                    "startTokens": .number(JSONNumber(erased.startTokens)), "activities": .number(JSONNumber(erased.activities)),
                ],
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

    /// A page of devices and the token to continue after.
    static func devicePage(_ devices: [StoredDevice], limit: Int) -> Response {
        json([
            "devices": .array(devices.map { device in
                [
                    "token": .string(device.token), "state": .string(device.state.rawValue), "tags": .array(device.tags.map { .string($0) }),
                    "user": device.user.map { .string($0) } ?? .null, "language": device.language.map { .string($0) } ?? .null,
                    "timeZone": device.timeZone.map { .string($0) } ?? .null,
                    "reason": device.reason.map { .string($0) } ?? .null, "deadAt": APITime.json(device.deadAt), "updatedAt": APITime.json(device.updatedAt),
                ]
            }),
            "next": devices.count == limit ? devices.last.map { .string($0.token) } ?? .null : .null,
        ])
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
