import HeraldHTTPAPI
import HeraldJSON
import Testing

/// The pieces both APIs' OpenAPI documents are written with, checked against the JSON text an
/// OpenAPI 3.1 operation object has, written out by hand.
@Suite struct OpenAPIPiecesTests {
    static func text(_ value: JSONValue) -> String {
        var writer = JSONWriter(output: JSONBytes())
        writer.value(value)
        return String(decoding: writer.output.bytes, as: UTF8.self)
    }

    @Test func anOperationListsItsPartsInOrderAndLeavesOutTheEmptyOnes() {
        let done: JSONValue = ["description": "Done"]
        #expect(Self.text(OpenAPI.operation("Forget", responses: ["204": done]))
            == #"{"summary":"Forget","responses":{"204":{"description":"Done"}}}"#)

        let id = OpenAPI.parameter("id", in: "path", ["type": "integer"], "The id")
        #expect(Self.text(OpenAPI.operation("One", parameters: [id], responses: ["204": done]))
            == #"{"summary":"One","parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"integer"},"description":"The id"}],"responses":{"204":{"description":"Done"}}}"#)

        let body = OpenAPI.body(OpenAPI.ref("Rule"))
        #expect(Self.text(OpenAPI.operation("Add", parameters: [OpenAPI.parameter("dry", ["type": "boolean"], "Check only")], body: body, responses: ["201": done]))
            == #"{"summary":"Add","parameters":[{"name":"dry","in":"query","required":false,"schema":{"type":"boolean"},"description":"Check only"}],"#
            + ##""requestBody":{"required":true,"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Rule"}}}},"responses":{"201":{"description":"Done"}}}"##)
    }
}
