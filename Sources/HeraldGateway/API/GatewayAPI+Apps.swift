import Foundation
import HeraldAuth
import HeraldHTTPAPI
import HeraldJSON
import Hummingbird

/// Apps and API keys: register, change in place, pause and resume, delete.
extension GatewayAPI {
    static func addApps(to router: Router<BasicRequestContext>, server: GatewayServer) {
        router.post("/v1/apps") { request, _ in
            var request = request
            try await server.authorize(request, app: nil)
            let document = try await Self.document(&request)
            let app: GatewayApp
            do throws(GatewayApp.Problem) {
                app = try GatewayApp(json: document.root)
            } catch {
                return Self.error(.badRequest, error.message, pointer: error.pointer)
            }
            // Well-formed, but do the credentials work? (A key that is not a key, a wrong
            // password, a certificate for another app or environment.)
            do throws(GatewayApp.Problem) {
                try app.check(now: server.configuration.now())
            } catch {
                return Self.error(.unprocessableContent, error.message, pointer: error.pointer)
            }
            let now = server.nowMilliseconds
            guard try await server.store.insertApp(StoredApp(id: app.id, definition: app.storedJSON, createdAt: now, updatedAt: now)) else {
                return Self.error(.conflict, "an app with id \(app.id) exists: change it with PATCH /v1/apps/\(app.id), or give another \"id\"")
            }
            guard let stored = try await server.store.app(id: app.id) else { return Self.error(.notFound, "no app \(app.id)") }
            return Self.json(Self.appValue(app, stored), status: .created)
        }
        router.get("/v1/apps") { request, _ in
            let key = try await server.authorize(request, app: nil, adminOnly: false)
            let apps = try await server.store.apps().filter { key.apps?.contains($0.id) ?? true }
            return Self.json(["apps": .array(apps.compactMap(Self.publicApp))])
        }
        router.get("/v1/apps/{app}") { request, context in
            let id = try context.parameters.require("app")
            try await server.authorize(request, app: id)
            guard let stored = try await server.store.app(id: id), let value = Self.publicApp(stored) else { return Self.error(.notFound, "no app \(id)") }
            return Self.json(value)
        }
        // Changed in place: a JSON Merge Patch of the definition, checked as at registration;
        // devices, notifications and history stay. A change of credentials, environment, server
        // or bundle ID ends a pause.
        router.patch("/v1/apps/{app}") { request, context in
            var request = request
            let id = try context.parameters.require("app")
            try await server.authorize(request, app: nil)
            let patch = try await Self.document(&request).root
            guard patch.kind == .object else { return Self.error(.badRequest, "expected a JSON object: the members to change (null removes one)", pointer: "") }
            if let given = patch["id"], given.stringValue != id {
                return Self.error(.badRequest, "an app's id cannot change (delete it and register another)", pointer: "/id")
            }
            guard let stored = try await server.store.app(id: id), let current = Self.definition(stored) else { return Self.error(.notFound, "no app \(id)") }
            let merged = GatewayApp.merge(current.storedValue, patch.value)
            // Written by Herald's writer just now: valid JSON.
            let mergedDocument = try! JSONDocument(parsing: Self.bytes(merged))
            let app: GatewayApp
            do throws(GatewayApp.Problem) {
                app = try GatewayApp(json: mergedDocument.root)
                try app.check(now: server.configuration.now())
            } catch {
                // The patch is well-formed; the app it makes is not one that can be sent for.
                return Self.error(.unprocessableContent, error.message, pointer: error.pointer)
            }
            let fixes = ["token", "certificate", "environment", "server", "bundleId"].contains { patch[$0] != nil }
            guard let updated = try await server.store.updateApp(id: id, definition: app.storedJSON, resume: fixes, now: server.nowMilliseconds) else {
                return Self.error(.notFound, "no app \(id)")
            }
            server.appChanged(id, resumed: fixes && stored.pausedAt != nil)
            return Self.json(Self.appValue(app, updated))
        }
        router.post("/v1/apps/{app}/resume") { request, context in
            let id = try context.parameters.require("app")
            try await server.authorize(request, app: nil)
            let resumed = try await server.store.resumeApp(id: id, now: server.nowMilliseconds)
            guard let stored = try await server.store.app(id: id), let value = Self.publicApp(stored) else { return Self.error(.notFound, "no app \(id)") }
            if resumed { server.appChanged(id, resumed: true) }
            return Self.json(value)
        }
        // At once: sends under way finish (or are abandoned as under SIGTERM); what the app had
        // is gone, and the answer says how much.
        router.delete("/v1/apps/{app}") { request, context in
            let id = try context.parameters.require("app")
            try await server.authorize(request, app: nil)
            guard let deleted = try await server.store.deleteApp(id: id) else { return Self.error(.notFound, "no app \(id)") }
            server.appChanged(id, resumed: false)
            server.metrics.appPaused(id, false)
            return Self.json([
                "deleted": [
                    "app": .string(id), "devices": .number(JSONNumber(deleted.devices)), "notifications": .number(JSONNumber(deleted.notifications)),
                    "deliveries": .number(JSONNumber(deleted.deliveries)), "webhookEvents": .number(JSONNumber(deleted.webhookEvents)),
                ],
            ])
        }
    }

