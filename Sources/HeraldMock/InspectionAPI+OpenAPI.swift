import HeraldHTTPAPI
import HeraldJSON

extension InspectionAPI {
    static let documentedRoutes = DocumentedRoutes(openAPIDocument)

    /// The OpenAPI 3.1 document of the inspection API, served at `/api/v1/openapi.json`.
    static let openAPIDocument: JSONValue = {
        let ref = OpenAPI.ref, jsonResponse = OpenAPI.jsonResponse, body = OpenAPI.body
        let error = jsonResponse("An error", ref("Error"))
        let noContent: JSONValue = ["description": "Done"]
        func parameter(_ name: String, in location: String = "query", _ type: String, _ description: String) -> JSONValue {
            OpenAPI.parameter(name, in: location, ["type": .string(type)], description)
        }
        let tokenParameter = parameter("token", in: "path", "string", "The device token in hex")
        let idParameter = parameter("id", in: "path", "string", "apns-id or record id")
        let languageParameter = parameter("lang", "string", "Render in this language (an app localization such as fr or pt-BR) instead of the mock's")
        func object(_ properties: [(String, String)], required: [String] = []) -> JSONValue {
            var members = JSONObject()
            for (name, type) in properties { members.members.append(.init(key: name, value: ["type": .string(type)])) }
            return ["type": "object", "properties": .object(members), "required": .array(required.map { .string($0) })]
        }
        let paths: JSONValue = [
            "/api/v1/status": ["get": OpenAPI.operation("What the mock listens on and how it judges requests", responses: ["200": jsonResponse("Status", ["type": "object"])])],
            "/api/v1/notifications": [
                "get": OpenAPI.operation("Recorded requests, newest first", parameters: [
                    parameter("limit", "integer", "At most this many (default 1000)"),
                    parameter("before", "integer", "Only records with a smaller id (paging)"),
                    parameter("token", "string", "Only this device token"), parameter("topic", "string", "Only this topic"),
                    parameter("status", "integer", "Only this status"), parameter("accepted", "boolean", "Only accepted (true) or rejected (false)"),
                    parameter("reason", "string", "Only this reason"), parameter("pushType", "string", "Only this push type"),
                    parameter("kind", "string", "device, broadcast, channel or other"),
                    parameter("channelId", "string", "Only requests naming this broadcast channel"),
                    parameter("q", "string", "Text in the payload, token, topic, reason or apns-id (ASCII letters in any case)"),
                    languageParameter,
                ], responses: ["200": jsonResponse("A page of records", ref("NotificationPage")), "400": error]),
                "delete": OpenAPI.operation("Forget recorded requests", responses: ["204": noContent]),
            ],
            "/api/v1/notifications/{id}": [
                "get": OpenAPI.operation("One record, by apns-id or id", parameters: [idParameter, languageParameter], responses: [
                    "200": jsonResponse("The record", ref("Notification")), "404": error,
                ]),
            ],
            "/api/v1/connections": [
                "get": OpenAPI.operation(
                    "What happened below the requests, newest first: GOAWAYs sent and received, resets, protocol errors, closes",
                    parameters: [
                        parameter("limit", "integer", "At most this many (default 1000; the newest 1000 are kept)"),
                        parameter("connection", "integer", "Only this connection (as numbered in records)"),
                        parameter("kind", "string", "Only this kind: \(ConnectionEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))"),
                    ],
                    responses: ["200": jsonResponse("The events", ["type": "object", "properties": ["events": ["type": "array", "items": ref("ConnectionEvent")]]]), "400": error]),
            ],
            "/api/v1/notifications/{id}/resend": [
                "post": OpenAPI.operation(
                    "Send a recorded push to the mock again (judged, recorded and delivered anew, with a new apns-id)", parameters: [idParameter],
                    responses: ["201": jsonResponse("The new record", ref("Notification")), "400": error, "404": error]),
            ],
            "/api/v1/notifications/{id}/release": [
                "post": OpenAPI.operation(
                    "Send a recorded push to the release target (Apple with credentials, or another mock), to its device or another token",
                    parameters: [idParameter], body: ["required": false, "content": ["application/json": ["schema": object([("token", "string")])]]],
                    responses: ["200": jsonResponse("What the target answered", ref("Release")), "400": error, "404": error, "409": error]),
            ],
            "/api/v1/devices": [
                "get": OpenAPI.operation(
                    "Simulated devices, the most recently reached first", parameters: [parameter("limit", "integer", "At most this many (default 1000)"), languageParameter],
                    responses: ["200": jsonResponse("Devices", ["type": "object"])]),
                "post": OpenAPI.operation(
                    "Register a device (or re-bind its topic and environment)",
                    body: body(object([("token", "string"), ("topic", "string"), ("environment", "string")], required: ["token"])),
                    responses: ["201": jsonResponse("The device", ref("Device")), "400": error]),
            ],
            "/api/v1/devices/{token}": [
                "get": OpenAPI.operation("A device's Notification Center", parameters: [tokenParameter, languageParameter], responses: ["200": jsonResponse("The device", ref("Device")), "404": error]),
                "delete": OpenAPI.operation("Forget a device", parameters: [tokenParameter], responses: ["204": noContent, "404": error]),
            ],
            "/api/v1/devices/{token}/activities": [
                "get": OpenAPI.operation(
                    "A device's Live Activities: an update token's own, or those a push-to-start token started (under update tokens, or subscribed to channels); dismissed ones are gone",
                    parameters: [tokenParameter],
                    responses: ["200": jsonResponse("The activities", [
                        "type": "object", "required": ["activities"],
                        "properties": ["activities": ["type": "array", "items": [
                            "type": "object",
                            "properties": [
                                "updateToken": ["type": ["string", "null"]], "startToken": ["type": ["string", "null"]], "channel": ["type": ["string", "null"]],
                                "attributesType": ["type": ["string", "null"]], "attributes": ["type": ["object", "null"]], "contentState": ["type": ["object", "null"]],
                                "timestamp": ["type": ["number", "null"]], "staleDate": ["type": ["number", "null"]], "dismissalDate": ["type": ["number", "null"]],
                                "updates": ["type": "integer"], "ended": ["type": "boolean"],
                                "history": ["type": "array", "description": "The content states applied, oldest first (the newest 20)"],
                            ],
                        ]]],
                    ]), "404": error]),
            ],
            "/api/v1/devices/{token}/unregister": [
                "post": OpenAPI.operation(
                    "Mark the token unregistered: pushes answer 410 Unregistered", parameters: [tokenParameter],
                    body: ["required": false, "content": ["application/json": ["schema": object([("timestamp", "integer")])]]],
                    responses: ["200": jsonResponse("The device", ref("Device")), "400": error]),
            ],
            "/api/v1/devices/{token}/register": [
                "post": OpenAPI.operation("Make an unregistered token active again", parameters: [tokenParameter], responses: ["200": jsonResponse("The device", ref("Device")), "404": error]),
            ],
            "/api/v1/faults": [
                "get": OpenAPI.operation("Fault rules in force", responses: ["200": jsonResponse("Rules", ["type": "object"])]),
                "post": OpenAPI.operation(
                    "Add a fault rule (the grammar of herald mock --fault)", body: body(object([("rule", "string")], required: ["rule"])),
                    responses: ["201": jsonResponse("The rule and its id", ref("Fault")), "400": error]),
                "delete": OpenAPI.operation("Remove every fault rule", responses: ["204": noContent]),
            ],
            "/api/v1/faults/{id}": [
                "delete": OpenAPI.operation("Remove a fault rule", parameters: [parameter("id", in: "path", "integer", "The rule's id")], responses: ["204": noContent, "404": error]),
            ],
            "/api/v1/channels": ["get": OpenAPI.operation("Broadcast channels", responses: ["200": jsonResponse("Channels", ["type": "object"])])],
            "/api/v1/channels/{id}/subscribers": [
                "post": OpenAPI.operation(
                    "Subscribe a device to a channel", parameters: [parameter("id", in: "path", "string", "The channel ID")],
                    body: body(object([("token", "string")], required: ["token"])), responses: ["204": noContent, "400": error, "404": error]),
            ],
            "/api/v1/reset": ["post": OpenAPI.operation("Forget requests, devices, channels and faults", responses: ["204": noContent])],
            "/api/v1/events": [
                "get": OpenAPI.operation("Server-Sent Events: `notification` (a record) and `cleared`", responses: [
                    "200": ["description": "An event stream", "content": ["text/event-stream": ["schema": ["type": "string"]]]],
                ]),
            ],
            "/api/v1/openapi.json": ["get": OpenAPI.operation("This document", responses: ["200": jsonResponse("OpenAPI 3.1", ["type": "object"])])],
            "/metrics": ["get": OpenAPI.operation("Prometheus metrics", responses: ["200": ["description": "Text exposition format", "content": ["text/plain": ["schema": ["type": "string"]]]]])],
        ]
        let notification = object([
            ("id", "integer"), ("apnsId", "string"), ("deviceToken", "string"), ("topic", "string"), ("pushType", "string"),
            ("priority", "integer"), ("status", "integer"), ("reason", "string"), ("receivedAt", "string"), ("payload", "object"),
        ], required: ["id", "apnsId", "deviceToken", "topic", "pushType", "priority", "status", "reason", "payload", "receivedAt"])
        return [
            "openapi": "3.1.0",
            "info": ["title": "Herald mock APNs inspection API", "version": "1"],
            "paths": paths,
            "components": [
                "schemas": [
                    "Error": APIError.schema(),
                    "ConnectionEvent": object(
                        [("id", "integer"), ("at", "string"), ("connection", "integer"), ("peer", "string"), ("kind", "string"),
                         ("stream", "integer"), ("code", "string"), ("lastStreamId", "integer"), ("detail", "string")],
                        required: ["id", "at", "connection", "kind"]),
                    "Notification": notification,
                    "NotificationPage": [
                        "type": "object",
                        "properties": [
                            "total": ["type": "integer"], "count": ["type": "integer"],
                            "truncated": ["type": "boolean", "description": "The page stopped at 8 MiB before the limit: ask again with before=next"],
                            "next": ["type": ["integer", "null"], "description": "When truncated, the id to pass as before for the rest"],
                            "notifications": ["type": "array", "items": ref("Notification")],
                        ],
                    ],
                    "Device": object([("token", "string"), ("topic", "string"), ("environment", "string"), ("state", "string"), ("badge", "integer")]),
                    "Fault": object([("id", "integer"), ("rule", "string")], required: ["id", "rule"]),
                    "Release": object(
                        [("target", "string"), ("accepted", "boolean"), ("status", "integer"), ("apnsId", "string"), ("reason", "string"),
                         ("message", "string"), ("advice", "string")],
                        required: ["target", "accepted", "message"]),
                ],
            ],
        ]
    }()
}
