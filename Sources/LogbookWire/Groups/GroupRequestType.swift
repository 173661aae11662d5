/// The request types of the groups socket, spelled once: members send the first five,
/// admins the rest.
public enum GroupRequestType: String, Sendable, CaseIterable {
    case join = "Join"
    case heartbeat = "Heartbeat"
    case ack = "Ack"
    case nack = "Nack"
    case leave = "Leave"
    case createGroup = "CreateGroup"
    case listGroups = "ListGroups"
    case showGroup = "ShowGroup"
    case deleteGroup = "DeleteGroup"
    case listParked = "ListParked"
    case retryParked = "RetryParked"
    case skipParked = "SkipParked"
    case status = "Status"

    /// Whether the request manages groups (an `admin`'s) rather than consumes (a `reader`'s).
    public var managesGroups: Bool {
        switch self {
        case .join, .heartbeat, .ack, .nack, .leave: false
        case .createGroup, .listGroups, .showGroup, .deleteGroup, .listParked, .retryParked, .skipParked, .status:
            true
        }
    }
}
