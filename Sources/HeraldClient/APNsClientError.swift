import Foundation
import HeraldLint
import HeraldProtocol

/// Why a request did not end accepted: the one outcome besides ``APNsResponse``.
///
/// Every request ends in exactly one of the two. ``kind`` says which failure it was, and
/// ``advice`` what to do about it.
public struct APNsClientError: Error, Sendable, CustomStringConvertible {
    /// The kinds of failure.
    public enum Kind: Sendable, Hashable {
        /// APNs answered with an error status (``reason`` and ``status`` say which).
        case rejected
        /// The request's deadline passed before an answer came. It may or may not have been
        /// delivered: resending it with the same ``apnsID`` lets the device side recognise it.
        case deadlineExceeded
        /// No connection could be made or kept (after the retries the policy allows).
        case connectionFailed
        /// Refused before sending: the pre-flight lint found what APNs would reject.
        case refusedByLint
        /// Refused before sending: the body is larger than the push type's limit.
        case payloadTooLarge
        /// The client was shut down before the request could be sent.
        case shutDown
    }

    /// The kind of failure.
    public var kind: Kind
    /// APNs' reason (for ``Kind/rejected``; for ``Kind/refusedByLint``, the reason APNs would give).
    public var reason: APNsReason?
    /// The HTTP status, when there was an answer.
    public var status: Int?
    /// For 410: when APNs last knew the token to be valid.
    public var unregisteredAt: Date?
    /// The request's `apns-id`.
    public var apnsID: String?
    /// The response body, when it was not APNs' `{"reason":…}` JSON.
    public var body: [UInt8]?
    /// The lint findings that refused the request (``Kind/refusedByLint``).
    public var diagnostics: [LintDiagnostic] = []
    /// How many attempts were made.
    public var attempts: Int = 0
    /// Why no connection could be made, when that is why there was no answer
    /// (``Kind/connectionFailed``, or ``Kind/deadlineExceeded`` while the endpoint refused).
    public var connectionFailure: ConnectionFailure? = nil
    /// What went wrong, in a sentence.
    public var message: String

    /// What to do about it.
    public var advice: String? {
        if let reason {
            switch reason {
            case .badDeviceToken:
                return "check that the token is a device token for this app, and that it comes from a build for this environment: a development build's token sent to production (or the reverse) gives BadDeviceToken"
            case .unregistered, .expiredToken:
                return "stop sending to this token: the app was removed or the token changed; delete it from your records"
            case .deviceTokenNotForTopic:
                return "the token belongs to another app or push type: check apns-topic (the bundle ID, with .voip, .complication or .push-type.liveactivity for those push types)"
            case .topicDisallowed:
                return "the credentials may not push to this topic: check the bundle ID and that the key or certificate belongs to its team"
            case .badTopic, .missingTopic:
                return "set apns-topic to the app's bundle ID (plus the push type's suffix)"
            case .expiredProviderToken:
                return "the provider token is older than an hour: check the machine's clock (the token's iat comes from it)"
            case .invalidProviderToken:
                return "check the key ID, the team ID and the .p8 file: they must be one key from the Apple Developer account of the app's team"
            case .missingProviderToken:
                return "token-based connections need credentials: pass a .p8 key with its key ID and team ID"
            case .tooManyProviderTokenUpdates:
                return "the provider token changed more often than every 20 minutes on one connection"
            case .badCertificate, .badCertificateEnvironment:
                return "the client certificate is not valid for this server: production certificates for production, development ones for the sandbox"
            case .payloadTooLarge:
                return "shorten the payload: \(PayloadLimit.standard) bytes for most pushes, \(PayloadLimit.voip) for VoIP"
            case .tooManyRequests:
                return "too many pushes to this one device: send less often"
            case .internalServerError, .serviceUnavailable:
                return "APNs had a problem: the client retried as far as the retry policy allows; try again later"
            case .badPriority:
                return "apns-priority is 10, 5 or 1; background pushes need 5"
            case .badExpirationDate:
                return "apns-expiration is a UNIX time in seconds (not milliseconds), or 0"
            case .badCollapseID:
                return "apns-collapse-id is at most 64 bytes"
            case .badMessageID:
                return "apns-id is a UUID in its canonical lowercase form"
            case .invalidPushType:
                return "apns-push-type is one of alert, background, location, voip, complication, fileprovider, mdm, liveactivity, pushtotalk, widgets, controls"
            default:
                return reason.info.map { $0.meaning }
            }
        }
        if let connectionFailure { return connectionFailure.advice }
        switch kind {
        case .deadlineExceeded:
            return "raise requestTimeout, or look at the network: the request may have been delivered (its apns-id identifies a resend)"
        case .connectionFailed:
            return "check the host, the port (443 or 2197), the firewall, the proxy and the trusted certificates"
        case .payloadTooLarge:
            return "shorten the payload"
        case .refusedByLint:
            return "fix the findings, or turn off lintsBeforeSending to send anyway"
        default:
            return nil
        }
    }

    /// The message, the status and reason, and the advice.
    public var description: String {
        var text = message
        if let advice { text += " (\(advice))" }
        return text
    }
}
