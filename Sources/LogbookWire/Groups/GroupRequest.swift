public import LogbookApplication
import LogbookDomain
import LogbookJSON

/// A request on the groups socket, its fields checked: `{"id","type","group",…}`.
public enum GroupRequest: Sendable, Equatable {
    /// A member joins; `maxInFlight`: it holds at most that many deliveries (at most the group's).
    case join(GroupName, maxInFlight: Int?)
    case heartbeat(GroupName)
    /// Several positions at once.
    case ack(GroupName, positions: [Int64])
    case nack(GroupName, position: Int64, reason: String)
    case leave(GroupName)
    case create(GroupCreation)
    case list
    case show(GroupName)
    case delete(GroupName)
    case parked(GroupName, limit: Int)
    case retry(GroupName, position: Int64)
    case skip(GroupName, position: Int64)
    case status

    public static let maximumAckPositions = 10_000
    public static let maximumReasonLength = 1_000
    public static let defaultParkedLimit = 100
    public static let parkedLimitRange: ClosedRange<Int> = 1...1_000

    /// `unknown_type` for `type`, naming the types the groups socket serves.
    public static func unknownType(_ type: String) -> ServiceError {
        let known = GroupRequestType.allCases.map(\.rawValue).joined(separator: ", ")
        return ServiceError(
            .unknownType, "the groups socket serves \(known); got \(type)", details: [("type", .string(type))])
    }

    /// Reads a request whose outer shape `WireRequest` checked: `unknown_type` for a type
    /// the groups socket does not serve, `malformed_request` for a field it does not know,
    /// `invalid_input` naming the field for a wrong value.
    public init(wire request: WireRequest) throws(ServiceError) {
        guard let type = GroupRequestType(rawValue: request.type) else { throw Self.unknownType(request.type) }
        let fields = GroupFields(request)
        switch type {
        case .join:
            try fields.only(["maxInFlight"])
            self = .join(
                try fields.group(),
                maxInFlight: try fields.optionalInt("maxInFlight", in: GroupSettings.maxInFlightRange))
        case .heartbeat, .leave, .showGroup, .deleteGroup:
            try fields.only([])
            let group = try fields.group()
            switch type {
            case .heartbeat: self = .heartbeat(group)
            case .leave: self = .leave(group)
            case .showGroup: self = .show(group)
            default: self = .delete(group)
            }
        case .ack:
            try fields.only(["positions"])
            self = .ack(try fields.group(), positions: try fields.positions())
        case .nack:
            try fields.only(["position", "reason"])
            self = .nack(try fields.group(), position: try fields.position(), reason: try fields.reason())
        case .createGroup:
            try fields.only(["topics", "from", "ackWaitMs", "maxDeliver", "maxInFlight"])
            self = .create(try GroupCreation(fields))
        case .listGroups, .status:
            try request.onlyFields(WireRequest.bareFields)
            self = type == .status ? .status : .list
        case .listParked:
            try fields.only(["limit"])
            let limit = try fields.optionalInt("limit", in: Self.parkedLimitRange) ?? Self.defaultParkedLimit
            self = .parked(try fields.group(), limit: limit)
        case .retryParked, .skipParked:
            try fields.only(["position"])
            let (group, position) = (try fields.group(), try fields.position())
            self = type == .retryParked ? .retry(group, position: position) : .skip(group, position: position)
        }
    }
}

/// A `CreateGroup` request: `{"group","topics","from"?,"ackWaitMs"?,"maxDeliver"?,"maxInFlight"?}`.
/// `from` is `1` (the whole log, the default) or `"head"` (only what is appended after).
public struct GroupCreation: Sendable, Equatable {
    public let name: GroupName
    public let topics: [FeedTopic]
    public let fromHead: Bool
    public let settings: GroupSettings

    /// The stream categories of `topics`.
    public var categories: [String] { topics.map(\.category).sorted() }

    init(_ fields: GroupFields) throws(ServiceError) {
        name = try fields.group()
        topics = try fields.topics()
        switch fields.object["from"] {
        case nil, .null?, .int(1)?: fromHead = false
        case .string("head")?: fromHead = true
        default: throw GroupFields.invalid("from", "must be 1 (the whole log) or \"head\" (only what comes next)")
        }
        settings = try GroupSettings(
            ackWaitMilliseconds: try fields.optionalInt("ackWaitMs", in: GroupSettings.ackWaitRange),
            maxDeliver: try fields.optionalInt("maxDeliver", in: GroupSettings.maxDeliverRange),
            maxInFlight: try fields.optionalInt("maxInFlight", in: GroupSettings.maxInFlightRange))
    }
}
