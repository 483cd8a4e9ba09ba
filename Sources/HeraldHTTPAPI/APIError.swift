import HeraldJSON
import Hummingbird
import Logging

/// The one shape of an error in both of Herald's HTTP APIs (the gateway's and the mock's):
///
/// ```json
/// {"error": {"message": "what is wrong", "pointer": "/tokens/3", "reason": "BadDeviceToken", …}}
/// ```
///
/// `message` is always there; `pointer` (a JSON Pointer into the request body) when one member
/// of the body is wrong; other members (`reason`, `findings`, `database`) where a route documents
/// them. Hummingbird's own errors use the same `{"error": {"message"}}`.
package enum APIError {
    /// An error response: `status`, `{"error": {"message", "pointer"?, extra…}}`, and `headers`.
    package static func response(
        _ status: HTTPResponse.Status, _ message: String, pointer: String? = nil, extra: [(String, JSONValue)] = [], headers: HTTPFields = [:]
    ) -> Response {
        var object = JSONObject()
        object.members.append(.init(key: "message", value: .string(message)))
        if let pointer { object.members.append(.init(key: "pointer", value: .string(pointer))) }
        for (key, value) in extra { object.members.append(.init(key: key, value: value)) }
        return .json(["error": .object(object)], status: status, headers: headers)
    }

    /// The OpenAPI schema of ``response(_:_:pointer:extra:headers:)``'s body; `extra` adds the
    /// members a document's routes add.
    package static func schema(extra: [(String, JSONValue)] = []) -> JSONValue {
        var properties: JSONObject = [
            "message": ["type": "string", "description": "What is wrong, in a sentence"],
            "pointer": ["type": "string", "description": "A JSON Pointer to the member of the request body that is wrong"],
        ]
        for (key, value) in extra { properties.members.append(.init(key: key, value: value)) }
        return [
            "type": "object", "required": ["error"],
            "properties": ["error": ["type": "object", "required": ["message"], "properties": .object(properties)]],
        ]
    }
}

/// A request a route refuses: its status, what is wrong, and where in the body (a JSON
/// Pointer). Thrown from a route's helpers; ``ErrorShapeMiddleware`` answers it.
package struct APIRefusal: Error, Sendable {
    package var status: HTTPResponse.Status
    package var message: String
    package var pointer: String?

    package init(status: HTTPResponse.Status, message: String, pointer: String? = nil) {
        self.status = status
        self.message = message
        self.pointer = pointer
    }

    /// Refuses any member of `object` not in `allowed`, naming it and the fields there are:
    /// every route that takes a body refuses unknown fields the same way.
    package static func refuseUnknown(_ object: JSONDocument.Node, allowed: [String]) throws(APIRefusal) {
        guard object.kind == .object else { throw APIRefusal(status: .badRequest, message: "expected a JSON object", pointer: "") }
        for member in object.members where !allowed.contains(member.key) {
            throw APIRefusal(
                status: .badRequest, message: "unknown field; the fields are \(allowed.sorted().joined(separator: ", "))",
                pointer: JSONPointer(tokens: [member.key]).description)
        }
    }
}

/// Every error a route raises answers in ``APIError``'s shape: a route's `HTTPError`, a body too
/// large, a path asked with a method it does not take (405 with `Allow`, from `methods`), or
/// something unexpected (500, logged); `translate` turns errors of the API's own into responses
/// first.
package struct ErrorShapeMiddleware: RouterMiddleware {
    package typealias Context = BasicRequestContext
    let logger: Logger
    let methods: @Sendable (String) -> [String]?
    let translate: @Sendable (any Error) -> Response?

    /// A middleware; `methods` gives a documented path's methods, `translate` answers the API's
    /// own errors (or `nil` to leave them to the shape's defaults).
    package init(logger: Logger, methods: @escaping @Sendable (String) -> [String]?, translate: @escaping @Sendable (any Error) -> Response? = { _ in nil }) {
        self.logger = logger
        self.methods = methods
        self.translate = translate
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError {
            // The router found no route: a documented path asked with another method is a 405.
            if error.status == .notFound, error.body == nil, let allowed = methods(request.uri.path) {
                return APIError.response(
                    .methodNotAllowed, "\(request.method) is not allowed here: \(allowed.joined(separator: ", "))",
                    headers: [.allow: allowed.joined(separator: ", ")])
            }
            var response = APIError.response(error.status, error.body ?? error.status.reasonPhrase)
            for field in error.headers where field.name != .contentType && field.name != .contentLength { response.headers.append(field) }
            return response
        } catch let refusal as APIRefusal {
            return APIError.response(refusal.status, refusal.message, pointer: refusal.pointer)
        } catch {
            if let response = translate(error) { return response }
            if let error = error as? HTTPResponseError { return APIError.response(error.status, "\(error)") }
            logger.error("a request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            return APIError.response(.internalServerError, "the server failed: \(error)")
        }
    }
}
