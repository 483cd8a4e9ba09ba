@testable import HeraldGateway
import NIOCore
@testable import PostgresNIO
import Testing

/// What the gateway says and concludes about PostgresNIO's errors. PostgresNIO's own description
/// is a placeholder ("Generic description to prevent accidental leakage…"); an operator reading
/// the log during an outage needs the cause, however deep PostgresNIO wrapped it.
@Suite struct PostgresErrorTextTests {
    @Test func aWrappedErrorIsDescribedByItsInnermostCause() {
        let closed = PSQLError.serverClosedConnection(underlying: ChannelError.ioOnClosedChannel)
        let wrapped = PSQLError.connectionError(underlying: closed)
        let text = PostgresGatewayDatabase.describe(wrapped)
        #expect(!text.contains("Generic description"), "\(text)")
        #expect(text == "\(ChannelError.ioOnClosedChannel)", "the innermost cause: \(text)")
        #expect(PostgresGatewayDatabase.classify(wrapped) == .connection)

        let twice = PSQLError.connectionError(underlying: PSQLError.connectionError(underlying: closed))
        #expect(PostgresGatewayDatabase.describe(twice) == text)
    }

    @Test func aWrappedRefusalIsStillARefusal() {
        let refused = PSQLError.connectionError(underlying: IOError(errnoCode: ECONNREFUSED, reason: "connect"))
        #expect(PostgresGatewayDatabase.classify(refused) == .refused)
        #expect(PostgresGatewayDatabase.classify(PSQLError.connectionError(underlying: refused)) == .refused)
        #expect(PostgresGatewayDatabase.describe(PSQLError.connectionError(underlying: refused)).lowercased().contains("refused"))
    }

    @Test func noPathEndsInThePlaceholder() {
        let causes: [PSQLError] = [
            .serverClosedConnection(underlying: nil), .clientClosedConnection(underlying: nil), .uncleanShutdown, .poolClosed,
            .connectionError(underlying: PSQLError.uncleanShutdown),
        ]
        for error in causes {
            let text = PostgresGatewayDatabase.describe(error)
            #expect(!text.isEmpty && !text.contains("Generic description"), "\(error.code): \(text)")
            #expect(PostgresGatewayDatabase.classify(error) == .connection, "\(error.code)")
        }
    }
}
