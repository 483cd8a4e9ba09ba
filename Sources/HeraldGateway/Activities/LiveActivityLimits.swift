/// The limits the gateway holds Live Activities to, in one place. Apple's are from "Displaying
/// live data with Live Activities" and "Starting and updating Live Activities with ActivityKit
/// push notifications"; the others are Herald's choices, each said in the API's answers.
struct LiveActivityLimits: Sendable, Equatable {
    /// Apple: an activity is active for at most 8 hours; then the system ends it. The gateway
    /// marks it `expired` then and answers 409 to updates.
    var active: Duration = .seconds(8 * 3_600)
    /// Apple: an ended activity stays on the Lock Screen for at most 4 more hours (a
    /// `dismissal-date` shortens it).
    var lockScreen: Duration = .seconds(4 * 3_600)
    /// Herald: how long an update waits for the activity's update token (the app reports it
    /// after the start reaches the device); then it is dropped, counted as a failure with the
    /// reason, and the activity keeps waiting for its token.
    var tokenWait: Duration = .seconds(30 * 60)
    /// Herald: priority-10 updates of one activity in an hour past which the answer warns. Apple
    /// documents that priority 10 counts against a budget the system sets (larger with
    /// `NSSupportsLiveActivitiesFrequentUpdates`) and gives no number; past it, updates are
    /// throttled. The gateway never refuses one.
    var priority10PerHour: Int = 10
    /// How often a process looks for activities past ``active``.
    var expiryInterval: Duration = .seconds(5)
}