    static func addKeys(to router: Router<BasicRequestContext>, server: GatewayServer) {
        router.post("/v1/keys") { request, _ in
            var request = request
            try await server.authorize(request, app: nil)
            let document = try await Self.document(&request)
            try Self.refuseUnknown(document.root, allowed: ["name", "apps"])
            guard let name = document.root["name"]?.stringValue, !name.isEmpty else {
                return Self.error(.badRequest, "required: a name for the key", pointer: "/name")
            }
            var apps: [String]?
            if let list = document.root["apps"] {
                guard list.kind == .array, list.count > 0 else {
                    return Self.error(.badRequest, "an array of app ids (omit it for an administrator's key)", pointer: "/apps")
                }
                apps = list.elements.compactMap(\.stringValue).filter(GatewayApp.isValidID)
                guard apps?.count == list.count else { return Self.error(.badRequest, "app ids are strings of letters, digits, '.', '-', '_'", pointer: "/apps") }
            }
            let (secret, stored) = APIKeys.make(name: name, apps: apps, now: server.nowMilliseconds)
            try await server.store.insertKey(stored)
            return Self.json(Self.keyValue(stored, secret: secret), status: .created)
        }
        router.get("/v1/keys") { request, _ in
            try await server.authorize(request, app: nil)
            return Self.json(["keys": .array(try await server.store.keys().map { Self.keyValue($0, secret: nil) })])
        }
        // The caller's own key (any key): its id, name and apps, never its secret.
        router.get("/v1/key") { request, _ in
            let key = try await server.authorize(request, app: nil, adminOnly: false)
            return Self.json(Self.keyValue(key, secret: nil))
        }
        router.delete("/v1/keys/{id}") { request, context in
            try await server.authorize(request, app: nil)
            let id = try context.parameters.require("id")
            // Revoking the last administrator's key would lock everyone out of administration.
            let keys = try await server.store.keys()
            if let key = keys.first(where: { $0.id == id }), key.apps == nil, keys.filter({ $0.apps == nil }).count == 1 {
                return Self.error(.conflict, "\(id) is the last administrator's key: make another with POST /v1/keys first")
            }
            guard try await server.store.deleteKey(id: id) else { return Self.error(.notFound, "no key \(id)") }
            server.forgetKeys()
            return Response(status: .noContent)
        }
    }

    // MARK: Shapes

    /// The app read back from its stored definition.
    static func definition(_ stored: StoredApp) -> GatewayApp? {
        guard let document = try? JSONDocument(parsing: Array(stored.definition.utf8)) else { return nil }
        return try? GatewayApp(json: document.root)
    }

    static func publicApp(_ stored: StoredApp) -> JSONValue? {
        definition(stored).map { appValue($0, stored) }
    }

    /// An app as the API shows it: the definition without secrets, a certificate's subject,
    /// topics and expiry, whether it sends or is paused (since when, why, what to do), and its
    /// times.
    static func appValue(_ app: GatewayApp, _ stored: StoredApp) -> JSONValue {
        var object = app.publicValue.objectValue ?? JSONObject()
        if case .certificate(let p12, let password) = app.credentials, let info = try? APNsCertificateIdentity(pkcs12: p12, passphrase: password).info,
           let index = object.members.firstIndex(where: { $0.key == "certificate" }) {
            var certificate = object.members[index].value.objectValue ?? JSONObject()
            certificate.members.append(.init(key: "subject", value: .string(info.subject)))
            certificate.members.append(.init(key: "topics", value: .array(info.topicNames.map { .string($0) })))
            certificate.members.append(.init(key: "environments", value: .array(info.environments.map(\.rawValue).sorted().map { .string($0) })))
            certificate.members.append(.init(key: "notValidAfter", value: APITime.json(Int64((info.notValidAfter.timeIntervalSince1970 * 1000).rounded()))))
            object.members[index].value = .object(certificate)
        }
        object.members.append(.init(key: "state", value: .string(stored.pausedAt == nil ? "active" : "paused")))
        object.members.append(.init(key: "paused", value: stored.pausedAt.map { since in
            ["since": APITime.json(since), "reason": .string(stored.pausedReason ?? ""), "advice": .string(stored.pausedAdvice ?? "")]
        } ?? .null))
        object.members.append(.init(key: "createdAt", value: APITime.json(stored.createdAt)))
        object.members.append(.init(key: "updatedAt", value: APITime.json(stored.updatedAt)))
        return .object(object)
    }

    static func keyValue(_ key: StoredKey, secret: String?) -> JSONValue {
        var object: JSONObject = [
            "id": .string(key.id), "name": .string(key.name), "apps": key.apps.map { .array($0.map { .string($0) }) } ?? "*",
            "createdAt": APITime.json(key.createdAt),
        ]
        if let secret { object.members.insert(.init(key: "key", value: .string(secret)), at: 1) }
        return .object(object)
    }
}
